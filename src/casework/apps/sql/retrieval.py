"""Table retrieval for a question: keyword (BM25 via bm25s) or semantic (MiniLM in Chroma).

Each table becomes one document: its name (split at underscores, twice, because names carry
the most signal), category, description, and every column's name and description. Keyword
mode needs no embedding model; semantic mode indexes the documents once per schema version
(the collection name carries a hash of the documents).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from casework.apps.sql.benchmark import gold_tables
from casework.apps.sql.models import ColumnSpec, DatabaseSchema, RetrievedTable, TableSpec
from casework.apps.sql.rules import MIN_PREFIX
from casework.errors import SourceUnavailable

__all__ = [
    "LINK_BUDGET",
    "RetrievalMode",
    "column_hint",
    "describe_table",
    "link_tables",
    "retrieve_tables",
    "schema_terms",
    "table_document",
    "tokenize",
]

RetrievalMode = Literal["keyword", "semantic"]

_STOPWORDS = frozenset(
    ["a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "is", "are", "was", "were", "be", "been", "which", "who", "whom", "what", "when", "where", "how", "many", "much", "show", "list", "find", "give", "me", "all", "any", "each", "every", "that", "this", "these", "those", "have", "has", "had", "do", "does", "did", "their", "its", "it", "as", "than", "then", "there", "top", "most", "per", "get"]
)  # fmt: skip


def _stem(word: str) -> str:
    # Just enough stemming for plurals and -ed/-ing forms of schema words.
    for suffix, repl in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", "e"),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + repl
    return word


def tokenize(text: str) -> list[str]:
    """Lower-cased, snake_case split, stop words dropped, lightly stemmed."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))
    return [_stem(w) for w in words if w not in _STOPWORDS and len(w) > 1]


def schema_terms(schema: DatabaseSchema) -> frozenset[str]:
    """The tokens of every table and column name: what a question about this database names
    (descriptions are left out: they are ordinary English and match anything)."""
    terms: set[str] = set()
    for table in schema.tables.values():
        terms.update(tokenize(table.name))
        for column in table.fields:
            terms.update(tokenize(column.name))
    return frozenset(terms)


def table_document(table: TableSpec) -> str:
    name = table.name.replace("_", " ")
    columns = "; ".join(
        f"{c.name.replace('_', ' ')}: {c.description}".strip(": ") for c in table.fields
    )
    return f"{name}. {name}. {table.category}. {table.description} Columns: {columns}"


def _retrieved(table: TableSpec, score: float) -> RetrievedTable:
    return RetrievedTable(
        table=table.name,
        score=round(float(score), 4),
        category=table.category,
        description=table.description,
        columns=list(table.fields),
    )


class _KeywordIndex:
    def __init__(self, schema: DatabaseSchema) -> None:
        import bm25s  # type: ignore[import-untyped]

        self.names = list(schema.tables)
        self.bm25 = bm25s.BM25()
        self.bm25.index(
            [tokenize(table_document(schema.tables[n])) for n in self.names], show_progress=False
        )

    def scores(self, question: str) -> list[float]:
        tokens = tokenize(question)
        if not tokens:
            return [0.0] * len(self.names)
        return [float(s) for s in self.bm25.get_scores(tokens)]


_indexes: dict[str, _KeywordIndex] = {}
_lock = threading.Lock()


def _fingerprint(schema: DatabaseSchema) -> str:
    docs = "\n".join(f"{n}\t{table_document(t)}" for n, t in sorted(schema.tables.items()))
    return hashlib.sha256(docs.encode()).hexdigest()[:16]


def _keyword_index(schema: DatabaseSchema) -> _KeywordIndex:
    key = _fingerprint(schema)
    with _lock:
        if key not in _indexes:
            _indexes[key] = _KeywordIndex(schema)
        return _indexes[key]


def _keyword(schema: DatabaseSchema, question: str, top_k: int) -> list[RetrievedTable]:
    index = _keyword_index(schema)
    ranked = sorted(
        zip(index.names, index.scores(question), strict=True), key=lambda p: (-p[1], p[0])
    )
    return [_retrieved(schema.tables[n], s) for n, s in ranked[:top_k] if s > 0]


def _semantic(
    schema: DatabaseSchema, question: str, top_k: int, vectors_dir: Path
) -> list[RetrievedTable]:
    try:
        from casework.stores.vector import open_collection

        names = list(schema.tables)

        def fill(collection: Any) -> None:  # once per process, under the store's path lock
            if collection.count() != len(names):
                collection.upsert(
                    ids=names,
                    documents=[table_document(schema.tables[n]) for n in names],
                    metadatas=[{"table": n} for n in names],
                )

        collection = open_collection(vectors_dir, f"sql_tables_{_fingerprint(schema)}", fill=fill)
        found: dict[str, Any] = collection.query(
            query_texts=[question], n_results=min(top_k, len(names))
        )
    except Exception as exc:  # a missing model package or a broken Chroma directory
        raise SourceUnavailable(
            "semantic table index", f"{type(exc).__name__}: {exc}; use keyword retrieval"
        ) from exc
    return [
        _retrieved(schema.tables[name], 1.0 - distance)
        for name, distance in zip(found["ids"][0], found["distances"][0], strict=True)
    ]


