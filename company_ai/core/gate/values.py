"""The values a text states (numbers, money, percentages, dates, times said in words), and
the greeting and sign-off spans that are never claims."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import Literal, NamedTuple

from company_ai.core.gate.words import (
    CURRENCIES,
    HONORIFICS,
    MONTHS,
    ORDINALS,
    ORG_WORDS,
    SCALES,
    SHORT_SCALES,
    SIGNATURE_TITLE,
    TENS,
    UNITS,
    WEEKDAYS,
)

# At most this many short lines under a sign-off are a signature, never claims.
SIGNATURE_LINES = 4


Hedge = Literal["approx", "nearly", "min", "max"]


# --- extraction: what a text mentions ------------------------------------------------------

# The greeting words ("Hi", "Good morning", "Dear", "Bonjour") are exempt, and the reader's
# names after them (`salutation_names`) unless the sources say who the reader is; anything
# else there is checked like any claim ("Hi Priya and the Globex team" claims Globex).
GREETING = re.compile(
    r"^\s*(hi|hello|hey|dear|good (morning|afternoon|evening)|greetings|bonjour|bonsoir|salut"
    r"|hola|buenos d[ií]as|buongiorno|ciao|hallo|guten (morgen|tag)|liebe|lieber|ol[aá]|hej"
    r"|hoi|beste|cara|caro|querid[oa])\b[ \t]*[,!:;.]?",
    re.IGNORECASE,
)
# After the greeting words: a word, or a mark that joins names or ends the salutation.
_SALUTATION_TOKEN = re.compile(r"[ \t]*(?:(?P<word>[^\W\d_][\w'’-]*\.?)|(?P<mark>[,&!:;.?—–(-]))")
# Lower-case particles inside a name ("Dana de la Cruz"); not "of" or "the", which name
# something else ("Dana of Globex").
_NAME_PARTICLES = frozenset("de van von der den du la le da di del dos".split())


def salutation_names(line: str, at: int) -> list[tuple[int, int]]:
    """The [start, end) spans of the names a greeting addresses, read from `at` (just after
    its greeting words) in its first line: capitalised runs ("Ms. Dana Reyes") joined by
    `and`, `&` or a comma, up to a comma, a dash, `!`, `.`, `:`, `(` or the line's end ("Hello
    Dana and Sam —"), the reader's (`presence.check`: no claim unless the sources say
    who the reader is). A run that does not end the salutation ("Hi
    Dana Acme grew…") is not the reader's name, nor is one with a company's word ("Hi Dana
    and Globex Capital,"); after `and` the rest is checked ("Hi Priya and the Globex team":
    Priya is the reader, Globex a claim)."""
    accepted: list[tuple[int, int]] = []
    pending: list[tuple[int, int]] = []  # names read, not yet known to be the salutation's
    run: list[int] = []  # [start, end] of the name being read
    company = False  # the name being read has a company's word ("Capital", "Ltd")
    pos, end_of_line = at, len(line.rstrip())

    def close() -> None:
        nonlocal company
        if run and not company:
            pending.append((run[0], run[1]))
        run.clear()
        company = False

    while pos < end_of_line and (m := _SALUTATION_TOKEN.match(line, pos)):
        pos = m.end()
        word, mark = m.group("word"), m.group("mark")
        if word and (word[0].isupper() or (run and word.lower() in _NAME_PARTICLES)):
            stem = word.rstrip(".")
            company = company or stem.lower() in ORG_WORDS
            if stem != word and len(stem) > 1 and stem.lower() not in HONORIFICS:
                run[:] = [run[0] if run else m.start("word"), m.end("word") - 1]
                close()  # "Hi Dana. Acme grew…": a full stop ends the salutation
                return accepted + pending
            run[:] = [run[0] if run else m.start("word"), m.end("word")]
        elif word and word.lower() == "and" and run:
            close()
        elif mark in ("&", ",") and (run or pending):
            joined_after = bool(run)
            close()
            if mark == "," and joined_after:  # a comma may end it ("Hi Dana, Acme grew…")
                accepted += pending
                pending.clear()
        elif mark:  # a dash, "!", ":", ".", "?" or "(": the salutation ends
            close()
            return accepted + pending
        else:  # an ordinary word, or a mark before any name
            if not run:
                return accepted + pending  # after "and": "Hi Priya and the Globex team"
            return accepted  # "Hi Dana Acme grew 20%": no salutation's name
    close()
    return accepted + pending if pos >= end_of_line else accepted


SIGN_OFF = re.compile(
    r"^\s*(best( wishes| regards)?|(kind|warm|warmest|many)? ?regards|many thanks|thanks"
    r"( again| so much)?|thank you|cheers|sincerely|yours( sincerely| truly)?|all the best"
    r"|talk soon|speak soon|take care)\s*[,.!-]*(?=\s*(?:[^\d\s,.;:!?]+[ \t]*){0,4}[.!]?\s*$)",
    re.IGNORECASE,
)
# A signature line that is only a telephone number: "+44 20 7946 0018".
_SEGMENT = re.compile(r"[^,|/–—\n]+")
_PHONE = re.compile(r"^[\s\w.:]{0,8}?[+(]?\d[\d\s().-]{6,}\d\s*$")


_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)


def _word_start(words: Iterable[str]) -> str:
    """The opening of a pattern whose every match is one of `words` at a word's start."""
    return rf"(?=[{''.join(sorted({w[0] for w in words}))}])\b"


