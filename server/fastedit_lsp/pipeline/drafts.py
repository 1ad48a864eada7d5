"""Prepare: an action's draft for one job on one region (context, prompt, filters, verifier),
and the recorder a test-writing draft may use. Used by every stage that needs a draft (an
attempt, a correction, plan and apply's check, the tests written on disk).

Pure: the world is reached through the ports (:mod:`~fastedit_lsp.pipeline.ports`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..actions.base import Action, ActionError, ActionInput, Draft
from ..core.document import Document, Point
from ..core.jobs import Job
from ..core.uris import to_fs_path
from ..engines.parse_trees import ParseTrees
from ..prompting import context
from ..settings import ResolvedProfile
from .ports import JobHost, TestModuleHost

if TYPE_CHECKING:
    from ..engines.test_stubs import Recording, RecordPlan


class JobFailedError(Exception):
    """A job that cannot run, with the reason shown to the user."""


def path_of(job: Job) -> str:
    """The job's document on disk (its URI when it is not a file)."""
    return to_fs_path(job.uri) or job.uri


@dataclass(frozen=True)
class Drafts:
    """How one job's drafts are made: its action (looked up once), the ports, the parses."""

    host: JobHost
    action: Action
    trees: ParseTrees | None
    tests: TestModuleHost | None = None

    def prepare(
        self,
        job: Job,
        document: Document,
        profile: ResolvedProfile,
        *,
        region: tuple[Point, Point] | None = None,
    ) -> Draft:
        """The action's draft for ``job``, on its region or ``region`` (JobFailedError: it
        cannot run here)."""
        host, path = self.host, path_of(job)
        start, end = region or (job.tracker.start, job.tracker.end)
        budget = host.settings.context.budget_tokens
        data = ActionInput(
            document=document,
            start=start,
            end=end,
            ctx=context.around(document, start, end, budget_tokens=budget, path=path),
            path=path,
            inputs=job.inputs,
            max_tokens=profile.settings.max_tokens,
            temperature=profile.settings.temperature,
            # Joined only if the offline engine needs them (complete the rest).
            others=lambda: host.other_texts(job.uri),
            destination=job.destination,
            # The region may hold the job's own text (escalation, retry): the check compares
            # with what the user had.
            original=job.tracker.original if region is None else None,
            trees=self.trees,
            record=self.recorder(job),
        )
        try:
            return self.action.prepare(data)
        except ActionError as exc:
            raise JobFailedError(str(exc)) from None

    def recorder(self, job: Job) -> Callable[[RecordPlan], Awaitable[Recording]] | None:
        """With ``tests.run`` on, how a test-writing job runs its function (the host's
        recorder); None otherwise: nothing of the user's code runs."""
        destination, tests, host = job.destination, self.tests, self.host
        if destination is None or tests is None or not host.settings.tests.run:
            return None

        async def record(plan: RecordPlan) -> Recording:
            # Up to the recorder's limit per function (seconds): the progress says so.
            name = plan.qualname
            total = len(plan.variants)

            def progress(done: int) -> None:
                job.activity = f"recording {name} ({done}/{total})"
                tests.report(job)

            job.activity = f"recording {name}"
            tests.report(job)
            try:
                return await tests.record(destination, plan, progress)
            finally:
                job.activity = ""

        return record
