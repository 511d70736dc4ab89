"""Does a question ask what a remembered query answers? The memory layer's check on a
verified question near a new one (issue #32): MiniLM cosine cannot tell Spider's paraphrases
("How many singers do we have?" / "What is the total number of singers?", 0.87) from
different questions on the same tables ("How many players are from each country?" / "How
many distinct countries do players come from?", 0.92), so the new question is compared with
the remembered QUERY: a paraphrase agrees with it, a different question disagrees somewhere.

Three checks, each a list of disagreements (empty: the question agrees):

- ``literal_disagreements``: the question's numbers are the query's (its numbers other than
  0 and 1, which ``LIMIT 1`` and flags add, are the question's), and its names (quoted
  strings, capitalised words inside an English sentence) are the query's string values or,
  when the database's values are in another language than the question, the remembered
  question's names.
- ``cue_disagreements``: an operation the question asks for (``CUES``: "each" -> GROUP BY,
  "distinct" -> DISTINCT, "average" -> AVG, "most" -> MAX or ORDER BY ... DESC, ...) is in
  the query, and an aggregate the query computes (AVG, SUM, MIN, MAX, INTERSECT, EXCEPT) is
  asked for.
- ``name_disagreements``: the tables and columns the question names (its words that are a
  schema name or the start of one, as ``retrieval.link_tables`` matches them) are ones the
  query reads.

English and German cues. Plain functions, no model, no database."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from casework.apps.sql.models import DatabaseSchema
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import NEIGHBOURS, Recall, recall_confidence

__all__ = [
    "AGREED_SIMILARITY",
    "CUES",
    "NOT_SURE",
    "Cue",
    "agreed_confidence",
    "agreed_recall",
    "agreement",
    "cue_disagreements",
    "literal_disagreements",
    "name_disagreements",
    "query_constructs",
]


@dataclass(frozen=True)
class Cue:
    """Words that ask for an operation, and the query constructs that carry it out."""

    name: str
    words: tuple[str, ...]
    """Regular expressions matched on the lower-cased question, at word starts."""
    constructs: frozenset[str]
    """Any one of these (``query_constructs``' names) in the query carries it out."""


def _cue(name: str, words: str, constructs: str) -> Cue:
    return Cue(name, tuple(words.split("|")), frozenset(constructs.split()))


# A question's wording -> what its query must do. "old"/"young" words sort either way (age
# or birth year), so they only ask for an extreme.
CUES: tuple[Cue, ...] = (
    _cue("each", r"each\b|per\b|for every\b|for all\b|je\b|pro\b|jede[nmrs]?\b|für alle\b", "GROUP"),
    _cue("distinct", r"distinct|different|unique|verschieden|unterschiedlich|eindeutig", "DISTINCT"),
    _cue("count", r"how many\b|number of\b|count\b|counts\b|counting\b|wie viele\b|anzahl|zahl der\b|zähle", "COUNT"),
    _cue("average", r"average|mean\b|avg\b|durchschnitt|mittler|mittelwert", "AVG"),
    _cue("sum", r"total\b|sum\b|summe|insgesamt|gesamt", "SUM COUNT"),
    _cue("most", r"most\b|highest|largest|maximum|max\b|top\b|biggest|greatest|longest|latest|höchst|größt|meist|maximal|längst|neuest", "MAX TOP"),
    _cue("least", r"least\b|lowest|minimum|min\b|smallest|fewest|shortest|earliest|niedrigst|kleinst|wenigst|minimal|kürzest|frühest", "MIN BOTTOM"),
    _cue("extreme", r"oldest|youngest|älteste|jüngste|older|younger|älter|jünger", "MAX MIN TOP BOTTOM"),
    _cue("above", r"more than\b|greater than\b|larger than\b|bigger than\b|higher than\b|at least\b|over\b|above\b|exceed|after\b|mehr als\b|größer als\b|höher als\b|mindestens\b", "GT"),
    _cue("below", r"less than\b|fewer than\b|smaller than\b|lower than\b|at most\b|under\b|below\b|before\b|weniger als\b|kleiner als\b|niedriger als\b|höchstens\b", "LT"),
    _cue("than", r"older than\b|younger than\b|älter als\b|jünger als\b", "GT LT"),
    _cue("not", r"not\b|never\b|without\b|no\b|n't\b|except\b|excluding\b|other than\b|nicht\b|nie\b|niemals\b|ohne\b|kein", "NOT"),
    _cue("both", r"both\b|and also\b|sowohl\b|beide", "INTERSECT AND"),
    _cue("order", r"sort|order|descending|ascending|alphabetical|sortiert|geordnet|absteigend|aufsteigend|alphabetisch|reihenfolge", "ORDER"),
)  # fmt: skip

_ASKED = {  # an aggregate the query computes -> the cues that ask for it
    "AVG": ("average",),
    "SUM": ("sum",),
    "MIN": ("least", "extreme"),
    "MAX": ("most", "extreme"),
    "INTERSECT": ("both",),
    "EXCEPT": ("not",),
    "COUNT_DISTINCT": ("distinct",),
    "COUNT_ONLY": ("count", "sum"),
    "TOP": ("most", "extreme", "order"),
    "BOTTOM": ("least", "extreme", "order"),
    "ORDER_ALL": ("order", "most", "least", "extreme"),
    "GROUP": ("each", "most", "least", "extreme", "above", "below", "than", "distinct", "not"),
}

_STRING = re.compile(r"'((?:[^']|'')*)'|\"((?:[^\"]|\"\")*)\"")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?!\w|\.\d)")
_NUMBER_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "zwei": "2", "drei": "3",
    "vier": "4", "fünf": "5", "sechs": "6", "sieben": "7", "acht": "8", "neun": "9", "zehn": "10",
}  # fmt: skip
_GERMAN = re.compile(r"\b(wie|welche[nmrs]?|der|die|das|und|ist|sind|haben|mit|von|für|gibt)\b")
MIN_PREFIX = 4
"""A question's word names a schema name it starts, or that starts it, of at least this many
letters ("singers" names ``singer``)."""


