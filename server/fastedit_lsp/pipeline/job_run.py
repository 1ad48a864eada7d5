"""One job as it runs: the job, its action's entry (looked up once), the ports, and what the
runner keeps across jobs; how its drafts and edit sessions are made. Every stage takes it.

Pure asyncio: the world is reached through the ports (:mod:`~fastedit_lsp.pipeline.ports`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from ..actions.registry import ActionSpec
from ..core.document import Document
from ..core.jobs import Job
from ..core.rewrite_tracking import RewriteTracker
from ..core.tracking import SentEdit
from ..settings import ResolvedProfile
from .announce import Announcer
from .drafts import Drafts
from .edits import EditSession
from .models import Key
from .ports import CheckerHost, JobHost, TestModuleHost
from .rewrite import RewriteSession


@dataclass
class JobRun:
    """One running job and what its stages share."""

    job: Job
    host: JobHost
    spec: ActionSpec
    drafts: Drafts
    announcer: Announcer
    #: (baseUrl, model)s that answered 400 to ``prediction`` (the runner's, shared by jobs).
    no_prediction: set[Key] = field(default_factory=set)
    tests: TestModuleHost | None = None
    #: The project's own checkers (None: this host runs none).
    checkers: CheckerHost | None = None
    #: Requests ask for the profile's whole ``maxTokens`` (auto mode asked a cut-off answer
    #: again); False: the action's own budget.
    raised: bool = False
    #: The ``max_tokens`` of the last model request (what a cut-off answer was allowed).
    asked: int | None = None

    def profile(self, route: str, *, announce: bool = False) -> ResolvedProfile:
        """A route's profile now; ``local`` is the offline engine (with the fast settings)."""
        if route == "local":
            settings = self.host.settings.profiles.fast
            return ResolvedProfile("fast", "local", None, None, None, None, settings, "failover")
        return self.host.profile(route, announce=announce)

    def session(self, document: Document, *, edits_before: int = 0) -> EditSession:
        """An edit session streaming into the job's region of ``document``."""
        job, host = self.job, self.host
        settings = host.settings

        def apply(edit: SentEdit) -> Awaitable[bool]:
            unreported = job.tracker.unreported_before(edit)
            return host.apply_edit(job.uri, edit, document=document, unreported=unreported)

        options: dict[str, Any] = {
            "max_edits_per_second": settings.max_edits_per_second,
            "streaming": settings.streaming,
            "on_edit": lambda n: self.on_edit(edits_before + n),
        }
        session: EditSession
        if isinstance(job.tracker, RewriteTracker):
            session = RewriteSession(
                document, job.tracker, apply, wait_reported=host.wait_reported, **options
            )
        else:
            session = EditSession(document, job.tracker, apply, **options)
        session.edits_before = edits_before
        return session

    def on_edit(self, edits: int) -> None:
        self.job.metrics.edits = edits
        self.job.metrics.landed_at = time.monotonic()
        self.announcer.flush()
        self.host.status(self.job, streaming=True)

    def told(self) -> None:
        """Tell the editor what changed (a failover): its start if not yet, and its status."""
        self.announcer.flush()
        self.host.status(self.job)
