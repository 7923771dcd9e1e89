"""The fabrication gate's vocabulary: the word lists the gate's modules read, and nothing else.

Data only. Every word is lower case; a change here changes verdicts, so bump
`verdict.GATE_VERSION` with it (a test says when).
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
# Words before a number that hedge it, and which way: "approx" (either side, see
# gate.HEDGE_TOLERANCE), "min" ("over 40": the truth is at least 40), "max" ("under 40":
# at most 40), "nearly" (just below: "almost 1,200" is not 1,100).
HEDGES = {
    **dict.fromkeys(
        "about|around|roughly|approximately|approx|circa|some|~|close to|in the region of"
        "|something like".split("|"),
        "approx",
    ),
    **dict.fromkeys("nearly|almost|just under|just shy of|not quite".split("|"), "nearly"),
    **dict.fromkeys(
        "over|more than|above|at least|upwards of|in excess of|north of|just over|beyond|+".split(
            "|"
        ),
        "min",
    ),
    **dict.fromkeys(
        "under|less than|fewer than|below|up to|at most|no more than|within".split("|"), "max"
    ),
}
# Units of time, with their abbreviations: "45 minutes" is not "45 seconds".
TIME_UNITS = {
    **dict.fromkeys(["second", "sec", "secs", "s"], "second"),
    **dict.fromkeys(["minute", "min", "mins"], "minute"),
    **dict.fromkeys(["hour", "hr", "hrs", "h"], "hour"),
    **dict.fromkeys(["day"], "day"),
    **dict.fromkeys(["week", "wk", "wks"], "week"),
    **dict.fromkeys(["month", "mo", "mos"], "month"),
    **dict.fromkeys(["quarter"], "quarter"),
    **dict.fromkeys(["year", "yr", "yrs"], "year"),
    **dict.fromkeys(["decade"], "decade"),
    **dict.fromkeys(["season"], "season"),
}
# Nouns that count the same thing: "805 people" is "805 staff" (a number is supported only by
# a source number with the same noun, or none).
NOUN_SYNONYMS = {
    w: group.split()[0]
    for group in (
        "people person staff employee worker colleague headcount fte member strong hire"
        " team-member personnel",
        "customer client account user buyer",
        "site location branch facility",
        "store shop outlet",
        "office",
        "supplier vendor",
        "role vacancy opening job position",
        *"depot warehouse plant kitchen clinic practice hotel retailer restaurant patient"
        " publisher manufacturer agent order country product".split(),
    )
    for w in group.split()
}
# Currencies by symbol, code and name.
CURRENCIES = {
    **dict.fromkeys(["$", "us$", "usd", "dollar", "dollars"], "USD"),
    **dict.fromkeys(["£", "gbp", "pound", "pounds", "sterling"], "GBP"),
    **dict.fromkeys(["€", "eur", "euro", "euros"], "EUR"),
    **dict.fromkeys(["¥", "jpy", "yen"], "JPY"),
    **dict.fromkeys(["₹", "inr", "rupee", "rupees"], "INR"),
    **dict.fromkeys(["chf", "franc", "francs"], "CHF"),
}
# Vague counts and what they mean: "hundreds of customers" needs 200-999 of them.
VAGUE_COUNTS = {
    "a dozen": (12, 12),
    "dozens": (24, 199),
    "hundreds": (200, 999),
    "thousands": (2_000, 999_999),
    "tens of thousands": (20_000, 99_999),
    "hundreds of thousands": (200_000, 999_999),
    "millions": (2_000_000, 999_999_999),
}
# Words that multiply: "doubled" is 2x, "in half" 0.5x.
MULTIPLES = {
    **dict.fromkeys("double doubled doubles doubling twice two-fold twofold".split(), 2),
    **dict.fromkeys(
        "triple tripled triples tripling treble trebled trebles trebling threefold three-fold"
        " thrice".split(),
        3,
    ),
    **dict.fromkeys("quadruple quadrupled quadrupling fourfold four-fold".split(), 4),
    **dict.fromkeys(["halved", "halving", "in half", "by half", "half as"], 0.5),
}

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
# A country or body under its other names: "the US" is "the United States" and "America"
# (a short form counts only in capitals: "us" is a pronoun).
COUNTRY_NAMES = (
    ("us", "usa", "united states", "united states of america", "america"),
    ("uk", "united kingdom", "britain", "great britain"),
    ("uae", "united arab emirates", "emirates"),
    ("eu", "european union"),
    ("un", "united nations"),
    ("netherlands", "holland"),
)
# More places: a sentence-opening place is a name even where it is also an English word.
PLACES |= set(
    """
    albania algeria argentina armenia austria azerbaijan bahrain bangladesh belarus bolivia
    bosnia botswana bulgaria cambodia cameroon chile colombia croatia cuba cyprus czechia
    ecuador egypt estonia ethiopia georgia ghana greece hungary iceland indonesia iran iraq
    israel jamaica jordan kazakhstan kenya korea kosovo kuwait latvia lebanon libya
    lithuania luxembourg malaysia malta mexico moldova monaco mongolia montenegro morocco
    mozambique myanmar namibia nepal nigeria pakistan panama paraguay peru philippines
    qatar romania rwanda saudi senegal serbia slovakia slovenia somalia sudan syria taiwan
    tanzania thailand tunisia uganda ukraine uruguay uzbekistan venezuela vietnam yemen
    zambia zimbabwe
    antwerp athens bangkok beijing bordeaux brussels bucharest budapest cairo cambridge
    cape coventry delhi derby doha dubai durham exeter frankfurt geneva gothenburg
    hamilton istanbul jakarta kyiv lagos leicester lille los madrid marseille melbourne
    miami milan montreal moscow mumbai nairobi naples oxford perth plymouth porto reading
    riga rome salford seoul shanghai sofia southampton stuttgart sunderland tallinn
    utrecht vancouver vilnius washington york
    """.split()
)
# Ordinary words that open a sentence alone ("Huge news"): no name, though capitalised.
OPENERS = frozenset(
    """
    huge nice big wow amazing fantastic exciting lovely superb well really quite brilliant
    impressive clearly honestly frankly certainly obviously truly genuinely surely recently
    lately details congrats kudos bravo sounds seems looks loved love enjoyed sure absolutely
    support revenue growth orders sales customers clients pricing demand hiring teams
    finance operations margins costs profits staff everyone nobody somebody per via
    write see email reply visit take have get give keep use follow watch look make come bring
    """.split()
)
# Words that open a verb's object: determiners and object pronouns. A capitalised word
# alone at a sentence's opening, right before one of these ("Verify the numbers", "Shoot
# me a note"), is a verb in the imperative: a name is followed by its verb or a comma.
OBJECT_OPENERS = frozenset(
    "the a an this that these those my your our his her its their me us him them it".split()
)
# Nouns of time: after a determiner they make an adverbial, which may follow a name
# ("Acme this year grew", "Acme a decade ago"), so that determiner opens no object.
TIME_NOUNS = frozenset(
    """
    second minute hour day week weekend month quarter year decade century season time
    morning afternoon evening night spring summer autumn fall winter
    """.split()
)
# Endings of English adjectives and adverbs: a sentence-opening word ending so, alone in
# its run, is an ordinary word ("Impressive growth"), unless anyone knows it as a name.
ENGLISH_ENDINGS = ("ive", "ful", "ous", "ible", "able", "ing", "ed", "ic", "ant", "ent", "ness")
# Famous companies and products a draft might drop in, in any case ("we work with stripe").
FAMOUS = frozenset(
    """
    accenture adobe airbnb alibaba amazon apple asana atlassian aws azure barclays
    bloomberg boeing booking.com calendly canva cisco coca-cola deloitte dell deliveroo
    dropbox ebay facebook figma freshworks gartner github gitlab gmail google grammarly
    hsbc hubspot ibm instagram intel intercom jira kpmg linkedin lloyds mailchimp mckinsey
    meta microsoft miro monday.com netflix netsuite nike notion nvidia okta openai oracle
    paypal pwc quickbooks revolut sage salesforce samsung sap shopify siemens slack
    snowflake spotify stripe tesco tesla tiktok trello twilio twitter uber unilever visa
    vodafone walmart whatsapp workday xero youtube zapier zendesk zoom zoho
    """.split()
)
COMMON |= {"morning", "afternoon", "evening", "re", "fw", "fyi", "ps"}
# Words a sender's signature may give as their own title ("Sam Rivers, Account Executive").
SIGNATURE_TITLE = (
    TITLE_WORDS
    | ROLE_WORDS
    | set(
        """
    account executive sales business development growth partnerships customer success
    representative associate specialist consultant senior junior marketing operations
    revenue solutions of and & team
    """.split()
    )
)
# Top-level domains that make `word.tld` an address rather than the end of a sentence.
TLDS = frozenset(
    """
    com org net io ai co uk de fr nl eu es it se no dk fi ie be ch at pl pt cz us ca au
    nz in jp cn app dev tech biz info me example test local email global
    """.split()
)
# Look-alike letters of other scripts, read as the Latin letter they imitate.
CONFUSABLES = dict(
    zip(
        "аеорсухіјѕԁӏАВЕКМНОРСТХІЈЅΑΒΕΖΗΙΚΜΝΟΡΤΥΧοι",
        "aeopcyxijsdlABEKMHOPCTXIJSABEZHIKMNOPTYXoi",
        strict=True,
    )
)

# --- claims that are phrases ---------------------------------------------------------------
# Each regex (matched on lower-case text) claims a relationship with the contact; it is
# supported only by a source (the contact's own history) matching its evidence regex.
RELATIONSHIPS = {
    "conversation": (
        r"\bas (?:we )?discussed\b|\bour (?:recent |last |earlier |previous |brief |quick )?"
        r"(?:phone )?(?:call|chat|conversation|discussion|talk)\b|\bwe (?:spoke|talked|chatted)"
        r"|\b(?:speaking|talking|chatting) (?:with|to) you\b|\b(?:good|great|nice|lovely)"
        r" (?:to )?(?:speak|speaking|talk|talking|chat|chatting)\b|\b(?:thanks|thank you)"
        r" (?:again )?for (?:the|our|your) (?:call|chat|time|conversation)\b",
        r"\bcall(?:ed)?\b|\bphone\b|\bspoke\b|\bconversation\b|\bchat(?:ted)?\b|\btalked\b"
        r"|\bdiscuss(?:ed|ion)\b",
    ),
    "meeting": (
        r"\b(?:good|great|nice|lovely|pleasure|glad)(?: to)? (?:meet|meeting|seeing) you\b"
        r"|\bwhen we met\b|\bour (?:meeting|meetup)\b|\bwe met\b|\bafter meeting you\b",
        r"\bmet\b|\bmeeting\b|\bmeetup\b|\bconference\b",
    ),
    "introduction": (
        r"\b(?:our|the|your) (?:introduction|intro)\b|\b(?:you were|we were|i was) introduced"
        r"|\b(?:mutual|our) (?:friend|contact|connection)\b|\breferred (?:me|by)\b",
        r"\bintroduc|\breferr",
    ),
    "customer": (
        r"\b(?:long-?time|long-standing|longstanding|loyal|valued|existing|current|returning)"
        r" (?:customer|client|user|partner)s?\b|\bas (?:a|our) (?:customer|client)\b"
        r"|\byour (?:account|subscription|renewal|contract) with us\b",
        r"\b(?:customer|client) since\b|\brenew|\bsubscri|\bcontract\b|\bsigned\b",
    ),
    "proposal": (
        r"\b(?:my|our|the) (?:proposal|quote|quotation)\b",
        r"\bproposal\b|\bquot",
    ),
    "message": (
        r"\b(?:my|our) (?:last |previous |earlier |recent )?(?:email|e-mail|note|message|mail)"
        r"\b|\bas promised\b|\bi sent you\b",
        r"\boutreach\b|\bsent\b",
    ),
    "reply": (
        r"\b(?:thanks|thank you) for (?:your|the) (?:reply|response|answer|email|message|note)"
        r"|\byou (?:replied|asked|mentioned|told me|wrote)\b|\byour (?:reply|response|question)"
        r"|\bas you (?:asked|mentioned|said|requested)\b",
        r"\brepl(?:y|ied)\b|\brespon|\basked\b|\bmentioned\b",
    ),
    "engagement": (
        r"\byou (?:visited|viewed|downloaded|signed up|registered|attended|checked out)\b"
        r"|\b(?:thanks|thank you) for (?:visiting|downloading|signing up|attending|registering)",
        r"\bview|\bvisit|\bdownload|\bsigned up\b|\bregister|\battend",
    ),
}
# Where a match of each relationship's claim opens: it starts with one of these (letters,
# spaces and dashes). The gate scans for them before trying the long pattern
# (`phrases._PHRASE_OPENINGS`); a test holds them against each pattern.
RELATIONSHIP_OPENINGS = {
    "conversation": (
        "as discussed|as we |chatting to you|chatting with you|good chat|good speak|"
        "good talk|good to |great chat|great speak|great talk|great to |lovely chat|"
        "lovely speak|lovely talk|lovely to |nice chat|nice speak|nice talk|nice to |"
        "our brief |our call|our chat|our conversation|our discussion|our earlier |"
        "our last |our phone |our previous |our quick |our recent |our talk|"
        "speaking to you|speaking with you|talking to you|talking with you|"
        "thank you again |thank you for our call|thank you for our chat|"
        "thank you for our conversation|thank you for our time|thank you for the call|"
        "thank you for the chat|thank you for the conversation|thank you for the time|"
        "thank you for your call|thank you for your chat|thank you for your conversation|"
        "thank you for your time|thanks again |thanks for our call|thanks for our chat|"
        "thanks for our conversation|thanks for our time|thanks for the call|"
        "thanks for the chat|thanks for the conversation|thanks for the time|"
        "thanks for your call|thanks for your chat|thanks for your conversation|"
        "thanks for your time|we chatted|we spoke|we talked"
    ).split("|"),
    "meeting": (
        "after meeting you|glad meet you|glad meeting you|glad seeing you|glad to|"
        "good meet you|good meeting you|good seeing you|good to|great meet you|"
        "great meeting you|great seeing you|great to|lovely meet you|lovely meeting you|"
        "lovely seeing you|lovely to|nice meet you|nice meeting you|nice seeing you|"
        "nice to|our meeting|our meetup|pleasure meet you|pleasure meeting you|"
        "pleasure seeing you|pleasure to|we met|when we met"
    ).split("|"),
    "introduction": (
        "i was introduced|mutual connection|mutual contact|mutual friend|our connection|"
        "our contact|our friend|our intro|referred by|referred me|the intro|"
        "we were introduced|you were introduced|your intro"
    ).split("|"),
    "customer": (
        "as a client|as a customer|as our client|as our customer|current client|"
        "current customer|current partner|current user|existing client|existing customer|"
        "existing partner|existing user|long-|longstanding client|longstanding customer|"
        "longstanding partner|longstanding user|longtime client|longtime customer|"
        "longtime partner|longtime user|loyal client|loyal customer|loyal partner|"
        "loyal user|returning client|returning customer|returning partner|returning user|"
        "valued client|valued customer|valued partner|valued user|your account with us|"
        "your contract with us|your renewal with us|your subscription with us"
    ).split("|"),
    "proposal": (
        "my proposal|my quotation|my quote|our proposal|our quotation|our quote|"
        "the proposal|the quotation|the quote"
    ).split("|"),
    "message": (
        "as promised|i sent you|my e-mail|my earlier |my email|my last |my mail|"
        "my message|my note|my previous |my recent |our e-mail|our earlier |our email|"
        "our last |our mail|our message|our note|our previous |our recent "
    ).split("|"),
    "reply": (
        "as you asked|as you mentioned|as you requested|as you said|"
        "thank you for the answer|thank you for the email|thank you for the message|"
        "thank you for the note|thank you for the reply|thank you for the response|"
        "thank you for your answer|thank you for your email|thank you for your message|"
        "thank you for your note|thank you for your reply|thank you for your response|"
        "thanks for the answer|thanks for the email|thanks for the message|"
        "thanks for the note|thanks for the reply|thanks for the response|"
        "thanks for your answer|thanks for your email|thanks for your message|"
        "thanks for your note|thanks for your reply|thanks for your response|you asked|"
        "you mentioned|you replied|you told me|you wrote|your question|your reply|"
        "your response"
    ).split("|"),
    "engagement": (
        "thank you for attending|thank you for downloading|thank you for registering|"
        "thank you for signing up|thank you for visiting|thanks for attending|"
        "thanks for downloading|thanks for registering|thanks for signing up|"
        "thanks for visiting|you attended|you checked out|you downloaded|you registered|"
        "you signed up|you viewed|you visited"
    ).split("|"),
}
# Superlatives and awards: each is supported only by a source holding its key word.
SUPERLATIVE = (
    r"\b(?:award|prize)[- ]?winning\b|\bawards?\b"
    r"|\b(?:industry|market|world|sector|category)[- ]leading\b|\bworld[- ]class\b"
    r"|\bbest[- ]in[- ]class\b|\bbest[- ]of[- ]breed\b|\b(?:top|highest|best)[- ]"
    r"(?:rated|ranked|selling|reviewed)\b|\bfastest[- ]growing\b|\bnumber[- ]one\b"
    r"|\bno\. ?1\b|#\s?1\b|\bfirst[- ]ever\b|\brecord[- ](?:breaking|setting)\b"
    r"|\b(?:market|industry) leader\b|\bunrivall?ed\b|\bunmatched\b|\bunparall?eled\b"
    r"|\b(?:the|a|an|our|its|their)(?: \w+'s)? leading\b|\btop[- ](?:\d+|ten|five|three)\b"
    r"|\branked\b"
    r"|\b(?:the|our|its|their|your|\w+'s) (?:most|least) (?!of\b|out\b|important\b|common\b)"
    r"[a-z]{4,}\b"
    r"|\b(?:the|our|its|their|your|\w+'s) (?!latest\b|earliest\b|best\b|interest|request"
    r"|honest|modest|forest|guest|west|rest\b|test|nest|quest|suggest|invest|harvest|contest"
    r"|protest|digest|manifest|arrest|chest|pest|priest|vest|lest|unrest)[a-z]{2,}est\b"
    r"|\b(?:is|are|as|be|the|our) best\b(?! (?:time|way|day|date|person|people|place|approach"
    r"|option|next|fit|contact|moment|channel|number|address|wishes|regards|of luck|to\b))"
)
# SUPERLATIVE can only match a text holding one of these (or a word in -est after a
# determiner): a cheap test that spares most drafts the long pattern.
SUPERLATIVE_TRIGGERS = (
    "award prize leading class breed rated ranked selling reviewed fastest number no. #"
    " first record leader unriv unmatch unparal top most least best"
).split()
# Words that may be a recipient's role in any case; the c-suite's spelled-out forms.
C_SUITE = {
    "ceo": "chief executive officer",
    "cfo": "chief financial officer",
    "coo": "chief operating officer",
    "cto": "chief technology officer",
    "cmo": "chief marketing officer",
    "cio": "chief information officer",
    "cpo": "chief product officer",
    "cro": "chief revenue officer",
    "ciso": "chief information security officer",
    "vp": "vice president",
    "md": "managing director",
}
ROLE = (
    r"\b(?:co-?)?founder\b|\b(?:(?:senior|executive) )?vice[- ]president(?: of [a-z]+)?"
    r"|\bpresident\b|\bchief (?:[a-z]+ ){0,2}officer\b|\bchief executive\b"
    r"|\bmanaging director\b|\bhead of [a-z]+(?: [a-z]+)?|\bdirector of [a-z]+"
    r"|\b(?:finance|financial|marketing|operations|sales|technical|commercial|people|hr|it"
    r"|product|procurement|office|supply chain|engineering|project|programme|program)"
    r" (?:director|manager|lead)\b"
    r"|\b(?:ceo|cfo|coo|cto|cmo|cio|cpo|cro|ciso|svp|evp|vp)(?: (?:of )?(?:operations|finance"
    r"|sales|marketing|engineering|product|people|technology|procurement|hr|it|growth))?\b"
)
# Where a match of ROLE opens (see RELATIONSHIP_OPENINGS).
ROLE_OPENINGS = (
    "ceo|cfo|chief |cio|ciso|cmo|co|cpo|cro|cto|director of |engineering director|"
    "engineering lead|engineering manager|evp|executive |finance director|finance lead|"
    "finance manager|financial director|financial lead|financial manager|founder|"
    "head of |hr director|hr lead|hr manager|it director|it lead|it manager|"
    "managing director|marketing director|marketing lead|marketing manager|"
    "office director|office lead|office manager|operations director|operations lead|"
    "operations manager|people director|people lead|people manager|president|"
    "procurement director|procurement lead|procurement manager|product director|"
    "product lead|product manager|program director|program lead|program manager|"
    "programme director|programme lead|programme manager|project director|project lead|"
    "project manager|sales director|sales lead|sales manager|senior |"
    "supply chain director|supply chain lead|supply chain manager|svp|technical director|"
    "technical lead|technical manager|vice|vp"
).split("|")
