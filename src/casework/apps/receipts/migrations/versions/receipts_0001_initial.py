"""receipts: receipts, lines, words, places, append-only labels, edge cases

Revision ID: receipts_0001
Revises:
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "receipts_0001"
down_revision = None
branch_labels = ("receipts",)
depends_on = None

_AMOUNT = r"[-(]?\$?\d*[.,]\d{2}[-)]?[A-Z]?"
_MONEY = ("UNIT_PRICE", "LINE_TOTAL", "SUBTOTAL", "TAX", "GRAND_TOTAL", "DISCOUNT", "CHANGE")
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun"

# Known invalid patterns (regex, matched against the whole word, case-insensitive). Editable:
# `casework receipts edge-cases add|remove`.
DEFAULT_EDGE_CASES = [
    (
        "MERCHANT_NAME",
        r"[*#$()\d.,:/\-]*\d[*#$()\d.,:/\-]*",
        "Digits and punctuation only: a number is not a merchant name.",
    ),
    ("PRODUCT_NAME", _AMOUNT, "A price is not a product name."),
    *[
        (
            label,
            r"[^0-9]*",
            "An amount label needs digits; the keyword next to the amount is not the amount.",
        )
        for label in _MONEY
    ],
    *[
        (label, r"\d+(\.\d+)?%", "A percentage is a rate, not an amount.")
        for label in ("UNIT_PRICE", "LINE_TOTAL", "SUBTOTAL", "GRAND_TOTAL", "TAX")
    ],
    ("DATE", rf"(?!({_MONTHS}))[^0-9]*", "A date needs digits or a month or day name."),
    ("TIME", r"(?!(am|pm|a\.m\.|p\.m\.)$)[^0-9]*", "A time needs digits (or AM/PM)."),
    ("PHONE_NUMBER", r"[^0-9]*", "A phone number needs digits."),
    ("PHONE_NUMBER", r"0+", "All zeros is a terminal code, not a phone number."),
    ("WEBSITE", r"[^.]*", "A web address has a dot (example.com)."),
    ("WEBSITE", r"[^A-Za-z]*", "A web address has letters."),
    ("QUANTITY", r"\$\d*[.,]\d{2}", "A dollar amount is a price, not a quantity."),
    ("PAYMENT_METHOD", _AMOUNT, "An amount is not a payment method."),
    ("ADDRESS_LINE", _AMOUNT, "An amount is not part of an address."),
    ("LOYALTY_ID", _AMOUNT, "An amount is not a loyalty id."),
]


def upgrade() -> None:
    op.create_table(
        "receipts_places",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("place_key", sa.String(240), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("address", sa.String(400), nullable=False),
        sa.Column("phone", sa.String(60), nullable=False),
        sa.Column("website", sa.String(200), nullable=False),
        sa.Column("hours", sa.String(200), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("external_id", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("place_key", name="uq_receipts_places_place_key"),
    )
    op.create_table(
        "receipts_receipts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("image_id", sa.String(80), nullable=False),
        sa.Column("receipt_id", sa.Integer, nullable=False),
        sa.Column("slug", sa.String(80), nullable=False),
        sa.Column("merchant_name", sa.String(200), nullable=False),
        sa.Column("source", sa.String(400), nullable=False),
        sa.Column(
            "place_id",
            sa.Integer,
            sa.ForeignKey(
                "receipts_places.id", name="fk_receipts_receipts_place_id_receipts_places"
            ),
            nullable=True,
        ),
        sa.Column("width", sa.Float, nullable=False),
        sa.Column("height", sa.Float, nullable=False),
        sa.Column("extra_json", sa.Text, nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("image_id", "receipt_id", name="uq_receipts_receipts_key"),
        sa.UniqueConstraint("slug", name="uq_receipts_receipts_slug"),
    )
    op.create_index("ix_receipts_receipts_merchant_name", "receipts_receipts", ["merchant_name"])
    for table in ("receipts_lines", "receipts_words"):
        extra = (
            [
                sa.Column("word_id", sa.Integer, nullable=False),
                sa.Column("token_index", sa.Integer, nullable=False),
            ]
            if table == "receipts_words"
            else []
        )
        key = (
            ["receipt_pk", "line_id", "word_id"]
            if table == "receipts_words"
            else ["receipt_pk", "line_id"]
        )
        op.create_table(
            table,
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column(
                "receipt_pk",
                sa.Integer,
                sa.ForeignKey(
                    "receipts_receipts.id",
                    ondelete="CASCADE",
                    name=f"fk_{table}_receipt_pk_receipts_receipts",
                ),
                nullable=False,
            ),
            sa.Column("line_id", sa.Integer, nullable=False),
            *extra,
            sa.Column(
                "text", sa.Text if table == "receipts_lines" else sa.String(400), nullable=False
            ),
            sa.Column("x0", sa.Float, nullable=False),
            sa.Column("y0", sa.Float, nullable=False),
            sa.Column("x1", sa.Float, nullable=False),
            sa.Column("y1", sa.Float, nullable=False),
            sa.UniqueConstraint(*key, name=f"uq_{table}_key"),
        )
        op.create_index(f"ix_{table}_receipt_pk", table, ["receipt_pk"])
    op.create_table(
        "receipts_labels",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "receipt_pk",
            sa.Integer,
            sa.ForeignKey(
                "receipts_receipts.id",
                ondelete="CASCADE",
                name="fk_receipts_labels_receipt_pk_receipts_receipts",
            ),
            nullable=False,
        ),
        sa.Column(
            "word_pk",
            sa.Integer,
            sa.ForeignKey(
                "receipts_words.id",
                ondelete="CASCADE",
                name="fk_receipts_labels_word_pk_receipts_words",
            ),
            nullable=False,
        ),
        sa.Column("label_type", sa.String(40), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reasoning", sa.Text, nullable=False),
        sa.Column("confidence", sa.Float, nullable=True),
        sa.Column("proposed_by", sa.String(120), nullable=False),
        sa.Column("validated_by", sa.String(120), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("validated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "replaces_id",
            sa.Integer,
            sa.ForeignKey(
                "receipts_labels.id", name="fk_receipts_labels_replaces_id_receipts_labels"
            ),
            nullable=True,
        ),
        sa.Column(
            "consolidated_from_id",
            sa.Integer,
            sa.ForeignKey(
                "receipts_labels.id", name="fk_receipts_labels_consolidated_from_id_receipts_labels"
            ),
            nullable=True,
        ),
        sa.UniqueConstraint("replaces_id", name="uq_receipts_labels_replaces_id"),
    )
    for column in ("receipt_pk", "word_pk", "label_type", "status", "consolidated_from_id"):
        op.create_index(f"ix_receipts_labels_{column}", "receipts_labels", [column])
    edge_cases = op.create_table(
        "receipts_edge_cases",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("label_type", sa.String(40), nullable=False),
        sa.Column("pattern", sa.String(300), nullable=False),
        sa.Column("reason", sa.String(400), nullable=False),
        sa.Column("merchant_name", sa.String(200), nullable=True),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("created_by", sa.String(120), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_receipts_edge_cases_label_type", "receipts_edge_cases", ["label_type"])
    now = datetime.now(UTC)
    op.bulk_insert(
        edge_cases,
        [
            {
                "label_type": label,
                "pattern": pattern,
                "reason": reason,
                "merchant_name": None,
                "active": True,
                "created_by": "seed",
                "created_at": now,
            }
            for label, pattern, reason in DEFAULT_EDGE_CASES
        ],
    )


def downgrade() -> None:
    for table in (
        "receipts_edge_cases",
        "receipts_labels",
        "receipts_words",
        "receipts_lines",
        "receipts_receipts",
        "receipts_places",
    ):
        op.drop_table(table)
