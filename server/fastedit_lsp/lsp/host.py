"""The job pipeline's ports (:class:`~fastedit_lsp.pipeline.ports.JobHost` and, for test
writing, :class:`~fastedit_lsp.pipeline.ports.TestModuleHost`), over the owners.

Each member forwards to the state owner that holds it, handed in by the composition root
(``lsp.server``): the settings (``config``), the documents (``documents``), the client channel
(``client``), what the editor sees of a job (``reporter``), the backend factory (``backends``)
and the user's project (``project``: test-module layout, the opt-in pytest run).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pygls.uris import from_fs_path, to_fs_path

from ..core.document import Document
from ..core.jobs import Job, TestModule
from ..core.tracking import RegionTracker, SentEdit
from ..project.c_headers import CHeaders
from ..project.go_package import GoPackages
from ..project.java_package import JavaPackages
from ..project.rust_crate import RustCrates

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from ..backends.factory import Backends
    from ..engines.checkers import CheckerRun, Shadow
    from ..engines.names.findings import PackageNames
    from ..engines.test_stubs import Recording, RecordPlan
    from ..settings import Mode, ResolvedProfile, Settings
    from .client import ClientChannel
    from .config import Config
    from .documents import DocumentStore
    from .reporter import JobReporter

#: How long a new test module may take to open in the editor.
OPEN_TIMEOUT = 5.0
#: How long the editor may take to answer window/showDocument (it may ask the user first).
SHOW_TIMEOUT = 60.0
#: A test module that imports hypothesis: its project has it.
_IMPORTS_HYPOTHESIS = re.compile(r"^\s*(?:from|import)\s+hypothesis\b", re.MULTILINE)
#: What an editor that answered ``success: false`` said.
DECLINED = "it answered that it did not show it"
#: Refusals seen from editors, in plain words (the reply itself is quoted after them).
REFUSALS = {
    "E325": "a swap file exists: open in another Neovim, or left by a crash",
}


def _job_failed(message: str) -> Exception:
    """The pipeline's own failure (imported on first use, with the pipeline)."""
    from ..pipeline.drafts import JobFailedError

    return JobFailedError(message)


