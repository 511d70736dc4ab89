"""The chooser between two readings of one line box: RapidOCR's and Tesseract's readings of
SROIE receipts' head lines (development pages; Tesseract's word confidences as it gave them)."""

from __future__ import annotations

from casework.apps.documents.readings import HEAD_MAX_LINES, choose, head_lines, plausibility


def test_a_lexicon_word_misread_loses_to_its_right_reading() -> None:
    # page 251: RapidOCR reads DAMANSARA as "DAI.1AiNSARA", Tesseract "$S21/58" for SS21/58;
    # word by word each keeps its better word
    second = [
        ("44", 0.85),
        ("JALAN", 0.85),
        ("$S21/58", 0.34),
        ("DAMANSARA", 0.92),
        ("UTAMA", 0.91),
    ]
    assert (
        choose("44 JALAN SS21/58 DAI.1AiNSARA UTAMA", 0.96, second)
        == "44 JALAN SS21/58 DAMANSARA UTAMA"
    )
    # page 002: a zero for the O of LOT
    second = [("LOT", 0.93), ("1851-A", 0.89), ("&", 0.89), ("1851-B,", 0.88)]
    assert choose("L0T 1851-A & 1851-B,", 0.95, second) == "LOT 1851-A & 1851-B,"


def test_word_by_word_where_the_two_disagree() -> None:
    # page 397: each engine misreads one word of the name; each word's better reading is kept
    second = [("eCGosway.com", 0.61), ("SDN", 0.85), ("BHD", 0.94), ("(5092134)", 0.23)]
    assert choose("eCosWay.c0m SDN BHD (509213A)", 0.86, second) == "eCosWay.com SDN BHD (509213A)"
    # page 423: a full stop inside LOT
    second = [("Lot", 0.96), ("PTD", 0.96), ("182908", 0.93), ("&", 0.93)]
    assert choose("L.ot PTD 182908 &", 0.94, second) == "Lot PTD 182908 &"


def test_a_word_misread_in_three_letters_is_still_one_word() -> None:
    # page 234: "40tso" for the postcode 40150, the words around it read alike
    second = [("40150", 0.86), ("Shah", 0.92), ("Alam,", 0.95), ("Selangor", 0.76), ("0.E.", 0.34)]
    assert choose("40tso Shah Alam, Selangor D.E", 0.9, second) == "40150 Shah Alam, Selangor D.E"


def test_title_case_words_run_together_are_a_join_not_a_misreading() -> None:
    # page 336: "JalanPelabur" against "Jalan@elabur"
    second = [("Lot", 0.9), ("3,", 0.9), ("Jalan@elabur", 0.9), ("23/1,", 0.9)]
    assert choose("Lot3 JalanPelabur 23/1,", 0.9, second) == "Lot3 JalanPelabur 23/1,"
    assert plausibility("JalanPelabur", 0.0) == plausibility("Jalan Pelabur", 0.0) == 2


def test_confidence_alone_does_not_swap_a_digit() -> None:
    # page 390: "KPB 6" (right) against "KPB 4", Tesseract a little more confident
    second = [("LOT", 0.93), ("1851-A", 0.9), ("&", 0.9), ("1851-B,", 0.9), ("JALAN", 0.93)]
    second += [("KPB", 0.9), ("4", 0.97)]
    assert choose("LOT 1851-A & 1851-B, JALAN KPB 6", 0.95, second).endswith("KPB 6")
    # page 008: a registration number; Tesseract's "JMOS25956" opens with no postcode
    assert choose("JM0325956-V", 0.9, [("JMOS25956-¥", 0.0)]) == "JM0325956-V"


def test_a_tie_keeps_the_first_reading() -> None:
    # page 001: "DEDAP" and "DEDAF" are no lexicon words; RapidOCR's confidence is higher
    second = [("27,", 0.26), ("JALAN", 0.26), ("DEDAF", 0.64), ("13,", 0.95)]
    assert choose("27,JALAN DEDAP 13", 0.92, second) == "27,JALAN DEDAP 13"


def test_spaces_alone_earn_nothing() -> None:
    """Page 469: the spaced reading's lexicon words are in the glued one too; the name's
    SANYU (RapidOCR) is kept over SANYO, as the rules split the glued words anyway."""
    second = [("SANYO", 0.9), ("STATIONERY", 0.93), ("SHOP", 0.9)]
    assert choose("SANYUSTATIONERYSHOP", 0.97, second) == "SANYUSTATIONERYSHOP"
    assert plausibility("SANYUSTATIONERYSHOP", 0.0) == plausibility("SANYO STATIONERY SHOP", 0.0)


def test_words_out_of_step_are_compared_as_lines() -> None:
    """Page 611: four words each, but RapidOCR's second is Tesseract's second and third: no
    word-by-word mixing ("SELANGOR SELANGOR E")."""
    second = [("48000", 0.9), ("RAWANG.", 0.9), ("SELANGOR", 0.9), ("DE", 0.5)]
    assert choose("48000 RAWANG.SELANGOR D E", 0.95, second) == "48000 RAWANG.SELANGOR D E"


def test_a_reading_that_dropped_or_invented_text_is_no_candidate() -> None:
    assert choose("NO.23 BATU 10, TAMAN SENTOSA,", 0.98, [("TAMAN", 0.9)]) == (
        "NO.23 BATU 10, TAMAN SENTOSA,"
    )
    assert choose("JALAN", 0.5, []) == "JALAN"


def test_plausibility_counts_misread_shapes() -> None:
    assert plausibility("JALAN", 0.0) == 2
    assert plausibility("Ja1an", 0.0) == -2  # a digit between letters
    assert plausibility("4O150", 0.0) == 2 - 2  # read as a postcode, but a letter between digits
    assert plausibility("40150", 0.0) == 2  # a postcode
    assert plausibility("L.ot", 0.0) == 2 - 1  # LOT, spaces and stops aside, but a stop in it
    assert plausibility("PRiNT", 0.0) == -1  # a capital after a small letter
    assert plausibility("Jalan", 0.0) == 2
    assert plausibility("SHAH » ALAM", 0.5) == 2 + 2 - 1 + 0.5  # lexicon twice, one noise


def test_the_head_ends_at_the_first_contact_tax_or_date_line() -> None:
    lines = [
        "TAX INVOICE",  # a heading among the first lines is left out but does not end it
        "ARTRANGE STATIONERS & PRiNT SDN BHD",
        "(1122327.U)",
        "44 JALAN SS21/58 DAI.1AiNSARA UTAMA",
        "47400 PETALINCiJAYA",
        "TEL:03-77271129",
        "FAX:03-77278929",
    ]
    assert head_lines(lines) == [1, 2, 3, 4]
    assert head_lines([*lines[1:5], "12/03/2018 10:21"]) == [0, 1, 2, 3]
    # page 527: the date over the address, read as a date with its month's name
    lines = ["HUA HO", "11 Jun2018 18:32", "12, Jalan Tampoi 7/4,KawasanPerindustrian"]
    assert head_lines(lines) == [0, 2]
    assert head_lines(["ITEM"] * 40) == list(range(HEAD_MAX_LINES))
    assert head_lines([]) == []
