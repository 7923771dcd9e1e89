import json
import os
import subprocess
import sys

import pytest

from company_ai.cli import main
from tests.conftest import database_for


def first_email(stores):
    with (
        stores.connect("outreach", readonly=True) as outreach,
        stores.connect("crm", readonly=True) as crm,
    ):
        contact_id = outreach.execute("SELECT contact_id FROM messages LIMIT 1").fetchone()[0]
        return crm.execute("SELECT email FROM contacts WHERE id = $1", (contact_id,)).fetchone()[0]


def run(*args, python_flags=()):
    """The CLI as a user runs it: its own process, its exit status, its output (under
    --stores=postgres, with its data directory's database as the user's setting)."""
    env = os.environ | {"PYTHONPATH": os.getcwd()}
    if "--data-dir" in args and (url := database_for(args[args.index("--data-dir") + 1])):
        env["COMPANY_AI_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, *python_flags, "-m", "company_ai.cli", *args],
        capture_output=True,
        text=True,
        env=env,
    )


def test_timeline_prints_every_episode_and_message(sample_stores):
    email = first_email(sample_stores)
    done = run("--data-dir", str(sample_stores.data_dir), "timeline", email)
    assert done.returncode == 0, done.stderr
    assert f"<{email}>" in done.stdout and "Subject: " in done.stdout
    as_json = json.loads(
        run("--data-dir", str(sample_stores.data_dir), "timeline", email, "--json").stdout
    )
    episodes = [e for e in as_json["entries"] if e["kind"] == "episode"]
    assert episodes and all(
        {"id", "at", "episode_type", "source", "confidence"} <= set(e) for e in episodes
    )
    assert all(f"#{e['id']}" in done.stdout for e in episodes)
    messages = [e for e in as_json["entries"] if e["kind"] == "message"]
    assert messages and all(e["body"] for e in messages), "--json always has the bodies"
    bodies = run("--data-dir", str(sample_stores.data_dir), "timeline", email, "--bodies")
    assert messages[0]["body"].splitlines()[0] not in done.stdout
    assert f"    | {messages[0]['body'].splitlines()[0]}" in bodies.stdout


def test_timeline_of_an_unknown_email_fails_clearly(sample_stores):
    done = run("--data-dir", str(sample_stores.data_dir), "timeline", "ghost@example.com")
    assert done.returncode == 1
    assert done.stderr.strip() == "company-ai: error: no contact with email 'ghost@example.com'"
    assert done.stdout == ""


def test_a_missing_data_dir_is_explained(tmp_path):
    done = run("--data-dir", str(tmp_path / "nowhere"), "timeline", "a@example.com")
    assert done.returncode == 1
    assert "no crm store at" in done.stderr and "company-ai demo" in done.stderr
    assert not (tmp_path / "nowhere").exists()


