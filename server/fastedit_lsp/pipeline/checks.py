"""The project's own checkers as a stage after the built-in checks: started on the draft's
shadow copies through the :class:`~fastedit_lsp.pipeline.ports.CheckerHost`, waited for up to
``verify.timeoutMs``, their new errors added to the job's ``verification.checks``.

A checker still running when the budget is spent is recorded ``ok: null, details: "timed
out"``; when it ends, an error the draft introduced still flags the region (the job's
verification turns false and the host shows the flag) but does not escalate: the job is over.

Pure asyncio: the world is reached through the ports (:mod:`~fastedit_lsp.pipeline.ports`).
"""

from __future__ import annotations

import asyncio

from ..actions.base import Draft, Verification
from ..actions.parse_check import combine
from ..core.jobs import Job
from ..engines.checkers import CheckerRun, Shadow, verdict
from .edits import EditSession
from .job_run import JobRun
from .ports import CheckerHost

#: What a checker still running at the budget's end says in the record.
TIMED_OUT = "timed out"


async def check(run: JobRun, draft: Draft, session: EditSession) -> None:
    """Run the project's checkers on the draft that landed, within the budget."""
    job, host = run.job, run.checkers
    if host is None or draft.shadow is None or not session.edits:
        return
    if job.verification.get("ok") is False or not job.verification.get("checks"):
        return  # failed already (asked again or escalated on that), or not checked at all
    shadow = draft.shadow(session.sent_text)
    names, started = host.start_checkers(job, shadow)
    if started is None:
        return
    budget = run.host.settings.verify.timeout_ms / 1000
    done, _ = await asyncio.wait({started}, timeout=budget)
    if done:
        add(job, shadow, _result(started))
        return
    job.verification = combine([*_built_in(job.verification), *map(_timed_out, names)])
    started.add_done_callback(lambda task: _late(job, host, shadow, task))


def add(job: Job, shadow: Shadow, runs: list[CheckerRun]) -> None:
    """The checkers' verdicts after the built-in checks in ``job.verification``."""
    checks = [*_built_in(job.verification), *(verdict(shadow, r) for r in runs)]
    job.verification = combine(checks)


def _built_in(verification: Verification) -> list[Verification]:
    return [c for c in verification.get("checks", ()) if c.get("details") != TIMED_OUT]


def _timed_out(name: str) -> Verification:
    return {"name": name, "ok": None, "details": TIMED_OUT, "ms": None}


def _result(task: asyncio.Future[list[CheckerRun]]) -> list[CheckerRun]:
    if task.cancelled():
        return []
    error = task.exception()
    if error is not None:
        return [CheckerRun("checkers", skipped=f"{type(error).__name__}: {error}")]
    return task.result()


def _late(
    job: Job, host: CheckerHost, shadow: Shadow, task: asyncio.Future[list[CheckerRun]]
) -> None:
    """A result after the budget: recorded as timed out, each checker's verdict beside; a new
    error flags the region (no escalation: the job has ended)."""
    runs = _result(task)
    late = [verdict(shadow, r) for r in runs]
    for entry in late:
        entry["late"] = True
        if entry["ok"] is not False:
            entry["ok"], entry["details"] = None, f"{TIMED_OUT} ({entry['details']})"
    job.verification = combine([*_built_in(job.verification), *late])
    if any(entry["ok"] is False for entry in late):
        host.flag(job)
