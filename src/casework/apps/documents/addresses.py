"""A receipt's or an invoice's address from its lines: the block under the company name, up to
the first contact, tax or date line, joined the way the page prints it, with OCR's misreadings
of common Malaysian address words put back (a small lexicon written from general knowledge).
``read_address`` answers the address and whether a label named it."""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata

from casework.apps.documents.patterns import DATE, LEGAL_FORMS, edit_distance

__all__ = ["PLACE_WORDS", "read_address"]

_STREET = re.compile(
    r"(?i)\d+\s+[A-Za-z .'-]+\b(street|st|road|rd|avenue|ave|lane|ln|boulevard|blvd|drive|dr|way"
    r"|place|square)\b.*"
)
# what is not part of a sender's address block: contact, registration and tax lines, the
# document's heading, a registration number in brackets, a line naming a company
_NOT_ADDRESS = re.compile(
    r"(?i)\b(tel|fax|phone|mobile|whatsapps?|h/p|gst(?:id)?|sst|reg|registration|co\.?\s*no|company\s*n[o0]"
    rf"|tax|invoice|receipt|cashier|date|www|e-?mail|licen[cs]\w*|formerly|bill|roc|{LEGAL_FORMS})\b"
    r"|\bco\.(\s|$)|@|^\(.*\)$|\d{5,}-[A-Z]\b|tax\s*invoice|owned\s+by|\.com\b"
    # a label with only a number after it: a petrol station's "Site: 2395", "Outlet: 12"
    r"|^(?!no\b)[A-Za-z]+\s*:\s*\d+$"
)
# a postcode: five digits (US, Malaysia, France, Germany...) or a UK one; OCR reads a 0 as O
# and runs the town into it ("8110OJOHOR BAHRU"), never a number's tail ("N0.18252")
_POSTCODE = re.compile(
    r"(?<![\w.:#/-])(?<!N[O0] )(?<!(?i:l[o0]t) )(?<!(?i:pt) )(?<!(?i:ptd) )(?<!(?i:p\.t\.) )"
    r"\d[\dOo]{4}(?![\w-])"
    r"|(?<![\w.:#/-])\d[\dOo]{4}(?=[A-Z]{3})|(?<![\w.:#/-])\d\d \d{3}(?= [A-Za-z]{3})"
    r"|\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b"
    # the town before it run into it ("Tampoi81 200 JohorBahru", "Tampoi81200JohorBahru"), or
    # after its full stop ("Tampoi.81200 Johor")
    r"|(?<=[a-z]{3})\.?\d\d ?\d{3}(?= ?[A-Za-z]{3})"
)
# a telephone or fax number run onto the address's last line ("Johor. Tel No.: 07-387 3322")
_CONTACT_AFTER = re.compile(r"(?i)(?<=[a-z.,])\s+(?:te[l1]|fax|phone|h/p)\b.*$")
# a label before the address on its first line ("HQ ADD: LOT 11995, ...", "Address:")
_LABEL = re.compile(r"(?i)^(?:[A-Z]{1,4}\s+)?(?:add|addr|address)\s*[:.]\s*")
# a chain's branch under its head office's address: its number and name ("1245-DESA SRI
# HARTAMAS", "1317 TRILLIUM S6 BESI")
_BRANCH = re.compile(r"^\d[\dSOIl]{2,3}[- ][A-Z][A-Z0-9 ]+$")
# the letters OCR reads for a branch code's digits ("1SS8-TMN PUSAT KEPONG")
_CODE_DIGITS = str.maketrans("SOIl", "5011")
_ONLY_WORDS = re.compile(r"^[A-Za-z][A-Za-z .,'-]*$")
# the first line of a street address: a number, or a unit, lot or level word before one
_OPENS_ADDRESS = re.compile(
    r"(?i)^(?:\d|#|(?:no|lot|unit|level|suite|block|blk|floor)\b|[A-Z]{1,2}\d*-\d)"
)
# a line that is only a registration number ("789417-W", "(867388-U)")
_REGISTRATION = re.compile(r"^\(?[A-Z]{0,3}\d[\d-]{4,}\s*-?\s*[A-Z]?\)?$")
_ADDRESS_WORD = re.compile(
    r"(?i)^no\b|\b(jalan|jln|lorong|lrg|industrial|park|lot|taman|tmn|bandar|kampung|kg|persiaran|lebuh|mall|plaza"
    r"|floor|tingkat|wisma|menara|kompleks|street|road|avenue|lane|tower|unit|block|blk|level"
    r"|suite|medan|building|seksyen|sek)\b"
)

