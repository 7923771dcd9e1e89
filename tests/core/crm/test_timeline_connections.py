"""`read_timeline` on connections kept open gives what `load_timeline` gives."""

from company_ai.core.crm import find_contact, load_timeline, read_timeline


def test_a_timeline_read_on_open_connections_is_the_timeline(sample_stores):
    with (
        sample_stores.connect("crm", readonly=True) as crm,
        sample_stores.connect("memory", readonly=True) as memory,
        sample_stores.connect("outreach", readonly=True) as outreach,
    ):
        contact_id = outreach.execute(
            "SELECT contact_id FROM messages GROUP BY contact_id ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()[0]
        email = crm.execute("SELECT email FROM contacts WHERE id = $1", (contact_id,)).fetchone()[0]
        contact = dict(find_contact(crm, email))
        for _ in range(2):  # the same connections serve one reading after another
            timeline = read_timeline(memory, outreach, contact)
            assert timeline == load_timeline(sample_stores, email)
        without_messages = read_timeline(memory, None, contact)
    assert {e["kind"] for e in timeline.entries} == {"episode", "message", "received"}
    assert without_messages.entries == [e for e in timeline.entries if e["kind"] == "episode"]
