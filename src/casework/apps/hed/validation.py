"""HED validation with two validators: the npm ``hed-validator`` (preferred) and ``hedtools``.

The JavaScript validator runs in one Node process kept warm (``js/validate.mjs``, JSON lines
over stdin/stdout, a batch of strings per call). The Python ``hedtools`` validator is the
fallback, and the default when Node or the npm package is missing or the schema version is
not bundled with it. Both work offline on the bundled 8.x schemas and report the HED
specification's error codes (``TAG_INVALID``, ``UNITS_INVALID``, ...). A validator that
fails mid-run hands over to hedtools, and the result says so (``fallback_reason``).
"""

from __future__ import annotations

import atexit
import json
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal, Protocol

from casework.apps.hed.models import DEFAULT_SCHEMA, ValidatorKind
from casework.errors import InputError

__all__ = [
    "Issue",
    "JsValidator",
    "JsValidatorError",
    "PythonValidator",
    "ValidationResult",
    "bench_validators",
    "definition_dict",
    "js_unavailable_reason",
    "load_schema",
    "schema_versions",
    "validate",
    "validate_many",
    "validator_agreement",
]

JS_DIR = Path(str(files(__package__).joinpath("js")))
JS_TIMEOUT_SECONDS = 60.0
"""Answer time per batch before the Node process counts as hung (schema build included)."""


@dataclass(frozen=True)
class Issue:
    """One validation error or warning, with the HED specification's code."""

    code: str
    message: str
    tag: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "tag": self.tag}


@dataclass(frozen=True)
class ValidationResult:
    """What a validator said about one HED string."""

    hed: str
    schema: str
    validator: Literal["js", "python"]
    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    fallback_reason: str = ""
    """Why hedtools answered although the JS validator was asked for ('' when it was not)."""

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def codes(self) -> list[str]:
        return sorted({i.code for i in self.errors})

    def to_dict(self) -> dict[str, Any]:
        return {
            "hed": self.hed,
            "schema": self.schema,
            "valid": self.valid,
            "validator": self.validator,
            "errors": [i.to_dict() for i in self.errors],
            "warnings": [i.to_dict() for i in self.warnings],
            "fallback_reason": self.fallback_reason,
        }


class Validator(Protocol):
    @property
    def name(self) -> Literal["js", "python"]: ...

    def validate_batch(self, strings: Sequence[str], schema: str) -> list[ValidationResult]: ...


# ---------------------------------------------------------------------- schemas
@cache
def schema_versions() -> tuple[str, ...]:
    """The standard 8.x schema versions hedtools ships (read from its data folder)."""
    import hed.schema

    data = Path(hed.schema.__file__).parent / "schema_data"
    found = [p.stem.removeprefix("HED") for p in data.glob("HED8.*.xml")]
    return tuple(sorted(found, key=lambda v: tuple(int(x) for x in v.split("."))))


def check_schema(version: str) -> str:
    if version not in schema_versions():
        raise InputError(
            f"Unknown HED schema version {version!r}; use one of {', '.join(schema_versions())}."
        )
    return version


@cache
def load_schema(version: str) -> Any:
    """The hedtools ``HedSchema`` for a version, loaded once (about 10 s on a busy 2-core box)."""
    from hed import load_schema_version

    return load_schema_version(check_schema(version))


@cache
def definition_dict(schema: str, definitions: tuple[str, ...]) -> Any:
    """hedtools' ``DefinitionDict`` of definition strings (``(Definition/Name, (...))``), built
    once per schema and set of strings; its ``issues`` are the definitions' own errors."""
    from hed.models import DefinitionDict

    defs = DefinitionDict()
    for text in definitions:  # one by one: a list argument keeps only the last string's issues
        defs.add_definitions(text, load_schema(schema))
    return defs