# Words Malaysian addresses print, written from general knowledge of them (streets, area
# words, states, big towns), not from any answer key: a word OCR misread by a letter
# ("PERHAS", "KEHBANGAN", "L0T") or ran into the next ("KUALALUMPUR") is put back.
_PLACE_WORDS_TEXT = """
    JALAN LORONG LEBUH LEBUHRAYA PERSIARAN LINGKARAN TAMAN BANDAR BARU KAMPUNG BATU BUKIT
    SUNGAI SIMPANG KAWASAN PERINDUSTRIAN PERUSAHAAN SEKSYEN PUSAT PLAZA WISMA MENARA
    KOMPLEKS MALL FLOOR GROUND TINGKAT BLOK LOT DESA KOTA JAYA INDAH UTAMA PERDANA MAHKOTA
    PERMATA MUTIARA SETIA SERI DAMAI MEGAH UTARA SELATAN TIMUR BARAT TENGAH MALAYSIA KUALA
    LUMPUR SELANGOR JOHOR BAHRU PENANG PINANG PERAK IPOH MELAKA KEDAH PAHANG KELANTAN
    TERENGGANU NEGERI SEMBILAN SABAH SARAWAK PUTRAJAYA WILAYAH PERSEKUTUAN DARUL EHSAN
    TAKZIM KLANG PETALING SHAH ALAM SUBANG CHERAS PUCHONG KAJANG BANGI SEMENYIH RAWANG
    SEPANG NILAI SEREMBAN SETAPAK KEPONG AMPANG SENTUL BANGSAR DAMANSARA CYBERJAYA MASAI
    SKUDAI TAMPOI KULAI PERMAS PLENTONG BALAKONG KEMBANGAN SEGAMBUT SELAYANG GOMBAK BENTONG
    KUANTAN WANGSA MAJU BUNGA RAYA LEVEL BANGUNAN BASEMENT PARADE SQUARE CENTRE UPTOWN
    AMAN MAKMUR RIDZUAN NAIM IMAN KHUSUS KELANG KELANA SUNGEI
"""
PLACE_WORDS = frozenset(_PLACE_WORDS_TEXT.split())
# street words OCR runs into the name after them ("JALANHARMONI", "TAMANDAYA")
_GLUED_STREET = re.compile(
    r"(?i)^(jalan|taman|lorong|kampung|persiaran|kawasan|seksyen)([a-z]{3,})$"
)
# what the recognizer mistakes a letter for, inside a word
_DIGIT_FOR_LETTER = str.maketrans("0158", "OISB")
# letters and digits the recognizer reads for one another in a thin font (``Ja1an``, ``Jaian``,
# ``Ma11``): a word is looked up with each group as one letter; a spelling two lexicon words
# share is left alone
_LOOKALIKE = str.maketrans("1I|!05", "LLLLOS")
_BY_LOOKS: dict[str, str | None] = {}
for _word in sorted(PLACE_WORDS):
    _looks = _word.translate(_LOOKALIKE)
    _BY_LOOKS[_looks] = None if _looks in _BY_LOOKS else _word


def _in_case_of(word: str, like: str) -> str:
    return word if like.isupper() else word.title()


