"""The intake discipline's own rules (core/intake.py), each with the hostile case first."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from company_ai.core import intake
from company_ai.core.intake import Bounds, Refused, Taken
from company_ai.core.store.db import Connection as StoreConnection

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


# --- JSON inside bounds --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b'{"n": ' + b"1" * 5_000 + b"}", "5,000 digits"),
        (b'{"n": -' + b"9" * 31 + b"}", "31 digits"),
        (b'{"x": 1.' + b"5" * 40 + b"}", "digits"),
        (b"[" * 100_000, "nested deeper"),
        (b"[" * 40 + b"]" * 40, "nested deeper than 32"),
        (b'{"n": NaN}', "NaN"),
        (b'{"n": -Infinity}', "-Infinity"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"a": 1', "not JSON"),
        (b"", "not JSON"),
    ],
)
def test_hostile_json_is_refused_with_its_reason(raw, why):
    with pytest.raises(Refused, match=why):
        intake.load_json(raw)


def test_json_over_its_byte_or_item_bounds_is_refused_before_or_while_parsing():
    with pytest.raises(Refused, match="over the 10-byte limit"):
        intake.load_json(b'{"a": "0123456789"}', Bounds(max_bytes=10))
    with pytest.raises(Refused, match="more than 100 values"):
        intake.load_json(json.dumps(list(range(200))).encode(), Bounds(max_items=100))
    with pytest.raises(Refused, match="a text of 11 characters"):
        intake.load_json(b'["01234567890"]', Bounds(max_chars=10))


def test_json_strings_come_back_safe_to_store():
    data = intake.load_json(b'{"a\\u0000": "\\ud800x\\u202e", "b": ["\\udfff"]}')
    assert data == {"a": "\ufffdx", "b": ["\ufffd"]}
    with sqlite3.connect(
        factory=StoreConnection, database=":memory:"
    ) as conn:  # a lone surrogate would raise here
        conn.execute("SELECT $1", (json.dumps(data, ensure_ascii=False),))


def test_ordinary_json_is_read_as_written():
    raw = b'\xef\xbb\xbf{"signals": [{"id": "v1", "n": 12, "f": 1.5, "ok": true, "x": null}]}'
    assert intake.load_json(raw) == {
        "signals": [{"id": "v1", "n": 12, "f": 1.5, "ok": True, "x": None}]
    }


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2_000))
def test_no_bytes_raise_anything_but_refused(raw):
    with contextlib.suppress(Refused):
        intake.load_json(raw)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_is_read_or_refused_and_what_is_read_can_be_stored(value):
    raw = json.dumps(value).encode()
    try:
        data = intake.load_json(raw)
    except Refused:
        return
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # no lone surrogate survives


# --- each item alone ---------------------------------------------------------------------


def test_one_failing_item_is_refused_and_the_rest_go_on():
    warned: list[str] = []
    taken = Taken("drops")

    def handle(item: str) -> str:
        if item == "bad":
            raise Refused("a bad one")
        if item == "crash":
            raise KeyError("boom")
        return item.upper()

    kept = list(intake.take(taken, ["a", "bad", "crash", "b"], str, handle, warned.append))
    assert kept == ["A", "B"]
    assert taken.items == 4 and taken.refused == 2
    assert taken.reasons() == {"bad": "a bad one", "crash": "could not be read (KeyError)"}
    assert taken.metadata() == {"items_read": 4, "items_refused": 2}
    assert warned == [
        "drops: bad set aside: a bad one",
        "drops: crash set aside: could not be read (KeyError)",
    ]


def test_a_refusal_keeps_no_unsafe_text_and_no_endless_reason():
    refusal = Taken("inbox").refuse("maildir:\ud800k\x00", "x" * 1_000)
    assert refusal.key == "maildir:\ufffdk" and len(refusal.reason) == intake.MAX_REASON


def test_refusals_are_recorded_once_and_known_to_the_next_run():
    conn = sqlite3.connect(factory=StoreConnection, database=":memory:")
    conn.execute(intake.REFUSALS_TABLE)
    taken = Taken("inbox")
    taken.refuse("maildir:1", "unreadable")
    assert intake.record_refusals(conn, taken.refusals, "2026-12-01T09:00:00Z") == 1
    assert intake.record_refusals(conn, taken.refusals, "2026-12-02T09:00:00Z") == 0
    assert intake.refused_keys(conn, "inbox") == {"maildir:1"}
    assert intake.refused_keys(conn, "people") == set()


# --- times from outside --------------------------------------------------------------------


def test_a_time_from_outside_is_bounded_by_now_and_flagged():
    future = datetime(2035, 1, 1, tzinfo=UTC)
    assert intake.outside_time(future, NOW) == intake.OutsideTime(NOW, future, "in the future")
    ancient = datetime(1970, 1, 1, tzinfo=UTC)
    assert intake.outside_time(ancient, NOW) == intake.OutsideTime(NOW, ancient, "before 1990")
    assert intake.outside_time(None, NOW).flag == "no time given"
    past = NOW - timedelta(days=3)
    assert intake.outside_time(past, NOW) == intake.OutsideTime(past, past, "")
    naive = datetime(2026, 11, 30, 12, 0)
    assert intake.outside_time(naive, NOW).at == naive.replace(tzinfo=UTC)


# --- text, names, HTML, URLs ---------------------------------------------------------------


def test_clean_text_makes_outside_text_harmless():
    assert intake.clean_text("a\ud800b") == "a\ufffdb"
    assert intake.clean_text("pay\u202etxt.exe\x00\x07") == "paytxt.exe"
    assert intake.clean_text("line one\nline\ttwo\r\n") == "line one\nline\ttwo\r\n"
    assert intake.clean_text("Cafe\u0301") == "Café"  # NFC
    assert intake.clean_text("\ufeffhello") == "hello"
    assert intake.clean_text("plain ascii") == "plain ascii"


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_any_text_cleaned_can_be_encoded_and_stored(text):
    cleaned = intake.clean_text(text)
    cleaned.encode("utf-8")
    assert "\x00" not in cleaned and intake.clean_text(cleaned) == cleaned


@pytest.mark.parametrize(
    "spelling",
    ["Journal ", " Journal", "JOURNAL", "journal", "Journal\u00a0", "Ｊｏｕｒｎａｌ", "Journal\t"],
)
def test_every_spelling_of_a_name_is_one_name(spelling):
    assert intake.same_name(spelling, "Journal")


def test_different_names_stay_different():
    assert not intake.same_name("Journal", "Journals")
    assert not intake.same_name("Work Journal", "Journal")


def test_html_is_read_by_a_parser_that_drops_what_is_not_text():
    html = (
        "<html><head><title>t</title><style>p{color:red}</style></head><body>"
        "<p>Hello <b>there</b></p><script>steal()</script><noscript>n</noscript>"
        "<p>Unclosed <i>tags<p>still text &amp; entities</body>"
    )
    assert intake.html_text(html) == "Hello there Unclosed tags still text & entities"
    assert intake.html_text("<script>only()</script>") == ""
    assert intake.html_text("") == ""
    assert intake.html_text("<p>" + "x" * 50) == "x" * 50


def test_a_url_keeps_no_credentials():
    url = "https://ann:hunter2@acme.example:8443/p?api_key=SECRET1&q=ok&access_token=S2#frag"
    safe = intake.safe_url(url)
    assert safe == "https://acme.example:8443/p?api_key=REDACTED&q=ok&access_token=REDACTED"
    for secret in ("hunter2", "ann", "SECRET1", "S2", "frag"):
        assert secret not in safe
    assert intake.safe_url("http://[::1") == "<unreadable url>"
    for hidden in ("?=?api_key=S3", "?a=1;token=S3", "?q=%26access_token%3DS3", "?x&&sig=S3"):
        assert "S3" not in intake.safe_url("https://acme.example/p" + hidden), hidden
    assert intake.safe_url("https://acme.example/about") == "https://acme.example/about"


def test_content_key_names_the_same_bytes_the_same_way():
    assert intake.content_key(b"a") == intake.content_key(b"a") != intake.content_key(b"b")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("<>/=\"' abcpsrtiyle&;#x0\ud800\x00\n")) | st.text())
def test_any_markup_reads_as_safe_text(markup):
    text = intake.html_text(markup)
    assert intake.clean_text(text) == text and "\x00" not in text


@settings(max_examples=300, deadline=None)
@given(st.text().filter(lambda t: "<" not in t and "steal" not in t))
def test_a_script_after_any_text_is_dropped(text):
    assert "steal()" not in intake.html_text(f"<p>{text}</p><script>steal()</script>")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_url_is_made_safe_or_refused_and_never_raises(url):
    safe = intake.safe_url(url + "?api_key=SEKRET")
    assert "SEKRET" not in safe