class ServerHost:
    """:class:`~fastedit_lsp.pipeline.ports.JobHost` and
    :class:`~fastedit_lsp.pipeline.ports.TestModuleHost` for one server's owners."""

    def __init__(
        self,
        *,
        config: Config,
        documents: DocumentStore,
        client: ClientChannel,
        reporter: JobReporter,
        backends: Callable[[], Backends],
        workspace_root_for: Callable[[str], str | None],
    ) -> None:
        self._config = config
        self._documents = documents
        self._client = client
        self._reporter = reporter
        #: The backends, made on first use.
        self._backends = backends
        #: The workspace folder holding a path (``FasteditServer.workspace_root_for``).
        self._workspace_root_for = workspace_root_for
        #: Go packages' declarations on disk (the names check), kept per file.
        self._go = GoPackages()
        #: Java packages and sources on disk (the names check), kept per file.
        self._java = JavaPackages()
        #: Rust packages' manifests (the crates a path may start with), kept per manifest.
        self._rust = RustCrates()
        #: C and C++ headers on disk (the names check), kept per file.
        self._c = CHeaders()
        #: The project's checkers still running (a result may come after its job ended).
        self._checking: set[asyncio.Future[list[CheckerRun]]] = set()

    @property
    def mode(self) -> Mode:
        return self._config.mode

    @property
    def settings(self) -> Settings:
        return self._config.resolved.settings

    @property
    def models(self) -> Backends:
        return self._backends()

    def profile(self, route: str, *, announce: bool) -> ResolvedProfile:
        return self._config.profile(route, announce=announce)

    async def excluded(self, uri: str) -> str | None:
        return await self._documents.excluded_checked(uri)

    def other_texts(self, uri: str) -> Sequence[str]:
        return self._documents.others(uri)

    def package_names(self, path: str) -> PackageNames:
        if path.endswith(".java"):
            return self._java.package(path)
        if path.endswith(".rs"):
            return self._rust.crates(path)
        if not path.endswith(".go"):
            return self._c.includes(path)
        return self._go.names(path)

    async def apply_edit(
        self,
        uri: str,
        edit: SentEdit,
        *,
        document: Document,
        unreported: Sequence[SentEdit] = (),
        also: Sequence[SentEdit] = (),
    ) -> bool:
        return await self._client.apply_edit(
            uri, edit, document=document, unreported=unreported, also=also
        )

    async def wait_reported(self, tracker: RegionTracker, seconds: float) -> bool:
        return await self._documents.wait_reported(tracker, seconds)

    def status(self, job: Job, *, streaming: bool = False) -> None:
        self._reporter.status(job, streaming=streaming)

    async def begin(self, job: Job) -> None:
        await self._reporter.begin(job)

    def report(self, job: Job) -> None:
        self._reporter.report(job)

    def end(self, job: Job) -> None:
        self._reporter.end(job)

    async def test_module(self, job: Job, source: Document) -> tuple[TestModule, Document | None]:
        """Find or open the test module; it exists on disk only once it has content.

        The editor's document of it, or None when the editor cannot open it (the tests are then
        delivered whole at the end: ``TestModule.delivery``). A missing module is never created
        empty by the server: an editor that opens a missing path as a new buffer (Neovim,
        Emacs) gets the path; one that does not but advertises
        ``workspace.workspaceEdit.resourceOperations: create`` (VS Code) gets a ``CreateFile``
        in a workspace edit, then the path.
        """
        from ..project.environment import has_package
        from ..project.tests_layout import module_reader, place, project_root, read_text

        documents = self._documents
        module_path = to_fs_path(source.uri)
        if module_path is None:
            raise _job_failed("tests can be written for files on disk only")
        root = self._workspace_root_for(module_path) or await asyncio.to_thread(
            project_root, module_path
        )
        placement = await asyncio.to_thread(place, module_path, root)
        path = placement.path
        uri = from_fs_path(path) or path
        created = False
        delivery = "disk"
        document = documents.get(uri)
        exists = await asyncio.to_thread(os.path.exists, path)
        creates = self._client.creates_files()
        if document is None and self._client.supports("window.show_document.support"):
            shown, refusal = await self._open(uri)
            if refusal == DECLINED and not exists and creates:
                # It opens no missing path: the editor creates the module, then opens it.
                created = await self._create(uri, path)
                if created:
                    shown, refusal = await self._open(uri)
                    if refusal is not None:
                        await self._refused(path, refusal, created=True)
            elif refusal is not None and (refusal != DECLINED or exists):
                await self._refused(path, refusal, created=False)
            document = documents.get(uri)
            if document is None and shown:
                # Shown, so open in the editor, but never reported to this server: the tests
                # go to its buffer in one edit at the end, never to the file behind it.
                delivery = "create" if not exists and creates else "edit"
        elif document is None and not exists and creates:
            delivery = "create"
        elif document is not None and self._client.supports("window.show_document.support"):
            # Open, but perhaps in no window: shown, so the tests land where the user sees them
            # (the buffer gets them either way; a refusal changes nothing).
            await self._show(uri)
        existing = (
            document.text if document is not None else await asyncio.to_thread(read_text, path)
        )
        # Property tests only where the project has hypothesis (one it imports already has).
        hypothesis = _IMPORTS_HYPOTHESIS.search(existing) is not None or await asyncio.to_thread(
            has_package, module_path, root, "hypothesis"
        )
        destination = TestModule(
            path=path,
            uri=uri,
            module=placement.module,
            source=source.text,
            source_uri=source.uri,
            existing=existing,
            created=created,
            read_module=module_reader(root or os.path.dirname(module_path)),
            hypothesis=hypothesis,
            delivery=delivery,
        )
        return destination, document

    async def _open(self, uri: str) -> tuple[bool, str | None]:
        """Show ``uri`` and wait (briefly) for the editor to open it: whether it said it showed
        it, and its refusal (None when it did)."""
        opened = self._documents.next_open(uri)
        refusal = await self._show(uri)
        if refusal is None and self._documents.get(uri) is None:
            await asyncio.wait([opened], timeout=OPEN_TIMEOUT)
        opened.cancel()
        return refusal is None, refusal

    async def _create(self, uri: str, path: str) -> bool:
        """Ask the editor to create the missing module (a ``CreateFile`` that never
        overwrites); whether it did."""
        try:
            return await self._client.create_file(uri)
        except Exception as exc:  # the editor's error reply, or none in time
            log.info("the editor did not create %s: %r", path, exc)
            return False

    async def _show(self, uri: str) -> str | None:
        """Open ``uri`` in the editor: None when it did, else its refusal in its own words."""
        try:
            shown = await self._client.show_document(uri, SHOW_TIMEOUT)
        except TimeoutError:
            return f"no answer within {SHOW_TIMEOUT:g} s"
        except Exception as exc:  # the editor's error reply (a JSON-RPC exception)
            # Neovim's handler error starts with the Lua file and line that raised it.
            said = re.sub(r"^.*?\.lua:\d+: ", "", str(exc)).removeprefix("Vim:").strip()
            return said or type(exc).__name__
        return None if shown else DECLINED

    async def _refused(self, path: str, refusal: str, *, created: bool) -> None:
        """The editor would not open the test module: nothing is written (the editor may hold
        the file elsewhere, a swap file says so), and an empty module created for the job is
        removed. Raises the job's failure, naming the file and the refusal."""
        from ..project.tests_layout import remove_if_empty

        name = os.path.basename(path)
        code = re.match(r"E\d+", refusal)
        why = REFUSALS.get(code.group(0), "") if code else ""
        removed = created and await asyncio.to_thread(remove_if_empty, path)
        raise _job_failed(
            f"no tests written: the editor did not open {name}"
            + (f" ({why})" if why else "")
            + (", and the empty file made for them was removed" if removed else "")
            + f". Its answer: {refusal}. Open {name} yourself and run again."
        )

    async def write_tests(self, destination: TestModule, text: str) -> str:
        from ..project.tests_layout import write_tests

        name = os.path.basename(destination.path)
        uri = destination.uri
        document = self._documents.get(uri)
        if document is not None or destination.delivery == "edit":
            # Its buffer is open: the tests go there, never to the file behind it.
            target = document or Document(uri, destination.existing, language_id="python")
            end = target.end
            if not await self._client.apply_edit(uri, SentEdit(end, end, text), document=target):
                raise _job_failed(f"the editor did not apply the tests to {name}")
            return f"sent to the editor's buffer of {name}"
        if destination.delivery == "create":
            if await asyncio.to_thread(os.path.exists, destination.path):
                raise _job_failed(
                    f"{name} appeared while the tests were written: it was not overwritten; "
                    "run the action again"
                )
            if not await self._client.create_file(uri, text):
                raise _job_failed(f"the editor did not create {name}")
            return f"the editor created {name} with them"
        try:
            await asyncio.to_thread(write_tests, destination.path, text)
        except FileExistsError:
            raise _job_failed(
                f"{name} appeared while the tests were written: "
                "it was not overwritten; run the action again"
            ) from None
        return f"written to {destination.path}"

    async def discard(self, destination: TestModule) -> None:
        from ..project.tests_layout import remove_if_empty

        if destination.created:
            await asyncio.to_thread(remove_if_empty, destination.path)

    def _code_paths(self, destination: TestModule) -> tuple[str, str]:
        """The tested module's path and its project's root (its folder outside a workspace)."""
        source_path = to_fs_path(destination.source_uri) or destination.path
        root = self._workspace_root_for(source_path) or os.path.dirname(source_path)
        return source_path, root

    async def check_tests(
        self, destination: TestModule, module_text: str, *, run: bool
    ) -> tuple[bool, str]:
        from ..project.pytest_check import pytest_check

        source_path, root = self._code_paths(destination)
        return await pytest_check(destination.path, source_path, root, module_text, run=run)

    async def record(
        self,
        destination: TestModule,
        plan: RecordPlan,
        progress: Callable[[int], None] | None = None,
    ) -> Recording:
        from ..project.recorder import record

        source_path, root = self._code_paths(destination)
        # The project's root and the module's folder first, as pytest_check runs pytest.
        [recording] = await record(
            [plan],
            [root, os.path.dirname(source_path)],
            progress=None if progress is None else lambda _index, done: progress(done),
        )
        return recording

    async def run_tests(
        self, destination: TestModule, module_text: str
    ) -> tuple[str, dict[str, str]]:
        from ..project.pytest_check import run_tests

        source_path, root = self._code_paths(destination)
        return await run_tests(destination.path, source_path, root, module_text)

    # -- the project's own checkers (CheckerHost) ---------------------------------------------

    def start_checkers(
        self, job: Job, shadow: Shadow
    ) -> tuple[tuple[str, ...], asyncio.Future[list[CheckerRun]] | None]:
        from ..engines.checkers import FOR_LANGUAGE
        from ..project.checkers import run_checkers, wanted

        verify = self.settings.verify
        listed = verify.checkers
        names = tuple(wanted(shadow.language, FOR_LANGUAGE.get(shadow.language, ()), listed))
        if not names:
            return (), None
        root = self._workspace_root_for(shadow.path)
        task = asyncio.ensure_future(
            run_checkers(
                shadow,
                root,
                names,
                trust_workspace=verify.trust_workspace_tools,
                listed=listed,
            )
        )
        self._checking.add(task)
        task.add_done_callback(self._checking.discard)
        return names, task

    def flag(self, job: Job) -> None:
        self._reporter.verified_late(job)
