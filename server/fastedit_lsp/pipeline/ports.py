"""What the job pipeline needs of the world: :class:`JobHost`, what every action needs, and
:class:`TestModuleHost`, what only the jobs that write a test module need.

Pure: no pygls, no httpx. The language server implements both over its document store,
client channel and backend factory (``lsp.host``); unit tests implement it with a fake editor
and fake models (``tests/unit/test_pipeline.py``), so failover, escalation, refinement, breakers
and cancellation are tested in milliseconds, without a process or a socket.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from ..backends.base import Backend
from ..core.document import Document
from ..core.jobs import Job, TestModule
from ..core.tracking import RegionTracker, SentEdit

if TYPE_CHECKING:
    from ..engines.checkers import CheckerRun, Shadow
    from ..engines.names.findings import PackageNames
    from ..engines.test_stubs import Recording, RecordPlan
    from ..settings import Mode, ResolvedProfile, Settings


class Models(Protocol):
    """The backend factory as the pipeline sees it: model backends and their circuit breakers."""

    async def backend(self, profile: ResolvedProfile) -> Backend:
        """The profile's backend (its model id asked from ``/v1/models`` once, if unset).

        Raises :class:`~fastedit_lsp.backends.base.NoModelError` when none is listed.
        """
        ...

    def allow(self, key: tuple[str, str], now: float) -> float | None:
        """None when ``(baseUrl, model)`` may be called; else seconds until its breaker closes."""
        ...

    def failure(self, key: tuple[str, str], now: float) -> None: ...

    def success(self, key: tuple[str, str]) -> None: ...


class JobHost(Protocol):
    """Everything a job may touch outside itself."""

    @property
    def mode(self) -> Mode: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def models(self) -> Models: ...

    def profile(self, route: str, *, announce: bool) -> ResolvedProfile:
        """A profile resolved now; ``announce``: tell the user once when it falls back offline."""
        ...

    async def excluded(self, uri: str) -> str | None:
        """The ``context.exclude`` pattern a document matches (waiting for git's answer)."""
        ...

    def other_texts(self, uri: str) -> Sequence[str]:
        """The text of every other open document (offline lookup)."""
        ...

    def package_names(self, path: str) -> PackageNames:
        """What the other files of ``path``'s package declare (Go's names, Java's surroundings,
        read on disk; the names check); None when they cannot be read."""
        ...

    async def apply_edit(
        self,
        uri: str,
        edit: SentEdit,
        *,
        document: Document,
        unreported: Sequence[SentEdit] = (),
        also: Sequence[SentEdit] = (),
    ) -> bool:
        """Send one edit and wait for the editor's answer (whether it applied it)."""
        ...

    async def wait_reported(self, tracker: RegionTracker, seconds: float) -> bool:
        """Wait until the editor reported the job's edits (or a conflict shows)."""
        ...

    def status(self, job: Job, *, streaming: bool = False) -> None:
        """Tell the editor about the job (throttled while streaming) and report progress."""
        ...

    async def begin(self, job: Job) -> None:
        """Show the job's progress (the pipeline runs this beside the job)."""
        ...

    def end(self, job: Job) -> None:
        """End the job's progress; show a failure."""
        ...


class TestModuleHost(Protocol):
    """What a job that writes a test module (``strategy: test_module``) also touches: the
    module's file, and (opt-in) pytest and the recorder on the user's code."""

    def report(self, job: Job) -> None:
        """Report the job's progress now (what it is busy with changed: the recorder's
        variants)."""
        ...

    async def test_module(self, job: Job, source: Document) -> tuple[TestModule, Document | None]:
        """Find (or create) the test module for a test-writing job on ``source``; the editor's
        document of it, or None when the editor cannot open it (the tests are then written
        to the file)."""
        ...

    async def write_tests(self, destination: TestModule, text: str) -> str:
        """Deliver the tests, whole, to a test module the editor did not open for the server
        (``destination.delivery``): its buffer when the editor holds one (one edit), a
        ``CreateFile`` edit, or the file on disk (a new one in one exclusive create, an
        existing one appended to; never overwritten, never while its buffer is open); where
        they went, for the job's reason."""
        ...

    async def discard(self, destination: TestModule) -> None:
        """A job that wrote nothing leaves no empty module behind: one the editor created for
        it is removed while it is still empty."""
        ...

    async def check_tests(
        self, destination: TestModule, module_text: str, *, run: bool
    ) -> tuple[bool, str]:
        """Collect (or run) a generated test module with pytest, on a copy (opt-in)."""
        ...

    async def run_tests(
        self, destination: TestModule, module_text: str
    ) -> tuple[str, dict[str, str]]:
        """Run a test module with pytest, on a copy (opt-in: ``tests.run``): its summary and
        each test function's outcome (none when it could not be collected or run)."""
        ...

    async def record(
        self,
        destination: TestModule,
        plan: RecordPlan,
        progress: Callable[[int], None] | None = None,
    ) -> Recording:
        """Run the function a test-writing job is for on the plan's calls, and its variants
        (opt-in: ``tests.run``; in a subprocess with time limits): what it observed.
        ``progress`` is told how many variants have run, as they do."""
        ...


class CheckerHost(Protocol):
    """The project's own checkers (ruff, mypy, pyright, go vet, tsc) on a draft's shadows."""

    def start_checkers(
        self, job: Job, shadow: Shadow
    ) -> tuple[tuple[str, ...], asyncio.Future[list[CheckerRun]] | None]:
        """Start the checkers that apply (in the background, owned by the host): their names,
        and what each found in the text before and after (a checker that cannot run says
        why); None when none applies."""
        ...

    def flag(self, job: Job) -> None:
        """The job's verification changed after it ended (a late checker): show its flag."""
        ...