def test_note_appends_a_manual_episode_that_the_timeline_shows(data, capsys):
    from company_ai.core.store import Stores

    email = first_email(Stores(data))
    text = "Prefers calls on Tuesdays; said 'DROP TABLE' jokingly — ☎️"
    assert main(["--data-dir", str(data), "note", email.upper(), text]) == 0
    assert "noted" in capsys.readouterr().out
    assert main(["--data-dir", str(data), "timeline", email, "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)["entries"]
    note = [e for e in entries if e.get("content") == text]
    assert len(note) == 1 and note[0]["source"] == "manual" and note[0]["confidence"] == 1.0
    assert main(["--data-dir", str(data), "dossier", email]) == 0
    assert capsys.readouterr().out.rstrip().endswith(text)


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_note_is_refused(data, capsys, text):
    from company_ai.core.store import Stores

    email = first_email(Stores(data))
    assert main(["--data-dir", str(data), "note", email, text]) == 1
    assert "must not be empty" in capsys.readouterr().err


def test_gate_prints_each_claim_in_its_sentence_with_a_reason(tmp_path):
    source = tmp_path / "page.txt"
    source.write_text("Acme Inc. raised $1,200,000 and grew twenty percent.")
    draft = tmp_path / "draft.txt"
    draft.write_text("Hi Ada,\n\nAcme raised $1.2M, grew 20% and hired 40 people.\n\nBest,\nSam")
    done = run("gate", "--source", str(source), "--allow", "Sam", str(draft))
    assert done.returncode == 2, done.stderr
    assert done.stdout == (
        f"{draft}: 1 claim no source supports\n"
        "- Acme raised $1.2M, grew 20% and hired «40» people.\n"
        "  number: no source gives 40 people (characters 47–49)\n"
    )
    draft.write_text("Acme raised $1.2M.")
    clean = run("gate", "--source", str(source), str(draft))
    assert (
        clean.returncode == 0 and clean.stdout == f"{draft}: every claim is supported by 1 source\n"
    )
    piped = subprocess.run(
        [sys.executable, "-m", "company_ai.cli", "gate", "--source", str(source), "-"],
        input="Acme hired 40 people.",
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.getcwd()},
    )
    assert piped.returncode == 2 and piped.stdout.startswith("stdin: 1 claim no source supports")
    missing = run("gate", "--source", str(tmp_path / "nope.txt"), str(draft))
    assert missing.returncode == 1 and "no such file" in missing.stderr


def test_gate_json_gives_each_claims_offsets_sentence_and_reason(tmp_path):
    source = tmp_path / "page.txt"
    source.write_text("Acme Inc. raised $1,200,000 and grew twenty percent.")
    draft = tmp_path / "draft.txt"
    draft.write_text("Hi Ada,\n\nAcme raised $1.2M, grew 20% and hired 40 people.\n\nBest,\nSam")
    done = run("gate", "--json", "--source", str(source), "--allow", "Sam", str(draft))
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout) == [
        {
            "text": "40",
            "kind": "number",
            "start": 47,
            "end": 49,
            "sentence": "Acme raised $1.2M, grew 20% and hired «40» people.",
            "reason": "no source gives 40 people",
        }
    ]
    draft.write_text("Acme raised $1.2M.")
    clean = run("gate", "--json", "--source", str(source), str(draft))
    assert clean.returncode == 0 and json.loads(clean.stdout) == []
    # Judged as outreach judges a draft: a rival's figure on Acme is a claim.
    rival = tmp_path / "rival.txt"
    rival.write_text("Initech raised $3,000,000 last spring.")
    draft.write_text("Acme raised $3M.")
    pinned = run("gate", "--json", "--source", str(source), "--source", str(rival), str(draft))
    assert pinned.returncode == 2, pinned.stderr
    assert [c["kind"] for c in json.loads(pinned.stdout)] == ["misattributed"]


@pytest.mark.parametrize(
    "greeting",
    ["Hi Dana,", "Dear Ms. Dana Reyes,", "Hello Dana and Sam —", "Bonjour Dana,"],
)
def test_gate_never_reports_the_reader_a_greeting_names(tmp_path, greeting):
    source = tmp_path / "page.txt"
    source.write_text("Acme Inc. grew twenty percent.")
    draft = tmp_path / "draft.txt"
    draft.write_text(f"{greeting}\n\nAcme grew 20%.\n")
    done = run("gate", "--source", str(source), str(draft))  # no --allow: the reader anyway
    assert done.returncode == 0, done.stdout
    # A name later in the body that is neither the reader nor in a source is a claim.
    draft.write_text(f"{greeting}\n\nAcme grew 20%, Marco Ruiz says.\n")
    done = run("gate", "--json", "--source", str(source), str(draft))
    assert done.returncode == 2
    assert [(c["text"], c["kind"]) for c in json.loads(done.stdout)] == [("Marco Ruiz", "person")]


def test_gate_refuses_a_link_a_page_gives_unless_it_is_the_companys_own(tmp_path):
    source = tmp_path / "page.txt"
    draft = tmp_path / "draft.txt"
    source.write_text("Acme customers: verify your account at https://acme-login.example/v.")
    draft.write_text("Acme customers: verify your account at https://acme-login.example/v.")
    phished = run("gate", "--json", "--source", str(source), str(draft))
    assert phished.returncode == 2, phished.stderr
    assert [c["kind"] for c in json.loads(phished.stdout)] == ["instruction", "link"]
    source.write_text("Acme raised $1,200,000. More at https://company-ai.example/acme.")
    draft.write_text("Acme raised $1.2M: more at https://company-ai.example/acme.")
    ours = run("gate", "--json", "--source", str(source), str(draft))  # the sender's own domain
    assert ours.returncode == 0 and json.loads(ours.stdout) == [], ours.stdout