def _place_word(token: str) -> str:
    """One token of an address as the page prints it: a lexicon word OCR misread by one
    letter in a word of six or more (two in nine or more) when exactly one word is that
    close, a digit or a small l read for a letter (``L0T``, ``lpoh``), an unread letter
    (``JA_AN``), two lexicon words run together split."""
    word = token.upper()
    if not re.fullmatch(r"[A-Z0158_]+", word) or not re.search(r"[A-Z]", word):
        return token
    if word in PLACE_WORDS:
        return token
    if (seen := word.translate(_DIGIT_FOR_LETTER)) in PLACE_WORDS:
        return _in_case_of(seen, token)
    if word[0] == "L" and "I" + word[1:] in PLACE_WORDS:  # a capital I read as a small l
        return _in_case_of("I" + word[1:], token)
    if len(word) >= 4 and (alike := _BY_LOOKS.get(word.translate(_LOOKALIKE))):
        return _in_case_of(alike, token)
    if m := _GLUED_STREET.match(token):
        return f"{m[1]} {_place_word(m[2])}"
    if apart := _lexicon_run(word):
        return _in_case_of(" ".join(apart), token)
    if "_" in word and len(word) >= 4:  # a letter it could not read, or a gap: "JA_AN", "JAL_AN"
        fits = [w for w in PLACE_WORDS if re.fullmatch(word.replace("_", "[A-Z]?"), w)]
        return _in_case_of(fits[0], token) if len(fits) == 1 else token
    # a five-letter word is a letter away from others too often (ANGSA, JAPAN, BLOCK)
    if len(word) < 6 or not word.isalpha():
        return token
    # two edits only in place (a letter dropped and another changed made "GEMBILANG" of a
    # street's name SEMBILAN)
    limit = 2 if len(word) >= 9 else 1
    close = [
        w
        for w in PLACE_WORDS
        if abs(len(w) - len(word)) <= 1
        and edit_distance(word, w) <= (limit if len(w) == len(word) else 1)
    ]
    return _in_case_of(close[0], token) if len(close) == 1 else token


def _lexicon_run(word: str, parts: int = 3) -> list[str] | None:
    """``word`` as two or three lexicon words of four letters or more run together
    ("KUALALUMPUR", "BANDARSETIAALAM"), else None."""
    for cut in range(4, len(word) - 3):
        if word[:cut] not in PLACE_WORDS:
            continue
        if word[cut:] in PLACE_WORDS:
            return [word[:cut], word[cut:]]
        if parts > 2 and (rest := _lexicon_run(word[cut:], parts - 1)):
            return [word[:cut], *rest]
    return None


# a state's title written short: "SELANGOR D.E." (Darul Ehsan), "JOHOR DT" (Darul Takzim)
_STATE_SHORT = frozenset({"DE", "DT", "DK", "DR", "DA", "DM", "WP"})


def _in_a_state_line(word: str) -> bool:
    """A word of the line after a postcode's: a place, places run together ("DARULEHSAN"),
    or a state's short title."""
    word = word.strip(".").replace(".", "").upper()
    return _is_place_word(word) or word in _STATE_SHORT or bool(_lexicon_run(word))


def _is_place_word(word: str) -> bool:
    return word.upper() in PLACE_WORDS or bool(_BY_LOOKS.get(word.upper().translate(_LOOKALIKE)))


# the words a Malaysian street address opens with, as OCR misreads them: "1.OT", "Eot", "Loi",
# "LUT", "10T", "L.ot" (LOT); "JA:AN", "Jalau", "J ALA N" (JALAN); "J1n", "BIk" (Jln, Blk)
_LOT = re.compile(r"^(?:[1lIE]\.?[oO0][tT]|L\.?[oO0U][tTiI1]|[1l]0T)(?= [A-Z]{0,3}\d)")
_JALAN = re.compile(r"(?i)\bj ?a ?[l:;|] ?a ?[nu]\b|\bjala[u]\b")
_SHORT = {"J1N": "JLN", "JIN": "JLN", "BIK": "BLK", "B1K": "BLK"}
# two place words printed together, one misread by a letter ("Johor Bahtu", "Setia Alan")
_PAIRS = (("JOHOR", "BAHRU"), ("KUALA", "LUMPUR"), ("SHAH", "ALAM"), ("SETIA", "ALAM"))
# an address in Malay has no accents: OCR's "Selāngor", "Simpàng"
_MALAY = re.compile(r"(?i)\b(?:jalan|jln|taman|tmn|lorong|selangor|johor|malaysia|kuala|seksyen)\b")


def _street_words(joined: str) -> str:
    """The misread forms of LOT, JALAN, JLN and BLK put back, and accents OCR put on an
    address written in Malay dropped."""
    if _MALAY.search(joined):
        joined = unicodedata.normalize("NFKD", joined).encode("ascii", "ignore").decode()
    joined = _LOT.sub(lambda m: "Lot" if m[0][-1].islower() else "LOT", joined)
    joined = _JALAN.sub(lambda m: "Jalan" if m[0][-1].islower() else "JALAN", joined)
    return re.sub(r"\b(?:J[1I][nN]|B[1I][kK])\b", _short_word, joined)


