"""The fabrication gate's vocabulary: the word lists `core/gate.py` reads, and nothing else.

Data only. Every word is lower case; a change here changes verdicts, so bump
`gate.GATE_VERSION` with it (a test says when).
"""

from __future__ import annotations

# --- numbers and dates --------------------------------------------------------------------

MONTHS = {
    m: i
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        start=1,
    )
    for m in names.split()
}
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
UNITS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen"
        " fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
TENS = {
    w: 10 * i
    for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)
}
ORDINALS = {
    w: i
    for i, w in enumerate(
        "third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth"
        " fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(),
        start=3,
    )
}
SCALES = {"hundred": 100, "thousand": 1_000, "million": 10**6, "billion": 10**9}
SHORT_SCALES = {"k": 1_000, "m": 10**6, "mn": 10**6, "bn": 10**9, "b": 10**9}
# Words before a number that make it approximate ("about 900"): see gate.HEDGE_TOLERANCE.
HEDGES = (
    "about around roughly nearly almost over approximately some under close to more than"
    " less than fewer than up to circa"
).split()
# A small count right before one of these ("six months") needs the same unit in the sources.
TIME_UNITS = {"year", "month", "week", "day", "hour", "minute", "decade", "season", "time"}

# --- names --------------------------------------------------------------------------------

# Capitalised words that start sentences or sit in greetings without naming anything.
COMMON = set(
    """
    a an the this that these those there here it its it's i i'm i've i'd i'll we we're we've
    we'd we'll you you're you've you'd you'll your yours he she they them their our ours my me
    his her hers us who what when where why how which whose whom if then so but and or nor
    for yet as at by in on of to from with without about above after again against all also
    am any are aren't be because been before being below between both can can't could
    couldn't did didn't do does doesn't doing don't down during each few further had hadn't
    has hasn't have haven't having into is isn't just let's more most much must no not now
    off once only other ought out over own same shall should shouldn't some such than too
    under until up very was wasn't were weren't will won't would wouldn't yes ok okay please
    thanks thank thankyou hi hello hey dear greetings regards best cheers sincerely kind warm
    warmest many all yours congratulations congrats hope hoping looking great good quick
    just saw noticed given since while although though however still also perhaps maybe
    would could might happy glad excited welcome following further finally first second
    third next last lastly another one every everyone anyone someone nothing something
    curious wondering reaching writing sharing following worth imagine picture consider
    interested interesting keen apologies sorry p.s ps re fwd subject note call let see
    check find meet join try read reply book grab feel drop ping ask tell send attached
    """.split()
)
HONORIFICS = {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame", "lord", "lady"}
# Lower-case words that join a name's parts: "Bank of England", "Van der Berg", "O'Brien & Sons".
CONNECTORS = {"of", "the", "de", "van", "von", "der", "den", "du", "la", "le", "da", "di", "&"}
# Left off the end of a company's name when comparing it: "Acme Inc." is "Acme".
CORPORATE = {
    "inc",
    "incorporated",
    "ltd",
    "limited",
    "llc",
    "gmbh",
    "plc",
    "corp",
    "corporation",
    "co",
    "bv",
    "ab",
    "sa",
    "ag",
    "nv",
    "llp",
    "pty",
    "the",
}
# Abbreviations whose full stop does not end a sentence.
ABBREVIATIONS = frozenset({"inc", "ltd", "corp", "co", "dr", "mr", "mrs", "ms", "st"})
ORG_WORDS = set(
    """
    inc ltd llc gmbh plc corp corporation bv ab sa ag group labs analytics robotics foods
    health energy software studios capital manufacturing design consulting systems networks
    materials pharma media logistics council university college school bank club fc united
    city association party ministry police agency company institute foundation trust board
    commission authority service services hospital
    """.split()
)
TITLE_WORDS = set(
    """
    ceo cto coo cfo cmo cio vp head director manager lead chief officer president founder
    chair chairman chairwoman engineer principal partner
    """.split()
)
# Words that are never half of a person's name ("President Smith" is not a pair of names).
ROLE_WORDS = set(
    """
    president minister chancellor king queen prince princess pope senator governor mayor
    judge general captain coach striker midfielder defender goalkeeper comedian singer
    actor actress author secretary
    """.split()
)
PLACES = set(
    """
    london manchester leeds bristol edinburgh glasgow cardiff belfast dublin cork amsterdam
    rotterdam berlin hamburg munich paris lyon madrid barcelona lisbon stockholm oslo
    copenhagen helsinki warsaw krakow prague vienna zurich milan rome new york boston
    chicago toronto sydney tokyo singapore hong kong liverpool birmingham newcastle
    sheffield nottingham swansea aberdeen dundee england scotland wales ireland britain
    uk us usa france germany spain portugal italy netherlands sweden norway denmark finland
    poland austria switzerland belgium china japan india russia turkey europe america africa
    asia australia canada brazil mexico
    """.split()
)
# A demonym names its place: "a Welsh club" is supported by "Wales".
DEMONYMS = {
    "welsh": "wales",
    "scottish": "scotland",
    "scots": "scotland",
    "english": "england",
    "irish": "ireland",
    "british": "britain uk united kingdom",
    "french": "france",
    "german": "germany",
    "spanish": "spain",
    "italian": "italy",
    "dutch": "netherlands holland",
    "swedish": "sweden",
    "norwegian": "norway",
    "danish": "denmark",
    "finnish": "finland",
    "polish": "poland",
    "american": "america us usa united states",
    "european": "europe eu",
    "chinese": "china",
    "japanese": "japan",
    "indian": "india",
    "russian": "russia",
    "turkish": "turkey",
    "australian": "australia",
    "canadian": "canada",
}