# Each pattern opens with a lookahead on its possible first characters, then `\b`, outside
# any group: most positions fail at once instead of trying every alternative (the regex
# engine skips ahead only for a pattern opening with a literal or a character class).
_DATE = re.compile(
    r"(?=[\djfmasondtw])\b(?=\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu"
    r"|fri|sat|sun)"  # what each alternative opens with: most words fail here, at once
    r"(?:"
    rf"\b(?P<iso>(?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}}))\b"
    rf"|\b(?P<sd>\d{{1,2}})[/.](?P<sm>\d{{1,2}})[/.](?P<sy>\d{{4}})\b"
    rf"|\b(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<m1>{_MONTH})(?:,? (?P<y1>\d{{4}}))?\b"
    rf"|\b(?P<m2>{_MONTH}) (?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<y2>\d{{4}}))?\b"
    rf"|\b(?P<m3>{_MONTH})(?:,? (?P<y3>\d{{4}}))?\b"
    r"|\b(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b"
    r")",
)
_WORD_NUM = "|".join(sorted([*UNITS, *TENS, *SCALES], key=len, reverse=True))
# A figure's first character is taken by a class before the alternatives, so the regex
# engine skips ahead to digits and currency signs (a pattern opening with a lookahead is
# tried at every position): the currency is `first` when `mnum` matched, the number is
# `first` and then `num_rest` (the rest of `_NUM`) when `num_rest` did.
_NUM_REST = r"\d{0,2}(?:,\d{3})+(?:\.\d+)?|\d*(?:\.\d+)?"
_DIGITS = re.compile(
    r"(?P<first>[\d$£€¥₹])"
    r"(?:"
    rf"(?<=[$£€¥₹])\s?(?P<mnum>{_NUM})\s?(?P<mscale>bn|mn|[kmb]\b|million\b|billion\b"
    rf"|thousand\b)?"
    rf"|(?<=\d)(?<![a-z\d_.].)(?P<num_rest>{_NUM_REST})(?:(?P<ord>st|nd|rd|th)\b)?"
    rf"(?:\s?(?P<scale>bn\b|mn\b|[km]\b|million\b|billion\b|thousand\b|hundred\b))?"
    r"(?:\s?(?P<pct>%|per ?cent\b|pc\b))?"
    r"(?:\s(?P<curw>dollars?|pounds?|euros?|yen|rupees?|francs?|usd|gbp|eur|jpy|inr|chf)\b)?"
    r")"
)
_WORD_NUMBERS = re.compile(
    rf"(?=[zotfsenhmb])\b(?P<words>(?:(?:{_WORD_NUM})(?:[\s-]+(?:and[\s]+)?)?)+)\b"
    r"(?:\s?(?P<wpct>%|per ?cent\b))?"
)
_ISO_DATE = re.compile(
    r"(?=\d)(?:\b(?P<iso>(?P<iy>\d{4})-(?P<im>\d{1,2})-(?P<id>\d{1,2}))\b"
    r"|\b(?P<sd>\d{1,2})[/.](?P<sm>\d{1,2})[/.](?P<sy>\d{4})\b)"
)
DATE_WORDS = frozenset([*MONTHS, *WEEKDAYS, *(w + "s" for w in WEEKDAYS)])
_DIGIT_OPENING = re.compile(r"\d(?<!\w\d)")  # a digit with \b before it: the scan skips ahead


def _date_starts(lowered: str, words: Iterable[str]) -> list[int]:
    """Every place a date (`_DATE`, `_ISO_DATE`) may start in a lower-case text: a digit
    opening a word, or one of `words`, the month and day names among its letter runs (a
    month in a date is a whole word), found by str.find. A date pattern tried only there
    does a tenth of the work of one tried at every position."""
    return _starts_of(lowered, words, {m.start() for m in _DIGIT_OPENING.finditer(lowered)})


