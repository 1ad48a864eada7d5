"""One job, start to finish, as named stages: prepare the run (the action looked up once, the
region it edits) → the action's strategy (``test_module``: move into the test module;
``plan_apply``: plan and apply first) → route and failover (:mod:`.failover`), each attempt a
sequence of stages (:mod:`.attempt`: draft → source → stream → settle and verify → correct),
escalation (:mod:`.escalate`) → finish (the record, the editor told).

Pure asyncio: the world (the editor, the models, the file system) is reached only through the
ports (:mod:`~fastedit_lsp.pipeline.ports`). Runs as a background task once ``executeCommand``
has answered with the job id. Every outcome ends in a finished job record, a ``fastedit/status``
notification and the end of its progress.
"""

from __future__ import annotations

import asyncio
import logging

from ..actions.registry import Registry
from ..backends.base import BackendError, NoModelError
from ..core.document import Document
from ..core.jobs import Job, State
from ..engines.parse_trees import ParseTrees
from . import failover, plan_run, region, test_module
from .announce import Announcer
from .drafts import Drafts, JobFailedError
from .edits import ConflictError, EditRejectedError
from .job_run import JobRun
from .models import Key
from .ports import CheckerHost, JobHost, TestModuleHost
from .route_stats import RouteStats

log = logging.getLogger(__name__)


class JobRunner:
    """Runs jobs against one host; keeps each route's health."""

    def __init__(
        self,
        host: JobHost,
        actions: Registry,
        stats: RouteStats,
        tests: TestModuleHost | None = None,
        checkers: CheckerHost | None = None,
    ) -> None:
        self.host = host
        self.actions = actions
        self.stats = stats
        #: What test-writing jobs touch besides (None: this host writes no test module).
        self.tests = tests
        #: The project's own checkers (None: this host runs none).
        self.checkers = checkers
        #: (baseUrl, model)s that answered 400 to ``prediction``: never sent it again.
        self.no_prediction: set[Key] = set()
        #: Each document's last parse: the next job's check reparses only what changed.
        self.trees = ParseTrees()

    async def run(self, job: Job, document: Document) -> None:
        """Run ``job`` on ``document`` and record how it ended."""
        announcer = Announcer(self.host, job)
        state: State = "done"
        error: str | None = None
        try:
            await self._execute(job, document, announcer)
        except asyncio.CancelledError:
            state = "cancelled"
            error = f"Stopped: {job.stop_reason}" if job.stop_reason else None
        except ConflictError as exc:
            state, error = "cancelled", f"Stopped: {exc}"
        except (BackendError, JobFailedError, EditRejectedError, NoModelError) as exc:
            state, error = "failed", str(exc)
        except TimeoutError:
            state = "failed"
            error = "the editor did not answer workspace/applyEdit; the job stopped sending edits"
        except Exception as exc:  # a bug: never let it take the server down
            log.exception("job %s crashed", job.id)
            state, error = "failed", f"internal error: {type(exc).__name__}: {exc}"
        await self._finish(job, announcer, state, error)

    async def _finish(
        self, job: Job, announcer: Announcer, state: State, error: str | None
    ) -> None:
        """The record, the progress ended, the editor told."""
        announcer.flush()
        job.finish(state, error)
        await announcer.close()
        self.host.end(job)
        self.host.status(job)

    def prepare(self, job: Job, announcer: Announcer) -> JobRun:
        """The job's run: its action looked up once, the region it edits decided."""
        spec = self.actions.get(job.kind)
        if spec is None:
            raise JobFailedError(f"{job.kind} is not available")
        region.for_action(job, rewrite=spec.rewrite)
        drafts = Drafts(self.host, spec.load(), self.trees, self.tests)
        return JobRun(
            job, self.host, spec, drafts, announcer, self.no_prediction, self.tests, self.checkers
        )

    async def _execute(self, job: Job, document: Document, announcer: Announcer) -> None:
        run = self.prepare(job, announcer)
        decision = failover.decide(run, document, self.stats)
        job.step(decision.reason)
        routes = failover.failover_chain(decision.profile, self.host.settings.failover)
        # Only the chosen profile announces falling back to the offline engine; the others are
        # resolved quietly (their messages would only repeat it).
        profiles = [run.profile(route, announce=i == 0) for i, route in enumerate(routes)]
        strategy = run.spec.strategy
        if strategy == "test_module":
            try:
                moved = await test_module.enter(run, document, profiles[-1])
                if moved is not None:
                    session = run.session(moved, edits_before=job.metrics.edits)
                    await failover.run_chain(run, moved, routes, profiles, session, self.stats)
            finally:
                await test_module.leave(run)
            return
        if strategy == "plan_apply" and await plan_run.planned(run, document):
            return
        # After a failed plan-and-apply merge, the direct rewrite replaces what it left.
        session = run.session(document, edits_before=job.metrics.edits)
        await failover.run_chain(run, document, routes, profiles, session, self.stats)
