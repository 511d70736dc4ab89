"""Chroma with the bundled MiniLM embeds and queries offline."""

from casework.stores.vector import embed, open_collection


def test_embed_is_normalised_384d():
    [v] = embed(["grand total"])
    assert len(v) == 384
    assert abs(sum(x * x for x in v) - 1.0) < 1e-4


def test_chroma_embed_and_query_offline(tmp_path):
    col = open_collection(tmp_path / "chroma", "test-words")
    col.upsert(
        ids=["1", "2", "3"],
        documents=["GRAND TOTAL 24.50", "ORGANIC BANANAS 1.29", "VISA ending 4421"],
        metadatas=[
            {"label": "GRAND_TOTAL"},
            {"label": "PRODUCT_NAME"},
            {"label": "PAYMENT_METHOD"},
        ],
    )
    hit = col.query(query_texts=["total amount due"], n_results=1)
    assert hit["metadatas"][0][0]["label"] == "GRAND_TOTAL"
    only = col.query(query_texts=["bananas"], n_results=2, where={"label": "PAYMENT_METHOD"})
    assert only["ids"][0] == ["3"]