# ---------------------------------------------------------------------- python
class PythonValidator:
    """hedtools' ``HedValidator`` on the bundled schema; thread-safe (it keeps no state).
    ``definitions`` (definition strings) are the context in which ``Def/``, ``Def-expand/``
    and ``Onset``/``Offset`` groups are checked."""

    name: Literal["python"] = "python"

    def validate_batch(
        self, strings: Sequence[str], schema: str, definitions: tuple[str, ...] = ()
    ) -> list[ValidationResult]:
        from hed import HedString
        from hed.errors import ErrorHandler, ErrorSeverity
        from hed.validator import HedValidator

        hed_schema = load_schema(schema)
        defs = definition_dict(schema, definitions) if definitions else None
        validator = HedValidator(hed_schema, def_dicts=defs)
        results = []
        for text in strings:
            issues = validator.validate(
                HedString(text, hed_schema, def_dict=defs),
                allow_placeholders=False,
                error_handler=ErrorHandler(check_for_warnings=True),
            )
            errors: list[Issue] = []
            warnings: list[Issue] = []
            for raw in issues:
                tag = raw.get("source_tag")
                issue = Issue(str(raw["code"]), str(raw.get("message", "")), str(tag or ""))
                (warnings if raw.get("severity") == ErrorSeverity.WARNING else errors).append(issue)
            results.append(ValidationResult(text, schema, "python", errors, warnings))
        return results


# ---------------------------------------------------------------------- javascript
class JsValidatorError(RuntimeError):
    """The Node process is missing, crashed, hung or answered nonsense."""


def js_unavailable_reason(js_dir: Path = JS_DIR, node: str = "node") -> str:
    """Why the JS validator cannot run (one sentence), or '' when it can."""
    if shutil.which(node) is None:
        return f"Node.js ({node}) is not on PATH"
    if not (js_dir / "node_modules" / "hed-validator" / "package.json").is_file():
        return f"the npm package hed-validator is not installed (run `npm ci --prefix {js_dir}`)"
    return ""


class JsValidator:
    """One warm Node process running ``validate.mjs``; calls are serialised by a lock."""

    name: Literal["js"] = "js"

    def __init__(self, js_dir: Path = JS_DIR, *, node: str = "node") -> None:
        self.js_dir = js_dir
        self.node = node
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._next_id = 0
        self._versions: tuple[str, ...] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            why = js_unavailable_reason(self.js_dir, self.node)
            if why:
                raise JsValidatorError(why)
            try:
                self._proc = subprocess.Popen(
                    [self.node, str(self.js_dir / "validate.mjs")],
                    cwd=self.js_dir,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    bufsize=1,
                )
            except OSError as exc:
                raise JsValidatorError(f"Node could not start ({exc})") from None
            atexit.register(self.close)
        return self._proc

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            proc = self._start()
            self._next_id += 1
            request = {"id": self._next_id, **request}
            try:
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
                with selectors.DefaultSelector() as sel:
                    sel.register(proc.stdout, selectors.EVENT_READ)
                    if not sel.select(JS_TIMEOUT_SECONDS):
                        self._kill()
                        raise JsValidatorError(
                            f"the JS validator did not answer within {JS_TIMEOUT_SECONDS:.0f} s"
                        )
                line = proc.stdout.readline()
            except (BrokenPipeError, OSError) as exc:
                self._kill()
                raise JsValidatorError(f"the JS validator process died ({exc})") from None
            if not line:
                try:
                    code = proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    code = None
                self._kill()
                raise JsValidatorError(f"the JS validator process exited (code {code})")
            try:
                answer = json.loads(line)
            except json.JSONDecodeError:
                self._kill()
                raise JsValidatorError(
                    "the JS validator answered with something not JSON"
                ) from None
            if answer.get("id") != request["id"]:
                self._kill()
                raise JsValidatorError("the JS validator answered out of turn")
            if "error" in answer:
                raise JsValidatorError(f"the JS validator failed: {answer['error']}")
            return answer

    def versions(self) -> tuple[str, ...]:
        if self._versions is None:
            self._versions = tuple(self._ask({"op": "versions"})["versions"])
        return self._versions

    def validate_batch(self, strings: Sequence[str], schema: str) -> list[ValidationResult]:
        if schema not in self.versions():
            raise JsValidatorError(f"hed-validator bundles no schema {schema}")
        answer = self._ask({"schema": schema, "strings": list(strings)})
        results = answer.get("results")
        if not isinstance(results, list) or len(results) != len(strings):
            raise JsValidatorError("the JS validator answered for the wrong number of strings")
        return [
            ValidationResult(
                text,
                schema,
                "js",
                [Issue(e["code"], e["message"], e.get("tag", "")) for e in r["errors"]],
                [Issue(w["code"], w["message"], w.get("tag", "")) for w in r["warnings"]],
            )
            for text, r in zip(strings, results, strict=True)
        ]

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=5)
        self._proc = None

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._proc = None


