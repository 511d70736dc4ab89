"""A receipt's or an invoice's issuer from its lines: the name with its legal form near the
top, the sender's line above a letter's address window, the name above a registration number,
the bank account's holder or the web address's name, else the first line that reads as a name;
with OCR's run-together words and misread legal forms (``SDN 3HD``) put back.
``read_company`` answers (name, whether the page marked it as the name, its line)."""

from __future__ import annotations

import itertools
import re
import unicodedata

from casework.apps.documents.patterns import LEGAL_FORMS, edit_distance

__all__ = ["NAME_WORDS", "read_company"]

# a company's legal form at the end of its name: "SDN BHD", "S/B", "Ltd", "GmbH", "SARL", "Inc."
# European forms a name ends with too ("Coolblue B.V.", "QualityHosting AG", "Free SAS"); not
# among the words that end an address block, where "SA" or "AG" can be a place's
_EUROPEAN_FORMS = r"ag|sas|s\.a|b\.\s?v|n\.\s?v|bv|nv|s\.r\.l|srl|s\.p\.a"
_LEGAL_FORM = re.compile(
    rf"(?i)^(?P<name>.*?[A-Za-z].*?\b(?:(?:{LEGAL_FORMS}|{_EUROPEAN_FORMS})\b\.?"
    r"|co\b\.?(?!\s*\d)))"  # not "CO 80202"
)
# the sender's line above a letter's address window ("QualityHosting AG - Uferweg 40-42 -
# D-63571 Gelnhausen"), and the legal mention at the foot of a French invoice ("Free SAS au
# capital de ..."): a name the page gives as its own
_SENDER = re.compile(r"(?i)^(?P<name>[^:]+?)\s+(?:[-–·|●•]\s+.*\d{4}|au capital\b)")


def _tidy_name(name: str) -> str:
    """A name as printed, not as OCR runs it together: brackets apart from the words around
    them ("BAKERIES(KL)SDN BHD"), a till's code before it dropped ("#000002 BAIFU (M)"), a
    trade word run into the word before it ("UNIHAKKAINTERNATIONAL")."""
    name = re.sub(r"^#\d+\s+", "", name)
    # OCR's underscores for spaces ("Segi_Cash_& Carry"), a logo's stars ("**Royaltea**"),
    # a hyphen before a full stop ("D.I.Y-.")
    name = " ".join(_undecorated(name.replace("_", " ")).split())
    name = re.sub(r"(?<=\w)-\.", ".", name)
    name = re.sub(r"(?<=\b[A-Z]\.)1(?=\.)", "I", name)  # "MR. D.1.Y."
    name = re.sub(
        r"(?i)^(?:owned|own|operated|managed)\s+by\s*:?\s*", "", name
    )  # "OWN BY: CHEF LEE"
    name = _GLUED_SHOP.sub(r"\1 \2", name)
    name = _GLUED_TRADE_WORD.sub(r"\1 \2", name)
    name = re.sub(r"[A-Za-z]{6,}", lambda m: _name_word(m[0]), name)
    # "ENTERPRISE ISETIA ALAM)": the opening bracket read as I
    if (
        ")" in name
        and "(" not in name
        and (opened := list(re.finditer(r"\b[Il1|](?=[A-Z]{3}[^()]*\))", name)))
    ):
        name = name[: opened[-1].start()] + "(" + name[opened[-1].end() :]
    name = re.sub(r"(?i)^(kedai|restoran|syarikat|perniagaan)(?=[a-z]{3})", r"\1 ", name)
    name = re.sub(r"(?i)\bsdn(?=bhd\b)", r"\g<0> ", name)  # "SDNBHD"
    name = re.sub(r"(?<=[A-Z]{3})SDN(?=\s*BHD\b)", r" SDN", name)  # "INTERNATIONALSDN BHD"
    # zeros read for O's between letters ("HAI-0 RAYA", "F00DICIOUS", "AEON C0. (M) BHD",
    # "Golden Sc0op"), and a one for a capital I opening a word ("URBAN 1DEA")
    name = re.sub(
        r"(?<=[A-Z]-)0\b|(?<=[A-Z])0+(?=[A-Z])|(?<=\bC)0(?=\.)",
        lambda m: "O" * len(m[0]),
        name,
    )
    name = re.sub(r"(?<=[a-z])0+(?=[a-z])", lambda m: "o" * len(m[0]), name)
    name = re.sub(r"\b0(?=[a-z]{2})", "O", name)  # "0ld Town Kopitiam"
    # an ampersand run into one word of two spaced ones ("CASH& CARRY"), not "F&B"
    name = re.sub(r"(?<=\w)&(?= )|(?<= )&(?=\w)", " & ", name).replace("  ", " ")
    name = re.sub(r"\b1(?=[A-Z]{3,}\b)", "I", name)
    # an ampersand read as G between two words ("STATIONERY G BOOKS"); a region's letter
    # read as 1 in brackets ("(K1)": KL)
    name = re.sub(r"(?<=[A-Za-z]{4}) G (?=[A-Za-z]{4})", " & ", name)
    name = re.sub(r"\(([A-Z])1\)", r"(\1L)", name)
    # a bracket OCR lost before the legal form ("BAKERIES (KL SDN BHD")
    name = re.sub(r"\(([A-Z]{1,3})(?= (?:SDN|S/B|BHD)\b)(?![^(]*\))", r"(\1)", name)
    return re.sub(r"(?<=[A-Za-z.])\((?=\w)", " (", re.sub(r"\)(?=[A-Za-z])", ") ", name))