def _strings(sql: str) -> list[str]:
    return [(a or b).replace("''", "'") for a, b in _STRING.findall(sql)]


def _unquoted(sql: str) -> str:
    return _STRING.sub(" ", sql)


def _number(text: str) -> str:
    value = float(text)
    return str(int(value)) if value.is_integer() else str(value)


def query_constructs(sql: str) -> frozenset[str]:
    """The operations a query carries out, by name: GROUP, DISTINCT, COUNT, AVG, SUM, MIN, MAX,
    ORDER, DESC, ASC (an ORDER BY not descending), TOP and BOTTOM (ordered descending or not,
    then LIMIT), ORDER_ALL (ordered, no LIMIT), COUNT_DISTINCT, COUNT_ONLY (a count with no
    GROUP BY), GT, LT (comparisons), NOT (NOT, !=, <>, EXCEPT), EXCEPT, INTERSECT, AND (two
    conditions)."""
    text = f" {_unquoted(sql).upper()} "
    found = {
        name
        for name, pattern in (
            ("GROUP", r"\bGROUP\s+BY\b"),
            ("DISTINCT", r"\bDISTINCT\b"),
            ("COUNT", r"\bCOUNT\s*\("),
            ("AVG", r"\bAVG\s*\("),
            ("SUM", r"\bSUM\s*\("),
            ("MIN", r"\bMIN\s*\("),
            ("MAX", r"\bMAX\s*\("),
            ("ORDER", r"\bORDER\s+BY\b"),
            ("GT", r">"),
            ("LT", r"<(?!>)"),
            ("NOT", r"\bNOT\b|!=|<>|\bEXCEPT\b"),
            ("EXCEPT", r"\bEXCEPT\b"),
            ("INTERSECT", r"\bINTERSECT\b"),
            ("AND", r"\bAND\b|\bINTERSECT\b|\bIN\s*\(\s*SELECT\b"),
        )
        if re.search(pattern, text)
    }
    ends = r"\bLIMIT\b|\bUNION\b|\bINTERSECT\b|\bEXCEPT\b|$"
    for order in re.findall(rf"\bORDER\s+BY\b(.*?)(?:{ends})", text, re.DOTALL):
        found.add("DESC" if re.search(r"\bDESC\b", order) else "ASC")
    limited = bool(re.search(r"\bLIMIT\b", text))
    if "ORDER" in found:
        found.add(("TOP" if "DESC" in found else "BOTTOM") if limited else "ORDER_ALL")
    if re.search(r"\bCOUNT\s*\(\s*DISTINCT\b", text):
        found.add("COUNT_DISTINCT")
    if "COUNT" in found and "GROUP" not in found:
        found.add("COUNT_ONLY")
    return frozenset(found)


