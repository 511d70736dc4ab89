"""Writes the documents app's evaluation set: 44 synthetic documents with gold fields.

Every document is rendered from the values below (seeded), so the gold answers come from the
data, never from the extractor under test. Text-layer PDFs are drawn with matplotlib's PDF
backend (a real text layer); scanned documents are PIL images with blur, rotation and speckle
noise, saved as PNG/JPEG or as an image-only PDF (PIL's PDF writer). Run from the repo root:

    python -m casework.apps.documents.data.make_dataset
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "eval"
FILES = HERE / "files"
SEED = 20261123

COMPANIES = [
    ("Acme Supplies Ltd", "12 Harbour Road, Leeds LS1 4AB", "GBP"),
    ("Northwind Traders", "410 Market Street, San Francisco CA 94105", "USD"),
    ("Blue Heron Bakery", "7 Canal Street, Manchester M1 3HE", "GBP"),
    ("Kestrel Engineering GmbH", "Hauptstrasse 22, 80331 Munich", "EUR"),
    ("Pinecrest Office Supply", "88 Elm Avenue, Portland OR 97205", "USD"),
    ("Lumen Lighting Co", "3 Quay Lane, Bristol BS1 4DJ", "GBP"),
    ("Orchard Fresh Market", "1200 Valley Road, Denver CO 80203", "USD"),
    ("Atelier Moreau SARL", "15 Rue de la Paix, 75002 Paris", "EUR"),
]
CUSTOMERS = [
    "Riverside Clinic",
    "Hale & Sons",
    "Greenfield School",
    "Marlow Architects",
    "Tidewater Logistics",
    "Cobalt Studio",
]
PEOPLE = [
    "Maria Jensen",
    "Daniel Okafor",
    "Priya Raman",
    "Tomas Novak",
    "Aisha Bello",
    "Lucas Meyer",
    "Emma Clarke",
]
ITEMS = [
    "Widgets",
    "Bolts M6",
    "Desk lamp",
    "Printer paper",
    "Cable ties",
    "Sourdough loaf",
    "Coffee beans",
    "LED panel",
    "Safety gloves",
]
SYMBOL = {"GBP": "£", "USD": "$", "EUR": "€"}
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _date(rng: random.Random, currency: str) -> tuple[str, str]:
    """(written form, ISO gold): day-first for GBP/EUR, month-first for USD, or words/ISO."""
    y, m, d = 2024 + rng.randint(0, 1), rng.randint(1, 12), rng.randint(1, 28)
    iso = f"{y:04d}-{m:02d}-{d:02d}"
    style = rng.choice(["numeric", "numeric", "words", "iso"])
    if style == "iso":
        return iso, iso
    if style == "words":
        return (
            f"{d} {MONTHS[m - 1]} {y}" if currency != "USD" else f"{MONTHS[m - 1]} {d}, {y}"
        ), iso
    return (f"{d:02d}/{m:02d}/{y}" if currency != "USD" else f"{m:02d}/{d:02d}/{y}"), iso


def _money(value: float, currency: str) -> str:
    return f"{SYMBOL[currency]}{value:,.2f}"


def invoice(rng: random.Random, n: int) -> tuple[list[str], dict[str, Any]]:
    company, address, cur = rng.choice(COMPANIES)
    number = f"INV-{rng.randint(1000, 9999)}"
    written, iso = _date(rng, cur)
    customer = rng.choice(CUSTOMERS)
    lines = [
        company.upper(),
        address,
        "",
        f"INVOICE No. {number}",
        f"Date: {written}",
        f"Bill to: {customer}",
        "",
    ]
    subtotal = 0.0
    for _ in range(rng.randint(2, 5)):
        qty, price = rng.randint(1, 12), round(rng.uniform(2, 180), 2)
        subtotal += qty * price
        lines.append(f"{rng.choice(ITEMS):<18} {qty:>3} x {price:>8.2f}   {qty * price:>9.2f}")
    subtotal = round(subtotal, 2)
    tax = round(subtotal * 0.2, 2)
    total = round(subtotal + tax, 2)
    lines += [
        "",
        f"Subtotal {_money(subtotal, cur)}",
        f"VAT 20% {_money(tax, cur)}",
        f"Total: {_money(total, cur)}",
        "",
        "Payment within 30 days. Thank you for your business.",
    ]
    gold = {
        "company": company,
        "invoice_number": number,
        "date": iso,
        "customer": customer,
        "subtotal": subtotal,
        "tax": tax,
        "total": total,
        "currency": cur,
    }
    return lines, gold


def receipt(rng: random.Random, n: int) -> tuple[list[str], dict[str, Any]]:
    company, address, cur = rng.choice(COMPANIES)
    written, iso = _date(rng, cur)
    lines = [
        company,
        address,
        f"Date {written}  {rng.randint(8, 20):02d}:{rng.randint(0, 59):02d}",
        "",
    ]
    subtotal = 0.0
    for _ in range(rng.randint(2, 6)):
        price = round(rng.uniform(0.5, 25), 2)
        subtotal += price
        lines.append(f"{rng.choice(ITEMS):<20} {price:>7.2f}")
    subtotal = round(subtotal, 2)
    tax = round(subtotal * 0.08, 2)
    total = round(subtotal + tax, 2)
    lines += [
        "",
        f"Tax {tax:.2f}",
        f"TOTAL {_money(total, cur)}",
        f"Card **** {rng.randint(1000, 9999)}",
        "Thank you for shopping with us",
    ]
    return lines, {"company": company, "date": iso, "tax": tax, "total": total, "currency": cur}


def form(rng: random.Random, n: int) -> tuple[list[str], dict[str, Any]]:
    name = rng.choice(PEOPLE)
    first, last = name.split()
    email = f"{first.lower()}.{last.lower()}@example.org"
    phone = f"+44 20 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"
    ref = f"APP-{rng.randint(10000, 99999)}"
    written, iso = _date(rng, "GBP")
    lines = [
        "MEMBERSHIP APPLICATION FORM",
        "Please complete in block capitals",
        "",
        f"Full name: {name}",
        f"Email: {email}",
        f"Phone: {phone}",
        f"Reference: {ref}",
        f"Date: {written}",
        "",
        "Signature: ____________________",
    ]
    return lines, {"name": name, "email": email, "phone": phone, "reference": ref, "date": iso}


def letter(rng: random.Random, n: int) -> tuple[list[str], dict[str, Any]]:
    company, address, cur = rng.choice(COMPANIES)
    written, iso = _date(rng, cur)
    person = rng.choice(PEOPLE)
    ref = f"REF-{rng.randint(100, 999)}/{rng.randint(10, 99)}"
    lines = [
        company,
        address,
        "",
        f"Date: {written}",
        f"Our ref: {ref}",
        "",
        f"Dear {person},",
        "",
        "Thank you for your enquiry about our services. We confirm that your account",
        "has been updated and the changes take effect from the start of next month.",
        "",
        "Yours sincerely,",
        "",
        "Customer Relations",
    ]
    return lines, {"company": company, "date": iso, "reference": ref, "recipient": person}


KINDS = {"invoice": invoice, "receipt": receipt, "form": form, "letter": letter}
# (kind, how many, rendering): text PDFs, multi-page PDFs, scanned images, a scanned PDF
PLAN = [
    *[("invoice", 12, "pdf"), ("receipt", 9, "pdf"), ("form", 6, "pdf"), ("letter", 7, "pdf")],
    *[("invoice", 2, "pdf2"), ("letter", 1, "pdf3")],
    *[("receipt", 2, "png"), ("invoice", 2, "jpg"), ("form", 1, "png"), ("invoice", 2, "scanpdf")],
]


def _pdf(pages: list[list[str]], path: Path) -> None:
    import matplotlib

    matplotlib.use("pdf")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with PdfPages(path, metadata={"Creator": "casework documents dataset"}) as pdf:
        for lines in pages:
            fig = plt.figure(figsize=(8.27, 11.69))
            for i, line in enumerate(lines):
                fig.text(0.08, 0.95 - i * 0.022, line, fontsize=10, family="DejaVu Sans Mono")
            pdf.savefig(fig)
            plt.close(fig)


def _scan(lines: list[str], rng: random.Random) -> Any:
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    font = ImageFont.truetype("DejaVuSansMono.ttf", 22)
    img = Image.new("L", (1000, 60 + 32 * len(lines)), 250)
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((40, 30 + 32 * i), line, fill=20, font=font)
    for _ in range(1500):  # speckle
        draw.point((rng.randrange(img.width), rng.randrange(img.height)), fill=rng.randint(90, 200))
    img = img.rotate(rng.uniform(-1.2, 1.2), fillcolor=250, expand=False)
    return img.filter(ImageFilter.GaussianBlur(0.6)).convert("RGB")


def main() -> None:
    rng = random.Random(SEED)
    FILES.mkdir(parents=True, exist_ok=True)
    cases = []
    n = 0
    for kind, count, render in PLAN:
        for _ in range(count):
            n += 1
            lines, gold = KINDS[kind](rng, n)
            case_id = f"{kind}-{n:02d}"
            if render.startswith("pdf"):
                pages = [lines]
                extra = int(render[3:] or 1) - 1
                for p in range(extra):  # continuation pages; the gold stays on page one
                    pages.append(
                        [
                            f"{case_id} page {p + 2}",
                            "",
                            "Terms and conditions",
                            *(f"{i + 1}. Clause text for reference only." for i in range(12)),
                        ]
                    )
                name = f"{case_id}.pdf"
                _pdf(pages, FILES / name)
            elif render == "scanpdf":
                name = f"{case_id}.pdf"
                _scan(lines, rng).save(FILES / name, "PDF", resolution=150)
            else:
                name = f"{case_id}.{render}"
                _scan(lines, rng).save(FILES / name, quality=85) if render == "jpg" else _scan(
                    lines, rng
                ).save(FILES / name)
            case: dict[str, Any] = {
                "id": case_id,
                "inputs": {"file": f"files/{name}"},
                "expected": {"gold": gold},
                "metadata": {
                    "type": kind,
                    "render": render,
                    "pages": 1 + (int(render[3:]) - 1 if render[3:].isdigit() else 0),
                },
            }
            if n % 5 == 0:  # every fifth case runs in custom mode with a subset of names
                names = list(gold)[:4]
                case["inputs"]["fields"] = names
                case["expected"]["gold"] = {k: gold[k] for k in names}
            cases.append(case)
    with (HERE / "documents.jsonl").open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {HERE / 'documents.jsonl'}")


if __name__ == "__main__":
    main()
