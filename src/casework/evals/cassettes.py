"""The models of an evaluation run: one per role, rate limited, recorded or replayed per case.

Strategies ask their run config's ``models(role)`` for a chat model; the harness runs each
case under a ``RoleModels`` of its own (``CaseModels.for_case``), so one set of deps serves
every case while ``--record`` writes, and ``--replay`` reads, one cassette per case.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from casework.config import Settings
from casework.errors import CaseworkError, ConfigError, InputError
from casework.evals.ratelimit import DEFAULT_RATE_LIMITS, TokenBucket, provider_of
from casework.llm import LOCAL_ROLE, RoleModels, model_name
from casework.llm.replay import Cassette, RecordingChatModel, ReplayChatModel

__all__ = [
    "JUDGE_ROLE",
    "BaseModelFactory",
    "CaseModels",
    "case_filename",
    "replay_source",
]

JUDGE_ROLE = "eval_judge"
"""The role the harness's own judge asks for (apps' in-agent judges use ``judge``)."""

BaseModelFactory = Callable[[str, str], BaseChatModel]
"""``(case_id, role) -> chat model``: replaces resolving the spec (tests hand in scripted models)."""


def case_filename(case_id: str) -> str:
    """A file-system-safe name for a case id (stable; a hash keeps rewritten ids unique)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", case_id)[:100]
    if safe != case_id:
        safe += "-" + hashlib.sha1(case_id.encode()).hexdigest()[:6]
    return safe


class CaseModels:
    """``model_for(case_id, role)``: resolves each role's model once, applies the provider's
    rate limit, and records to or replays from the case's cassette. ``for_case(case_id)`` is
    the ``RoleModels`` a case's strategy sees."""

    def __init__(
        self,
        *,
        model: str | None,
        judge_model: str | None,
        settings: Settings,
        base_model: BaseModelFactory | None = None,
        record_dir: Path | None = None,
        replay_dir: Path | None = None,
        replay_name: str | None = None,
        rate_limits: Mapping[str, float] | None = None,
    ) -> None:
        self.model = model
        self.judge_model = judge_model
        self.settings = settings
        self.base_model = base_model
        self.record_dir = record_dir
        self.replay_dir = replay_dir
        self.replay_name = replay_name or (f"replay:{replay_dir}" if replay_dir else None)
        """What a replayed case's ``RunInfo.model`` says (``replay:`` and what was replayed)."""
        limits = DEFAULT_RATE_LIMITS if rate_limits is None else rate_limits
        self.limiters = {p: TokenBucket(r) for p, r in limits.items() if r and r > 0}
        self.roles = RoleModels(settings, model)
        """The specs of the run's roles (a cascade's local layer stays local under --model)."""
        self._resolved: dict[str, BaseChatModel] = {}
        self._cassettes: dict[str, Cassette] = {}
        self._cases: dict[str, _CaseModels] = {}
        self._lock = threading.Lock()

    def spec_for(self, role: str) -> str:
        if role == JUDGE_ROLE:
            return self.judge_model or self.settings.models.for_role("judge")
        return self.roles.spec(role)

    def _cassette(self, case_id: str, *, must_exist: bool) -> Cassette:
        folder = self.replay_dir if must_exist else self.record_dir
        assert folder is not None
        path = folder / f"{case_filename(case_id)}.jsonl"
        with self._lock:
            found = self._cassettes.get(case_id)
            if found is None:
                if must_exist and not path.is_file():
                    raise ConfigError(
                        f"No cassette for case {case_id!r} in {folder}: record the run with --record first."
                    )
                found = self._cassettes[case_id] = Cassette(path)
            return found

    def _limited(self, model: BaseChatModel, provider: str) -> BaseChatModel:
        limiter = self.limiters.get(provider)
        if limiter is not None and hasattr(model, "model_copy"):
            return model.model_copy(update={"rate_limiter": limiter})
        return model

    def _resolve(self, spec: str) -> BaseChatModel:
        """One model per spec for the whole run (with its provider's rate limit)."""
        with self._lock:
            model = self._resolved.get(spec)
        if model is None:
            model = self._limited(self.roles.resolve_spec(spec), provider_of(spec))
            with self._lock:
                model = self._resolved.setdefault(spec, model)
        return model

    def _base(self, case_id: str, role: str) -> BaseChatModel:
        if self.base_model is not None:
            return self._limited(self.base_model(case_id, role), provider_of(None))
        return self._resolve(self.spec_for(role))

    def model_for(self, case_id: str, role: str = "default") -> BaseChatModel:
        if role == LOCAL_ROLE:
            # The local layer scores options on the bundled model (no chat turns to record);
            # a replay runs it again, offline.
            return self._base(case_id, role)
        if self.replay_dir is not None:
            return ReplayChatModel(cassette=self._cassette(case_id, must_exist=True))
        model = self._base(case_id, role)
        if self.record_dir is not None:
            return RecordingChatModel(
                cassette=self._cassette(case_id, must_exist=False),
                inner=model,
                model_name=getattr(model, "model_name", None) or "recorded",
            )
        return model

    def for_case(self, case_id: str) -> RoleModels:
        """The models of one case: each role's resolved once for the case, and named."""
        with self._lock:
            found = self._cases.get(case_id)
            if found is None:
                found = self._cases[case_id] = _CaseModels(self, case_id)
            return found

    def release(self, case_id: str) -> None:
        """Forget a case's models (it finished, or is tried again with fresh ones)."""
        with self._lock:
            self._cases.pop(case_id, None)

    def check(self) -> None:
        """Resolve the models the user named (``model``, ``judge_model``) once before the run,
        so a missing key, an unknown provider or a disabled network fails in one sentence
        instead of in every case. Settings defaults load on first use (a baseline never does)."""
        if self.replay_dir is not None or self.base_model is not None:
            return
        for spec in (self.model, self.judge_model):
            if spec is not None:
                self._resolve(spec)

    def reset(self, case_id: str) -> None:
        """Forget a case's cassette and models before a retry (a recording starts over)."""
        self.release(case_id)
        with self._lock:
            self._cassettes.pop(case_id, None)
        if self.record_dir is not None:
            (self.record_dir / f"{case_filename(case_id)}.jsonl").unlink(missing_ok=True)


