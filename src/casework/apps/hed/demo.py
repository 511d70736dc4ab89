"""``casework hed demo``: both validators on a valid and an invalid string, then the agent loop
on one easy event with the bundled model (skipped with a note when it is not prepared)."""

from __future__ import annotations

from rich.console import Console

__all__ = ["DEMO_DESCRIPTION", "DEMO_STRINGS", "run_demo"]

DEMO_STRINGS = [
    "Sensory-event, Visual-presentation, (Red, Circle)",
    "Sensory-event, Visual-presentation, (Red, Cirle)",
]
DEMO_DESCRIPTION = "A red circle appears in the center of the screen."


def run_demo(console: Console | None = None, *, model: str | None = None) -> None:
    from casework.apps.hed.deps import build_deps
    from casework.apps.hed.models import HedInput
    from casework.apps.hed.service import annotate, remediation_hint, validate_strings
    from casework.errors import CaseworkError
    from casework.runtime.runconfig import RunConfig

    console = console or Console()
    for kind in ("js", "python"):
        for r in validate_strings(DEMO_STRINGS, "8.3.0", validator=kind):
            verdict = "valid" if r.valid else "invalid " + ",".join(r.codes)
            note = f" ({r.fallback_reason})" if r.fallback_reason else ""
            console.print(
                f"[bold]hed[/] {kind:6} {r.validator:6} {verdict:22} {r.hed}{note}", highlight=False
            )
            for issue in r.errors:
                console.print("  " + remediation_hint(issue, "8.3.0"), highlight=False)
    try:
        deps = build_deps()
        config = RunConfig.of(deps.settings, model)
        decision = annotate(HedInput(description=DEMO_DESCRIPTION), deps, config, strategy="loop")
    except CaseworkError as exc:
        console.print(f"  agent skipped: {exc}")
        return
    run = decision.run
    took = f", {run.usage.wall_seconds:.0f} s, {run.model}" if run is not None else ""
    console.print(
        f"  {DEMO_DESCRIPTION!r} -> [bold]{decision.annotation}[/] {decision.verdict} "
        f"({decision.final_status}; {decision.validation_attempts} attempt(s){took})",
        highlight=False,
    )
