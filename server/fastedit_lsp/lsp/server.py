"""The language server: the composition root of fastedit's state owners.

Features live in ``features/``; :func:`register_all` registers each, handing it the owners it
uses (as Tabby's ``server.ts`` hands each feature its collaborators). The job pipeline
(``pipeline.runner``) sees the server only through its port (``host``). The state lives with its
owner: settings and mode in ``config``, documents in ``documents``, everything sent to
the client in ``client``, what the editor sees of a job in ``reporter``, HTTP and breakers in
``backends``, jobs in ``jobs``, route health in ``route_stats``, completions in
``completions``. pygls' fixes are in ``protocol``, which reaches the server through one hooks
object (``hooks``: the document events, fanned out by ``features.sync``).

This is the one module of ``lsp/`` that names :class:`FasteditServer`: every helper and every
feature is handed the owners it uses here (the layer test checks it).
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from .. import __version__
from ..actions.registry import Registry
from ..core.document import Document, Encoding
from ..core.jobs import Job, JobRegistry
from ..core.timings import Timings
from .client import APPLY_TIMEOUT, ClientChannel
from .config import Config
from .diagnostics import DiagnosticSets
from .documents import DocumentStore
from .features.sync import DocumentSync
from .protocol import PatchedLanguageServer
from .reporter import JobReporter
from .warmup import ImportGate, WarmUpOwners, grammar, server_busy

# Start-up imports only what answering ``initialize`` needs: settings (pydantic), httpx, the
# job pipeline and the actions are imported on first use, after the reply (bench: cold start).
if TYPE_CHECKING:
    from ..backends.factory import Backends
    from ..completion.source import CompletionSources
    from ..pipeline.route_stats import RouteStats
    from ..pipeline.runner import JobRunner
    from ..settings import ProfileName
    from .next_edits import NextEdits
    from .parse_trees import ParseRefresher


class FasteditServer(PatchedLanguageServer):
    """fastedit-lsp's server: composes the state owners."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        super().__init__("fastedit-lsp", __version__)
        #: The actions: the built-in ones (and, later, those defined in settings).
        self.actions = Registry()
        self.jobs = JobRegistry()
        #: Background tasks kept referenced until they finish.
        self.tasks: set[asyncio.Task[Any]] = set()
        #: Handler times measured inside the server (``fastedit/debugTimings``, the bench).
        self.timings = Timings()
        env = dict(os.environ if environ is None else environ)
        self.client = ClientChannel(
            self,
            mode=lambda: self.config.mode,
            title=self.actions.title,
            apply_timeout=_seconds(env.get("FASTEDIT_APPLY_TIMEOUT_MS"), APPLY_TIMEOUT),
        )
        self.config = Config(
            env,
            show=self.client.show_message,
            log_message=self.client.log_message,
            mode_changed=self._mode_changed,
        )
        self.documents = DocumentStore(
            self.jobs,
            spawn=self.spawn,
            encoding=self._encoding,
            exclude=lambda: self.config.resolved.settings.context.exclude,
            on_close=self._forget,
        )
        #: What the editor sees of each job (status, progress, end, flags, review).
        self.reporter = JobReporter(
            client=self.client,
            documents=self.documents,
            jobs=self.jobs,
            # fastedit's diagnostics per document and owner (each publish carries the union).
            diagnostics=DiagnosticSets(self),
            review_setting=lambda: self.config.resolved.settings.review,
            spawn=self.spawn,
        )
        self._backends: Backends | None = None
        self._completions: CompletionSources | None = None
        self._runner: JobRunner | None = None
        self._next_edits: NextEdits | None = None
        self._parse_refresher: ParseRefresher | None = None
        #: Background imports (the warm-up, grammars) one at a time with the loop's.
        self.imports = ImportGate(
            lambda: server_busy(self.jobs, self.tasks, self.requests_pending, self.imports.own)
        )
        # The protocol's hooks: document events fanned out to their owners, the message clock.
        self.hooks.documents = DocumentSync(
            documents=self.documents,
            reporter=self.reporter,
            parse_refresher=lambda: self.parse_refresher,
            timings=self.timings,
            grammar=functools.partial(grammar, self.warm_up_owners()),
        )
        self.hooks.clock = self.imports

    def warm_up_owners(self) -> WarmUpOwners:
        """What the warm-up (and the grammars' background loading) uses of the server."""
        return WarmUpOwners(
            imports=self.imports,
            config=self.config,
            timings=self.timings,
            protocol=self.protocol,
            spawn=self.spawn,
            models=lambda: self.backends,
        )

    # -- state owners made on first use (their modules load after the initialize reply) ----------

    @property
    def backends(self) -> Backends:
        """The model backends: one HTTP client, rate limits, breakers, discovered models."""
        if self._backends is None:
            from ..backends.factory import Backends
            from ..backends.network import Network

            def network() -> Network:
                settings = self.config.resolved.settings.network
                return Network(settings.proxy, settings.ca_file)

            self._backends = Backends(log=self.client.log_message, network=network)
        return self._backends

    @property
    def completions(self) -> CompletionSources:
        """Completion requests' engine, context and counters."""
        if self._completions is None:
            from ..completion.source import CompletionSources

            self._completions = CompletionSources(
                documents=self.documents.items,
                excluded=self.documents.excluded,
                excluded_checked=self.documents.excluded_checked,
                models=self.backends,
                log=lambda message: self.client.log_message(message, types.MessageType.Warning),
            )
        return self._completions

    @property
    def next_edits(self) -> NextEdits:
        """Next-edit suggestions: on or off, offers, counters."""
        if self._next_edits is None:
            from .next_edit_model import NextEditModel
            from .next_edits import NextEdits

            settings = lambda: self.config.resolved.settings  # noqa: E731
            model = NextEditModel(
                self.documents,
                self.jobs,
                backends=lambda: self.backends,
                profile=lambda: self.config.profile("fast", announce=False),
                settings=settings,
            )
            self._next_edits = NextEdits(self.documents, settings, model)
        return self._next_edits

    @property
    def runner(self) -> JobRunner:
        """The job pipeline, behind its port."""
        if self._runner is None:
            from ..pipeline.route_stats import RouteStats
            from ..pipeline.runner import JobRunner
            from .host import ServerHost

            host = ServerHost(
                config=self.config,
                documents=self.documents,
                client=self.client,
                reporter=self.reporter,
                backends=lambda: self.backends,
                workspace_root_for=self.workspace_root_for,
            )
            # The ports: what every job needs, test writing's, the project's checkers'.
            self._runner = JobRunner(host, self.actions, RouteStats(), tests=host, checkers=host)
        return self._runner

    @property
    def parse_refresher(self) -> ParseRefresher | None:
        """Keeps the parse check's parses current as documents change (None before the first
        job: no parse is kept until a job checks a draft)."""
        if self._parse_refresher is None and self._runner is not None:
            from .parse_trees import ParseRefresher

            runner = self._runner
            self._parse_refresher = ParseRefresher(self.documents, lambda: runner.trees, self.spawn)
        return self._parse_refresher

    @property
    def route_stats(self) -> RouteStats:
        return self.runner.stats

    # -- jobs ----------------------------------------------------------------------------------

    def start_job(self, job: Job, document: Document) -> None:
        """Run a job in the background (its command has answered with the id)."""
        self.jobs.add(job)
        job.task = self.spawn(self.runner.run(job, document))

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def close(self) -> None:
        """Stop every job and completion stream, and close the HTTP client."""
        if self._completions is not None:
            self._completions.close()
        self.documents.cancel_timers()
        if self._parse_refresher is not None:
            self._parse_refresher.cancel_timers()
        for job in self.jobs.running():
            job.stop(None)
        pending = [j.task for j in self.jobs.running() if j.task is not None]
        if pending:
            await asyncio.wait(pending, timeout=2)
        if self._backends is not None:
            await self._backends.close()

    def _mode_changed(self) -> None:
        self.client.send_status(None)

    def _forget(self, uri: str) -> None:
        """A document closed: its completion state goes too."""
        if self._completions is not None:
            self._completions.forget(uri)
        if self._next_edits is not None and self._next_edits.model is not None:
            self._next_edits.model.forget(uri)
        if self._parse_refresher is not None:
            self._parse_refresher.forget(uri)
        elif self._runner is not None:
            self._runner.trees.forget(uri)

    # -- the workspace -------------------------------------------------------------------------

    def _encoding(self) -> Encoding:
        if self.client.counts_code_points:
            return "utf-32"
        try:
            kind = str(self.workspace.position_encoding)
        except RuntimeError:
            return "utf-16"
        return kind if kind in ("utf-8", "utf-32") else "utf-16"  # type: ignore[return-value]

    def workspace_root_for(self, path: str) -> str | None:
        """The workspace folder holding ``path`` (the innermost), else the root path."""
        try:
            folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
            root: str | None = self.workspace.root_path
        except RuntimeError:
            return None
        candidates: list[str] = [f for f in folders if f and path.startswith(f.rstrip("/") + "/")]
        if candidates:
            return max(candidates, key=len)
        if root and path.startswith(root.rstrip("/") + "/"):
            return root
        return None

    # -- fastedit.status -------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The reply of ``fastedit.status``."""
        from ..settings import resolve_profile

        config = self.config
        profiles = {}
        names: tuple[ProfileName, ...] = ("fast", "standard", "apply")
        for name in names:
            p = resolve_profile(name, config.resolved.settings, config.environ)
            profiles[name] = {
                "provider": p.provider,
                "model": p.model
                or self.backends.discovered.get(p.name)
                or ("offline" if p.is_local else None),
                "baseUrl": p.base_url,
                # An unset apply profile is the fast one.
                "note": p.fallback_reason
                or ("profiles.apply unset: the fast profile" if p.name != name else None),
            }
        now = time.monotonic()
        return {
            "mode": config.mode,
            "profiles": profiles,
            "jobs": self.jobs.records(),
            "version": __version__,
            "breakers": self._backends.breaker_snapshot(now) if self._backends else [],
            "speed": self.route_stats.speed() if self._runner is not None else {},
            "completions": self.completions.report(),
            "nextEdit": self.next_edits.status(),
        }


