"""A scripted editor for end-to-end tests: the real server process, driven like an editor would.

pytest-lsp's client has no document model and no ``workspace/applyEdit`` handler, so this adds
both, with an editor model written independently of the server's (a plain string and offsets), and
models how real editors report changes: promptly (VS Code: the change is reported before the edit's
reply) or late and batched (eglot waits for 0.5 s of idle time; Neovim debounces).

Every edit the server sends is checked: no resource operations (but a ``CreateFile`` that never
overwrites, to an editor that advertises it), only documents the editor opened.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.support.network_servers import without_network_variables

Sync = Literal["prompt", "batched"]
_BREAK = re.compile(r"\r\n|\r|\n")


#: How long a test waits for something it expects before it fails: only a guard against a hang,
#: never a measure of speed, so it is generous and the same on a busy machine (the soak runs the
#: suite with both cores busy; CONTRIBUTING.md).
HANG_GUARD = 120.0


def hermetic_env(**extra: str) -> dict[str, str]:
    """The test process' environment without any real key or FASTEDIT_* setting, and without
    proxy or certificate variables (the server reaches the loopback stub directly; the network
    tests pass theirs in ``extra``)."""
    env = {
        k: v
        for k, v in without_network_variables(dict(os.environ)).items()
        if not k.startswith("FASTEDIT_") and not k.endswith("_API_KEY")
    }
    env.update(extra)
    return env


#: ``verify.checkers`` of every server a test starts, unless the test names its own: none. The
#: server's default runs each project checker (ruff, mypy, go vet, pyright, tsc) found on PATH, so
#: without this the tools installed on the machine would change what a test sees (a finding
#: escalates in auto mode, and the escalation takes the stub model's next answer). A test about
#: the checkers opts in: ``checkers=["ruff"]`` to ``start_editor`` / ``make_editor``, or
#: ``checkers=None`` for the server's own default; ``verify.checkers`` in its
#: initializationOptions is explicit too and is kept.
TEST_CHECKERS: tuple[str, ...] = ()


def with_checkers(options: Any, checkers: Sequence[str] | None = TEST_CHECKERS) -> Any:
    """initializationOptions ``options`` (or an editor's settings, sent as them) with
    ``verify.checkers`` set to ``checkers``, unless they set it themselves or ``checkers`` is None.
    Options that are not an object (a test of bad input) are returned unchanged."""
    if checkers is None or not (options is None or isinstance(options, dict)):
        return options
    options = dict(options or {})
    section = options
    if isinstance(options.get("fastedit"), dict):  # the server reads this section alone
        section = options["fastedit"] = dict(options["fastedit"])
    verify = section.get("verify", {})
    if isinstance(verify, dict) and "checkers" not in verify:
        section["verify"] = {**verify, "checkers": list(checkers)}
    return options


def checkers_config(path: Path, settings: str = "") -> str:
    """Write a ``FASTEDIT_CONFIG`` file at ``path``: ``settings`` (TOML, in a ``[fastedit]``
    table) and :data:`TEST_CHECKERS`, for an editor set up as a new user's (whose init file is
    the README's, with no room for them); its path, the variable's value."""
    checkers = f"[fastedit.verify]\ncheckers = {json.dumps(list(TEST_CHECKERS))}\n"
    path.write_text(f"{settings}\n{checkers}", encoding="utf-8")
    return str(path)


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@dataclass
class EditorDocument:
    """The editor's buffer: a string; positions converted by walking it."""

    uri: str
    text: str
    version: int = 1

    def line_starts(self) -> list[int]:
        return [0] + [m.end() for m in _BREAK.finditer(self.text)]

    def offset(self, line: int, character: int, encoding: str) -> int:
        starts = self.line_starts()
        if line >= len(starts):
            return len(self.text)
        start = starts[line]
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        content = self.text[start:end].rstrip("\r\n")
        if content.isascii():  # one unit per character in every encoding (and linear for 5 MB)
            return start + min(character, len(content))
        index = 0
        while index < len(content) and _units(content[: index + 1], encoding) <= character:
            index += 1
        return start + index

    def position(self, offset: int, encoding: str) -> types.Position:
        starts = self.line_starts()
        line = max(i for i, s in enumerate(starts) if s <= offset)
        return types.Position(
            line=line, character=_units(self.text[starts[line] : offset], encoding)
        )


@dataclass
class Editor:
    """One editor session with the real server."""

    client: LanguageClient
    encoding: str = "utf-16"
    sync: Sync = "prompt"
    #: Seconds a batched editor waits before reporting changes (eglot: 0.5 s of idle).
    batch_delay: float = 0.05
    docs: dict[str, EditorDocument] = field(default_factory=dict)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    #: Every edit applied: (uri, start offset, end offset, new text).
    applied: list[tuple[str, int, int, str]] = field(default_factory=list)
    #: Contract violations seen in server edits (asserted empty after every test).
    violations: list[str] = field(default_factory=list)
    #: Answer ``applied: false`` to every edit.
    refuse_edits: bool = False
    #: How many workspace/applyEdit requests arrived (one may carry several edits).
    apply_requests: int = 0
    #: Advertise ``resourceOperations: [create]`` and apply ``CreateFile`` (VS Code does).
    creates_files: bool = False
    #: The URIs ``CreateFile`` edits created.
    created: list[str] = field(default_factory=list)
    _queued: dict[str, list[types.TextDocumentContentChangeEvent]] = field(default_factory=dict)
    _flush_handle: asyncio.TimerHandle | None = None
    _edit_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _status_arrived: asyncio.Event = field(default_factory=asyncio.Event)

    # -- documents -------------------------------------------------------------------------

    def open(self, uri: str, text: str, language_id: str = "python") -> None:
        self.docs[uri] = EditorDocument(uri, text)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language_id, version=1, text=text
                )
            )
        )

    def close(self, uri: str) -> None:
        self.flush()
        self.docs.pop(uri)
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def text(self, uri: str) -> str:
        return self.docs[uri].text

    def pos(self, uri: str, offset: int) -> dict[str, int]:
        p = self.docs[uri].position(offset, self.encoding)
        return {"line": p.line, "character": p.character}

    def _change(self, uri: str, start: int, end: int, text: str) -> None:
        """Apply a change to the buffer and report it (promptly or batched)."""
        doc = self.docs[uri]
        rng = types.Range(
            start=doc.position(start, self.encoding), end=doc.position(end, self.encoding)
        )
        doc.text = doc.text[:start] + text + doc.text[end:]
        doc.version += 1
        event = types.TextDocumentContentChangePartial(range=rng, text=text)
        self._queued.setdefault(uri, []).append(event)
        if self.sync == "prompt":
            self.flush()
        elif self._flush_handle is None:
            loop = asyncio.get_running_loop()
            self._flush_handle = loop.call_later(self.batch_delay, self.flush)

    def type(self, uri: str, offset: int, text: str) -> None:
        """The user types ``text`` at ``offset``."""
        self._change(uri, offset, offset, text)

    def delete(self, uri: str, start: int, end: int) -> None:
        """The user deletes ``[start, end)``."""
        self._change(uri, start, end, "")

    def flush(self) -> None:
        """Report every queued change (what the bundled integrations do before a command)."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        for uri, changes in list(self._queued.items()):
            if changes and uri in self.docs:
                self.client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(
                            uri=uri, version=self.docs[uri].version
                        ),
                        content_changes=changes,
                    )
                )
        self._queued.clear()

    # -- server requests -------------------------------------------------------------------

    def on_apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        edit = params.edit
        self.apply_requests += 1
        if edit.document_changes:
            for change in edit.document_changes:
                if isinstance(change, types.CreateFile) and self.creates_files:
                    opts = change.options
                    if opts is None or opts.overwrite or not opts.ignore_if_exists:
                        self.violations.append(f"a CreateFile that may overwrite: {change}")
                elif not isinstance(change, types.TextDocumentEdit):
                    self.violations.append(f"resource operation: {change}")
        if edit.document_changes and self.creates_files:
            for change in edit.document_changes:
                if isinstance(change, types.CreateFile):
                    # Like VS Code: the new document opens (empty) and is reported open.
                    self.created.append(change.uri)
                    if change.uri not in self.docs:
                        self.open(change.uri, "")
        for uri in edit.changes or {}:
            if uri not in self.docs:
                self.violations.append(f"edit to a document the editor has not opened: {uri}")
        self._edit_arrived.set()
        if self.refuse_edits:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="refused")
        by_uri: dict[str, list[types.TextEdit]] = {}
        for uri, edits in (edit.changes or {}).items():
            by_uri.setdefault(uri, []).extend(edits)
        for change in edit.document_changes or []:
            if not isinstance(change, types.TextDocumentEdit):
                continue
            uri, version = change.text_document.uri, change.text_document.version
            if uri not in self.docs:
                self.violations.append(f"edit to a document the editor has not opened: {uri}")
                continue
            if version is not None and version != self.docs[uri].version:
                # What VS Code does with a stale versioned edit.
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason=f"version {version} != {self.docs[uri].version}"
                )
            by_uri.setdefault(uri, []).extend(
                e for e in change.edits if isinstance(e, types.TextEdit)
            )
        for uri, edits in by_uri.items():
            if uri not in self.docs:
                continue
            doc = self.docs[uri]
            spans = [
                (
                    doc.offset(e.range.start.line, e.range.start.character, self.encoding),
                    doc.offset(e.range.end.line, e.range.end.character, self.encoding),
                    e.new_text,
                )
                for e in edits
            ]
            for start, end, text in sorted(spans, reverse=True):
                self.applied.append((uri, start, end, text))
                self._change(uri, start, end, text)
        return types.ApplyWorkspaceEditResult(applied=True)

    def on_status(self, params: Any) -> None:
        self.statuses.append(_plain(params))
        self._status_arrived.set()

    async def next_edit(self) -> None:
        """Wait for the server's next workspace/applyEdit."""
        self._edit_arrived.clear()
        await asyncio.wait_for(self._edit_arrived.wait(), HANG_GUARD)

    async def next_event(self, seconds: float = 10) -> None:
        """Wait for the server's next applyEdit or fastedit/status."""
        self._edit_arrived.clear()
        self._status_arrived.clear()
        waits = [
            asyncio.ensure_future(self._edit_arrived.wait()),
            asyncio.ensure_future(self._status_arrived.wait()),
        ]
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def wait_applied(self, count: int) -> None:
        """Wait until at least ``count`` edits were applied."""
        while len(self.applied) < count:
            await self.next_edit()

    # -- commands --------------------------------------------------------------------------

    def inline_completion(
        self, uri: str, offset: int, *, automatic: bool = True, msg_id: str | None = None
    ) -> asyncio.Future[Any]:
        """Send textDocument/inlineCompletion at ``offset`` (after reporting pending changes)."""
        self.flush()
        kind = (
            types.InlineCompletionTriggerKind.Automatic
            if automatic
            else (types.InlineCompletionTriggerKind.Invoked)
        )
        params = types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=self.docs[uri].position(offset, self.encoding),
            context=types.InlineCompletionContext(trigger_kind=kind),
        )
        return asyncio.ensure_future(
            self.client.protocol.send_request_async(
                types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id
            )
        )

    def completion(self, uri: str, offset: int, *, invoked: bool = True) -> asyncio.Future[Any]:
        """Send textDocument/completion at ``offset`` (after reporting pending changes)."""
        self.flush()
        kind = (
            types.CompletionTriggerKind.Invoked
            if invoked
            else (types.CompletionTriggerKind.TriggerForIncompleteCompletions)
        )
        params = types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=self.docs[uri].position(offset, self.encoding),
            context=types.CompletionContext(trigger_kind=kind),
        )
        return asyncio.ensure_future(
            self.client.protocol.send_request_async(types.TEXT_DOCUMENT_COMPLETION, params)
        )

    async def command(self, name: str, *arguments: Any) -> Any:
        if self.sync == "batched":
            pass  # a raw batched editor does not flush; tests call flush() where integrations do
        result = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments))
        )
        return _plain(result)

    async def wait_job(
        self, job_id: str, timeout_ms: int = int(HANG_GUARD * 1000)
    ) -> dict[str, Any]:
        record: dict[str, Any] = await self.command(
            "fastedit.wait", {"jobId": job_id, "timeoutMs": timeout_ms}
        )
        return record

    async def run(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Start a job and wait for its record."""
        started = await self.command(name, args)
        return await self.wait_job(started["jobId"])


def _plain(value: Any) -> Any:
    """pygls hands unknown payloads over as namedtuple-like objects: turn them into JSON data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple) and not hasattr(value, "_asdict"):
        return [_plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    return value


CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(position_encodings=["utf-16"]),
    window=types.WindowClientCapabilities(work_done_progress=True, show_message=None),
    workspace=types.WorkspaceClientCapabilities(
        apply_edit=True,
        configuration=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=False),
    ),
    text_document=types.TextDocumentClientCapabilities(
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(
                    value_set=[types.CodeActionKind.RefactorRewrite, types.CodeActionKind.QuickFix]
                )
            )
        )
    ),
)