def _undecorated(line: str) -> str:
    """A line without the stars, tildes, rules and underscores a logo prints around a name."""
    return line.strip("*~=_ \t")


def _name_word(word: str) -> str:
    """A trade word OCR misread by one letter (two in nine or more), when exactly one is that
    close."""
    upper = word.upper()
    if upper in NAME_WORDS or upper[:-1] in NAME_WORDS:  # a plural: "RESTAURANTS"
        return word
    limit = 2 if len(upper) >= 9 else 1
    close = [w for w in NAME_WORDS if abs(len(w) - len(upper)) <= limit]
    close = [w for w in close if edit_distance(upper, w) <= limit]
    if len(close) != 1 or _a_form_of(upper, close[0]):
        return word
    return close[0] if word.isupper() else close[0].title()


def _a_form_of(word: str, known: str) -> bool:
    """Whether ``word`` is another form of the lexicon's word, not a misreading of it: its
    singular ("SERVICE" for SERVICES) or a plural ending in S where it ends in Y ("STATIONERS"
    for STATIONERY): each was put back wrongly on a SROIE receipt."""
    return known == word + "S" or (word.endswith("S") and word[:-1] == known[:-1])


# words a shop's or firm's name ends with; OCR runs one into the word before it
_TRADE_WORDS = (
    "international|trading|enterprise|restaurant|restoran|marketing|distributors?|hardware"
    "|stationery|holdings|industries|supermarket|minimarket|pharmacy|bakery|bakeries"
    "|confectionery|electrical|machinery|engineering|services|corporation|handicraft"
)
# one glued after another too ("SANYUSTATIONERYSHOP" is SANYU STATIONERY SHOP)
_GLUED_TRADE_WORD = re.compile(
    rf"(?i)\b([A-Z]{{2,}}?)({_TRADE_WORDS})(?=\b|(?:{_TRADE_WORDS}|shop|store|house)\b)"
)
_GLUED_SHOP = re.compile(rf"(?i)({_TRADE_WORDS})(shop|store|house)\b")
# the trade words and a firm's words a name prints, for OCR's misread letters ("CONFECIEONERY",
# "HAMDICRAFT", "COMFANY"), put back as the place words of an address are
NAME_WORDS = frozenset(
    [
        *re.sub(r"[?()]|s\?", "", _TRADE_WORDS).upper().split("|"),
        *[
            "COMPANY",
            "DISTRIBUTORS",
            "NETWORK",
            "SOLUTIONS",
            "TECHNOLOGY",
            "SYSTEMS",
            "MANAGEMENT",
            "CONSTRUCTION",
            "FURNITURE",
            "ELECTRONICS",
            "PETROLEUM",
            "TRANSPORT",
            "LOGISTICS",
            "CATERING",
            "PRINTING",
        ],
    ]
)
# "SDN EHD", "Sdn.Rhd", "SDN 3HD", "SON BHD": the Malaysian legal form (Sendirian Berhad) with a letter misread
_BHD = re.compile(r"(?i)(?<=sdn)(\.?\s*)(?:[e8r3d]hd\b|bh[z2u]\b|bnd\b|bh(?=\s*$))")
# "SON BHD", "SUN BHD", "SBN 3HD"
_SDN = re.compile(r"(?i)\bs[o0ub]n(?=\.?\s*[be8r3d]h[du]\b)")


