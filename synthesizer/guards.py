"""Near-miss guards: why two similar statements are NOT the same fact.

Embeddings place "the cache TTL is five minutes" next to "... five hours" (a real
embedder scores such pairs 0.95 and more, above most true paraphrases), so cosine alone
cannot decide a merge. Before the synthesizer merges a memory into a near-duplicate fact
it asks ``conflict(memory, fact)``; any reason returned keeps them apart, whichever
embedder scored them. The checks are lexical and deterministic (no model, no clock):

- ``number``: the numbers differ, after reading number words ("five" = 5, "twice" = 2)
  and converting quantities to base units ("5 minutes" = "300 seconds", "24h" = "24 hours");
- ``unit``: both name units of one dimension without numbers, and different ones
  ("wrong month" / "wrong year");
- ``negation``: one is negated and the other is not ("not", "never", "n't", "fails to" …);
- ``polarity``: one says a word and the other its opposite ("higher" / "lower");
- ``component``: they name different things — different proper names or identifiers
  on each side ("Redis" / "Kafka", "January" / "March"), or one slot swapped in an
  otherwise equal statement where the slot is a component noun or modifies one
  ("login test" / "checkout test", "users" / "products").

Precision over recall: a paraphrase that drops or converts a number in an unusual way
("12 percent" / "one in eight") stays a separate fact; a wrong merge would lose a fact.
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Features", "conflict", "features", "first_unguarded"]

# --- lexicons ------------------------------------------------------------------

_NUMBER_WORDS = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "twice": 2, "thrice": 3, "dozen": 12,
}  # fmt: skip
# ("one" is left out: it is as often a pronoun or an article as a number)
_MULTIPLIERS = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}


def _set(words: str) -> frozenset[str]:
    """A frozenset of the whitespace-separated words."""
    return frozenset(words.split())


_UNITS: dict[str, tuple[str, float]] = {}
for _unit_names, _dim, _factor in (
    ("ms msec millisecond milliseconds", "time", 0.001),
    ("s sec secs second seconds", "time", 1.0),
    ("m min mins minute minutes", "time", 60.0),
    ("h hr hrs hour hours", "time", 3600.0),
    ("d day days", "time", 86400.0),
    ("w wk wks week weeks", "time", 604800.0),
    ("month months", "time", 2629800.0),
    ("y yr yrs year years", "time", 31557600.0),
    ("b byte bytes", "size", 1.0),
    ("kb kilobyte kilobytes", "size", 1e3),
    ("mb megabyte megabytes", "size", 1e6),
    ("gb gigabyte gigabytes", "size", 1e9),
    ("tb terabyte terabytes", "size", 1e12),
    ("kib", "size", 1024.0),
    ("mib", "size", 1024.0**2),
    ("gib", "size", 1024.0**3),
    ("percent pct", "percent", 1.0),
    ("dollar dollars usd", "usd", 1.0),
    ("euro euros eur", "eur", 1.0),
):
    for _n in _unit_names.split():
        _UNITS[_n] = (_dim, _factor)
_BARE_ONLY = _set("s m h d w y b")  # single letters count only after a number

_NEGATIONS = _set(
    "not no never cannot without none nothing nobody neither nor nowhere "
    "dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt "
    "hasnt havent hadnt aint mustnt neednt"
)
_NEGATING_VERBS = _set("fail fails failed failing unable refuse refuses refused")

_ANTONYMS = (
    ("pass passes passed passing", "fail fails failed failing failure failures"),
    ("succeed succeeds succeeded success successful", "fail fails failed failure"),
    ("enable enables enabled", "disable disables disabled"),
    ("increase increases increased increasing", "decrease decreases decreased decreasing"),
    ("rise rises rose risen rising", "fall falls fell fallen falling"),
    ("grow grows grew grown growing", "shrink shrinks shrank shrunk shrinking"),
    ("high higher highest", "low lower lowest"),
    ("more most", "less least fewer fewest"),
    ("old older oldest", "young younger youngest"),
    ("above", "below"),
    ("before", "after"),
    ("fast faster fastest", "slow slower slowest"),
    ("up", "down"),
    ("open opens opened", "close closes closed"),
    ("allow allows allowed", "deny denies denied block blocks blocked"),
    ("start starts started", "stop stops stopped"),
    ("add adds added", "remove removes removed"),
    ("include includes included", "exclude excludes excluded"),
    ("valid", "invalid"),
    ("min minimum", "max maximum"),
    ("first", "last"),
    ("online", "offline"),
    ("early earlier earliest", "late later latest"),
    ("best", "worst"),
    ("large larger largest big bigger biggest", "small smaller smallest"),
    ("long longer longest", "short shorter shortest"),
    ("true", "false"),
    ("internal", "external"),
    ("public", "private"),
    ("read reads", "write writes"),
    ("inbound", "outbound"),
    ("upload uploads", "download downloads"),
    ("import imports imported", "export exports exported"),
    ("encrypt encrypted", "decrypt decrypted"),
    ("lock locked", "unlock unlocked"),
    ("sync synchronous", "async asynchronous"),
    ("upper", "lower"),
)
_POLE: dict[str, list[tuple[int, int]]] = {}
for _g, (_plus, _minus) in enumerate(_ANTONYMS):
    for _side, _words in enumerate((_plus, _minus)):
        for _w in _words.split():
            _POLE.setdefault(_w, []).append((_g, _side))

# Names written in lower case as often as not.
_KNOWN_NAMES = _set(
    "redis kafka postgres postgresql mysql mariadb sqlite mongodb cassandra dynamodb "
    "elasticsearch opensearch memcached rabbitmq nats celery airflow spark flink hadoop "
    "nginx apache haproxy envoy docker kubernetes helm terraform ansible jenkins grafana "
    "prometheus datadog sentry cloudflare heroku vercel aws gcp azure s3 ec2 lambda "
    "github gitlab bitbucket google slack stripe paypal okta auth0 safari chrome firefox "
    "edge chromium android ios linux windows macos ubuntu debian python java golang rust "
    "node nodejs react vue angular django flask fastapi rails spring pandas numpy pytorch "
    "tensorflow graphql grpc json csv xml yaml parquet avro protobuf http https tcp udp "
    "dns tls ssl ssh oauth saml jwt"
)

# Nouns naming components, jobs and entities: a swap of one of them (or of what modifies
# one) in an otherwise equal statement is a different fact.
_HEADS = _set(
    "service server test page job table column field queue cluster node environment "
    "endpoint api database bucket index module pipeline branch container pod image file "
    "parser worker process app application region zone set pool connection email "
    "button screen form model feature flag library package repo repository script tool "
    "metric dashboard alert account plan tier store cache config log user customer "
    "product order item row record team backup deploy deployment build release channel "
    "topic tab view widget report certificate balancer proxy gateway host machine disk "
    "volume key token cookie header route handler controller client browser device "
    "tablet desktop mobile phone schema migration query request response cron task "
    "thread webhook invoice cart bot agent sensor camera network firewall vpn"
)

_PHRASES = (  # spelling variants that would otherwise look like different words
    (re.compile(r"\b(?:sign|log)[ -]?in\b"), "login"),
    (re.compile(r"\b(?:sign|log)[ -]?out\b"), "logout"),
    (re.compile(r"\bsign[ -]?up\b"), "signup"),
    (re.compile(r"\be-mail"), "email"),
    (re.compile(r"\bstart-up\b"), "startup"),
    (re.compile(r"\bk8s\b"), "kubernetes"),
    (re.compile(r"\bprod\b"), "production"),
    (re.compile(r"\bdbs?\b"), "database"),
    (re.compile(r"\bper cent\b"), "percent"),
    (re.compile(r"%"), " percent "),
    (re.compile(r"\$\s?(\d[\d,.]*)"), r"\1 dollars "),
    (re.compile(r"€\s?(\d[\d,.]*)"), r"\1 euros "),
)

# cheap test whether any of _PHRASES can apply (most texts: none)
_PHRASE_HINT = re.compile(r"sign|log|e-mail|start-up|k8s|prod|db|per cent|[%$€]")

_STOPWORDS = _set(
    """a an the and or but so yet of to in on at by for with from into onto upon as than
    then that this these those there here it its is are was were be been being am do does
    did has have had having will would shall should can could may might must i you he she
    we they me him her us them my your his our their what which who whom whose when where
    why how all any both each some such only own same too very just also about again once
    get gets got"""
)

_WORD = re.compile(r"\d+(?:[.,:]\d+)*[^\W\d_]*|[^\W\d_]+(?:[-.]?[^\W_]+)*")
_RAW_WORD = re.compile(r"[^\W_]+(?:[-._/][^\W_]+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+$")
# CamelCase or ACRONYM (a capital after the first letter), letters then digits, or inner
# punctuation ("api.port", "src/app.py", "us_east")
_MARKED_NAME = re.compile(r"[^\W\d_]\w*?[A-Z]|[^\W\d_]+\d|.*[._/]")


@dataclass(frozen=True)
class Features:
    """What the guards compare of one statement."""

    numbers: frozenset[tuple[str, str]]  # (dimension or "", canonical value)
    units: frozenset[tuple[str, str]]  # (dimension, unit) named without a number
    negated: bool  # odd number of negations
    poles: frozenset[tuple[int, int]]  # (antonym group, side)
    names: frozenset[str]
    content: tuple[str, ...]  # content-word stems in order ("#": a number, "~": a unit)
    after: tuple[str, ...]  # the word before each content word


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("'", "").replace("\u2019", "")
    if _PHRASE_HINT.search(text):
        for pattern, repl in _PHRASES:
            text = pattern.sub(repl, text)
    return text


@functools.lru_cache(maxsize=1 << 14)
def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def _number(token: str) -> float | None:
    if _THOUSANDS.match(token):
        token = token.replace(",", "")
    try:
        return float(token.replace(",", "."))
    except ValueError:
        return None


def _canon(value: float) -> str:
    return f"{value:.6g}"


def _names(text: str) -> set[str]:
    """Proper names and identifiers: capitalised inside a sentence, CamelCase, ACRONYMS,
    letters with digits or inner punctuation, or a known lower-case name."""
    out: set[str] = set()
    text = unicodedata.normalize("NFKC", text)
    for m in _RAW_WORD.finditer(text):
        w = m.group()
        low = w.casefold()
        if w.isalpha() and w == low:  # most words: plain lower case
            if low in _KNOWN_NAMES:
                out.add(_stem(low))
            continue
        if not (low in _KNOWN_NAMES or _MARKED_NAME.match(w)):
            if not w[0].isupper():
                continue
            j = m.start() - 1
            while j >= 0 and text[j].isspace():
                j -= 1
            if j < 0 or text[j] in ".!?:;":  # capitalised only as a sentence's first word
                continue
        out.add(_stem(low))  # "PDFs" and "PDF" name one thing
    return out


@functools.lru_cache(maxsize=1 << 15)
def features(text: str) -> Features:
    """The comparable features of ``text`` (cached: facts are compared many times)."""
    words = _WORD.findall(_fold(text))
    numbers: list[tuple[str, str]] = []
    units: set[tuple[str, str]] = set()
    content: list[str] = []
    after: list[str] = []

    def keep(token: str, at: int) -> None:
        content.append(token)
        after.append(words[at - 1] if at > 0 else "")

    poles: set[tuple[int, int]] = set()
    negations = 0
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        value: float | None = None
        suffix = ""
        if w[0].isdigit():
            m = re.match(r"^(\d+(?:[.,:]\d+)*)(.*)$", w)
            assert m is not None
            value, suffix = _number(m.group(1)), m.group(2)
            if value is None:  # times like 10:30 and other digit runs: as they are
                numbers.append(("", m.group(1)))
                i += 1
                continue
        elif w in _NUMBER_WORDS:
            value = float(_NUMBER_WORDS[w])
        elif "-" in w and all(part in _NUMBER_WORDS for part in w.split("-")):
            value = float(sum(_NUMBER_WORDS[part] for part in w.split("-")))  # twenty-five
        elif w == "one" and i + 1 < n and words[i + 1] in _UNITS:
            value = 1.0  # "one hour" (a bare "one" is as often a pronoun)
        elif w == "half" and i + 1 < n and words[i + 1] in ("a", "an"):
            value, i = 0.5, i + 1  # "half a minute"
        if value is not None:
            keep("#", i)
            i += 1
            while i < n and (words[i] in _MULTIPLIERS or words[i] in _NUMBER_WORDS):
                nxt = words[i]
                value = (
                    value * _MULTIPLIERS[nxt] if nxt in _MULTIPLIERS else value + _NUMBER_WORDS[nxt]
                )
                i += 1
            unit = suffix
            if suffix in ("st", "nd", "rd", "th", "am", "pm", "x"):
                unit = ""
            elif not suffix and i < n and words[i] in _UNITS:
                unit = words[i]
                i += 1
            if unit in _UNITS:
                dim, factor = _UNITS[unit]
                numbers.append((dim, _canon(value * factor)))
            else:
                numbers.append(("", _canon(value)))
                if unit:
                    keep(unit, i)
            continue
        i += 1
        if w in _UNITS and w not in _BARE_ONLY and w not in ("m",):
            dim = _UNITS[w][0]
            units.add((dim, _stem(w)))
            keep("~", i - 1)
            continue
        if w in _NEGATIONS:
            negations += 1
            continue
        if w in _NEGATING_VERBS and i < n and words[i] == "to":
            negations += 1
            continue
        for pole in _POLE.get(w, ()):
            poles.add(pole)
        if w not in _STOPWORDS:
            keep(_stem(w), i - 1)
    return Features(
        frozenset(numbers),
        frozenset(units),
        negations % 2 == 1,
        frozenset(poles),
        frozenset(_names(text)),
        tuple(content),
        tuple(after),
    )


def _same_root(x: str, y: str) -> bool:
    """Inflections and derivations of one word ("deploy" / "deployment")."""
    k = min(len(x), len(y), 5)
    return x == y or (k >= 4 and x[:k] == y[:k])


def _swapped_component(fa: Features, fb: Features) -> bool:
    """One short slot differs in an otherwise equal statement, and it is a component:
    a component noun on both sides, what modifies one shared head noun, or the words
    after one shared preposition or determiner ("sorting by price" / "by rating")."""
    a, b = fa.content, fb.content
    if max(len(a), len(b)) > _MAX_DIFF:
        return False  # long texts: numbers, negation and names still apply
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < 0.5 or matcher.quick_ratio() < 0.5 or matcher.ratio() < 0.5:
        return False
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace" or i2 - i1 > 2 or j2 - j1 > 2:
            continue
        xs, ys = a[i1:i2], b[j1:j2]
        if any(_same_root(x, y) for x in xs for y in ys):
            continue
        if (
            len(xs) == len(ys)
            and any(x in _HEADS_STEMS for x in xs)
            and any(y in _HEADS_STEMS for y in ys)
        ):
            return True  # one component noun for another: "users" / "products"
        same_opening = fa.after[i1] == fb.after[j1]
        if same_opening and i2 < len(a) and j2 < len(b) and a[i2] == b[j2] in _HEADS_STEMS:
            return True  # different modifiers of one head: "login test" / "checkout test"
        if i2 - i1 == j2 - j1 and same_opening and fa.after[i1] in _SLOT_OPENERS:
            return True  # the same slot after "by", "on every", "from the": another thing
    return False


_MAX_DIFF = 300  # content words; the word diff is quadratic
_HEADS_STEMS = frozenset(_stem(w) for w in _HEADS)
_SLOT_OPENERS = _set(
    "by in on at for of with from to into via per under over about "
    "the a an every each this that these those its their our my your"
)


def conflict(a: str, b: str) -> str | None:
    """Why statements ``a`` and ``b`` must stay separate facts, or None if nothing says so.

    Reasons: "number", "unit", "negation", "polarity", "component" (see module docstring).
    Symmetric, deterministic.
    """
    fa, fb = features(a), features(b)
    if fa.numbers != fb.numbers:
        return "number"
    dims_a = {d for d, _ in fa.units}
    for dim in dims_a & {d for d, _ in fb.units}:
        if {u for d, u in fa.units if d == dim} != {u for d, u in fb.units if d == dim}:
            return "unit"
    if fa.negated != fb.negated:
        return "negation"
    groups = {g for g, _ in fa.poles} & {g for g, _ in fb.poles}
    for g in groups:
        if {s for gg, s in fa.poles if gg == g} != {s for gg, s in fb.poles if gg == g}:
            return "polarity"
    if (fa.names - fb.names) and (fb.names - fa.names):
        return "component"
    if fa.content == fb.content:
        return None
    first, second = (fa, fb) if fa.content <= fb.content else (fb, fa)  # the diff is not
    if _swapped_component(first, second):  # symmetric: one canonical order
        return "component"
    return None


def first_unguarded(
    candidates: list[tuple[str, float]],
    content: str,
    near: float,
    content_of: Callable[[str], str | None],
) -> tuple[str, float] | None:
    """The first (best) candidate (id, cosine) at or above ``near`` that no guard keeps
    apart from ``content``; None if there is none. Candidates come best first."""
    for fid, sim in candidates:
        if sim < near:
            return None
        other = content_of(fid)
        if other is None or conflict(content, other) is None:
            return fid, sim
    return None