def _seconds(milliseconds: str | None, default: float) -> float:
    try:
        return max(0.001, int(milliseconds or "") / 1000)
    except ValueError:
        return default


def register_all(server: FasteditServer) -> None:
    """Register every feature on ``server``, handing each the owners it uses (order does not
    matter)."""
    from .features import code_actions, commands, completions, lifecycle, next_edit, review, run
    from .features import debug_stats as debug
    from .features import debug_timings as timings

    lifecycle.register(
        server,
        config=server.config,
        client=server.client,
        reporter=server.reporter,
        internals=server.internals,
        spawn=server.spawn,
        warm_up_owners=server.warm_up_owners,
        close=server.close,
    )
    code_actions.register(
        server,
        documents=server.documents,
        jobs=server.jobs,
        review=server.reporter.review,
        config=server.config,
        actions=server.actions,
        timings=server.timings,
    )
    commands.register(
        server,
        actions=server.actions,
        jobs=server.jobs,
        documents=server.documents,
        config=server.config,
        client=server.client,
        reporter=server.reporter,
        timings=server.timings,
        cancellable=server.hooks.cancellable,
        start_job=server.start_job,
        status=server.status,
    )
    debug.register(
        server,
        held=debug.Holdings(
            documents=server.documents,
            jobs=server.jobs,
            client=server.client,
            imports=server.imports,
            tasks=server.tasks,
            cancellable=server.hooks.cancellable,
            backends=lambda: server.backends,
            parse_refresher=lambda: server.parse_refresher,
        ),
    )
    completions.register(
        server,
        completions=lambda: server.completions,
        next_edits=lambda: server.next_edits,
        documents=server.documents,
        jobs=server.jobs,
        config=server.config,
        client=server.client,
        backends=lambda: server.backends,
    )
    timings.register(server, timings=server.timings)
    review.register(server, jobs=server.jobs, reporter=server.reporter)
    run.register(
        server,
        config=server.config,
        actions=server.actions,
        documents=server.documents,
        jobs=server.jobs,
        start_job=server.start_job,
    )

    def use_model() -> bool:
        return server.config.resolved.settings.next_edit.use_model

    next_edit.register(
        server,
        documents=server.documents,
        next_edits=lambda: server.next_edits,
        use_model=use_model,
        spawn=server.spawn,
    )