def _repair_legal_form(line: str) -> str:
    line = re.sub(r"(?i)\b(sdn)(b)\s(hd)\b", r"\1 \2\3", line)  # "SDNB HD": a space moved
    line = re.sub(r"(?<=[A-Z]{3})-(?=SDN\b)", " ", line)  # "INTERNATIONAL-SDN BHD"
    # the form run into the name and together ("HOLDINGSSDN. BHD.", "INTERNATIONALSDNBHD")
    line = re.sub(r"(?<=[A-Z]{3})(?=SDN(?:\.?\s*BHD|BHD)\b)", " ", line)
    line = re.sub(r"\bSDNBHD\b", "SDN BHD", line)
    # "99 SFEED MART 5/B", "S/8", "S/3": Sdn Bhd short, a letter misread
    line = re.sub(r"(?<=[A-Z)] )(?:5/B|S/[38])(?=\s|$)", "S/B", line)
    line = _SDN.sub(lambda m: "SDN" if m.group(0)[0].isupper() else "sdn", line)
    return _BHD.sub(lambda m: m.group(1) + ("BHD" if m.group(0)[-3:].isupper() else "Bhd"), line)


# a legal form that is more than "Co": "SDN BHD", "S/B", "Ltd", "GmbH"
_FULL_FORM = re.compile(rf"(?i)[A-Za-z].*\b(?:{LEGAL_FORMS})\b")


def _only_co(name: str, line: str) -> bool:
    """Whether a name's legal form is a bare "Co" with no Malaysian form after it."""
    return bool(re.search(r"(?i)\bco\.?$", name.strip())) and not _FULL_FORM.search(line)


# after "CO." the rest of a Malaysian form: "AEON CO.(M) BHD.", "CO. SDN BHD"
_AFTER_CO = re.compile(rf"(?i)^\s*(?:\([A-Z]\)\s*)?(?:{LEGAL_FORMS})\b\.?")
# where a name on the first line ends and its registration begins: "HASHA PETROKIOSK
# Conpany No:_JH0632980-V"
_REGISTRATION_LABEL = re.compile(r"(?i)\s+(?:co[mn]pany|co\.?)\s*(?:n[o0]|reg)\b.*$")


# a line that cannot begin a company's name, so the name began on the lines above it: "CO. (M)
# SDN BHD", "ALAM) SDN BHD" (a bracket closed that the line did not open), "& SONS LTD"
_CONTINUES_NAME = re.compile(r"(?i)^(?:co\b|&|and\b|[^(]*\))")
_NAME_PART = re.compile(r"^\s*[A-Za-z][A-Za-z .,&'()-]*$")


def _bare_form(name: str) -> bool:
    """A legal form with no name before it but trade words ("SDN BHD", "STATIONERY SDN.BHD"):
    the name began on the line above."""
    name = re.sub(r"\([^()]*\)", " ", name)  # a branch in brackets: "(SEMENYIH) SDN BHD"
    words = re.findall(r"[A-Za-z]+", re.sub(rf"(?i)\b(?:{LEGAL_FORMS})\b\.?", " ", name))
    return all(w.upper() in NAME_WORDS for w in words)


