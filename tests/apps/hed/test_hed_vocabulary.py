"""Vocabulary, error augmentation and the deterministic HED rules."""

from __future__ import annotations

import pytest

from casework.apps.hed.remediation import REMEDIES, augment, closest_tags, faulty_term
from casework.apps.hed.rules import (
    HED_RULES,
    MAX_DESCRIPTION_CHARS,
    Group,
    check_description,
    clean_annotation,
    parse_hed,
    split_top_level,
)
from casework.apps.hed.validation import Issue
from casework.apps.hed.vocabulary import estimate_tokens, load_vocabulary
from casework.errors import InputError


@pytest.fixture(scope="module")
def vocab():
    return load_vocabulary("8.3.0")


def test_vocabulary_has_short_long_values_units_and_extension_rules(vocab) -> None:
    assert len(vocab.tags) == 1128
    red = vocab.tags["red"]
    assert (
        red.long
        == "Property/Sensory-property/Sensory-attribute/Visual-attribute/Color/CSS-color/Red-color/Red"
    )
    assert (red.takes_value, red.extension_allowed) == (False, True)
    duration = vocab.tags["duration"]
    assert (duration.takes_value, duration.top_level_group) == (True, True)
    assert duration.value_classes == ("numericClass",)
    assert "s" in duration.units and "Hz" not in duration.units
    assert vocab.tags["frequency"].units == ("hertz", "Hz")
    assert vocab.tags["label"].value_classes == ("nameClass",)
    assert vocab.tags["label"].extension_allowed is False
    assert load_vocabulary("8.3.0") is vocab  # loaded once per version


def test_short_form_and_lookup(vocab) -> None:
    assert vocab.short_form("Item/Object/Geometric-object/2D-shape/Ellipse/Circle") == "Circle"
    long_duration = "Property/Data-property/Data-value/Spatiotemporal-value/Temporal-value/Duration"
    assert vocab.short_form(f"{long_duration}/2 s") == "Duration/2 s"
    assert vocab.short_form(" Item/Blue-widget ") == "Item/Blue-widget"
    assert vocab.short_form("Blech") == "Blech"
    assert vocab.get("duration/3 s").short == "Duration"
    assert vocab.get("Nothing-like-this") is None


def test_prompt_vocabulary_is_short_form_and_fits_the_bundled_context(vocab) -> None:
    compact = vocab.prompt_text()
    full = vocab.prompt_text(compact=False)
    assert "Sensory-event" in compact and "Mouse-button" in compact
    assert "Item/Object" not in compact and "Geometric-object/" not in compact
    assert "Duration/<value s|second" not in compact  # units are listed as the schema orders them
    assert "Duration/<value second|s|day|month>" in compact
    assert "CSS-color (any of " in compact and "DarkRed" not in compact
    assert "DarkRed" in full
    # The bundled model has 8192 tokens; vocabulary + rules must leave room for the rest.
    assert 2500 < estimate_tokens(compact) < 3600
    assert estimate_tokens(full) > estimate_tokens(compact) + 800


def test_closest_tags(vocab) -> None:
    assert closest_tags("Cirle", vocab)[0] == "Circle"
    assert closest_tags("Mouse button", vocab)[0] == "Mouse-button"
    assert closest_tags("keyboard", vocab) == ["Keyboard"]
    assert set(closest_tags("Red Circle", vocab)[:2]) == {"Red", "Circle"}
    assert "Experimental-stimulus" in closest_tags("Visual-stimulus", vocab)
    assert closest_tags("Item/Zzzzqqq", vocab) == []
    # Seen from the bundled model: "Screen" (not a tag) was replaced by Screen-resolution.
    assert closest_tags("Screen", vocab) == [
        "Screen-window",
        "Computer-screen",
        "Screen-resolution",
    ]


def test_augment_adds_remedy_closest_tags_and_units(vocab) -> None:
    text = augment(Issue("TAG_INVALID", 'Invalid tag - "Cirle".', "Cirle"), vocab)
    assert text.splitlines()[0] == '[TAG_INVALID] Invalid tag - "Cirle".'
    assert "How to fix: Use a tag from the vocabulary" in text
    assert "Closest valid tags for 'Cirle': Circle" in text
    units = augment(Issue("UNITS_INVALID", 'Invalid unit - "Duration/3 parsecs".'), vocab)
    assert "Allowed units for Duration: second, s, day, month, minute, hour, year" in units
    unknown = augment(Issue("SOMETHING_NEW", "odd"), vocab)
    assert "Rewrite the part it points at." in unknown


def test_every_remedy_names_what_and_fix() -> None:
    assert {"TAG_INVALID", "UNITS_INVALID", "PARENTHESES_MISMATCH", "TEMPORAL_TAG_ERROR"} <= set(
        REMEDIES
    )
    assert all(r.what.endswith(".") and r.fix.endswith(".") for r in REMEDIES.values())


def test_faulty_term_from_tag_or_message() -> None:
    assert faulty_term(Issue("TAG_INVALID", "x", "Blech")) == "Blech"
    assert faulty_term(Issue("TAG_INVALID", "'Blech' in Blech is not valid")) == "Blech"
    assert faulty_term(Issue("TAG_EMPTY", "extra comma")) == ""


def test_check_description() -> None:
    assert check_description("  A red   circle.\n") == "A red circle."
    with pytest.raises(InputError, match="empty"):
        check_description("   ")
    with pytest.raises(InputError, match=f"limit is {MAX_DESCRIPTION_CHARS}"):
        check_description("x" * 10_000)


def test_clean_annotation() -> None:
    assert clean_annotation("```\nSensory-event, Red\n```") == "Sensory-event, Red"
    assert (
        clean_annotation('HED: "Sensory-event,  (Red, Circle)"') == "Sensory-event, (Red, Circle)"
    )
    assert clean_annotation("Sensory-event\nexplanation follows") == "Sensory-event"
    assert clean_annotation("") == ""


def test_split_and_parse() -> None:
    assert split_top_level("A, (B, (C, D)), E") == ["A", "(B, (C, D))", "E"]
    assert parse_hed("A, (B, (C, D)), E") == Group(
        ("A", "E"), (Group(("B",), (Group(("C", "D"), ()),)),)
    )
    assert parse_hed("A, (B, C") == Group(("A",), (Group(("B", "C"), ()),))


def test_hed_rules_text_states_the_core_rules() -> None:
    assert "short form" in HED_RULES and "(Red, Circle)" in HED_RULES
    assert HED_RULES.count("\n") < 40
