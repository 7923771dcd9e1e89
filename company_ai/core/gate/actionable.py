"""What a reader could act on: links, email addresses, phone numbers and instructions to
log in, verify, pay or update details. `actionable_claims` finds each one in a text that is
not the company's own (`Own`: its domains and phone numbers, from the settings), whatever
the sources say: a research page that tells the company's customers to "verify at" a link
is exactly the text a draft must never repeat, and a gate that only asks "did a source say
it?" would pass it.

Refused always: a link written in pieces (`hxxps://`, `evil[.]example`, `evil(dot)example`),
a URL shortener (it hides where it goes), a domain in another script or in punycode
(`xn--`: it may imitate another), a link with a name before `@` (`https://company.com@evil`).
Refused unless the company's own: any other link, bare domain or `www.` name, email address
and phone number. An instruction ("verify your account", "log in at", "wire the payment
to", "your account is on hold") is allowed only in a draft that names one of the company's
own links, addresses or numbers and nothing else a reader could act on; it is found in the
text as a whole, so an instruction split across sentences is seen as one.

Every pattern here is linear in the text: each match starts only where a run begins (a
look-behind) and repeats possessively, so a failed match never rescans what it read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from company_ai.core.gate.claim import Claim
from company_ai.core.gate.phrases import _fold
from company_ai.core.gate.values import _Spans

# Services whose short links hide their destination; never the company's own.
SHORTENERS = frozenset(
    """
    bit.ly t.co tinyurl.com goo.gl ow.ly is.gd buff.ly rebrand.ly cutt.ly shorturl.at
    tiny.cc rb.gy t.ly s.id bl.ink lnkd.in trib.al v.gd x.co shorte.st adf.ly bitly.com
    tiny.one short.io soo.gd clck.ru qr.net u.to 1url.com surl.li tinyurl.at
    """.split()
)
# Top-level domains a bare name must end in to be read as a domain ("acme.com", not "e.g").
_TLDS = frozenset(
    """
    com org net io ai co uk de fr nl eu es it se no dk fi ie be ch at pl pt cz us ca au nz in
    jp cn app dev tech biz info me example test local email global xyz top site online shop
    store link click live ru tk ml ga cf gq ly to gl gd cc tv ws su pw icu club win vip work
    support help security secure account login bank pay money finance services cloud page
    """.split()
)
_PIECE_DOT = r"(?:\.|\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)|\{dot\})"
_HOST = rf"[\w-]++(?:{_PIECE_DOT}[\w-]++)++"
_URL = re.compile(r"(?<![\w.])(?:h[tx]{2}ps?|s?ftp)(?:\[:\]|:)//[^\s<>\"']*+", re.IGNORECASE)
_EMAIL = re.compile(
    rf"(?<![\w.+-])[\w.+-]++\s?(?:@|\[at\]|\(at\)|\{{at\}})\s?{_HOST}", re.IGNORECASE
)
_DOMAIN = re.compile(rf"(?<![\w.@-]){_HOST}(?:/[^\s<>\"']*+)?", re.IGNORECASE)
_PIECES = re.compile(r"\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)|\{dot\}|\[:\]|hxxp", re.IGNORECASE)
_PIECE_DOTS = re.compile(_PIECE_DOT, re.IGNORECASE)
_PHONE = re.compile(r"(?<![\w+.,/-])(?:\+|\(\+?)?\d[\d ().\-]*+")
_PHONE_CUE = re.compile(
    r"\b(?:call|phone|tel|telephone|text|whatsapp|ring|dial|sms|mobile|cell|fax|number)\b"
    r"[^\d\n]{0,20}$",
    re.IGNORECASE,
)
_DATE_LIKE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")
_THOUSANDS = re.compile(r"\d{1,3}(?:[ .]\d{3})+")
_YEAR = re.compile(r"(?:19|20)\d\d")

_GAP = r"(?:[\w'’-]++\s++){0,3}"  # up to three words between an instruction's parts
_THING = (
    r"(?:account|identity|details|information|info|credentials|password|passcode|pin|"
    r"login|log-in|billing|payment|card|bank|mailbox|email|profile|subscription|access)"
)
_INSTRUCTION = re.compile(
    r"\b(?:"
    rf"(?:verify|confirm|validate|re-?activate|unlock|restore|reconfirm|re-?validate|secure)"
    rf"\s++your\s++{_GAP}{_THING}"
    r"|(?:log|sign)(?:\s|-)?(?:in|on)\s++(?:at|here|via|through|now)\b"
    rf"|(?:log|sign)(?:\s|-)?(?:in|on)\s++to\s++your\s++{_THING}"
    r"|(?:reset|change|update|enter|provide|submit|re-?enter)\s++your\s++"
    rf"{_GAP}(?:password|passcode|pin|credentials|card|bank|billing|payment|login|details)"
    rf"|(?:your|the)\s++{_THING}\s++(?:is|has\s++been|was|will\s++be|are|have\s++been)\s++"
    r"(?:temporarily\s++|now\s++|currently\s++)?(?:suspended|locked|on\s++hold|frozen|"
    r"disabled|limited|restricted|deactivated|compromised|expired|blocked|closed|flagged)"
    r"|(?:wire|transfer|remit|send|deposit)\s++(?:the\s++|your\s++|all\s++)?"
    r"(?:funds|money|payment|amount|balance|invoice|fee|deposit|sum)\b"
    r"|(?:pay|wire|remit)\s++(?:\w+\s++){0,2}(?:to|into|via)\s++(?:the|this|our|my|a|an|"
    r"new|following)\b"
    r"|(?:new|updated|changed)\s++(?:bank|banking|payment|wire|remittance)\s++"
    r"(?:details|account|information|instructions)"
    r"|(?:click|tap|follow|open|visit|use)\s++(?:the|this|our)\s++(?:secure\s++)?link"
    r"|(?:link|button)\s++(?:below|above)|click\s++here|gift\s++cards?"
    r")",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Own:
    """What is the company's own: its domains (a subdomain counts: `mail.company.com`) and
    phone numbers. The sender's email domain belongs with `domains`. `readers`: the
    reader's own email addresses, which a draft may quote back to them ("I have
    dana@acme.com on file") but which never vouch for an instruction."""

    domains: tuple[str, ...] = ()
    phones: tuple[str, ...] = ()
    readers: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, domains: Iterable[str] = (), phones: Iterable[str] = (), readers: Iterable[str] = ()
    ) -> Own:
        """An `Own`, normalised: domains lower-case without a scheme or `www.`, phones as
        digits, addresses lower-case; duplicates and blanks dropped, sorted (so its
        fingerprint is stable)."""
        hosts = {_bare(d) for d in domains}
        digits = {_digits(p) for p in phones}
        addresses = {r.strip().lower() for r in readers}
        return cls(
            tuple(sorted(h for h in hosts if h)),
            tuple(sorted(d for d in digits if d)),
            tuple(sorted(a for a in addresses if a)),
        )

    def with_readers(self, readers: Iterable[str]) -> Own:
        """This company's own, with the draft's reader's addresses."""
        return Own.of(self.domains, self.phones, [*self.readers, *readers])

    def owns_host(self, host: str) -> bool:
        return any(host == d or host.endswith("." + d) for d in self.domains)

    def owns_phone(self, digits: str) -> bool:
        number = digits.lstrip("0")
        return len(number) >= 7 and any(
            p.lstrip("0").endswith(number) or number.endswith(p.lstrip("0")) for p in self.phones
        )

    def to_json(self) -> list:
        return [list(self.domains), list(self.phones), list(self.readers)]


