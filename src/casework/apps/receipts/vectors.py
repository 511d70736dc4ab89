"""Words in Chroma: each word embedded with its line and position, labels as metadata.

Document text: ``"<word> | <shape> | left: <2 words> | right: <2 words> | <section>, <column>"``
(the word and its immediate neighbours, so similar words are similar *words*, not lines). Metadata: receipt key,
line and word ids, the word, its effective label and validation status (``NONE`` when the
word has no label), merchant, line text. Similar-word search reuses a stored word's vector,
so it needs no embedding model at query time; only indexing embeds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from casework.apps.receipts.models import Label, Receipt, ValidationStatus
from casework.apps.receipts.rules import column, sections, word_shape

__all__ = [
    "COLLECTION",
    "Neighbour",
    "VectorsUnavailable",
    "effective_label",
    "index_receipts",
    "indexed_ids",
    "refresh_labels",
    "refresh_words",
    "similar_words",
    "similar_words_batch",
    "word_doc_id",
    "word_document",
]

COLLECTION = "receipts_words"
NO_LABEL = "NONE"
_STATUS_RANK = {
    ValidationStatus.VALID: 0,
    ValidationStatus.PENDING: 1,
    ValidationStatus.NEEDS_REVIEW: 2,
    ValidationStatus.INVALID: 3,
}


class VectorsUnavailable(Exception):
    """The vector store or an embedding could not be used; tools report it as unavailable."""


@dataclass(frozen=True)
class Neighbour:
    id: str
    text: str
    label: str
    status: str
    merchant: str
    line: str
    receipt: str
    line_id: int
    word_id: int
    similarity: float


def word_doc_id(image_id: str, receipt_id: int, line_id: int, word_id: int) -> str:
    return f"{image_id}#{receipt_id}#{line_id}#{word_id}"


def effective_label(labels: Iterable[Label]) -> tuple[str, str]:
    """(label, status) a word shows to others: its best current label, VALID first, newest first."""
    current = [lab for lab in labels if lab.current]
    if not current:
        return NO_LABEL, NO_LABEL
    best = min(current, key=lambda lab: (_STATUS_RANK.get(lab.status, 9), -lab.id))
    return best.label_type, best.status.value


def _documents(repo: Any, receipt: Receipt) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    lines = repo.lines(receipt.id)
    words = repo.words(receipt.id)
    labels = repo.current_labels(receipt_pk=receipt.id)
    by_word: dict[int, list[Label]] = {}
    for lab in labels:
        by_word.setdefault(lab.word_pk, []).append(lab)
    text_of = {ln.line_id: ln.text for ln in lines}
    section_of = dict(
        zip([ln.line_id for ln in lines], sections([ln.text for ln in lines]), strict=True)
    )
    x_min = min((w.box.x0 for w in words), default=0.0)
    width = max((w.box.x1 for w in words), default=1.0) - min(x_min, 0.0)
    by_line: dict[int, list[str]] = {}
    for w in words:
        by_line.setdefault(w.line_id, []).append(w.text)
    ids, docs, metas = [], [], []
    for w in words:
        line_text = text_of.get(w.line_id, "")
        label, status = effective_label(by_word.get(w.id, []))
        col = column(w.box.x0 - min(x_min, 0.0), w.box.x1 - min(x_min, 0.0), width)
        ids.append(word_doc_id(receipt.image_id, receipt.receipt_id, w.line_id, w.word_id))
        docs.append(
            word_document(
                w.text, by_line[w.line_id], w.word_id, section_of.get(w.line_id, "items"), col
            )
        )
        metas.append(
            {
                "receipt": receipt.key,
                "line_id": w.line_id,
                "word_id": w.word_id,
                "text": w.text[:100],
                "label": label,
                "status": status,
                "merchant": receipt.merchant_name,
                "line": line_text[:120],
            }
        )
    return ids, docs, metas


def word_document(text: str, line_words: list[str], word_id: int, section: str, col: str) -> str:
    """What gets embedded for a word (``word_id`` is 1-based within ``line_words``)."""
    left = " ".join(line_words[max(0, word_id - 3) : word_id - 1]) or "-"
    right = " ".join(line_words[word_id : word_id + 2]) or "-"
    return f"{text} | {word_shape(text)} | left: {left} | right: {right} | {section}, {col}"


def index_receipts(
    repo: Any, collection: Any, receipts: Sequence[Receipt], *, batch: int = 256
) -> int:
    """Embed and upsert every word of ``receipts`` (idempotent). Returns the number of words."""
    if collection is None:
        raise VectorsUnavailable("no vector store is configured")
    total = 0
    for receipt in receipts:
        ids, docs, metas = _documents(repo, receipt)
        for i in range(0, len(ids), batch):
            try:
                collection.upsert(
                    ids=ids[i : i + batch],
                    documents=docs[i : i + batch],
                    metadatas=metas[i : i + batch],
                )
            except Exception as exc:  # chroma or the embedding model
                raise VectorsUnavailable(f"indexing failed ({type(exc).__name__}: {exc})") from exc
        total += len(ids)
    return total


def refresh_words(repo: Any, collection: Any, receipt: Receipt, word_pks: set[int]) -> int:
    """Update the label metadata of changed words (no re-embedding)."""
    if collection is None or not word_pks:
        return 0
    labels = repo.current_labels(receipt_pk=receipt.id)
    by_word: dict[int, list[Label]] = {}
    for lab in labels:
        by_word.setdefault(lab.word_pk, []).append(lab)
    words = [w for w in repo.words(receipt.id) if w.id in word_pks]
    ids, metas = [], []
    for w in words:
        label, status = effective_label(by_word.get(w.id, []))
        ids.append(word_doc_id(receipt.image_id, receipt.receipt_id, w.line_id, w.word_id))
        metas.append({"label": label, "status": status})
    existing = set(collection.get(ids=ids, include=[])["ids"])
    ids_metas = [(i, m) for i, m in zip(ids, metas, strict=True) if i in existing]
    if ids_metas:
        collection.update(ids=[i for i, _ in ids_metas], metadatas=[m for _, m in ids_metas])
    return len(ids_metas)


def refresh_labels(repo: Any, collection: Any, receipt_pk: int, word_pks: set[int]) -> None:
    """After labels were written: bring the words' vector metadata up to date, best effort.
    The labels are committed already; stale metadata is repaired by `receipts index --all`."""
    if collection is None:
        return
    with contextlib.suppress(Exception):
        refresh_words(repo, collection, repo.get_receipt(receipt_pk), word_pks)


def indexed_ids(collection: Any, ids: Sequence[str]) -> set[str]:
    if collection is None or not ids:
        return set()
    return set(collection.get(ids=list(ids), include=[])["ids"])


def similar_words(
    collection: Any,
    doc_id: str,
    *,
    fallback_text: str | None = None,
    n: int = 8,
    merchant: str | None = None,
    exclude_ids: Sequence[str] = (),
) -> list[Neighbour]:
    """Nearest words to a stored word (its own vector), excluding itself, the other words of
    its line (they share its context, so they are not independent evidence) and ``exclude_ids``.

    When the word is not indexed, ``fallback_text`` is embedded instead. Raises
    VectorsUnavailable on any store or embedding failure.
    """
    if collection is None:
        raise VectorsUnavailable("no vector store is configured")
    try:
        got = collection.get(ids=[doc_id], include=["embeddings"])
        embeddings = got.get("embeddings")
        if got["ids"] and embeddings is not None and len(embeddings):
            query: dict[str, Any] = {"query_embeddings": [list(embeddings[0])]}
        elif fallback_text:
            query = {"query_texts": [fallback_text]}
        else:
            raise VectorsUnavailable("the word has no embedding in the vector store")
        skip = {doc_id, *exclude_ids}
        same_line = doc_id.rsplit("#", 1)[0] + "#"
        res = collection.query(
            **query,
            n_results=max(1, n + len(skip) + 12),
            where={"merchant": merchant} if merchant else None,
            include=["metadatas", "distances"],
        )
    except VectorsUnavailable:
        raise
    except Exception as exc:
        raise VectorsUnavailable(f"vector search failed ({type(exc).__name__}: {exc})") from exc
    out = []
    for id_, meta, dist in zip(
        res["ids"][0], res["metadatas"][0], res["distances"][0], strict=True
    ):
        if id_ in skip or id_.startswith(same_line):
            continue
        out.append(
            Neighbour(
                id=id_,
                text=str(meta.get("text", "")),
                label=str(meta.get("label", NO_LABEL)),
                status=str(meta.get("status", NO_LABEL)),
                merchant=str(meta.get("merchant", "")),
                line=str(meta.get("line", "")),
                receipt=str(meta.get("receipt", "")),
                line_id=int(meta.get("line_id", 0)),
                word_id=int(meta.get("word_id", 0)),
                similarity=round(1.0 - float(dist), 3),
            )
        )
    return out[:n]


def similar_words_batch(
    collection: Any, doc_ids: Sequence[str], *, n: int = 10
) -> dict[str, list[Neighbour]]:
    """Neighbours of many stored words in one query (the harmoniser's scan). Words missing
    from the store are left out of the answer. Raises VectorsUnavailable."""
    if collection is None:
        raise VectorsUnavailable("no vector store is configured")
    out: dict[str, list[Neighbour]] = {}
    try:
        for start in range(0, len(doc_ids), 256):
            chunk = list(doc_ids[start : start + 256])
            got = collection.get(ids=chunk, include=["embeddings"])
            if not got["ids"]:
                continue
            res = collection.query(
                query_embeddings=[list(e) for e in got["embeddings"]],
                n_results=n + 13,
                include=["metadatas", "distances"],
            )
            for own, ids, metas, dists in zip(
                got["ids"], res["ids"], res["metadatas"], res["distances"], strict=True
            ):
                same_line = own.rsplit("#", 1)[0] + "#"
                found = []
                for id_, meta, dist in zip(ids, metas, dists, strict=True):
                    if id_ == own or id_.startswith(same_line):
                        continue
                    found.append(
                        Neighbour(
                            id=id_,
                            text=str(meta.get("text", "")),
                            label=str(meta.get("label", NO_LABEL)),
                            status=str(meta.get("status", NO_LABEL)),
                            merchant=str(meta.get("merchant", "")),
                            line=str(meta.get("line", "")),
                            receipt=str(meta.get("receipt", "")),
                            line_id=int(meta.get("line_id", 0)),
                            word_id=int(meta.get("word_id", 0)),
                            similarity=round(1.0 - float(dist), 3),
                        )
                    )
                out[own] = found[:n]
    except Exception as exc:
        raise VectorsUnavailable(f"vector search failed ({type(exc).__name__}: {exc})") from exc
    return out