class _CaseModels(RoleModels):
    """One case's ``RoleModels``: its roles resolved by the run (recorded, replayed)."""

    def __init__(self, run: CaseModels, case_id: str) -> None:
        super().__init__(run.settings, run.model)
        self._run = run
        self._case_id = case_id

    def spec(self, role: str) -> str:
        return self._run.spec_for(role)

    def name(self, role: str) -> str:
        """What the case's ``RunInfo.model`` says ``role`` ran: a replay names what it
        replays, a model ``base_model`` handed in its own name, any other the role's spec."""
        run = self._run
        if run.replay_name is not None and role != LOCAL_ROLE:
            return run.replay_name
        if run.base_model is not None:
            return model_name(self(role))
        return run.spec_for(role)

    def resolve(self, role: str) -> BaseChatModel:
        return self._run.model_for(self._case_id, role)


def replay_source(replay: str | Path, settings: Settings) -> tuple[Path, dict[str, Any]]:
    """The cassette folder of a run directory, a cassette folder, or a stored run id, and the
    recorded run's report (for its strategy, dataset and judge) when there is one."""
    path = Path(replay).expanduser()
    if not path.is_dir():
        from casework.evals.store import load_run

        try:
            stored = load_run(str(replay), settings=settings)
        except CaseworkError:
            raise InputError(
                f"Nothing to replay at {replay!r}: give a run id or a run directory with cassettes/."
            ) from None
        path = Path(stored.run_dir or settings.home / "evals" / stored.run_id)
    report = path / "report.json"
    meta = json.loads(report.read_text(encoding="utf-8")).get("run", {}) if report.is_file() else {}
    folder = path / "cassettes" if (path / "cassettes").is_dir() else path
    if not any(folder.glob("*.jsonl")) and (meta.get("config") or {}).get("replay"):
        folder = Path(meta["config"]["replay"])  # a replayed run: replay what it replayed
    if not any(folder.glob("*.jsonl")):
        raise InputError(f"{path} holds no cassettes: record a run with --record first.")
    if not meta:
        parent = folder.parent / "report.json"
        meta = (
            json.loads(parent.read_text(encoding="utf-8")).get("run", {})
            if parent.is_file()
            else {}
        )
    return folder, meta