def _short_word(m: re.Match[str]) -> str:
    word = _SHORT[m[0].upper()]
    return word if m[0].isupper() else word.title()


_PAIR_WORDS = [
    *((re.compile(rf"(?i)\b{first}\s+(\w+)"), second) for first, second in _PAIRS),
    *((re.compile(rf"(?i)\b(\w+)\s+{second}\b"), first) for first, second in _PAIRS),
]
"""Each pair's word as a pattern that captures the word beside it, and what that word is."""


def _paired(tidied: str) -> str:
    """A place word misread by one letter beside the word it is printed with."""
    for pattern, partner in _PAIR_WORDS:
        tidied = pattern.sub(functools.partial(_put_back, partner=partner), tidied)
    return tidied


def _put_back(m: re.Match[str], partner: str) -> str:
    word = m[1]
    if len(word) != len(partner) or edit_distance(word.upper(), partner) != 1:
        return m[0]
    start, end = m.start(1) - m.start(), m.end(1) - m.start()
    return m[0][:start] + _in_case_of(partner, word) + m[0][end:]


def _tidy_address(joined: str) -> str:
    """An address as printed from OCR's reading of it: lexicon words put back
    (``_place_word``), a word split in two by a wrong space joined when it makes one ("L ot"),
    a letter O in a postcode read as the zero it is ("8110O"), the town run into it apart."""
    joined = _street_words(joined)
    joined = re.sub(r"(?<=[a-z])(?=[A-Z][a-z])", " ", joined)  # "OffBatu", "LotF1-01"
    # a speck: "BUKIT'SRI BINTANG", "Level'6"
    joined = re.sub(r"(?<=[A-Z]{3})'(?=[A-Z]{3})|(?<=[A-Za-z])'(?=\d)", " ", joined)
    # the postcode run into the town before it ("Tampoi81 200", "Tampoi81200Johor") or after
    # its full stop ("Tampoi.81200")
    joined = re.sub(r"(?<=[a-z]{3})\.?(?=\d\d ?\d{3} ?[A-Za-z]{3})", lambda m: m[0] + " ", joined)
    # zeros read for O's between letters ("SENT0SA", "GR0UND FL00R"), at a word's end
    # ("REK0") and in "N0." before the digit runs are split from words
    joined = re.sub(r"(?<=[A-Za-z])0+(?=[A-Za-z])", lambda m: "O" * len(m[0]), joined)
    joined = re.sub(r"(?<=\b[A-Z]{3})0\b|\bN0(?=[.:\s]|\d|$)", lambda m: m[0][:-1] + "O", joined)
    joined = re.sub(
        r"(?<![\w.:#/-])(\d[\dOo]{4})(?=[A-Za-z]{3}|\W|$)",
        lambda m: m[1].replace("O", "0").replace("o", "0"),
        joined,
    )
    joined = re.sub(
        r"(?<![\w.:#/-])(\d{3})([OUD0]{2})(?= [A-Z]{3})|(?<![\w.:#/-])(\d{4})D(?= [A-Z]{3})",
        lambda m: (m[1] + "00") if m[1] else m[3] + "0",
        joined,
    )
    joined = re.sub(r"(?<=\d)(?=[A-Za-z]{3})", " ", joined)  # "81100JOHOR"
    # "81 100", "Tampoi,81 200"
    joined = re.sub(r"(?<![\w./-])(\d\d) (\d{3})(?= [A-Za-z]{3})", r"\1\2", joined)
    # a letter read for a digit inside a number ("28I1", "7/i18B", "4O150")
    joined = re.sub(r"(?<=\d)[Il|](?=\d)|(?<=\d/)[Iil|](?=\d)", "1", joined)
    joined = re.sub(r"(?<=\d)[Oo](?=\d)|(?<=[A-Z]-)O(?=\d)", "0", joined)
    # a house number's last zero read as O ("NO 29O", "1O-G"), a B read for an 8 ("2B11")
    joined = re.sub(r"(?<=\b\d\d)O\b|(?<=\b\d)O(?=-[A-Z0-9])", "0", joined)
    joined = re.sub(r"(?<=\d)B(?=\d)", "8", joined)
    # a section code's 5 read as S ("JALAN NOVA US/N, SEKSYEN US")
    joined = re.sub(
        r"\bUS(?=/[A-Z]{1,2}\b)|(?i:(?<=seksyen )|(?<=sek\. )|(?<=sek ))US\b", "U5", joined
    )
    # after the digit-run split, which reads "Peta1 ing" as a number and a word
    joined = _join_split_words(joined)
    joined = re.sub(r"(?i)\b(lot|no|batu)(?=\d|[A-Z]\d)", r"\1 ", joined)  # "Lot3", "LotF1-01"
    joined = re.sub(r"(?<= )&(?=\w)", "& ", joined)  # "LOT 1851-A &1851-B"
    parts = re.split(r"([\s,.]+)", joined)
    tidied = " ".join("".join(_place_word(p) for p in parts).split())
    # a word run into the number after it ("JASA3", "KPB6", "AXIS40400": SROIE's 313
    # development addresses print a space there 344 times, none 6), not a letter misread as a
    # digit inside a word ("ANG5A")
    tidied = re.sub(r"\b([A-Za-z]{3,})(?=\d)(?![0158][A-Za-z])", r"\1 ", tidied)
    tidied = _paired(tidied)
    # the title before a state's name ("IARUL EHSAN": Darul Ehsan)
    return _TITLE_MISREAD.sub(lambda m: _in_case_of("DARUL", m[0]), tidied)