def _cues(question: str) -> set[str]:
    text = question.lower()
    asked = {c.name for c in CUES if any(re.search(rf"(?<!\w){w}", text) for w in c.words)}
    bare = re.sub(r"\bat (least|most)\b|\bmindestens\b|\bhöchstens\b", " ", text)
    for extreme in ("most", "least"):  # "at least 3" is a comparison, not the least
        cue = next(c for c in CUES if c.name == extreme)
        if not any(re.search(rf"(?<!\w){w}", bare) for w in cue.words):
            asked.discard(extreme)
    if "than" in asked:  # "older than" is not "old" + "than" twice over
        asked.discard("extreme")
    return asked


_AGE_WORDS = r"\b(oldest|youngest|older|younger|älteste\w*|jüngste\w*|älter|jünger)\b"
_AGGREGATES = frozenset({"COUNT", "AVG", "SUM", "MIN", "MAX"})


def _ages(text: str) -> set[str]:
    return {"old" if w[0] in "oä" else "young" for w in re.findall(_AGE_WORDS, text.lower())}


def cue_disagreements(question: str, sql: str, remembered: str | None = None) -> list[str]:
    """What the question asks for that the query does not do, and the aggregates the query
    computes that the question does not ask for (an empty list: they agree). "each" over a
    query with no aggregate is every row, not a group. "Oldest" and "youngest" sort either
    way (age or birth date), so they must be the verified question's ``remembered``."""
    theirs = _ages(remembered or "")
    if theirs and _ages(question) and theirs != _ages(question):
        return ["the question asks for the other end of the ages than the verified one"]
    done = query_constructs(sql)
    grouped = done if done & _AGGREGATES else done | {"GROUP"}
    asked = _cues(question)
    out = [
        f"the question asks for {c.name!r}, the query does no {'/'.join(sorted(c.constructs))}"
        for c in CUES
        if c.name in asked and not c.constructs & grouped
    ]
    out += [
        f"the query computes {construct}, the question does not ask for it"
        for construct, cues in _ASKED.items()
        if construct in done and not asked & set(cues)
    ]
    return out


def _names(question: str) -> set[str]:
    """The question's names: quoted strings, and in English the capitalised words that do not
    start the sentence ("I" and German's capitalised nouns are not names)."""
    names = {(a or b).strip().lower() for a, b in re.findall(r"'([^']+)'|\"([^\"]+)\"", question)}
    if _GERMAN.search(question.lower()):
        return names
    inner = re.sub(r"(^|[.?!:;]\s+)[A-Z]\w*", " ", question.strip())  # sentence starts
    return names | {w.lower() for w in re.findall(r"(?<![\w'])[A-Z][\w\-&]*", inner)} - {"i"}


def _numbers(text: str) -> set[str]:
    words = {_NUMBER_WORDS[w] for w in re.findall(r"\w+", text.lower()) if w in _NUMBER_WORDS}
    return {_number(n) for n in _NUMBER.findall(text)} | words


def literal_disagreements(question: str, sql: str, remembered: str | None = None) -> list[str]:
    """The question's literal values against the query's (see the module's docstring)."""
    out = []
    asked = _numbers(question)
    used = {_number(n) for n in _NUMBER.findall(_unquoted(sql))}
    if missing := sorted(asked - used):
        out.append(f"the question's {', '.join(missing)} is not in the query")
    if unasked := sorted(used - asked - {"0", "1"}):
        out.append(f"the query's {', '.join(unasked)} is not in the question")
    values = [v.strip("%").strip().lower() for v in _strings(sql)]
    text = question.lower()
    names = _names(question)
    said = {n for n in names if any(n in v or v in n for v in values if v)}
    unsaid_values = [v for v in values if v and v not in text]
    if not unsaid_values and said == names:
        return out
    # A value the verified question said and this one does not is another question; one
    # neither says is in another language (a translated database): the verified question
    # must then name the same things.
    if dropped := [v for v in unsaid_values if v in (remembered or "").lower()]:
        out.append(f"the verified question says {', '.join(dropped)}, this one does not")
    elif remembered is None or _names(remembered) != names:
        theirs = ", ".join(sorted(names - said) or unsaid_values)
        out.append(f"the question's names and the query's values differ ({theirs})")
    return out


