"""The schema's vocabulary: tags in short and long form, value classes, units, extension rules.

Loaded once per schema version from hedtools' bundled XML. ``prompt_text`` renders the
short-form names (no parent paths) for the annotation prompt; the compact form collapses a
few large leaf families (CSS colours, body parts, ...) so it fits the bundled model's context
with room for the rules and the feedback.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cache

from casework.apps.hed.validation import load_schema

__all__ = [
    "COLLAPSED_FAMILIES",
    "TagInfo",
    "Vocabulary",
    "estimate_tokens",
    "load_vocabulary",
]

# Large leaf families the compact prompt lists by a few examples (each is valid in full).
COLLAPSED_FAMILIES = (
    "CSS-color",
    "Anatomical-item",
    "Move-body-part",
    "Agent-state",
    "Data-artifact",
    "Data-variability-attribute",
    "Metadata",
    "Terrain",
)
COLLAPSED_EXAMPLES = 8
CHARS_PER_TOKEN = 3.6
"""Rough ratio for Qwen2.5's tokenizer on comma-separated hyphenated English names."""


@dataclass(frozen=True)
class TagInfo:
    """One schema tag."""

    short: str
    long: str
    takes_value: bool
    """The tag takes a value (``Duration/2 s``): its schema child is ``#``."""
    value_classes: tuple[str, ...]
    units: tuple[str, ...]
    """Allowed units of the value (empty when the value has none)."""
    extension_allowed: bool
    top_level_group: bool
    """Must sit in a top-level tag group (Onset, Duration, Definition, ...)."""
    requires_child: bool
    description: str

    @property
    def parent(self) -> str:
        return self.long.rsplit("/", 1)[0] if "/" in self.long else ""


@dataclass(frozen=True)
class Vocabulary:
    version: str
    tags: dict[str, TagInfo]
    """By lower-case short name."""

    def get(self, name: str) -> TagInfo | None:
        """The tag for a short or long name (case-insensitive), ignoring any value part."""
        base = name.strip().split("/")
        for i in range(len(base), 0, -1):  # the longest prefix that names a tag
            info = self.tags.get(base[i - 1].lower())
            if info and info.long.lower().endswith("/".join(base[:i]).lower()):
                return info
        return None

    @property
    def names(self) -> list[str]:
        return sorted(t.short for t in self.tags.values())

    def short_form(self, tag: str) -> str:
        """``Property/.../Red`` -> ``Red``; ``.../Duration/2 s`` -> ``Duration/2 s``; unknown
        tags are returned as written (stripped)."""
        parts = [p.strip() for p in tag.strip().split("/")]
        for i in range(len(parts), 0, -1):
            info = self.tags.get(parts[i - 1].lower())
            if info and info.long.lower().endswith("/".join(parts[:i]).lower()):
                return "/".join([info.short, *parts[i:]])
        return "/".join(parts)

    def prompt_text(self, *, compact: bool = True) -> str:
        """Short-form tag names grouped by top-level category, one line per group."""
        groups: dict[str, list[str]] = defaultdict(list)
        collapsed: dict[str, list[str]] = defaultdict(list)
        for info in sorted(self.tags.values(), key=lambda t: t.long):
            path = info.long.split("/")
            family = next((f for f in COLLAPSED_FAMILIES if f in path[:-1]), None)
            if compact and family:
                collapsed[family].append(info.short)
                continue
            name = info.short
            if info.takes_value:
                name += "/<value" + (f" {'|'.join(info.units[:4])}" if info.units else "") + ">"
            groups[path[0]].append(name)
        lines = [f"{root}: {', '.join(names)}" for root, names in groups.items()]
        for family, names in collapsed.items():
            shown = ", ".join(names[:COLLAPSED_EXAMPLES])
            lines.append(f"{family} (any of {len(names)} names, e.g.): {shown}")
        return "\n".join(lines)


def estimate_tokens(text: str) -> int:
    """A rough token count for prompt budgeting (see ``CHARS_PER_TOKEN``)."""
    return round(len(text) / CHARS_PER_TOKEN)


@cache
def load_vocabulary(version: str) -> Vocabulary:
    """The vocabulary of a schema version, built once per process."""
    from hed.schema import HedKey

    schema = load_schema(version)
    tags: dict[str, TagInfo] = {}
    for entry in schema.tags.values():
        if entry.name.endswith("/#"):
            continue  # value placeholders: folded into their parent as takes_value
        value = entry.takes_value_child_entry
        units: list[str] = []
        if value is not None:
            for unit_class in value.unit_classes.values():
                units.extend(unit_class.units)
        tags[entry.short_tag_name.lower()] = TagInfo(
            short=entry.short_tag_name,
            long=entry.long_tag_name,
            takes_value=value is not None,
            value_classes=tuple(value.value_classes) if value is not None else (),
            units=tuple(units),
            extension_allowed=bool(entry.has_attribute(HedKey.ExtensionAllowed)),
            top_level_group=bool(entry.has_attribute(HedKey.TopLevelTagGroup)),
            requires_child=bool(entry.has_attribute(HedKey.RequireChild)),
            description=entry.description or "",
        )
    return Vocabulary(version, tags)
