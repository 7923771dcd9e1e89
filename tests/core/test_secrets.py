import base64
import html
import json
from datetime import UTC, datetime
from urllib.parse import quote, quote_plus

import pytest

from company_ai.core.ops import alerts
from company_ai.core.secrets import MASK, scrub, secrets_from_env
from company_ai.core.store import Stores
from tests.hostile.canary import encodings

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

TOKEN = "7261946633:AAHk-Zq_x9SeCrEtToKeN"


def percent_all(text: str, hex_case=str.lower) -> str:
    return "".join(f"%{hex_case(f'{b:02x}')}" for b in text.encode())


def unicode_escapes(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


FORMS = {
    "plain": TOKEN,
    "lower case": TOKEN.lower(),
    "upper case": TOKEN.upper(),
    "quote": quote(TOKEN),
    "quote, nothing safe": quote(TOKEN, safe=""),
    "quote_plus": quote_plus(TOKEN),
    "lower-case hex": quote(TOKEN, safe="").replace("%3A", "%3a"),
    "every byte, lower hex": percent_all(TOKEN),
    "every byte, upper hex": percent_all(TOKEN, str.upper),
    "twice URL-encoded": quote(quote(TOKEN, safe=""), safe=""),
    "JSON string": json.dumps(TOKEN)[1:-1],
    "JSON unicode escapes": unicode_escapes(TOKEN),
    "HTML entities": "".join(f"&#{ord(c)};" for c in TOKEN),
    "HTML escaped": html.escape(TOKEN),
}


def leaks(text: str, secret: str = TOKEN) -> list[bytes]:
    """Every encoding of `secret` the canary scan knows that is still in `text`."""
    raw = text.encode()
    return [p for p in encodings(secret) if p in raw]


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
def test_every_encoding_of_the_secret_is_scrubbed(form):
    text = f'HTTP 401 for https://api.telegram.org/bot{form}/sendMessage: {{"error": "{form}"}}'
    scrubbed = scrub(text, [TOKEN])
    assert form not in scrubbed and not leaks(scrubbed)
    assert scrubbed == (
        f'HTTP 401 for https://api.telegram.org/bot{MASK}/sendMessage: {{"error": "{MASK}"}}'
    )


@pytest.mark.parametrize("prefix", ["", "b", "bo", "bot", "/bot"])
@pytest.mark.parametrize("suffix", ["", "/", "/s", "/sendMessage"])
@pytest.mark.parametrize("codec", [base64.b64encode, base64.urlsafe_b64encode])
def test_base64_of_the_secret_inside_anything_is_scrubbed_at_every_alignment(prefix, suffix, codec):
    encoded = codec(f"{prefix}{TOKEN}{suffix}".encode()).decode()
    scrubbed = scrub(f"body: {encoded} end", [TOKEN])
    assert not leaks(scrubbed), scrubbed
    assert MASK in scrubbed and scrubbed.startswith("body: ") and scrubbed.endswith(" end")
    # Left beside the mask: the prefix's and suffix's own characters, and at most three
    # on each side that mix them with the secret's first or last byte.
    around = len(codec(f"{prefix}{suffix}".encode()).rstrip(b"="))
    assert len(scrubbed) - len(f"body: {MASK} end") <= around + 6


def test_several_secrets_non_ascii_and_spaces():
    secret = "pa/ss wörd+x"
    text = " | ".join(
        [secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret, ensure_ascii=True),
         json.dumps(secret).replace("/", "\\/"), TOKEN]
    )  # fmt: skip
    scrubbed = scrub(text, [secret, TOKEN])
    assert not leaks(scrubbed, secret) and not leaks(scrubbed)
    assert scrubbed.count(MASK) == 6


def test_text_without_a_secret_is_unchanged_and_empty_secrets_are_ignored():
    text = "telegram answered 502: Bad Gateway (bot%3A, 12 %41 retries)"
    assert scrub(text, [TOKEN, "", None]) == text
    assert scrub(text, []) == text


def test_secrets_come_from_the_secret_settings_in_the_environment():
    gmail = json.dumps({"token": "ya29.a0AfH6SMB-access", "refresh_token": "1//0gRefresh-xyz",
                        "client_id": "12.apps", "expiry": None})  # fmt: skip
    env = {
        "COMPANY_AI_TELEGRAM_TOKEN": TOKEN,
        "COMPANY_AI_GMAIL_TOKEN": gmail,
        "COMPANY_AI_SMTP_PASSWORD": "hunter2hunter2",
        "COMPANY_AI_DATA_DIR": "/srv/data",
        "HOME": "/root",
        "COMPANY_AI_EMPTY_SECRET": "",
    }
    found = secrets_from_env(env)
    assert {TOKEN, gmail, "ya29.a0AfH6SMB-access", "1//0gRefresh-xyz", "hunter2hunter2"} <= found
    assert not found & {"/srv/data", "/root", "", "12.apps"}


def test_the_alert_queue_stores_no_secret_even_where_the_error_is_cut(tmp_path):
    def deliver(text):
        raise RuntimeError("x" * 480 + quote(TOKEN, safe=""))  # the cut falls inside it

    with Stores(tmp_path).connect("ops") as ops:
        alerts.enqueue(ops, "run-failure:1", f"FAILED: called with token={TOKEN}", [TOKEN], now=NOW)
        result = alerts.flush(ops, deliver, [TOKEN], clock=lambda: NOW)
        text, error = ops.execute("SELECT text, last_error FROM alerts").fetchone()
    assert text == f"FAILED: called with token={MASK}"
    assert error == result.error and len(error) == alerts.ERROR_CHARS
    assert error.startswith("RuntimeError: xxx") and TOKEN[:6] not in error