# Words that frame a question rather than name what it is about (English, German); the cue
# words are dropped with them.
_FRAME_WORDS = """
what which whose where when there their them they have does were been being with from
that this these those into than then also only just give show list find tell return
display provide along together corresponding respectively listed many much more most
least less fewer each every all some other number total count average mean different
distinct unique sorted order ordered descending ascending alphabetical highest lowest
largest smallest maximum minimum both either about sort across among around value values
amount single used uses using exist exists welche welcher welches welchen wie viele gibt
haben sind wird werden wurde wurden nach dass diese dieser dieses alle allen jede jeden
jedes jeder zeige zeigen liste listen gebe geben finde finden sowie auch sowohl beide
insgesamt anzahl verschiedene verschiedenen durchschnitt sortiert reihenfolge absteigend
aufsteigend lauten lautet heißen heißt heisst aller alles zurück hoch jahr jahre jahren
nenne nennen zähle gebt welchem kommen come comes came make made belong belongs
"""
_FRAME = frozenset(_FRAME_WORDS.split())


def _words(text: str, shortest: int = MIN_PREFIX) -> list[str]:
    return [w for w in re.findall(r"[^\W\d_]+", text.lower()) if len(w) >= shortest]


def _stem(word: str) -> str:
    """Enough of a word to match its plural ("countries", "country")."""
    if len(word) > 4:
        return re.sub(r"(y|ies|es|s|ed|ing|en|e|n|a)$", "", word)
    return word[:-1] if len(word) >= 3 and word.endswith("s") else word


_SQL_KEYWORDS = """
select distinct from where group order having limit join inner left outer cross union
intersect except count avg sum min max and or not in like between is null asc desc as on
by case when then else end exists all any cast
"""
_SQL_WORDS = frozenset(_SQL_KEYWORDS.split())


def _identifiers(sql: str, shortest: int = MIN_PREFIX) -> set[str]:
    """The words of the names a query reads (keywords and values left out)."""
    return set(_words(_unquoted(sql).replace("_", " "), shortest)) - _SQL_WORDS


def _cued(word: str) -> bool:
    """``word`` is an operation's cue ("oldest"), or the first word of one ("greater" of
    "greater than"): ``cue_disagreements`` checks it."""
    return any(
        re.fullmatch(w.split(" ")[0], word) if " " in w else re.match(w, word)
        for c in CUES
        for w in c.words
    )


def _names_one(word: str, terms: Iterable[str]) -> bool:
    """``word`` is one of ``terms``, or starts or ends one (a German compound), or starts with
    one, or has its stem (plurals, -ed)."""
    return any(
        word == t
        or (len(t) >= MIN_PREFIX and word.startswith(t))
        or (len(word) >= MIN_PREFIX and (t.startswith(word) or t.endswith(word)))
        or _stem(word) == _stem(t)
        for t in terms
    )