_TITLE_MISREAD = re.compile(
    r"(?i)\b(?!darul)(?:[a-z]arul|[il]{2}arul|d[a-z]rul|da[a-z]ul|dar[a-z]l|daru[a-z])"
    r"(?=\s+(?:ehsan|takzim|makmur|aman|ridzuan|naim|khusus)\b)"
)


def _join_split_words(text: str) -> str:
    """Two neighbouring words joined when together they make a lexicon word and the second
    alone does not: a space OCR put inside a word ("Shah A lam", "Peta1 ing")."""
    out: list[str] = []
    for word in text.split(" "):
        letters = re.sub(r"(?i)[^a-z].*$", "", word)  # "L ot3": the number is split later
        if (
            out
            and letters
            and re.fullmatch(r"(?i)[a-z][a-z1]*", out[-1])
            and _is_place_word(out[-1] + letters)
            and not _is_place_word(letters)
        ):
            out[-1] += word
        else:
            out.append(word)
    return " ".join(out)


def read_address(lines: list[str], after: int = 0) -> tuple[str, bool] | None:
    """A one-line street address near the top (a guess: the line may hold more); else the
    block of lines the sender's address takes under its name, found by its structure as
    surely as a labelled value: the first line with a postcode, the lines above it back to the
    name or registration lines (three at most), and a state or country line after it, joined
    with spaces as printed; else (no postcode printed) the lines under the name (``after``,
    the company's line) up to the first contact, tax or date line, when one reads as an
    address (a guess). On receipts written by others (SROIE) the block matched the gold
    address on 16 of 26, the bundled model's reading on 5, so the field layer keeps it."""
    for line in lines[:8]:
        if m := _STREET.search(line):
            return m.group(0).strip(), False
    top = [_LABEL.sub("", _CONTACT_AFTER.sub("", ln.strip())) for ln in lines[:12]]
    for at in range(max(1, after + 1), len(top)):
        if not _POSTCODE.search(top[at]) or _NOT_ADDRESS.search(top[at]):
            continue
        if not re.search(r"[A-Za-z]{3}", top[at]) and not re.search(r",\s*$", top[at - 1]):
            continue  # a number alone on its line ("80292"), not a postcode after its street
        start = at
        while (
            start - 1 > after
            and at - start < 3
            and not _NOT_ADDRESS.search(top[start - 1])
            and not _REGISTRATION.match(top[start - 1])
        ):
            start -= 1
        block = top[start : at + 1]
        # a branch or shop name printed between the company and its address ("MYDIN MART SRI
        # MUDA") has no number; the address opens at the first line that reads like one
        while len(block) > 2 and not re.search(r"\d", block[0]) and _OPENS_ADDRESS.match(block[1]):
            block = block[1:]
        # the town and state follow a line that ends with its postcode or a comma
        # ("..., 44300" / "BATANG KALI, SELANGOR"); otherwise only a one- or two-word state
        open_end = bool(re.search(r"(\b\d{5}|,)\s*$", top[at]))
        for following in top[at + 1 : at + 3]:
            # a speck after the state ("SELANGOR DARUL EHSAN V")
            following = re.sub(r"(?<=[A-Za-z]{4}) [A-Za-z]$", "", following)
            if _BRANCH.match(following):
                code, rest = re.split(r"(?=[- ])", following, maxsplit=1)
                block.append(code.translate(_CODE_DIGITS) + rest)  # "1245-DESA SRI HARTAMAS"
                break
            if not _ONLY_WORDS.match(following) or _NOT_ADDRESS.search(following):
                break
            if not open_end and not all(map(_in_a_state_line, re.findall(r"[\w.]+", following))):
                break  # a branch's name after "..., Malaysia" ("SUNWAY VELOCITY")
            block.append(following)  # "SELANGOR", "MALAYSIA", "SEMENYIH, SELANGOR"
            if not open_end or following.endswith("."):
                break
        return _joined_address(block), True
    start = after + 1
    while start < min(len(top), after + 4) and (
        _NOT_ADDRESS.search(top[start]) or _REGISTRATION.match(top[start])
    ):
        start += 1
    block = list(itertools.takewhile(_may_be_address, top[start : start + 4]))
    # a full stop ends the address ("NO7,JLN UERO,SHAH ALAM." and the items under it)
    block = block[: next((i + 1 for i, ln in enumerate(block) if ln.endswith(".")), len(block))]
    # a shop's second name line above a street number ("BISTRO & CAFE" / "109, SS21/1A,")
    while (
        len(block) > 1
        and not re.search(r"\d", block[0])
        and not _ADDRESS_WORD.search(_tidy_address(block[0]))
        and _OPENS_ADDRESS.match(block[1])
    ):
        block = block[1:]
        start += 1
    # the block names a street or a building, or opens with a number and ends in a place
    # ("109, SS21/1A," / "DAMANSARA UTAMA")
    ends_in_place = bool(block) and all(
        _is_place_word(w) for w in re.findall(r"[A-Za-z]+", block[-1]) or ["-"]
    )
    if block and (
        any(_ADDRESS_WORD.search(_tidy_address(ln)) for ln in block)
        or (len(block) > 1 and _OPENS_ADDRESS.match(block[0]) and ends_in_place)
    ):
        # ... but not the country under it ("... 51200 Kuala Lumpur." / "MALAYSIA")
        following = top[start + len(block)] if start + len(block) < len(top) else ""
        if block[-1].endswith(".") and re.fullmatch(r"(?i)\s*malaysia\.?\s*", following):
            block.append(following)
        return _joined_address(block), False
    return None


