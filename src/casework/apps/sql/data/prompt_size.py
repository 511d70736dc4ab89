"""``python -m casework.apps.sql.data.prompt_size`` measures the one-shot prompt on the bundled
questions with no model: per question, the retrieved tables (before schema linking) against
the linked ones (``retrieval.link_tables``), in characters of table descriptions and of the
whole system prompt, and how many questions lose a gold table (``expected.tables``) to the
linking that retrieval had found."""

from __future__ import annotations

import statistics
from typing import Any

from casework.apps.sql.benchmark import DATA_DIR
from casework.apps.sql.judge import PROMPTS
from casework.apps.sql.retrieval import describe_table, link_tables, retrieve_tables
from casework.apps.sql.service import bundled_schema
from casework.evals.datasets import load_dataset
from casework.runtime.prompts import load_prompt

__all__ = ["main", "prompt_sizes"]


def prompt_sizes(top_k: int = 5) -> dict[str, Any]:
    schema = bundled_schema()
    out: dict[str, Any] = {"questions": 0, "lost": 0}
    sizes: dict[str, list[int]] = {
        "before": [],
        "after": [],
        "tables_before": [],
        "tables_after": [],
    }
    for case in load_dataset(DATA_DIR / "eval" / "questions.jsonl"):
        question = case.inputs["question"]
        retrieved = [schema.tables[t.table] for t in retrieve_tables(schema, question, top_k)]
        linked = link_tables(question, retrieved, schema)
        for name, tables in (("before", retrieved), ("after", linked)):
            text = "\n".join(describe_table(t) for t in tables)
            prompt = load_prompt(PROMPTS, "single", schema=schema.name, tables=text, examples="")
            sizes[name].append(len(prompt) + len(f"Question: {question}"))
            sizes[f"tables_{name}"].append(len(text))
        gold = set(case.expected.get("tables", []))
        out["lost"] += bool(gold & {t.name for t in retrieved} - {t.name for t in linked})
        out["questions"] += 1
    for name, values in sizes.items():
        out[name] = {
            "total": sum(values),
            "mean": statistics.fmean(values),
            "median": statistics.median(values),
        }
    return out


def main() -> int:
    s = prompt_sizes()
    print(
        f"{s['questions']} questions: table descriptions {s['tables_before']['total']:,} -> "
        f"{s['tables_after']['total']:,} characters; system prompt and question mean "
        f"{s['before']['mean']:,.0f} -> {s['after']['mean']:,.0f}, median "
        f"{s['before']['median']:,.0f} -> {s['after']['median']:,.0f}; questions losing a gold "
        f"table retrieval had found: {s['lost']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