def name_disagreements(
    question: str,
    sql: str,
    schema: DatabaseSchema | None = None,
    remembered: str | None = None,
) -> list[str]:
    """The question's words (four letters or more, not ``_FRAME``'s) that the query does not
    account for: a word naming a table or column of ``schema`` (it is, starts, or is started by
    that name) must be one the query reads, or one the verified question ``remembered`` used;
    any other word must be one ``remembered`` used (the database may name things in another
    language than the question: the verified question is then the only bridge). A word of
    ``remembered`` that is a name the query reads must be in the question (a column asked for
    there and not here)."""
    terms = {
        w
        for table in (schema.tables.values() if schema is not None else ())
        for name in (table.name, *(c.name for c in table.fields))
        for w in _words(name.replace("_", " "))
    }
    read = _identifiers(sql)
    theirs = set(_words(remembered)) if remembered is not None else set()
    out = []
    for word in dict.fromkeys(_words(question)):
        if word in _FRAME or _cued(word) or _names_one(word, read) or _names_one(word, theirs):
            continue
        if _names_one(word, terms):
            out.append(f"the question names {word!r}, the query reads no such table or column")
        elif remembered is not None:
            out.append(f"the question's {word!r} is not in the query or the verified question")
    # What the verified question asked of the query ("id" of "id and type code") and this
    # one does not ask is a column too many.
    mine = set(_words(question, 2))
    read_short = _identifiers(sql, 2)
    for word in dict.fromkeys(_words(remembered or "", 2)):
        if _names_one(word, read_short) and not _names_one(word, mine):
            out.append(f"the verified question asks for {word!r}, this one does not")
    return out


def agreement(
    question: str,
    sql: str,
    *,
    remembered: str | None = None,
    schema: DatabaseSchema | None = None,
) -> list[str]:
    """Every way ``question`` disagrees with ``sql`` (the query verified for the question
    ``remembered``, on ``schema``): literals, operation cues, names. Empty: it asks what the
    query answers."""
    return [
        *literal_disagreements(question, sql, remembered),
        *cue_disagreements(question, sql, remembered),
        *name_disagreements(question, sql, schema, remembered),
    ]


AGREED_SIMILARITY = 0.60
"""The similarity at which a verified question whose query the question agrees with reaches
the memory layer's threshold (90). Fitted on the first halves of Spider's databases (English
and German, the README's table): an agreeing query was right 93 of 95 and 54 of 54 times at
any similarity from ``AGREED_NEAR`` up, so every agreeing one is answered."""
AGREED_NEAR = 0.60
"""How similar a verified question must be for its query to be checked at all (below it,
no verified question is near)."""
NOT_SURE = 50.0
"""The memory's confidence at most when no near verified query agrees with the question."""


def agreed_confidence(similarity: float, floor: float = AGREED_SIMILARITY) -> float:
    """0-100 for a verified question at ``similarity`` whose query the question agrees with:
    90 at ``floor``, 100 at 1.0, linear (92.5 at 0.70 with the fitted floor 0.60)."""
    return round(max(0.0, min(100.0, 100.0 - 10.0 * (1.0 - similarity) / (1.0 - floor))), 2)


def _same_text(a: str, b: str) -> bool:
    return re.sub(r"\W+", " ", a).strip().casefold() == re.sub(r"\W+", " ", b).strip().casefold()


def agreed_recall(
    memory: Memory,
    question: str,
    schema: DatabaseSchema | None = None,
    *,
    k: int = NEIGHBOURS,
    near: float = AGREED_NEAR,
) -> tuple[Recall, list[str]]:
    """The memory's answer to ``question``: the nearest of its ``k`` nearest verified
    questions (at least ``near`` similar) whose query the question agrees with (the same text
    is a repeat: 100), at ``agreed_confidence``; when none agrees, the nearest's answer at
    most ``NOT_SURE``, with the ways it disagrees (the second value)."""
    neighbours = memory.nearest(question, k)
    close = [(e, s) for e, s in neighbours if s >= near]
    if not close:
        return Recall(None, 0.0, [], neighbours), []
    first: list[str] = []
    for example, similarity in close:
        sql = example.answer.get("sql")
        if _same_text(question, example.key_text):
            return Recall(dict(example.answer), 100.0, [(example, similarity)], neighbours), []
        if not isinstance(sql, str):
            continue  # a verified refusal: only its own question repeats it
        found = agreement(question, sql, remembered=example.key_text, schema=schema)
        if not found:
            confidence = agreed_confidence(similarity)
            return Recall(dict(example.answer), confidence, [(example, similarity)], neighbours), []
        first = first or found
    example, similarity = close[0]
    confidence = min(NOT_SURE, recall_confidence(similarity, 1, 1.0))
    return Recall(dict(example.answer), confidence, [(example, similarity)], neighbours), first
