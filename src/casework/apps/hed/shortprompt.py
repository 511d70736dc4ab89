"""The bundled model's short prompt: the few schema entries a case and its examples point to.

The grammar (``grammar.py``) already holds the answer space (every schema tag, and nothing
else), so the prompt need not list the whole vocabulary (about 3,100 tokens): it shows the
entries the case is likely to need, each with its schema description, and the rules. They are,
in this order and once each: the look-up's tags for the description (``baseline``: event
type, presentation, the tags its words and phrases name), the tags of the verified examples
shown as demonstrations, and the tags one of whose hyphen-separated name parts is a word of
the description ("correct" -> ``Correct-action``), at most ``PER_WORD`` per word.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from casework.apps.hed.baseline import lookup_annotation
from casework.apps.hed.rules import flatten_tags
from casework.apps.hed.vocabulary import TagInfo, Vocabulary

__all__ = ["MAX_ENTRIES", "PER_WORD", "entries_text", "prompt_tags"]

MAX_ENTRIES = 40
"""Schema entries shown at most (about 20 tokens each)."""
PER_WORD = 3
"""Tags a description word finds by their name parts, at most (shortest names first)."""
DESCRIPTION_CHARS = 90
"""An entry's schema description is cut here."""

_WORD = re.compile(r"[a-z][a-z0-9]*")
_STOP = frozenset(
    _WORD.findall(
        "a an the on in of to is are and or it at by with as be was were has have had this that "
        "these those for from into after before when while which who what not only one two"
    )
)


_NAME_PARTS: dict[str, dict[str, list[str]]] = {}
"""Per schema version, ``_by_name_part``'s index (built once per process)."""


def _by_name_part(vocab: Vocabulary) -> dict[str, list[str]]:
    """Each lower-case part of a tag's short name -> the tags with it, shortest first."""
    if vocab.version not in _NAME_PARTS:
        parts: dict[str, list[str]] = defaultdict(list)
        for info in vocab.tags.values():
            for part in info.short.lower().split("-"):
                parts[part].append(info.short)
        _NAME_PARTS[vocab.version] = {
            p: sorted(names, key=lambda n: (len(n), n)) for p, names in parts.items()
        }
    return _NAME_PARTS[vocab.version]


def _word_forms(word: str) -> list[str]:
    forms = [word]
    if word.endswith("s") and len(word) > 3:
        forms.append(word[:-1])
    if word.endswith("ed") and len(word) > 4:
        forms += [word[:-2], word[:-1]]
    if word.endswith("ly") and len(word) > 5:  # "correctly" -> Correct-action
        forms.append(word[:-2])
    return forms


def prompt_tags(
    description: str, annotations: Sequence[str], vocab: Vocabulary, *, limit: int = MAX_ENTRIES
) -> list[str]:
    """The schema tags (short form) the prompt shows for ``description`` with the verified
    ``annotations`` shown as its demonstrations, in the order the module says, at most
    ``limit``. Tags of an annotation the schema does not know are left out."""
    found: dict[str, None] = {}

    def add(name: str) -> None:
        info = vocab.get(name)
        if info is not None:
            found.setdefault(info.short, None)

    for tag in lookup_annotation(description, vocab).split(","):
        add(tag.strip())
    for annotation in annotations:
        for tag in flatten_tags(annotation):
            add(tag)
    index = _by_name_part(vocab)
    for word in _WORD.findall(description.lower()):
        if word in _STOP or len(word) < 3:
            continue
        for form in _word_forms(word):
            for name in index.get(form, [])[:PER_WORD]:
                add(name)
    return list(found)[:limit]


def _entry(info: TagInfo) -> str:
    name = info.short
    if info.takes_value:
        name += "/<value" + (f" {'|'.join(info.units[:4])}" if info.units else "") + ">"
    said = info.description.strip().split(". ")[0].rstrip(".")
    if len(said) > DESCRIPTION_CHARS:
        said = said[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return f"- {name}: {said}" if said else f"- {name}"


def entries_text(tags: Sequence[str], vocab: Vocabulary) -> str:
    """One line per tag: its short name (with ``/<value unit>`` when it takes one) and the
    opening of its schema description."""
    return "\n".join(_entry(info) for t in tags if (info := vocab.get(t)) is not None)
