"""A GBNF grammar of HED annotations built from the schema's vocabulary.

Under it the bundled model can only write tags that exist: every name is one of the schema's
short-form tags, a tag that takes a value gets a value of its class (a number with one of its
units, or a name), and parentheses make groups one level deep. What the grammar leaves out
is what needs context it cannot see (``Definition``, ``Inset``, the other top-level-group
tags, tags that require a child they cannot be given): the validator and the repair loop deal
with the rest. When the sidecar defines names, ``Def/Name`` and the groups ``(Def/Name,
Onset)`` and ``(Def/Name, Offset)`` are items too, for those names only (a name that takes a
value gets a number).
"""

from __future__ import annotations

import json
import re
from functools import cache

from casework.apps.hed.vocabulary import TagInfo, load_vocabulary

__all__ = ["MAX_GROUP_TAGS", "MAX_ITEMS", "annotation_grammar", "grammar_tags"]

MAX_ITEMS = 12
"""Top-level items (tags or groups) in one annotation: bounds a rambling answer."""
MAX_GROUP_TAGS = 6
"""Tags in one group."""

# Tags that are only valid with definitions or temporal scaffolding the grammar cannot check.
_CONTEXT_TAGS = frozenset(
    {"def", "def-expand", "definition", "onset", "offset", "inset", "event-context"}
)


def grammar_tags(version: str) -> tuple[list[TagInfo], list[TagInfo]]:
    """(tags written bare, tags written with a value) the grammar allows for ``version``."""
    bare: list[TagInfo] = []
    valued: list[TagInfo] = []
    for info in load_vocabulary(version).tags.values():
        if info.short.lower() in _CONTEXT_TAGS or info.top_level_group:
            continue
        if "dateTimeClass" in info.value_classes:
            continue  # an ISO date the model would have to invent
        if info.takes_value:
            valued.append(info)
        elif not info.requires_child:
            bare.append(info)
    return sorted(bare, key=lambda t: t.short), sorted(valued, key=lambda t: t.short)


def _literal(text: str) -> str:
    return json.dumps(text)  # GBNF string literals take JSON's escapes


def _unit_rule(info: TagInfo) -> str:
    return "unit-" + re.sub(r"[^a-z0-9-]", "-", info.short.lower())


def _value_rule(info: TagInfo) -> str:
    """The value part of one tag: a number (with one of its units, when it has any) for a
    numeric class, a word for the rest."""
    if "numericClass" in info.value_classes:
        return f'number (" " {_unit_rule(info)})?' if info.units else "number"
    return "name"


@cache
def annotation_grammar(version: str, definitions: tuple[str, ...] = ()) -> str:
    """The GBNF grammar of an annotation in schema ``version`` (built once per process and
    set of definitions); ``definitions`` are the names in context (``Acc/#`` takes a value)."""
    bare, valued = grammar_tags(version)
    group = f'"(" tag (", " tag){{0,{MAX_GROUP_TAGS - 1}}} ")"'
    defs = ""
    if definitions:
        defs = ' | defref | "(" defref ", " ("Onset" | "Offset") ")"'
    rules = [
        f'root ::= item (", " item){{0,{MAX_ITEMS - 1}}}',
        f"item ::= tag | {group}{defs}",
        "tag ::= bare | valued",
        "bare ::= " + " | ".join(_literal(t.short) for t in bare),
        "valued ::= " + " | ".join(f"{_literal(t.short + '/')} {_value_rule(t)}" for t in valued),
        'number ::= "-"? [0-9]{1,6} ("." [0-9]{1,4})?',
        "name ::= [A-Za-z0-9_] [A-Za-z0-9_-]{0,30}",
    ]
    if definitions:
        refs = [
            f"{_literal('Def/' + n[:-2] + '/')} number"
            if n.endswith("/#")
            else _literal("Def/" + n)
            for n in definitions
        ]
        rules.append("defref ::= " + " | ".join(refs))
    for t in valued:
        if "numericClass" in t.value_classes and t.units:
            units = " | ".join(_literal(u) for u in dict.fromkeys(t.units))
            rules.append(f"{_unit_rule(t)} ::= {units}")
    return "\n".join(rules) + "\n"