def _starts_of(lowered: str, words: Iterable[str], starts: set[int] | None = None) -> list[int]:
    """Every place one of `words` is found in `lowered` by str.find (and `starts`), in
    order: where a pattern each of whose matches opens with one of them may match."""
    starts = set() if starts is None else starts
    for word in words:
        at = lowered.find(word)
        while at >= 0:
            starts.add(at)
            at = lowered.find(word, at + 1)
    return sorted(starts)


def _matches_at(pattern: re.Pattern, text: str, starts: Iterable[int]) -> Iterable[re.Match]:
    """`pattern.finditer(text)` for a pattern whose every match starts at one of `starts`
    (in order) and is never empty: tried there only."""
    end = 0
    for at in starts:
        if at >= end and (m := pattern.match(text, at)):
            end = m.end()
            yield m


WORD_NUMBERS = frozenset([*UNITS, *TENS, *SCALES])
RELATIVE_WORDS = frozenset(["last", "past", "previous", "yesterday", "earlier"])
FUTURE_WORDS = ("next ", "later this", "end of", "tomorrow")
_ORDINAL = re.compile(r"(?=[tfsen])\b(" + "|".join(ORDINALS) + r")\b")
# "last year", "next month": a time the text asserts; the sources must say the same. (A
# future one in a sentence that proposes a meeting, "free next week?", claims nothing.)
_TIME_SPAN = r"(?:week|weekend|month|quarter|year|season|decade|spring|summer|autumn|winter)\b"
_RELATIVE = re.compile(
    rf"(?=[lpye])\b(?:(?:last|past|previous|earlier this) {_TIME_SPAN}|yesterday\b)",
)
_FUTURE_TIME = re.compile(
    rf"(?=[nlet])\b(?:(?:next|later this|(?:the )?end of (?:the|this|next)) {_TIME_SPAN}"
    r"|tomorrow\b)",
)
_FUTURE = ("next", "later", "tomorrow", "the end", "end")
_WITHIN = re.compile(r"(?:the )?end of ((?:next|this) .+)")


def _time_forms(phrase: str) -> tuple[str, ...]:
    """The relative times a source may say for `phrase`: the phrase, or the time that holds
    it ("the end of next week" falls within "next week")."""
    within = _WITHIN.fullmatch(phrase)
    return (phrase, within.group(1)) if within else (phrase,)


_QUARTER = re.compile(
    r"(?=[qf1-4st])\b(?:q([1-4])|(first|second|third|fourth|1st|2nd|3rd|4th) quarter)"
    r"(?:,? (?:of )?(\d{4}))?\b"
)
_Q_DIGIT = re.compile("q[1-4]")  # what `_QUARTER` needs without "quarter": a literal, found fast
_QUARTERS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3}
_QUARTERS["4th"] = 4
_CURRENCY_CODE = re.compile(r"(usd|gbp|eur|jpy|inr|chf|us\$) ?$")
# A bare lower-case month is one after these ("in march", "since june"); else a verb.
_MONTH_CONTEXT = ("in ", "since ", "until ", "by ", "from ", "of ", "early ", "late ", "mid-")
_WORD = re.compile(r"[^\W\d_][\w'’.-]*[\w]|[^\W\d_]|&")
_QUOTED = re.compile(r"[\"“”]([^\"“”\n]{2,80})[\"“”]")