# a company's registration number on its own line ("(317041-W)", "REG. N0:00168397-H",
# "Co. No. 113825-W"): the name is printed just above it
_REGISTRATION_LINE = re.compile(
    r"(?i)^\(?\s*(?:(?:co(?:mpany)?|reg(?:istration)?|roc)\.?\s*(?:n[o0]|reg)?\.?\s*[:.]?\s*)?"
    r"\d{5,12}\s*-\s*[A-Z]\s*\)?$"
)
# a till's greeting or heading, not a name: "Thank You. Please come again", "Weicome to ...",
# "SIMPLIFIED TAX INYOICE" as OCR reads it
_NOT_A_NAME = re.compile(
    r"(?i)\b(thank|tq|we[li1]come|please|simplified|tax\s*in[\w ]{0,4}ce|cash\s*(?:sale|bill)"
    r"|for\s+shopping)\b"
)
# a registration number before the name on its line ("Company Reg. No. : 725186-V ADVANCO
# COMPANY")
_REGISTRATION_BEFORE = re.compile(
    r"(?i)^(?:co(?:mpany)?|roc)\.?\s*(?:reg\w*\.?\s*)?n[o0]\.?\s*[:.]?\s*\d{5,8}\s*-?\s*[A-Z]\s+"
)
# a registration number in brackets after the name on its line
_REGISTRATION_AFTER = re.compile(r"\s*\(\d[\d-]{4,}\s*-?\s*[A-Z]?\)\s*$")


def _name_above_registration(lines: list[str]) -> tuple[str, bool, int] | None:
    """The line above the first registration-number line near the top, when it reads as a
    name (a guess)."""
    for at, line in enumerate(lines[1:], 1):
        if _REGISTRATION_LINE.match(line.strip()):
            above = _repair_legal_form(_undecorated(lines[at - 1]))
            if (
                re.match(r"[A-Za-z]", above)
                and not re.search(r"\d{2}|:", above)
                and not _NOT_A_NAME.search(above)
            ):
                form = _LEGAL_FORM.match(above)
                name = form["name"] if form else above
                # a name over two lines: "MUN HENG ELECTRICAL &" / "HARDWARE SUPPLY"
                first = lines[at - 2].strip() if at >= 2 else ""
                if re.search(r"(?i)(?:&|\band)$", first) and _NAME_PART.match(first):
                    return _tidy_name(f"{first} {name}"), False, at - 2
                return _tidy_name(name), False, at - 1
            return None
    return None


def _with_its_full_stop(name: str, lines: list[str]) -> str:
    """``WS Retail Services Pvt. Ltd`` as the page prints it elsewhere, ``... Pvt. Ltd.``: a
    legal form's abbreviation with its full stop when any line gives it one."""
    if re.search(r"(?i)\b(ltd|inc|corp|co|bhd|pvt|plc)$", name) and any(
        name + "." in line for line in lines
    ):
        return name + "."
    return name


# whom the bank transfer is to: the issuer ("Titulaire du compte : NETPRESSE", "Account
# name: ..."), in the languages invoices come in
_PAYEE = re.compile(
    r"(?i)\b(?:titulaire du compte|account holder|account name|beneficiary|payee"
    r"|kontoinhaber|begunstigde|ten name van)\s*:\s*(?P<name>[^\d:,;]{2,60}?)\s*$"
)
# a web address printed on the page ("www.azure-interior.com")
_SITE = re.compile(r"(?i)(?:\bwww\.|https?://(?:www\.)?)(?P<label>[a-z0-9-]+)\.")


def _payee(lines: list[str]) -> tuple[str, bool, int] | None:
    """The account holder of the bank details an invoice asks to be paid to (a guess: a
    factoring firm's account would name it instead)."""
    for at, line in enumerate(lines):
        if m := _PAYEE.search(line.strip()):
            return m["name"].strip(), False, at
    return None


def _named_by_site(lines: list[str]) -> tuple[str, bool, int] | None:
    """A line that spells the page's own web address in words ("Azure Interior" over
    ``www.azure-interior.com``): the firm's name where no legal form marks it (a guess)."""
    sites = {re.sub(r"[^a-z]", "", m["label"].lower()) for ln in lines for m in _SITE.finditer(ln)}
    sites.discard("")
    for at, line in enumerate(lines):
        s = line.strip()
        if len(s.split()) <= 5 and re.sub(r"[^a-z]", "", s.lower()) in sites:
            return s, False, at
    return None


