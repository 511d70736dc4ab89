"""The evaluation pages: stored evaluation runs, two compared, a run's report files (under
their own CSP)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from casework.apikit import allow
from casework.errors import NotFoundError
from casework.runtime.context import Role
from casework.web.kit import REPORT_CSP, PageError, call, counts_of, render, state_of

__all__ = ["add_eval_routes"]


def add_eval_routes(pages: APIRouter) -> None:
    """The evaluation runs, the comparison of two, and a stored report's files."""
    reviewer = Role.REVIEWER

    @pages.get("/evals", dependencies=[allow("web.evals.list", reviewer)])
    async def evals_page(request: Request) -> HTMLResponse:
        state = state_of(request)
        from casework.evals.store import list_runs

        runs = await call(list_runs, limit=200, settings=state.settings)
        reports = {
            r.run_id: bool(r.run_dir and (Path(r.run_dir) / "report.html").is_file()) for r in runs
        }
        return render(
            request, "evals.html", runs=runs, reports=reports, counts=await call(counts_of, state)
        )

    @pages.get("/evals/compare", dependencies=[allow("web.evals.compare", reviewer)])
    async def evals_compare(request: Request, a: str = "", b: str = "") -> HTMLResponse:
        state = state_of(request)
        if not a or not b or a == b:
            raise PageError(422, "Pick two different evaluation runs to compare.")
        from casework.evals.compare import compare_runs, render_compare_html
        from casework.evals.store import load_run

        def build() -> str:
            return render_compare_html(
                compare_runs(
                    load_run(a, settings=state.settings), load_run(b, settings=state.settings)
                )
            )

        html = await call(build)
        return HTMLResponse(html, headers={"Content-Security-Policy": REPORT_CSP})

    @pages.get(
        "/evals/{run_id}/files/{path:path}", dependencies=[allow("web.evals.file", reviewer)]
    )
    async def eval_file(request: Request, run_id: str, path: str) -> Response:
        state = state_of(request)
        from casework.evals.store import list_runs, resolve_run_id

        def find() -> Path:
            full = resolve_run_id(run_id, settings=state.settings)
            run = next(
                (r for r in list_runs(limit=10_000, settings=state.settings) if r.run_id == full),
                None,
            )
            if run is None or not run.run_dir:
                raise NotFoundError(f"Evaluation run {run_id} has no stored report folder.")
            missing = NotFoundError(f"No file {path!r} in the report of run {run_id}.")
            wanted = Path(path)
            # Only a relative path without '..' and NUL names a file in the folder; a symlink
            # that leads out of it is caught by resolving both.
            if "\x00" in path or wanted.is_absolute() or ".." in wanted.parts:
                raise missing
            root = Path(run.run_dir).resolve()
            target = (root / wanted).resolve()
            if not target.is_relative_to(root) or not target.is_file():
                raise missing
            return target

        target = await call(find)
        return FileResponse(target, headers={"Content-Security-Policy": REPORT_CSP})
