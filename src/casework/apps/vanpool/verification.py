"""Who verifies a vanpool, and what a verification found.

``Verification`` holds the location and shift decisions (a check not run is ``None``);
``Verifier`` is the lifecycle's parameter for who decides them: ``rules_verify`` (distance and
overlap rules, no model) or the specialist agents that ``agent.verifier`` builds for a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from casework.apps.vanpool.checks import location_check, shift_check
from casework.apps.vanpool.models import LocationDecision, ShiftDecision
from casework.errors import InputError

if TYPE_CHECKING:
    from casework.apps.vanpool.deps import VanpoolDeps

__all__ = ["CHECKS", "RULES_ACTOR", "Verification", "Verifier", "rules_verify"]

RULES_ACTOR = "rules_auditor"
CHECKS = ("location", "shift")


@dataclass(frozen=True)
class Verification:
    location: LocationDecision | None
    shift: ShiftDecision | None

    @property
    def failed_checks(self) -> list[str]:
        return [
            name
            for name, d in (("location", self.location), ("shift", self.shift))
            if d is not None and d.verdict == "fail"
        ]

    @property
    def undecided(self) -> list[str]:
        """Checks whose specialist ended without a verdict (a limit, an unusable model)."""
        return [
            name
            for name, d in (("location", self.location), ("shift", self.shift))
            if d is not None and d.verdict not in ("pass", "fail")
        ]

    @property
    def failed_employees(self) -> dict[str, list[str]]:
        return {
            "location": list(self.location.failed_employees) if self.location else [],
            "shift": list(self.shift.failed_employees) if self.shift else [],
        }

    @property
    def evidence(self) -> list[dict[str, Any]]:
        """The failed checks' evidence about failing riders (and the vanpool), with citations."""
        failing = {e for ids in self.failed_employees.values() for e in ids}
        out = []
        for d in (self.location, self.shift):
            if d is None or d.verdict == "pass":
                continue
            for e in d.evidence:
                if not e.ref.startswith("EMP-") or e.ref in failing:
                    out.append({**e.fields, "type": e.source, "ref": e.ref})
        return out

    @property
    def details(self) -> str:
        parts = []
        for d in (self.location, self.shift):
            if d is not None and d.verdict != "pass":
                parts.append(d.reasoning)
        return " ".join(parts)


class Verifier(Protocol):
    """``verify(deps, vanpool_id, checks)``: run the named checks on the vanpool's riders."""

    def __call__(
        self, deps: VanpoolDeps, vanpool_id: str, checks: Sequence[str], /
    ) -> Verification: ...


def rules_verify(
    deps: VanpoolDeps, vanpool_id: str, checks: Sequence[str] = CHECKS
) -> Verification:
    """The rules-only auditor: distance and overlap rules, no model."""
    vanpool = deps.repo.get_vanpool(vanpool_id)
    if not vanpool.riders:
        raise InputError(f"Vanpool {vanpool_id} has no riders to audit.")
    return Verification(
        location=location_check(deps, vanpool) if "location" in checks else None,
        shift=shift_check(vanpool.riders, deps.now().date(), vanpool)
        if "shift" in checks
        else None,
    )