# the heading of the seller's block, in the languages invoices come in, alone on its line or
# with the name after a colon ("Verkäufer:" / "Verkehrsbetriebe GmbH"; "Seller: Acme Ltd")
_SELLER_HEADING = re.compile(
    r"(?i)^(?:seller|supplier|vendor|sold by|verkäufer|verkaeufer|rechnungssteller|vendeur"
    r"|fournisseur|verkoper|leverancier)\s*(?::\s*(?P<name>\S.*)?)?$"
)
# a staff member's code, letters then digits ("BD1187"): a person at the till, not a firm
_STAFF_CODE = re.compile(r"^\s*[A-Z]{1,3}\d{3,}\b")
_NAME_LABEL = re.compile(r"(?i)^(?:name|firma|company|raison sociale|naam)\s*:\s*(?P<name>.*)$")
_FIELD_LABEL = re.compile(r"(?i)^[\w .()/-]{1,30}:")


def _labelled_seller(lines: list[str]) -> tuple[str, bool, int] | None:
    """The name in a block headed as the seller's: after the heading's colon, on a ``Name:``
    line under it, or the first line under it that is no label's ("Nummer: 549910")."""
    for at, line in enumerate(lines):
        if not (m := _SELLER_HEADING.match(line.strip())):
            continue
        if m["name"]:
            if _STAFF_CODE.search(m["name"]):
                continue  # a till's salesperson: "Sold by: BD1187 MUHAMMAD SHAFIK"
            return m["name"].strip(), True, at
        for below in range(at + 1, min(at + 5, len(lines))):
            s = lines[below].strip()
            if named := _NAME_LABEL.match(s):
                if named["name"].strip():
                    return named["name"].strip(), True, below
                # "Name:" with the name on the lines under it, up to the next label
                under = itertools.takewhile(
                    lambda ln: ln.strip() and not _FIELD_LABEL.match(ln.strip()),
                    lines[below + 1 : below + 3],
                )
                name = " ".join(ln.strip() for ln in under)
                return (name, True, below) if name else None
            if s and not _FIELD_LABEL.match(s):
                return s, True, below
    return None


def read_company(lines: list[str]) -> tuple[str, bool, int] | None:
    """``_read_company``'s answer with the words OCR split or accented put back
    (``_rejoined``, ``_unaccented``)."""
    found = _read_company(lines)
    if found is None:
        return None
    name, marked, at = found
    return _unaccented(_rejoined(name, lines)), marked, at


_PIECE = re.compile(r"[A-Za-z]{1,2}")
_WORD = re.compile(r"[A-Za-z]+")


def _rejoined(name: str, lines: list[str]) -> str:
    """Words the spacing repair split on a wide header joined: a run of one- and two-letter
    pieces with a lone letter among them ("F I VE STAR"), or a word and a piece of one or two
    letters that together make a word the page prints whole elsewhere ("G ARDENIA" under
    "Gardenia's products") or a trade word ("BAKERI ES")."""
    page = {w.upper() for line in lines for w in re.findall(r"[A-Za-z]{4,}", line)}
    tokens = name.split(" ")
    out: list[str] = []
    at = 0
    while at < len(tokens):
        end = at
        while end < len(tokens) and _PIECE.fullmatch(tokens[end]):
            end += 1
        run = tokens[at:end]
        if len(run) >= 2 and min(map(len, run)) == 1 and sum(map(len, run)) >= 3:
            out.append("".join(run))
            at = end
            continue
        pair = tokens[at : at + 2]
        if len(pair) == 2 and all(_WORD.fullmatch(t) for t in pair) and min(map(len, pair)) <= 2:
            raw = "".join(pair)
            joined = _name_word(raw)
            joined = joined if len(joined) == len(raw) else raw  # not "AA PHARMACY"
            # a lone letter (not "A" or "I") only when the page prints the word whole: a two-
            # letter piece is often a word ("YIN MA", "MY MYDIN" over a logo's "MyMydin")
            lone = min(map(len, pair)) == 1 and not any(t.upper() in ("A", "I") for t in pair)
            if joined.upper() in NAME_WORDS or (lone and joined.upper() in page):
                out.append(joined)
                at += 2
                continue
        out.append(tokens[at])
        at += 1
    return " ".join(out)