def _dec(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def _words_value(words: str) -> Decimal | None:
    total, current, seen = 0, 0, False
    for w in re.split(r"[\s-]+", words.lower()):
        if w == "and" or not w:
            continue
        if w in UNITS:
            current += UNITS[w]
        elif w in TENS:
            current += TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w in SCALES:
            total += max(current, 1) * SCALES[w]
            current = 0
        else:
            return None
        seen = True
    return Decimal(total + current) if seen else None


class _Value(NamedTuple):  # a tuple: made for every number of every text, fast to build
    kind: Literal["number", "money", "percent", "date"]
    value: Decimal | None = None
    date: tuple[int | None, int | None, int | None] | None = None  # (year, month, day)
    weekday: str | None = None
    phrase: str | None = None  # a relative time: "last year"
    currency: str | None = None  # "USD" for "$", "dollars", "USD 5"
    quarter: int | None = None  # "Q3", "third quarter"
    ordinal: bool = False  # a rank ("fourth", "4th"): a count ("four") does not support it


# Every character but a-z as a space (after `_letter_runs` made the rest ASCII).
def _ascii_spaces(keep: Callable[[str], bool]) -> dict[int, str]:
    """A str.translate table for ASCII text: each character `keep`s itself, any other is a
    space. Every ASCII character has its entry: str.translate raises and clears a KeyError
    inside for each character missing from a table, once a call (most of its cost)."""
    return {c: chr(c) if keep(chr(c)) else " " for c in range(128)}


_NOT_LETTER = _ascii_spaces(str.islower)


def _letter_runs(lowered: str) -> set[str]:
    """The runs of a-z in a lower-case text (what `[a-z]+` finds), by str.translate."""
    if not lowered.isascii():
        lowered = lowered.encode("ascii", "replace").decode()
    return set(lowered.translate(_NOT_LETTER).split())


def _numbers(original: str, relative: bool = True) -> Iterable[tuple[int, int, _Value]]:
    """(start, end, value) for every date, year, number, money and percentage in text; and
    every relative time ("last year", "next month") unless `relative` is False (the sources'
    are found by their words when a draft asks)."""
    # The patterns are lower-case: matching lower-cased text is several times faster than
    # IGNORECASE. (A character whose lower case is longer keeps the original's offsets.)
    text = original.lower()
    if len(text) != len(original):
        text = "".join(c.lower() if len(c.lower()) == 1 else c for c in original)
    letters = _letter_runs(text)  # skip the patterns that cannot match
    taken: list[tuple[int, int]] = []
    date_words = letters & DATE_WORDS
    dates = _DATE if date_words else _ISO_DATE
    for m in _matches_at(dates, text, _date_starts(text, date_words)):
        g = m.groupdict()
        if g.get("wd"):
            value = _Value("date", weekday=g["wd"].lower())
        elif g["iso"]:
            value = _Value("date", date=(int(g["iy"]), int(g["im"]), int(g["id"])))
        elif g.get("sd"):  # 12/03/2025: day first, as written in the UK and most of Europe
            value = _Value("date", date=(int(g["sy"]), int(g["sm"]), int(g["sd"])))
        else:
            month_text = g["m1"] or g["m2"] or g["m3"]
            month = MONTHS.get(month_text.lower().rstrip("."))
            if month is None:
                continue
            bare = g["m3"] and not g["y3"]
            capital = original[m.start("m3")].isupper() if bare else True
            dated = bare and text[max(0, m.start() - 6) : m.start()].endswith(_MONTH_CONTEXT)
            if bare and not dated and (not capital or month_text in ("may", "mar")):
                continue  # a bare "may" is a verb; a bare month is one when capitalised or dated
            year = g["y1"] or g["y2"] or g["y3"]
            day = g["d1"] or g["d2"]
            value = _Value(
                "date", date=(int(year) if year else None, month, int(day) if day else None)
            )
        taken.append(m.span())
        yield m.start(), m.end(), value
    times = [_RELATIVE] if relative and not letters.isdisjoint(RELATIVE_WORDS) else []
    if relative and any(word in text for word in FUTURE_WORDS):
        times.append(_FUTURE_TIME)
    for pattern in times:
        for m in pattern.finditer(text):
            taken.append(m.span())
            yield m.start(), m.end(), _Value("date", phrase=" ".join(m.group().split()))
    if "quarter" in letters or _Q_DIGIT.search(text):  # "q3", "third quarter"
        # (tried only where one opens: a "q" and a digit, or a rank before "quarter")
        opening = {m.start() for m in _Q_DIGIT.finditer(text)}
        for m in _matches_at(_QUARTER, text, _starts_of(text, _QUARTERS, opening)):
            quarter = int(m.group(1)) if m.group(1) else _QUARTERS[m.group(2)]
            year = int(m.group(3)) if m.group(3) else None
            taken.append(m.span())
            yield m.start(), m.end(), _Value("date", date=(year, None, None), quarter=quarter)
    if not letters.isdisjoint(ORDINALS):
        # (a rank is a whole word, so one of the letter runs: tried only where they are)
        for m in _matches_at(_ORDINAL, text, _starts_of(text, letters.intersection(ORDINALS))):
            taken.append(m.span())
            yield m.start(), m.end(), _Value("number", Decimal(ORDINALS[m.group()]), ordinal=True)
    dated = _Spans(taken) if taken else None
    digits = []
    for m in _DIGITS.finditer(text):
        start, end = m.span()
        if dated and (dated(start) or dated(end - 1)):
            continue
        digits.append((start, end))
        first, mnum, mscale, num_rest, ordinal, scale, pct, curw = m.groups()
        cur = first if mnum is not None else None
        num = first + num_rest if num_rest is not None else None
        tail = text[max(0, start - 2) : start].rstrip(" ")
        code = (  # "USD 5": only a code's last letter may stand there
            _CURRENCY_CODE.search(text, max(0, start - 4), start)
            if tail and tail[-1] in "dpryf$"
            else None
        )
        if cur or curw or code:
            base = _dec(mnum or num)  # type: ignore[arg-type]  # (one of the two matched)
            scale = (mscale or scale or "").lower()
            mult = SHORT_SCALES.get(scale) or SCALES.get(scale, 1)
            currency = CURRENCIES.get(cur or curw or code.group(1))  # type: ignore[union-attr]
            if base is not None:
                yield (
                    code.start() if code else start,
                    end,
                    _Value("money", base * mult, currency=currency),
                )
        elif num is not None:
            base = _dec(num)
            if base is None:
                continue
            scale = scale.lower() if scale else ""
            # (Times 1 too: a product keeps 28 significant digits, as it always did.)
            base *= SHORT_SCALES.get(scale) or SCALES.get(scale, 1)
            if pct:
                yield start, end, _Value("percent", base)
            elif not scale and not ordinal and 1900 <= base <= 2099 and "." not in num:
                yield start, end, _Value("date", date=(int(base), None, None))
            else:
                yield start, end, _Value("number", base, ordinal=bool(ordinal))
    if letters.isdisjoint(WORD_NUMBERS):
        return
    numbered = _Spans(taken + digits)
    for m in _WORD_NUMBERS.finditer(text):
        if numbered(m.start()) or numbered(m.end() - 1):
            continue  # "million" in "$1.2 million" is part of the figure
        g = m.groupdict()
        words = g["words"].strip(" -")
        follows = text[m.start() + len(words) : m.start() + len(words) + 1]
        if words.lower() in ("one", "zero", "and") and follows != "-":
            continue  # "one of", "no one": a pronoun far more often than a count
        if words.lower().startswith("and"):
            continue
        amount = _words_value(words)
        if amount is None:
            continue
        end = m.start() + len(g["words"].rstrip(" -"))
        if g["wpct"]:
            yield m.start(), m.end(), _Value("percent", amount)
        else:
            yield m.start(), end, _Value("number", amount)


# The words a sign-off opens with: an ASCII line opening with none of them is none.
_SIGN_OFF_OPENINGS = tuple(
    "best regards kind warm many thank cheers sincerely yours all talk speak take".split()
)


def _may_sign_off(line: str, stripped: str) -> bool:
    return not line.isascii() or stripped.lower().startswith(_SIGN_OFF_OPENINGS)


def _salutation_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the reader's names in the greeting of `text`'s first line, if any."""
    skipped = len(text) - len(text.lstrip())
    first = text[skipped:].split("\n", 1)[0]
    greeting = GREETING.match(first)
    if not greeting:
        return []
    return [(skipped + a, skipped + b) for a, b in salutation_names(first, greeting.end())]


def _exempt_spans(text: str) -> list[tuple[int, int]]:
    """The greeting words of the first line (not the reader's names after them:
    `_salutation_spans`), the sign-off words ("Best,") and a telephone number in the
    signature below them. The rest of a signature is checked: "Trusted by 500 teams"
    there is a claim like any (the sender's name and company are `allow`ed)."""
    spans: list[tuple[int, int]] = []
    offset = 0
    first = True
    signature = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        end = offset + len(line)
        if stripped:
            greeting = GREETING.match(line) if first else None
            sign_off = SIGN_OFF.match(line) if _may_sign_off(line, stripped) else None
            if greeting:
                spans.append((offset, offset + greeting.end()))
            elif sign_off and len(stripped.split()) <= 8:
                spans.append((offset, offset + sign_off.end()))
                signature = True
            elif signature and _PHONE.match(stripped):
                spans.append((offset, end))
            elif signature:
                # The sender's own title: "Sam Rivers, Account Executive"
                for m in _SEGMENT.finditer(line):
                    if set(m.group().lower().split()) <= SIGNATURE_TITLE:
                        spans.append((offset + m.start(), offset + m.end()))
            first = False
        offset = end
    return spans


class _Spans:
    """Whether a position falls inside any of a set of [start, end) spans (bisect)."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        merged: list[list[int]] = []
        for a, b in sorted(spans):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.starts = [a for a, _ in merged]
        self.ends = [b for _, b in merged]

    def __call__(self, pos: int) -> bool:
        i = bisect_right(self.starts, pos) - 1
        return i >= 0 and pos < self.ends[i]
