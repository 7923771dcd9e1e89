"""Generated hostile mail (random headers, MIME structures, encodings and junk) thrown at
`parse_mail` and at `triage` in a batch with good mail: nothing escapes one item, and
every good mail of the batch is recorded."""

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from company_ai.core.inbox import InboundMail, triage
from company_ai.core.inbox.mail import parse_mail
from company_ai.core.intake import Refused
from company_ai.core.store import Stores, transaction
from tests.core.inbox.test_inbox import ADA, NOW, RECEIVED, RFC_2, SENT, mail

HEADER_NAMES = st.sampled_from(
    ["From", "Subject", "Message-ID", "In-Reply-To", "References", "Content-Type",
     "Content-Transfer-Encoding", "Content-Disposition", "Auto-Submitted", "MIME-Version",
     "X-Junk", "Date"]
)  # fmt: skip
TYPES = st.sampled_from(
    ["text/plain", "text/html", "multipart/mixed", "multipart/report", "message/rfc822",
     "message/delivery-status", "message/disposition-notification", "text/rfc822-headers",
     "application/octet-stream", ";;;/", ""]
)  # fmt: skip
PARAMS = st.sampled_from(
    ["", "; charset=utf-8", "; charset=x-klingon", "; charset=utf-7", "; charset=\"",
     "; report-type=delivery-status", "; report-type=disposition-notification",
     '; boundary="b"', "; boundary=", "; boundary=\"\"\"\""]
)  # fmt: skip
JUNK = st.binary(max_size=300)
TEXT = st.text(max_size=80).map(lambda t: t.encode("utf-8", "surrogatepass"))
VALUE = st.one_of(
    JUNK,
    TEXT,
    st.sampled_from(
        [
            b"=?x-klingon?B?////?=",
            b"=?utf-8?Q?=ED=A0=80?=",
            b"<" + RFC_2.strip("<>").encode() + b">",
            f"rfc822; {ADA}".encode(),
            ADA.encode(),
            b"failed",
            b"5.1.1",
        ]
    ),
)


def header(name: str, value: bytes) -> bytes:
    return name.encode() + b": " + value.replace(b"\r", b" ").replace(b"\n", b" ") + b"\r\n"


@st.composite
def part(draw, depth=0):
    headers = b"".join(header(n, v) for n, v in draw(st.lists(st.tuples(HEADER_NAMES, VALUE),
                                                                 max_size=5)))  # fmt: skip
    kind = draw(TYPES)
    headers += header("Content-Type", (kind + draw(PARAMS)).encode())
    if kind.startswith("multipart/") and depth < 4:
        children = draw(st.lists(part(depth + 1), max_size=3))
        body = b"".join(b"--b\r\n" + c + b"\r\n" for c in children)
        body += draw(st.sampled_from([b"--b--\r\n", b"", b"--b"]))
    else:
        body = draw(st.one_of(JUNK, TEXT))
    return headers + b"\r\n" + body


HOSTILE = st.one_of(JUNK, part(), st.builds(lambda a, b: a + b, part(), JUNK))


@settings(max_examples=200, deadline=None)
@given(HOSTILE)
def test_parse_mail_reads_or_refuses_and_nothing_else(raw):
    try:
        parsed = parse_mail(raw)
    except Refused:
        return
    for text in (parsed.subject, parsed.text, parsed.from_address, *parsed.references):
        text.encode("utf-8")  # no lone surrogate survives into what is stored
        assert "\x00" not in text


def stores_with_ada(root: Path) -> Stores:
    stores = Stores(root / "data")
    with stores.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at)"
            " VALUES (1, $1, 'Ada', 40, 'sample', $2, $3)",
            (ADA, SENT, SENT),
        )
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "INSERT INTO messages (id, contact_id, thread_id, subject, body, sent_at,"
            " rfc_message_id) VALUES (2, 1, 't-1', 'Hi', 'Body', $1, $2)",
            (SENT, RFC_2),
        )
    return stores


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HOSTILE, min_size=1, max_size=6), st.integers(1, 3))
def test_triage_records_every_good_mail_whatever_comes_with_it(hostile, good):
    goods = [mail(f"Good reply number {n}.") for n in range(good)]
    batch = [InboundMail(f"gmail:h{i}", RECEIVED, raw) for i, raw in enumerate(hostile)]
    batch += [InboundMail(f"gmail:g{n}", RECEIVED, m.as_bytes()) for n, m in enumerate(goods)]
    batch = batch[::2] + batch[1::2]  # good mail among the hostile
    with tempfile.TemporaryDirectory() as root:
        stores = stores_with_ada(Path(root))
        done = triage(stores, batch, source="gmail", tz="UTC", now=NOW)
        assert done.read == len(batch)
        with stores.connect("outreach") as outreach:
            stored = {r[0] for r in outreach.execute("SELECT provider_id FROM inbound")}
    assert {f"gmail:g{n}" for n in range(good)} <= stored