def _bare(domain: str) -> str:
    host = domain.strip().lower().rstrip(".")
    host = re.sub(r"^[a-z]+://", "", host).split("/", 1)[0].rpartition("@")[2]
    return host.removeprefix("www.")


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def actionable_claims(parts: Mapping[str, str], own: Own) -> list[tuple[str, Claim]]:
    """Each link, email address, phone number and instruction in the named parts that is not
    the company's own, as (part, claim) in part then text order; offsets are into each part."""
    read = {name: (text, *_fold(text)) for name, text in parts.items()}
    found = {name: _destinations(*read[name], own) for name in parts}
    named_own = any(ok for items in found.values() for _, ok in items)
    foreign = any(not ok for items in found.values() for _, ok in items)
    claims: list[tuple[str, Claim]] = []
    for name in parts:
        mine = [claim for claim, ok in found[name] if not ok]
        if foreign or not named_own:
            inside = _Spans([(c.start, c.end) for c, _ in found[name]])
            mine += [c for c in _instructions(*read[name]) if not inside(c.start)]
        claims += [(name, c) for c in sorted(mine, key=lambda c: (c.start, c.end))]
    return claims


def why_refused(claim: Claim) -> str:
    """Why an actionable claim is refused, for a reader."""
    if claim.kind == "instruction":
        return (
            "an instruction to log in, verify, pay or update details, in a draft that names"
            " none of the company's own links or numbers"
        )
    if claim.kind == "phone":
        return "a phone number that is not one of the company's own"
    if claim.kind == "email":
        return "an email address at a domain that is not one of the company's own"
    return _link_problem(claim.text, Own()) or "a link that is not one of the company's own"


ACTIONABLE_KINDS = frozenset({"link", "email", "phone", "instruction"})