def retrieve_tables(
    schema: DatabaseSchema,
    question: str,
    top_k: int = 5,
    *,
    mode: RetrievalMode = "keyword",
    vectors_dir: Path | None = None,
) -> list[RetrievedTable]:
    """The ``top_k`` tables most relevant to the question, best first, with scores.

    Keyword scores are BM25 (0 = no shared word; tables scoring 0 are left out); semantic
    scores are cosine similarities of MiniLM embeddings.
    """
    top_k = max(1, min(int(top_k), len(schema.tables)))
    if mode == "keyword":
        return _keyword(schema, question, top_k)
    if vectors_dir is None:
        raise ValueError("semantic retrieval needs a vectors_dir")
    return _semantic(schema, question, top_k, vectors_dir)


def column_hint(column: ColumnSpec, *, max_chars: int = 48) -> str:
    """``name TYPE`` plus what a query needs from the description, kept short for small
    models: the allowed values, the referenced table, or the description's start."""
    from casework.apps.sql.synth import enum_values

    text = f"{column.name} {column.type}"
    values = enum_values(column.description)
    ref = re.search(r"references\s+(\w+\.\w+)", column.description, re.IGNORECASE)
    if values:
        return f"{text} -- one of: {', '.join(values)}"
    if ref:
        return f"{text} -- references {ref.group(1)}"
    if column.description:
        short = (
            column.description
            if len(column.description) <= max_chars
            else column.description[: max_chars - 1] + "…"
        )
        return f"{text} -- {short}"
    return text


def describe_table(table: TableSpec) -> str:
    """One compact line per table for prompts: ``name: description Columns: col TYPE -- hint, ...``."""
    return f"{table.name}: {table.description} Columns: {'; '.join(column_hint(c) for c in table.fields)}"


LINK_BUDGET = 1200
"""Characters of table descriptions (about 300 prompt tokens) a prompt keeps without linking:
Spider's retrieved tables average 270 per question, the bundled schema's 1,900."""


def _named(words: Sequence[str], terms: Sequence[str]) -> set[str]:
    """The question's words that are one of ``terms``, or the start of one, or start with
    one ("weigh" for ``weight``, "concerts" for ``concert``; at least ``MIN_PREFIX`` letters)."""
    return {
        w
        for w in words
        if w in terms
        or any(
            (len(w) >= MIN_PREFIX and t.startswith(w)) or (len(t) >= MIN_PREFIX and w.startswith(t))
            for t in terms
        )
    }


def _joins(table: TableSpec, other: TableSpec) -> bool:
    """Whether ``table`` points at ``other``: a column ``<other>_id`` (or ``<other>id``) or a
    description saying it references ``other``."""
    stem = _stem(other.name.lower())
    keys = {f"{other.name.lower()}_id", f"{stem}_id", f"{stem}id"}
    return any(
        c.name.lower() in keys
        or re.search(rf"references\s+{re.escape(other.name)}\.", c.description, re.IGNORECASE)
        for c in table.fields
    )


def link_tables(
    question: str,
    retrieved: Sequence[TableSpec],
    schema: DatabaseSchema,
    queries: Sequence[str] = (),
    budget: int = LINK_BUDGET,
) -> list[TableSpec]:
    """The schema entries a prompt needs (schema linking by name), in retrieval order: the
    retrieved tables the question names by their name (a word, or the start of one); for each
    word they leave unexplained, the first retrieved table with a column of that name; the
    retrieved tables that join two of those (a key column or a reference: a bridge); and the
    tables the shown examples' queries read. The retrieved tables unchanged when they fit in
    ``budget`` characters (a small schema: cutting it saves little and can lose a join path
    the question does not name) or the question names none of them by name. Only the prompt
    shrinks: the answer's grammar is the same."""
    words = [w for w in tokenize(question) if not w.isdigit()]
    core = [t for t in retrieved if _named(words, tokenize(t.name))]
    if not core or sum(len(describe_table(t)) for t in retrieved) <= budget:
        return list(retrieved)

    def columns(table: TableSpec) -> list[str]:
        return [w for c in table.fields for w in tokenize(c.name)]

    kept = list(core)
    covered = set().union(*(_named(words, [*tokenize(t.name), *columns(t)]) for t in core))
    for word in words:
        if word in covered:
            continue
        table = next((t for t in retrieved if _named([word], columns(t))), None)
        if table is not None:
            covered |= _named(words, columns(table))
            if table not in kept:
                kept.append(table)
    for table in retrieved:
        ends = [o for o in kept if o is not table and (_joins(table, o) or _joins(o, table))]
        if table not in kept and len(ends) >= 2:
            kept.append(table)
    linked = [t for t in retrieved if t in kept]
    for query in queries:
        for name in gold_tables(query):
            table = schema.table(name)
            if table is not None and table not in linked:
                linked.append(table)
    return linked
