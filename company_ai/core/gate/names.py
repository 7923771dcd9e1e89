"""Capitalised runs (the named things a text mentions) and the normalisation that lets a
name in a text meet the same name in a source."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from decimal import Decimal

from company_ai.core.gate.phrases import _runs_of, _sentence_start
from company_ai.core.gate.values import _WORD, _ascii_spaces, _Spans
from company_ai.core.gate.words import (
    ABBREVIATIONS,
    COMMON,
    CONNECTORS,
    CORPORATE,
    COUNTRY_NAMES,
    DEMONYMS,
    FAMOUS,
    HONORIFICS,
)


def _names(text: str, blocked: list[tuple[int, int]]) -> Iterable[tuple[int, int, list[str]]]:
    """Capitalised sequences (joined by `of`, `de`, `&`…) that may name something."""
    run: list[tuple[int, int, str]] = []

    def flush() -> tuple[int, int, list[str]] | None:
        while run and run[-1][2].lower() in CONNECTORS:
            run.pop()
        found = (run[0][0], run[-1][1], [w for _, _, w in run]) if run else None
        run.clear()
        return found

    spans = _Spans(blocked)  # read with a cursor: the words come in order
    span_starts, span_ends, k = spans.starts, spans.ends, 0
    ascii_text = text.isascii()
    pos = 0
    # `_WORD.finditer(text)`, word by word; outside a run, in ASCII, straight to the next
    # word opening with a capital (the lower-case words between change nothing).
    while m := (
        _WORD.search(text, pos) if run or not ascii_text else _next_capital_word(text, pos)
    ):
        pos = m.end()
        word = m.group()
        capital = word[0].isupper()
        if not run and not capital:
            continue  # the common case: a lower-case word outside any name
        if word.endswith(".") and not _is_abbrev(word):
            word = word.rstrip(".")  # a trailing full stop, unless it abbreviates
        start = m.start()
        end = start + len(word)
        while k < len(span_ends) and span_ends[k] <= start:
            k += 1
        inside = k < len(span_starts) and span_starts[k] <= start
        lower = word.lower()
        joined = run and not inside and text[run[-1][1] : start] in (" ", "-")
        # "One" after a name is the name's ("League One", "Formula One"), not a pronoun.
        if joined and (lower in CONNECTORS or (capital and (lower not in COMMON or word == "One"))):
            run.append((start, end, word))
        else:
            if run and (found := flush()):
                yield found
            if capital and not inside and not _ordinary(text, start, word):
                run.append((start, end, word))
        ends_sentence = text[end : end + 1] in (".", "!", "?") and not _is_abbrev(word)
        if run and ends_sentence and (found := flush()):
            yield found  # a word ending a sentence ends the run too
    if found := flush():
        yield found


_CAPITAL = re.compile("[A-Z]")
_RUN_MARKS = frozenset("0123456789_'.-")  # what a run of word characters holds but letters


def _next_capital_word(text: str, pos: int) -> re.Match | None:
    """In ASCII text, the first `_WORD` at or after `pos` that opens with a capital, with
    `pos` where a `_WORD` may start (0, or where one ended). A word opens at a run's first
    letter: a capital after a letter in the same run of word characters, ' . and -
    ("McGregor", "e-Commerce") is inside a word; after digits or marks only, it opens one
    ("3M")."""
    while hit := _CAPITAL.search(text, pos):
        at = before = hit.start()
        while before > 0 and text[before - 1] in _RUN_MARKS:
            before -= 1
        if before > 0 and text[before - 1].isalpha():
            pos = at + 1  # inside a word
            continue
        return _WORD.match(text, at)
    return None


def _ordinary(text: str, start: int, word: str) -> bool:
    """A capitalised word that names nothing: `I`, or a common word opening a sentence."""
    lower = word.lower()
    if lower in ("i", "i'm", "i've", "i'd", "i'll"):
        return True
    if lower in COMMON:
        return not word.isupper() or _sentence_start(text, start)
    return False


def _is_abbrev(word: str) -> bool:
    return word.lower().rstrip(".") in ABBREVIATIONS


# --- the sources: what they say, normalised once ------------------------------------------

# Combining marks (the accents NFKD splits off), deleted by str.translate.
_COMBINING = dict.fromkeys(
    c
    for r in ((0x300, 0x370), (0x1AB0, 0x1B00), (0x1DC0, 0x1E00), (0x20D0, 0x2100))
    for c in range(*r)
)


_COMBINING_MARKS = _runs_of("".join(map(chr, _COMBINING)))


_POSSESSIVE = re.compile(r"['’]s\b")
_NOT_WORD = re.compile(r"[^\w]+")
# ASCII punctuation as spaces, by str.translate: the common case, without a regex pass.
_ASCII_PUNCTUATION = _ascii_spaces(lambda c: c.isalnum() or c == "_")


def _norm(text: str) -> str:
    """Lower-case, accent-free, punctuation as spaces, possessives and apostrophes gone."""
    if text.isalnum() and text.isascii():
        return text.lower()  # one plain word ("Acme"): the common case, nothing else to do
    return " ".join(_norm_tokens(text))


def _norm_tokens(text: str) -> list[str]:
    """`_norm(text).split()`, without joining the tokens only to split them again."""
    if text.isalnum() and text.isascii():
        return [text.lower()]
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text.replace("ø", "o").replace("ł", "l"))
        text = _COMBINING_MARKS.sub("", text)
    ascii_only = text.isascii()  # "Zürich" is ASCII once its accent is gone
    text = text.lower()
    if "'" in text or "’" in text:
        text = _POSSESSIVE.sub("", text).replace("'", "").replace("’", "")
    text = text.replace("&", " and ")
    if ascii_only:
        return text.translate(_ASCII_PUNCTUATION).split()
    return _NOT_WORD.sub(" ", text).split()


_HYPHEN_SUFFIX = re.compile(r"-(?:based|born|led|owned|made|era|style|backed|run)$", re.I)


def _name_key(words: Sequence[str]) -> str:
    """The normalised form of a name: no corporate suffix, honorific or leading "the"."""
    if len(words) > 8:  # a long run (a hostile text's) is not kept in the memo
        return _key_of.__wrapped__(tuple(words))
    return _key_of(tuple(words))


@functools.lru_cache(maxsize=4096)
def _key_of(words: tuple[str, ...]) -> str:
    """`_name_key`, memoised: a draft asks for the same name's key once for each source
    passage it is looked for in, and again in the presence check."""
    tokens = _norm_tokens(" ".join([_HYPHEN_SUFFIX.sub("", w) if "-" in w else w for w in words]))
    while tokens and (tokens[0] in HONORIFICS or tokens[0] == "the"):
        tokens = tokens[1:]
    while len(tokens) > 1 and tokens[-1] in CORPORATE:
        tokens = tokens[:-1]
    return " ".join(tokens)


_PLACE_OF = {p: d for d, places in DEMONYMS.items() for p in places.split()}


# A capital first, then "no word character before it": the scan skips to capitals at once.
_ACRONYM = re.compile(r"[A-Z](?<!\w[A-Z])[A-Z0-9&]+\b")


# Every Latin-1 character that cannot stand in a `_WORD` (a word character, ' . or -) as a
# space, for bytes.translate: what is left, split, is the runs a word may take.
_NOT_RUN = bytes(c if re.fullmatch(r"[\w'.-]", chr(c)) else ord(" ") for c in range(256))


# A dot and a letter or digit after a word: a domain's ("globex.com"), not a full stop.
_DOMAIN_DOT = frozenset(f".{c}" for c in "abcdefghijklmnopqrstuvwxyz0123456789")
_TWO = Decimal(2)
_YEAR_ONLY = frozenset([None])  # the nouns of a year said alone ("in 2025"): it counts nothing


# Every character but a-z and 0-9 as a space (after `_alnum_runs` made the text ASCII).
_NOT_LOWER_ALNUM = _ascii_spaces(lambda c: "a" <= c <= "z" or c.isdigit())


def _alnum_runs(text: str) -> set[str]:
    """The runs of a-z and 0-9 in a text, by str.translate: among them, every `_LOWER_WORD`
    that could be a known name's first word (a normalised token, never holding . or -)."""
    if not text.isascii():
        text = text.encode("ascii", "replace").decode()
    return set(text.translate(_NOT_LOWER_ALNUM).split())