def _destinations(
    text: str, folded: str, origin: tuple[int, ...] | None, own: Own
) -> list[tuple[Claim, bool]]:
    """Every link, address and number in `text` (read as `folded`, whose character i sits
    at `origin[i]` of `text`), with whether it is the company's own."""
    found: list[tuple[Claim, bool]] = []
    taken: list[tuple[int, int]] = []  # spans of `folded` already read, each pass's after it

    def span(a: int, b: int) -> tuple[int, int]:
        return (origin[a], origin[b - 1] + 1) if origin else (a, b)

    for m in _URL.finditer(folded):
        a, b = span(*_trimmed(folded, m.start(), m.end()))
        taken.append(m.span())
        raw = text[a:b]
        found.append((Claim(raw, "link", a, b), _link_problem(raw, own) is None))
    inside = _Spans(taken)
    for m in _EMAIL.finditer(folded):
        if inside(m.start()):
            continue
        taken.append(m.span())
        a, b = span(*_trimmed(folded, m.start(), m.end()))
        raw = text[a:b]
        if raw.lower() in own.readers:
            continue  # the reader's own address, said back to them
        host = re.split(r"@|\[at\]|\(at\)|\{at\}", raw, flags=re.IGNORECASE)[-1].strip()
        ok = raw.isascii() and not _PIECES.search(raw) and own.owns_host(host.lower())
        found.append((Claim(raw, "email", a, b), ok))
    inside = _Spans(taken)
    for m in _DOMAIN.finditer(folded):
        if inside(m.start()) or not _is_domain(m.group()):
            continue
        taken.append(m.span())
        a, b = span(*_trimmed(folded, m.start(), m.end()))
        raw = text[a:b]
        found.append((Claim(raw, "link", a, b), _link_problem(raw, own) is None))
    inside = _Spans(taken)
    for m in _PHONE.finditer(folded):
        if inside(m.start()):
            continue
        start, end = _trimmed(folded, m.start(), m.end(), strip=" ().-")
        number = folded[start:end]
        if _is_phone(number, folded[max(0, start - 40) : start]):
            a, b = span(start, end)
            found.append((Claim(text[a:b], "phone", a, b), own.owns_phone(_digits(number))))
    return found


def _trimmed(text: str, start: int, end: int, strip: str = ".,;:!?)]}'\"") -> tuple[int, int]:
    while end > start and text[end - 1] in strip:
        end -= 1
    return start, end


def _host_of(link: str) -> tuple[str, bool]:
    """A link's host (lower-case, pieces joined) and whether a name stood before an `@`."""
    rest = re.sub(r"^[a-z]+(?:\[:\]|:)//", "", link.strip(), flags=re.IGNORECASE)
    authority = re.split(r"[/?#\\]", rest, maxsplit=1)[0]
    userinfo = "@" in authority
    host = authority.rpartition("@")[2].rsplit(":", 1)[0] if ":" in authority else authority
    host = host.rpartition("@")[2]
    host = _PIECE_DOTS.sub(".", host).lower().rstrip(".")
    return host.removeprefix("www."), userinfo


def _link_problem(link: str, own: Own) -> str | None:
    """Why a link may not stand in a draft, or None if it is the company's own."""
    host, userinfo = _host_of(link)
    if _PIECES.search(link):
        return f"a link written in pieces ({link[:80]}): a disguised address is never sent"
    if userinfo:
        return (
            f"a link with a name before '@' ({link[:80]}): it goes to {host}, whatever the"
            " name says"
        )
    if host in SHORTENERS:
        return f"a shortened link ({host}): it hides where it goes"
    if not host.isascii() or any(label.startswith("xn--") for label in host.split(".")):
        skeleton = _fold(host)[0]
        like = next((d for d in own.domains if skeleton == d or skeleton.endswith("." + d)), "")
        imitation = f" that imitates {like}" if like else ""
        return f"a domain in another script or punycode ({host}){imitation}"
    if own.owns_host(host):
        return None
    labels = host.split(".")
    site = ".".join(labels[-3:] if len(labels[-1]) == 2 and len(labels) > 2 else labels[-2:])
    if any(host.startswith(d + ".") for d in own.domains):
        return f"a link to {host}, a site of {site} that only begins with the company's name"
    return f"a link to {host}, not one of the company's own domains"


def _is_domain(found: str) -> bool:
    """Whether a bare dotted name reads as a domain: it ends in a top-level domain we know
    and is not a sentence run together ("growth.It")."""
    if found.lower().startswith("www."):
        return True
    host = _PIECE_DOTS.sub(".", found.split("/", 1)[0]).rstrip(".")
    labels = host.split(".")
    tld = labels[-1]
    if len(labels) < 2 or tld.lower() not in _TLDS or not labels[0] or labels[0].isdigit():
        return False
    return not (tld[0].isupper() and tld[1:].islower() and found == host)


def _is_phone(number: str, before: str) -> bool:
    """Whether a run of digits and separators reads as a phone number, not a figure, a
    date or a range of years."""
    digits = _digits(number)
    if not 7 <= len(digits) <= 15:
        return False
    cue = bool(_PHONE_CUE.search(before))
    if number.startswith("+"):
        return True
    groups = re.findall(r"\d+", number)
    if _DATE_LIKE.match(number) or all(len(g) == 4 and _YEAR.fullmatch(g) for g in groups):
        return False
    if len(groups) == 1 or _THOUSANDS.fullmatch(number):
        return cue
    return True


def _instructions(text: str, folded: str, origin: tuple[int, ...] | None) -> list[Claim]:
    claims = []
    for m in _INSTRUCTION.finditer(folded):
        a, b = (origin[m.start()], origin[m.end() - 1] + 1) if origin else m.span()
        claims.append(Claim(text[a:b], "instruction", a, b))
    return claims
