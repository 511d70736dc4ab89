"""Bad input on receipts commands: exit 2 and one line on stderr naming what to do, no traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from casework import cli
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.service import bundled_receipt_files, import_files
from casework.config import Settings, get_settings


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two bundled receipts, not embedded (no command here needs vectors)."""
    path = tmp_path_factory.mktemp("bad-input-home")
    deps = build_deps(Settings(home=path), with_vectors=False)
    files = [p for p in bundled_receipt_files() if p.name.split(".")[0] in ("chevron", "walgreens")]
    import_files(deps, files, index=False)
    return path


@pytest.fixture
def run(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``run(*args, **env)`` -> (exit code, stdout, stderr) of ``casework receipts ARGS``."""

    def invoke(*args: str, **env: str) -> tuple[int, str, str]:
        monkeypatch.setenv("CASEWORK_HOME", str(home))
        monkeypatch.setenv("COLUMNS", "1000")  # Rich must not wrap the sentence
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        get_settings.cache_clear()
        monkeypatch.setattr(sys, "argv", ["casework", "receipts", *args])
        with pytest.raises(SystemExit) as exit_:
            cli.main()
        get_settings.cache_clear()
        out = capsys.readouterr()
        return int(exit_.value.code or 0), out.out, out.err

    return invoke


def _one_sentence(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "nowhere"], "error: No receipt 'nowhere'; see `casework receipts list`."),
        (["show", " "], "error: Name a receipt by its slug or key; see `casework receipts list`."),
        (
            ["history", "chevron", "999", "1"],
            "error: Receipt chevron has no word 1 on line 999; see `casework receipts show chevron`.",
        ),
        (
            ["history", "nowhere", "1", "1"],
            "error: No receipt 'nowhere'; see `casework receipts list`.",
        ),
        (["review", "reject", "999999"], "error: No label with id 999999."),
        (["review", "accept", "999999", "--note", "x"], "error: No label with id 999999."),
        (
            ["edge-cases", "remove", "4242"],
            "error: No active edge case 4242; see `casework receipts edge-cases list`.",
        ),
        (
            ["edge-cases", "add", "GRAND_TOTAL", "(", "why"],
            "error: Pattern '(' is not a valid regular expression (missing ), unterminated "
            "subpattern at position 0).",
        ),
        (
            ["edge-cases", "add", "grand total", "x", "why"],
            "error: Label 'GRAND TOTAL' is not an upper-case label name such as GRAND_TOTAL.",
        ),
        (
            ["harmonize", "--strategy", "nope"],
            "error: Unknown strategy 'nope'; use one of memory, rules, baseline, choice, agent, cascade, memory-offline.",
        ),
    ],
)
def test_domain_errors_are_one_sentence(run, args, message):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert _one_sentence(err) == message


def test_unknown_label_filter_is_an_error_not_an_empty_table(run):
    code, out, err = run("edge-cases", "list", "--label", "NOPE")
    assert code == 2 and out == ""
    assert _one_sentence(err).startswith("error: Unknown label NOPE; known labels: ADDRESS_LINE,")


def test_harmonize_of_an_unknown_merchant_names_the_known_ones(run):
    code, _, err = run("harmonize", "--merchant", "Nowhere", "--dry-run", "--strategy", "baseline")
    assert code == 2
    assert _one_sentence(err) == (
        "error: No receipts of merchant 'Nowhere'; known merchants: Chevron, Walgreens."
    )


def test_seed_on_an_unreachable_database_writes_nothing(run, tmp_path):
    code, out, err = run(
        "seed", "--no-index", CASEWORK_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none"
    )
    assert code == 2 and out == ""
    line = _one_sentence(err)
    assert line.startswith("error: The database at postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert line.endswith(
        "is not reachable: connection failed: connection to server at "
        '"127.0.0.1", port 1 failed: Connection refused.'
    )


def test_seed_with_an_unsupported_database_url(run):
    code, _, err = run("seed", "--no-index", CASEWORK_DATABASE_URL="mysql://x/y")
    assert code == 2
    assert _one_sentence(err) == (
        "error: Unsupported database URL 'mysql://x/y': use sqlite:///PATH or postgresql://…"
    )


def test_index_with_a_broken_vector_store(run, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the vector store should be")
    code, out, err = run("index", CASEWORK_VECTOR_PATH=str(blocker))
    assert code == 2 and out == ""
    line = _one_sentence(err)
    assert line.startswith(
        "error: The vector store is unavailable: vector store could not be opened"
    )
    assert "FileExistsError" in line


def _receipt(key: str, box: str = "[0, 0, 10, 10]") -> str:
    return (
        f'{{"tokens": ["SHOP", "2.00"], "bboxes": [{box}, [20, 0, 40, 10]], '
        f'"ner_tags": ["B-MERCHANT_NAME", "B-GRAND_TOTAL"], "receipt_key": "{key}"}}'
    )


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"nan.json": _receipt("nan#1", box="[NaN, 0, 10, 10]")},
            "error: nan.json: bbox 0 is not four finite numbers [x0, y0, x1, y1].",
        ),
        (
            {"two.jsonl": _receipt("a#1") + "\n" + _receipt("b#1") + "\n"},
            "error: two.jsonl holds more than one JSON document (another starts on line 2); "
            "write one receipt object, or a JSON list of them, per file.",
        ),
        (
            {"empty.json": "\n"},
            "error: empty.json is empty; write one receipt object, or a JSON list of them, "
            "per file.",
        ),
        (
            {"list.json": f"[{_receipt('dup#1')}, {_receipt('dup#1')}]"},
            "error: list.json[1]: receipt key dup#1 is also list.json[0]'s; give each "
            "receipt its own receipt_key.",
        ),
        (
            {"a.json": _receipt("same#1"), "b.json": _receipt("same#1")},
            "error: b.json: receipt key same#1 is also a.json's; give each receipt its own "
            "receipt_key.",
        ),
    ],
)
def test_an_import_that_cannot_be_read_whole_is_one_sentence(
    run, tmp_path, monkeypatch, home, files, message
):
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    before = build_deps(Settings(home=home), with_vectors=False).repo.list_receipts()
    code, out, err = run("import", *files, "--no-index")
    assert code == 2 and out == ""
    assert _one_sentence(err) == message
    after = build_deps(Settings(home=home), with_vectors=False).repo.list_receipts()
    assert [r.key for r in after] == [r.key for r in before]  # nothing written


def test_a_file_named_twice_is_refused(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shop.json").write_text(_receipt("shop#1"))
    code, _, err = run("import", "shop.json", "./shop.json", "--no-index")
    assert code == 2
    assert _one_sentence(err) == "error: shop.json is named twice; name each file once."


def test_a_verified_example_with_a_label_outside_the_taxonomy_is_refused(
    run, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "verified.jsonl").write_text(
        '{"id": "x", "inputs": {"word": "6.80", "merchant": "Corner Market", '
        '"line": "TOTAL 6.80"}, "expected": {"gold_label": "grand_totl"}}\n'
    )
    code, out, err = run("examples", "import", "verified.jsonl")
    assert code == 2 and out == ""
    assert _one_sentence(err).startswith(
        "error: Line 1: expected.gold_label GRAND_TOTL is not a label of the taxonomy "
        "(ADDRESS_LINE, BUSINESS_NAME,"
    )
    assert err.strip().endswith("UNIT_PRICE, WEBSITE); nothing was stored.")