def _unaccented(name: str) -> str:
    """A word with an accent OCR put on it that is a legal form or a trade word without it
    ("ŚDN BHD"); other accents stay (a German invoice's "Müller" is real)."""

    def fold(m: re.Match[str]) -> str:
        plain = unicodedata.normalize("NFKD", m[0]).encode("ascii", "ignore").decode()
        known = plain.upper() in NAME_WORDS | {"SDN", "BHD"} or re.fullmatch(
            rf"(?i){LEGAL_FORMS}", plain
        )
        return plain if known and len(plain) == len(m[0]) else m[0]

    return re.sub(r"\w*[^\W\d_a-zA-Z]\w*", fold, name)


def _read_company(lines: list[str]) -> tuple[str, bool, int] | None:
    """The first line near the top that names a company by its legal form (cut after it: a
    registration number may follow on the line), as sure as a labelled value (on the SROIE
    development receipts the bundled model's re-reading turned 8 such right names wrong and
    fixed none), else the first line that reads as a name (a guess); with the line's index.
    A sender's line above the address window comes first: the window under it holds the
    customer's name ("iViveLabs Ltd."), which the page prints higher."""
    for at, line in enumerate(lines):
        if (m := _SENDER.match(line.strip())) and (form := _LEGAL_FORM.fullmatch(m["name"])):
            return form["name"].strip(), at < 12, at
    if seller := _labelled_seller(lines):
        return seller
    top = [_repair_legal_form(raw) for raw in lines[:6]]
    for at, line in enumerate(top):
        if re.match(r"(?i)\s*(attn|attention|bill to|ship to|to|customer)\b\s*:", line):
            continue  # the customer's name, labelled
        if (m := _LEGAL_FORM.match(line.strip())) and not re.search(
            r"(?i)\bno\b\s*[:.]", m["name"]
        ):
            if _only_co(m["name"], line) and any(_FULL_FORM.search(ln) for ln in top[at + 1 :]):
                continue  # "Toiof Rell Co", a logo's letters, over "TF Value-Mart Sdn Bhd"
            name = m["name"].strip()
            if re.search(r"(?i)\bco\.?$", name) and (
                rest := _AFTER_CO.match(line.strip()[m.end() :])
            ):
                name += rest.group(0)
            if _CONTINUES_NAME.match(name) or _bare_form(name):
                # "POPULAR BOOK" / "CO. (M) SDN BHD"; "PASARAYA BORONG PINTAR" / "SDN BHD"
                above = list(itertools.takewhile(_NAME_PART.match, reversed(lines[:at])))[:2]
                above = list(itertools.takewhile(lambda ln: not _NOT_A_NAME.search(ln), above))
                name = " ".join([*(ln.strip() for ln in reversed(above)), name])
            return _with_its_full_stop(_tidy_name(name), lines), True, at
    if named := _name_above_registration(lines[:10]) or _payee(lines) or _named_by_site(lines):
        return named
    for at, line in enumerate(lines[:4]):
        s = _REGISTRATION_LABEL.sub("", _undecorated(line))
        s = _REGISTRATION_AFTER.sub("", _REGISTRATION_BEFORE.sub("", s))  # "KT WONG (001904043-H)"
        if at and lines[at - 1].rstrip().endswith(":"):
            continue  # a label's value on the line under it ("Guest Name:" / "Sanjay")
        if (
            len(re.findall(r"[A-Za-z]", s)) >= 4  # a till's code above the name ("JUA")
            and re.match(r"[A-Z0-9]", s)
            and len(s.split()) <= 8
            and not re.search(r"\d{2}|#|:", s)
            and not re.search(r"(?i)\b(invoice|receipt|dear|date|page|seite)\b", s)
            and not _NOT_A_NAME.search(s)
        ):
            # a name printed over two lines: "HOME MASTER HARDWARE &" / "ELECTRICAL"
            after = lines[at + 1].strip() if at + 1 < len(lines) else ""
            if re.search(r"(?i)(?:&|\band)$", s) and _NAME_PART.match(after):
                s = f"{s} {after}"
            return _tidy_name(s), False, at
    # no name heads the page (an invoice opening with notes): a line lower down that is only
    # a company's name with its legal form ("Amazon Web Services, Inc.")
    for at, line in enumerate(lines):
        s = line.strip()
        if (
            len(s.split()) <= 6
            and not re.search(r"[:\d@]", s)
            and (form := _LEGAL_FORM.fullmatch(s.rstrip(" ,")))
        ):
            return form["name"].strip(), False, at
    return None
