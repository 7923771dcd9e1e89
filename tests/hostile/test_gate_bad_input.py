"""The gate on bad input: a verdict in bounded time, never a crash (speed is benchmarked,
never asserted here)."""

from __future__ import annotations

import functools

from company_ai.core.gate import GateVerdict, find_unsupported_claims, judge
from company_ai.core.gate import context as gate_context

DRAFT = {
    "subject": "Redfern, a question",
    "body": "Hi Priya,\n\nRevenue grew 41% last year at Redfern Clinics.\n\nBest,\nSam Rivers\n",
}
ALLOW = ["Sam Rivers"]
SOURCE = "Redfern Clinics: revenue grew 41% last year. Priya Okonkwo is its CFO."
FILLER = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor"
    " incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud"
    " exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure"
    " dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat, ünïcödé 12.\n"
)

find_together = functools.partial(find_unsupported_claims, together=True)


def verdict(parts, sources) -> GateVerdict:
    result = judge(parts, sources, ALLOW, known=["Globex"])
    assert isinstance(result, GateVerdict)
    return result


def test_empty_sources_reject_every_claim_and_nothing_else():
    assert [c.text for _, c in verdict(DRAFT, []).claims] == [
        "Redfern",
        "41%",
        "last year",
        "Redfern Clinics",
    ]
    assert verdict({"body": "Thanks, talk soon."}, []).passed
    assert verdict({"body": ""}, [""]).passed


def test_a_five_megabyte_source_gets_a_verdict():
    huge = FILLER * (5_000_000 // len(FILLER) + 1) + SOURCE
    assert len(huge) > 5_000_000
    assert verdict(DRAFT, [huge]).passed
    assert not verdict({"body": "Revenue grew 42% last year."}, [huge]).passed


def test_a_draft_in_another_language_gets_a_verdict():
    german = "Hallo Priya,\n\nder Umsatz von Redfern Clinics wuchs um 41 % im letzten Jahr.\n"
    # Its capitalised nouns read as names the sources lack: held back, never passed blind.
    # ("Hallo Priya," greets the reader: neither word is a claim.)
    assert [c.text for _, c in verdict({"body": german}, [SOURCE]).claims] == [
        "Umsatz",
        "Jahr",
    ]
    japanese = "プリヤ様\n\nレッドファーンの売上は41%伸びました。グローベックスも顧客です。\n"
    assert verdict({"body": japanese}, [SOURCE]).passed  # no number or name it can read
    assert not verdict({"body": japanese.replace("41", "48")}, [SOURCE]).passed


def test_mixed_scripts_and_look_alikes_get_a_verdict():
    mixed = "Hi Priya,\n\nRеdfеrn Сlinics grew 4\u200b1% and Глобекс 9\u2079% with Gl\u043ebex.\n"
    claims = [c.text for _, c in verdict({"body": mixed}, [SOURCE]).claims]
    assert claims == ["Глобекс", "9\u2079%", "Gl\u043ebex"]
    assert verdict({"body": "\u200b\u200d\ufeff" * 1000 + "\U0001f600" * 1000}, [SOURCE]).passed


def test_one_long_line_gets_a_verdict():
    line = " ".join(["revenue grew 41% last year at redfern clinics and"] * 5_000)
    assert len(line) > 200_000 and "\n" not in line
    assert verdict({"body": line}, [SOURCE]).passed
    assert not verdict({"body": line + " Globex 43%"}, [SOURCE]).passed


def test_the_co_occurrence_check_on_bad_input_gets_a_verdict(monkeypatch):
    """`gate_context`: a 5 MB source, a 200,000-character line full of pairs; each source
    passage indexed at most once, each claim paired with at most `REACH` others."""
    built, pairs = [], []
    index_of, together = gate_context.Passages.index, gate_context.Passages.together
    monkeypatch.setattr(
        gate_context.Passages,
        "index",
        lambda self, i: (i in self._indexes or built.append(i)) and 0 or index_of(self, i),
    )
    monkeypatch.setattr(
        gate_context.Passages,
        "together",
        lambda self, *args: pairs.append(1) or together(self, *args),
    )
    rivals = "Globex grew 43% last year.\n"
    huge = FILLER * (5_000_000 // len(FILLER) + 1) + SOURCE + "\n" + rivals
    assert len(huge) > 5_000_000
    found = find_together("Hi Priya,\n\nRedfern Clinics grew 43%.\n", [huge], allow=ALLOW)
    assert [(c.kind, c.text) for c in found] == [("misattributed", "Redfern Clinics grew 43%")]
    assert built and len(built) == len(set(built))  # every passage indexed once at most
    line = " ".join(["Redfern Clinics grew 41% and Priya Okonkwo"] * 5_000)
    assert len(line) > 200_000 and "\n" not in line
    pairs.clear()
    assert find_together(line, [SOURCE]) == []
    items = line.count("Redfern") + line.count("41%") + line.count("Priya")
    assert 0 < len(pairs) <= gate_context.REACH * items
    assert [c.kind for c in find_together(line + " Priya Okonkwo got 43%", [SOURCE, rivals])] == [
        "misattributed"
    ]