_CAPITALISED_WORD = re.compile(r"(?<!\w)[^\W\d_][\w'’.-]*")
_NAMES_AFTER = re.compile(r"(?:[ -][A-Z][\w'’-]*){0,3}")  # always matches, maybe empty
_LOWER_WORD = re.compile(r"(?<![\w@./-])[a-z][a-z0-9]*(?:[.-][a-z0-9]+)*")


@functools.lru_cache(maxsize=8)
def _known_names(
    known: tuple[str, ...],
) -> tuple[dict[str, list[tuple[str, ...]]], frozenset[str]]:
    """The names anyone knows (`known` and the famous), by first token; and their words.
    Cached: outreach judges many drafts against the same CRM."""
    famous, famous_tokens = _famous_by_first()
    by_first = dict(famous)  # (the famous lists are shared: each is replaced, never changed)
    own = _by_first(known)
    for first, keys in own.items():
        by_first[first] = keys + famous.get(first, [])  # `known` first, then the famous
    return by_first, famous_tokens.union(t for keys in own.values() for k in keys for t in k)


@functools.cache
def _famous_by_first() -> tuple[dict[str, list[tuple[str, ...]]], frozenset[str]]:
    """`_by_first(FAMOUS)` and its tokens, once: the famous are the same for every CRM."""
    by_first = _by_first(FAMOUS)
    return by_first, frozenset(t for keys in by_first.values() for k in keys for t in k)


def _by_first(names: Iterable[str]) -> dict[str, list[tuple[str, ...]]]:
    """The name keys of `names` that may be a known name, by first token, in order."""
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for name in names:
        tokens = tuple(_name_key(name.split()).split())
        if tokens and (len(tokens) > 1 or len(tokens[0]) > 3):
            by_first.setdefault(tokens[0], []).append(tokens)
    return by_first


def _swap(text: str, old: str, new: str) -> str:
    return f" {text} ".replace(f" {old} ", f" {new} ").strip()


_ALSO_CALLED = {name: group for group in COUNTRY_NAMES for name in group}
_ALSO_CALLED_FIRST = frozenset(name.split()[0] for name in _ALSO_CALLED)