_python = PythonValidator()
_js: JsValidator | None = None
_js_lock = threading.Lock()


def _shared_js() -> JsValidator:
    global _js
    with _js_lock:
        if _js is None:
            _js = JsValidator()
        return _js


# ---------------------------------------------------------------------- facade
def validate_many(
    strings: Sequence[str],
    schema: str = DEFAULT_SCHEMA,
    *,
    validator: ValidatorKind = "auto",
    js: JsValidator | None = None,
    definitions: Sequence[str] = (),
) -> list[ValidationResult]:
    """Validate a batch. ``auto`` and ``js`` use the JS validator when it can run and fall back
    to hedtools when it cannot (Node missing, package missing, schema not bundled, a crash);
    each result then names the reason. ``python`` uses hedtools only. With ``definitions``
    (definition strings, a sidecar's context) hedtools validates: the JS validator's
    standalone check takes none."""
    check_schema(schema)
    if validator == "python":
        return _python.validate_batch(strings, schema, tuple(definitions))
    why = js_unavailable_reason() if js is None else ""
    if definitions:
        why = "the JS validator here checks strings without definitions"
    if not why:
        try:
            return (js or _shared_js()).validate_batch(strings, schema)
        except JsValidatorError as exc:
            why = str(exc)
    results = _python.validate_batch(strings, schema, tuple(definitions))
    reason = f"hedtools validated instead of the JS validator: {why}."
    return [
        ValidationResult(r.hed, r.schema, r.validator, r.errors, r.warnings, reason)
        for r in results
    ]


def validate(
    hed: str, schema: str = DEFAULT_SCHEMA, *, validator: ValidatorKind = "auto"
) -> ValidationResult:
    """Validate one HED string (see ``validate_many``)."""
    return validate_many([hed], schema, validator=validator)[0]


def bench_validators(
    strings: Sequence[str],
    schema: str = DEFAULT_SCHEMA,
    *,
    repeat: int = 3,
    js: JsValidator | None = None,
) -> dict[str, Any]:
    """Speed of each validator on ``strings`` (schemas warmed first) and how far they agree.

    ``{"python": {...}, "js": {...} | None, "js_unavailable": reason, "agreement": {...}}``:
    per validator strings per second, schema load seconds and strings validated; the
    agreement (when both ran) is the share of strings on which validity, and the error codes,
    are the same, with the strings where validity differs. ``js`` is the JS validator to
    measure (the shared warm one by default)."""
    check_schema(schema)
    js = js or (None if js_unavailable_reason() else _shared_js())
    why = "" if js is not None else js_unavailable_reason()
    out: dict[str, Any] = {"js": None, "js_unavailable": why}
    answers: dict[str, list[ValidationResult]] = {}
    runs: list[tuple[str, Validator]] = [("python", _python)]
    if js is not None:
        runs.insert(0, ("js", js))
    for kind, validator in runs:
        try:
            started = time.perf_counter()
            validator.validate_batch(strings[:1], schema)  # builds and caches the schema
            warm_up = time.perf_counter() - started
            started = time.perf_counter()
            for _ in range(repeat):
                answers[kind] = validator.validate_batch(strings, schema)
            seconds = time.perf_counter() - started
        except JsValidatorError as exc:  # e.g. a schema hed-validator does not bundle
            out["js_unavailable"] = str(exc)
            continue
        out[kind] = {
            "strings_per_second": round(len(strings) * repeat / seconds, 1),
            "schema_load_seconds": round(warm_up, 2),
            "strings": len(strings) * repeat,
        }
    out["agreement"] = (
        validator_agreement(answers["js"], answers["python"]) if "js" in answers else None
    )
    return out


def validator_agreement(
    js: Sequence[ValidationResult], python: Sequence[ValidationResult]
) -> dict[str, Any]:
    """How far two validators' results on the same strings agree: validity, error codes."""
    pairs = list(zip(js, python, strict=True))
    differ = [a.hed for a, b in pairs if a.valid != b.valid]
    same_codes = sum(1 for a, b in pairs if a.codes == b.codes)
    n = len(pairs) or 1
    return {
        "strings": len(pairs),
        "validity": round(1 - len(differ) / n, 4),
        "codes": round(same_codes / n, 4),
        "validity_differs": differ,
    }