async def start_editor(
    env: dict[str, str],
    *,
    encoding: str = "utf-16",
    sync: Sync = "prompt",
    init_options: Any = None,
    configuration: dict[str, Any] | None = None,
    progress: bool = True,
    document_changes: bool = True,
    server_args: tuple[str, ...] = (),
    root_uri: str | None = None,
    inline: bool = False,
    opens_documents: bool = True,
    status_notifications: bool = True,
    opens_missing: bool = True,
    creates_files: bool = False,
    checkers: Sequence[str] | None = TEST_CHECKERS,
) -> Editor:
    """Start the real server (``python -m fastedit_lsp [server_args]``) and initialize it;
    ``checkers``: its ``verify.checkers`` (see :data:`TEST_CHECKERS`)."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "fastedit_lsp", *server_args], server_env=env
    )
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    editor = Editor(client, encoding=encoding, sync=sync, creates_files=creates_files)
    # lsprotocol's Command | CodeAction hook takes any dict with a "command" key for a Command,
    # so a CodeAction carrying a command would arrive mangled (lsprotocol 2025.0.0).
    converter = client.protocol._converter
    converter.register_structure_hook(
        types.Command | types.CodeAction,  # type: ignore[arg-type]
        lambda obj, _: converter.structure(
            obj, types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        ),
    )

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return editor.on_apply_edit(params)

    @client.feature("fastedit/status")
    def status(params: Any) -> None:
        editor.on_status(params)

    def show_document(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
        # Like an editor: open the file the server shows (test generation's module). A missing
        # one opens as a new, empty buffer (Neovim, Emacs) or is declined (VS Code:
        # ``opens_missing=False``).
        client.shown_documents.append(params)
        path = to_fs_path(params.uri)
        if params.uri not in editor.docs and path is not None:
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    editor.open(params.uri, f.read())
            elif opens_missing and os.path.isdir(os.path.dirname(path)):
                editor.open(params.uri, "")
            else:
                return types.ShowDocumentResult(success=False)
        return types.ShowDocumentResult(success=True)

    client.protocol.fm.features[types.WINDOW_SHOW_DOCUMENT] = show_document

    if configuration is not None:
        client.set_configuration(configuration, section="fastedit")
    caps = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=[encoding]),
        window=types.WindowClientCapabilities(
            work_done_progress=progress,
            show_document=types.ShowDocumentClientCapabilities(support=True)
            if opens_documents
            else None,
        ),
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            configuration=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=document_changes,
                resource_operations=[types.ResourceOperationKind.Create] if creates_files else None,
            ),
        ),
        text_document=types.TextDocumentClientCapabilities(
            code_action=CAPABILITIES.text_document.code_action,  # type: ignore[union-attr]
            completion=types.CompletionClientCapabilities(
                completion_item=types.ClientCompletionItemOptions(
                    documentation_format=[types.MarkupKind.Markdown],
                    label_details_support=True,
                )
            ),
            # VS Code and Neovim 0.12 declare ghost text support; others do not.
            inline_completion=types.InlineCompletionClientCapabilities() if inline else None,
        ),
        # The bundled integrations opt in to fastedit/* notifications; other clients do not.
        experimental={"fastedit": {"statusNotification": True}} if status_notifications else None,
    )
    await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            initialization_options=with_checkers(init_options, checkers),
            root_uri=root_uri,
        )
    )
    return editor


async def stop_editor(editor: Editor) -> None:
    editor.flush()
    await editor.client.shutdown_session()
    await editor.client.stop()
