"""How an English sentence divides, for the co-occurrence check (`context`): sentences and
lines, the points where a clause ends or a new subject starts, relative clauses, and the
words just before a mention (a preposition, an -ing verb, "your", a possessive). Plain
text rules, each linear in the text; what they mean for a pair of claims is `context`'s.
"""

from __future__ import annotations

import re

_LIST = re.compile(r"[ ,]*(?:(?:and|or|&|as well as) +)?(?:the +)?")
# A sentence ends after . ! or ? (the mark is the sentence's: its break starts after it),
# at a semicolon or at a line's end. Each alternative opens with a literal or a class, so
# the regex engine skips ahead to them (a look-behind first is tried at every position).
_SENTENCE_END = re.compile(r"[.!?][\"'’”)\]]*[ \t]+(?=[\"“'‘(\[]?[A-Z0-9])|;[ \t]+|\n+")


def sentences(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence or line of `text`, in one scan."""
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        at = m.start() + 1 if text[m.start()] in ".!?" else m.start()
        if at > start:
            spans.append((start, at))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


# Where a sentence starts another statement: a comma and a conjunction, a colon, a dash; or
# sets another subject beside its own ("41% against Initech's 12%").
# A comma or a conjunction before a new subject starts another clause too: "Having run
# clinics at Fenland, you will know…", "Octavia raised $5 million and Heatpulse installs
# 600", "…a month after Featherstone led…" (a subject: a capitalised word or a pronoun).
_CLAUSE_END = re.compile(
    r", +(?:and|but|while|whereas) +| (?:while|whereas|against|versus|vs\.?|unlike) +|: +"
    r"| [-–—] +| (?:compared (?:with|to)|ahead of|alongside|next to) +"
    r"|, +(?=(?:i|you|we|they|he|she|it) )"
    r"| (?:after|before|when|because|although|though|since|until|once|if|unless)"
    r" +(?=(?:i|you|we|they|he|she|it) |[A-Z])"
)
# "and" before a capitalised word: another clause's subject unless the word before "and"
# is capitalised too (a list of names sharing one verb: "Topshop and ASOS gave…").
_CONJOINED = re.compile(r" (?:and|but|so) +(?=[A-Z])")
# A relative clause ("Mews, which also serves Accor, …"): about the claim just before it.
_RELATIVE = re.compile(r", +(?:which|who|whose|where) +")

_GERUND = re.compile(
    r"\b(?:[A-Za-z][a-z]+ing|[Aa]t|[Ii]n|[Ff]or|[Ff]rom|[Ww]ith|[Bb]y|[Oo]f|[Tt]o|[Oo]n|[Ii]nto"
    r"|[Vv]ia|[Aa]bout|[Oo]ver|[Tt]han)\s+$"
)
# The patterns below end in `\s+$`: each is asked only of the words just before a point.
_BEFORE_CHARS = 64


def _just_before(pattern: re.Pattern[str], text: str, start: int, end: int) -> bool:
    """`pattern` (ending in `$`) matches text[start:end] at its end. Only its last
    `_BEFORE_CHARS` are searched, so that a long sentence costs each mention a constant,
    not the sentence's length (a word boundary still sees the character before)."""
    return bool(pattern.search(text, max(start, end - _BEFORE_CHARS), end))


_A_NAME = re.compile(r"\ban?\s+$", re.IGNORECASE)
# A preposition just before a name: its object, not who a figure after it belongs to.
_OBJECT = re.compile(
    r"\b(?:at|in|for|from|with|by|of|to|on|into|via|about|over|than)\s+$", re.IGNORECASE
)
# What a page calls a company before its name ("Grocery chain Bukka Fresh", "Logistics group
# Hartmann & Cie"): the word opening the sentence before one of these describes the name.
_DESCRIBED = frozenset(
    "chain group brand retailer rival competitor start-up startup firm company bank fund"
    " insurer carrier maker operator supplier distributor studio publisher client customer"
    " partner investor airline grocer platform agency".split()
)
# "your" just before a claim: the sentence gives it to the reader ("led your $75 million").
_YOURS = re.compile(r"\byour\s+(?:own\s+)?$", re.IGNORECASE)
# A possessive pronoun just before a name: what it names belongs to someone already named.
_POSSESSED = re.compile(r"\b(?:its|their|his|her|our|your)\s+$", re.IGNORECASE)
# The endings of English abstract nouns: a sentence opening with one alone ("Occupancy
# reached 84%", "Production doubled") names no subject.
_NOUN_ENDINGS = ("ancy", "ency", "ity", "tion", "sion", "ment", "ance", "ence", "ship")

# A short lower-case word inside one name: "Aceros del Norte", "Bank of Ireland".
_JOINING = re.compile(r" (?:[a-z]{1,3}|&) ")


def _after_lower(text: str, at: int) -> bool:
    """Whether the word ending at `at` opens with no capital ("in 2024", "a month")."""
    word = text[text.rfind(" ", 0, at) + 1 : at]
    return not word[:1].isupper()


def _relatives(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """[start, stop) of each relative clause opening in text[start:end] (", which …,"),
    from its comma to its next comma or to `end`."""
    found = []
    for m in _RELATIVE.finditer(text, start, end):
        comma = text.find(",", m.end(), end)
        found.append((m.start(), comma if comma >= 0 else end))
    return found