def _may_be_address(line: str) -> bool:
    """Not a contact, tax or date line, nor only a telephone number ("03-7845 6155")."""
    return not (
        _NOT_ADDRESS.search(line)
        or re.search(DATE, line)
        or re.fullmatch(r"[\d\s()+/-]{7,}", line)
        or re.search(r"\d\.\d\d\b", line)  # an item's price
    )


def _joined_address(block: list[str]) -> str:
    # a lone letter after a postcode at a line's end is a speck, not a town ("43500 L")
    block = [re.sub(r"(?<=\b\d{5}) [A-Za-z]$", "", line) for line in block]
    joined = _tidy_address(" ".join(" ".join(block).split()))
    joined = re.sub(r"\s+(?=[,.](?:\s|$))", "", joined)  # OCR's "KPB 6 ,"
    # a speck before the first word (". No.1,"), a house number split ("1 2, Jalan"), a
    # telephone number run on at the end ("... TASIK DAMAI 016-5498845,")
    joined = re.sub(r"^[.,:;'\s]+", "", joined)
    joined = re.sub(r"^(\d) (\d{1,3}),", r"\1\2,", joined)
    joined = re.sub(r"\s+\(?0\d{1,2}\)?[- ]?\d{3,4}[- ]?\d{4}[,.]?$", "", joined)
    joined = re.sub(r"(?<=\w):$", ".", joined)  # "SEL:" at the end: its full stop
    # OCR drops the space after a comma; SROIE's 625 gold addresses print one in 9 of 10
    return re.sub(r",(?=[A-Za-z0-9])", ", ", joined)


# the tax's name in the languages invoices come in: VAT, TVA, BTW, MwSt, USt, IVA, GST
