"""The fabrication gate: every claim in a text must appear in the sources it was given.

A claim is any number (integers, decimals, percentages, money, dates, years, numbers
written as words) and any named thing (people, companies, products, places, titles,
quoted names). Each is compared with the sources after normalisation, so fair
paraphrases pass: `$1.2M` = `1,200,000`, `20%` = `twenty percent`, `Acme Inc.` = `Acme`,
`Grace` = `Grace Hopper`, `the US` = `the United States`, `Indian` = `Indians`, `two men`
= `both men`, a hedged number (`about 900`) may round its source (`897`) by up to 10 % and
a large round figure (`£11,000`) may round it at its own precision (`£11,072`). (A people is
of its place, one way: `Welsh` is supported by `Wales` or `Welsh`, `Kenyan` by `Kenya`,
but `Wales` needs `Wales`; and a rank needs a rank: `fourth` is not `four`, and `the
second year` needs a second year.) The greeting words (`Hi`, `Bonjour`), the sign-off and
a short signature below it, and any term in `allow` (the sender's own name) are never
claims; nor is the reader a greeting addresses (`Hi Grace,`, and `Grace` again later)
when the sources do not say who the reader is (no `CRM:` line; when they do, as an
outreach draft's material does, they must hold the name: `Hi Maja,` to Grace is a claim); nor
is a time the text offers (`happy to talk next week`, `free on Thursday?`). Vague
quantities (`hundreds of`, `more than a decade`), ranks (`the first`) and times said in
words (`next month`, `last year`) are claims like numbers and dates.

Inside, each module imports only those below it: `words` (the word lists), `claim` (what
a claim is), `values`, `phrases` and `names` (what a text states), `extract` (a text's
`Mentions`, no source looked at), `index` (the sources, normalised once: `SourceIndex`),
`presence` (`check`: what no source holds), `context` (`check_together`: what no source
passage holds together), `verdict` (`find_unsupported_claims`, `judge`, `GateVerdict`) and
`report` (`explain`: each claim in its sentence, marked, with a reason a person reads);
`actionable` (links, addresses, numbers and instructions not the company's own: `Own`) sits
beside `extract`.
Pure code, no model and no third-party package.
"""

from company_ai.core.gate.actionable import Own
from company_ai.core.gate.claim import Claim
from company_ai.core.gate.report import Explained, explain, explain_stored, explain_verdict
from company_ai.core.gate.verdict import GateVerdict, find_unsupported_claims, judge

__all__ = [
    "Claim",
    "Explained",
    "GateVerdict",
    "Own",
    "explain",
    "explain_stored",
    "explain_verdict",
    "find_unsupported_claims",
    "judge",
]
