"""The channel to the client: edits, requests, messages, ``fastedit/status`` and progress.

Everything the server sends the editor goes through here, so the rules for talking to clients
live in one place: edits are one ``workspace/applyEdit`` each, unversioned unless they delete;
a request waits for its reply at most so long; status is throttled while a job streams; a job's
work-done progress begins off the stream's path and always ends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..core.document import Document
from ..core.jobs import Job, speed_line
from ..core.tracking import SentEdit
from .protocol import forget_progress, forget_request, send_request

log = logging.getLogger(__name__)

#: The custom notification carrying ``{mode, job?}``.
STATUS = "fastedit/status"
#: The client capability ``experimental.fastedit.statusNotification: true`` opts in to the
#: ``fastedit/*`` notifications: a client that does not know them may warn about each one
#: (lsp-mode pops up "Unknown notification"), and reads the same through ``fastedit.status``.
OPT_IN = "statusNotification"
#: While a job streams, status goes out at most this often (seconds).
STATUS_INTERVAL = 0.25
#: How long an edit may wait for the client's reply before the job gives up on the client
#: (seconds; ``FASTEDIT_APPLY_TIMEOUT_MS`` in the environment overrides it).
APPLY_TIMEOUT = 30.0
#: How long a job's progress waits for the client to accept its token.
PROGRESS_CREATE_TIMEOUT = 10.0


class ClientChannel:
    """What the server sends the client, and the requests it may cancel."""

    def __init__(
        self,
        server: LanguageServer,
        *,
        mode: Callable[[], str],
        title: Callable[[str], str],
        apply_timeout: float = APPLY_TIMEOUT,
    ) -> None:
        self._server = server
        self._mode = mode
        self._title = title
        #: Seconds an edit waits for the client's reply (see :data:`APPLY_TIMEOUT`).
        self.apply_timeout = apply_timeout
        #: Progress token -> job, for window/workDoneProgress/cancel.
        self.progress_jobs: dict[str, Job] = {}
        self._status_sent_at: dict[str, float] = {}
        #: The client counts positions in code points without saying so (see
        #: :func:`counts_code_points`): it is served in UTF-32.
        self.counts_code_points = False

    def supports(self, path: str) -> bool:
        """Whether the client declared a capability (``"window.work_done_progress"``)."""
        node: Any = self._server.client_capabilities
        for part in path.split("."):
            node = getattr(node, part, None)
            if node is None:
                return False
        return bool(node)

    def opted_in(self) -> bool:
        """Whether the client declared ``experimental.fastedit.statusNotification: true``."""
        experimental = getattr(self._server.client_capabilities, "experimental", None)
        fastedit = experimental.get("fastedit") if isinstance(experimental, dict) else None
        return isinstance(fastedit, dict) and fastedit.get(OPT_IN) is True

    # -- edits and requests ----------------------------------------------------------------------

    async def apply_edit(
        self,
        uri: str,
        edit: SentEdit,
        *,
        document: Document,
        unreported: Sequence[SentEdit] = (),
        also: Sequence[SentEdit] = (),
    ) -> bool:
        """Send one edit (never a resource operation) and wait for the client's reply.

        ``also``: more edits of the same document in the same ``workspace/applyEdit`` (positions
        in the same text, not overlapping ``edit``): one edit for the editor, one undo step.

        Insertions are unversioned: editors report changes late, so the version the server knows
        is stale while a stream runs (Neovim then drops versioned edits, eglot rejects them). An
        edit that deletes text (replacing the target range, revert) carries the version the
        server knows when the client supports it, so that a client holding changes the server
        has not seen refuses it instead of deleting the wrong text.
        """
        if unreported:
            # ``edit`` is placed in the client's text, which already holds the edits the client
            # has not reported yet (Neovim reports 150 ms late): convert on a copy that has them,
            # or a position past the end of a stale line is clamped to it.
            document = document.copy()
            for sent in unreported:
                document.replace(sent.start, sent.end, sent.text)
        text_edits = [_text_edit(document, e) for e in (edit, *also)]
        deletes = any(e.start != e.end for e in (edit, *also))
        if deletes and self.supports("workspace.workspace_edit.document_changes"):
            workspace_edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=uri, version=document.version
                        ),
                        edits=list(text_edits),
                    )
                ]
            )
        else:
            workspace_edit = types.WorkspaceEdit(changes={uri: text_edits})
        params = types.ApplyWorkspaceEditParams(edit=workspace_edit)
        result = await self.request(types.WORKSPACE_APPLY_EDIT, params, self.apply_timeout)
        return bool(result.applied)

    async def request(self, method: str, params: Any, seconds: float) -> Any:
        """Send a request to the client and wait at most ``seconds`` for the reply.

        At the timeout the request is forgotten (a late reply is only logged) and TimeoutError
        says which request went unanswered. Cancelling the wait does not cancel the request:
        its reply still arrives, and the caller may still want it (an edit on the wire).
        """
        msg_id, future = send_request(self._server, method, params)
        try:
            return await asyncio.wait_for(asyncio.shield(future), seconds)
        except TimeoutError:
            forget_request(self._server, msg_id)
            raise TimeoutError(f"no answer to {method} within {seconds:g} s") from None

    async def show_document(self, uri: str, seconds: float) -> bool:
        """Ask the client to open ``uri`` without taking focus; whether it says it did.

        An error reply (the editor refused: Neovim answers one when it finds a swap file) is
        raised as the JSON-RPC exception; no reply within ``seconds`` as TimeoutError.
        """
        params = types.ShowDocumentParams(uri=uri, take_focus=False)
        result = await self.request(types.WINDOW_SHOW_DOCUMENT, params, seconds)
        return bool(getattr(result, "success", False))

    # -- messages and status ---------------------------------------------------------------------

    def show_message(self, message: str, kind: types.MessageType) -> None:
        self._server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self._server.window_log_message(types.LogMessageParams(type=kind, message=message))

    def send_status(self, job: Job | None, *, streaming: bool = False) -> bool:
        """Send ``fastedit/status``; while streaming, at most every :data:`STATUS_INTERVAL`.

        Returns whether a status was due (the progress report follows the same pace); it goes
        on the wire only to a client that opted in (:data:`OPT_IN`).
        """
        now = time.monotonic()
        if (
            streaming
            and job is not None
            and now - self._status_sent_at.get(job.id, 0.0) < STATUS_INTERVAL
        ):
            return False
        payload: dict[str, Any] = {"mode": self._mode()}
        if job is not None:
            if job.is_finished:
                self._status_sent_at.pop(job.id, None)
            else:
                self._status_sent_at[job.id] = now
            payload["job"] = job.record()
        if self.opted_in():
            self._server.protocol.notify(STATUS, payload)
        return True

    # -- a job's work-done progress --------------------------------------------------------------

    async def begin_progress(self, job: Job, spawn: Callable[[Any], asyncio.Task[Any]]) -> None:
        """Show cancellable work-done progress, when the client supports it (off the stream's
        path)."""
        if not self.supports("window.work_done_progress"):
            return
        token = f"fastedit-{job.id}"
        # A task of its own, in the background: when the job ends first this one is cancelled,
        # but the request waits on for the client's reply (or its timeout), so that nothing is
        # left pending. The token is registered only by begin() below: a job that ended leaves
        # none.
        create = spawn(
            self.request(
                types.WINDOW_WORK_DONE_PROGRESS_CREATE,
                types.WorkDoneProgressCreateParams(token=token),
                PROGRESS_CREATE_TIMEOUT,
            )
        )
        # Its outcome is read here, or (once the job ended) only retrieved.
        create.add_done_callback(lambda task: task.cancelled() or task.exception())
        try:
            await asyncio.shield(create)
        except Exception:  # the client refused or never answered: no progress, the job goes on
            log.info("work-done progress refused for %s", job.id)
            return
        if job.is_finished:
            return
        self.progress_jobs[token] = job
        job.progress_token = token
        self._server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=f"fastedit: {self._title(job.kind)}",
                cancellable=True,
                message=speed_line(job),
            ),
        )

    def report_progress(self, job: Job) -> None:
        if job.progress_token is not None:
            self._server.work_done_progress.report(
                job.progress_token, types.WorkDoneProgressReport(message=speed_line(job))
            )

    def end_progress(self, job: Job) -> None:
        token = job.progress_token
        if token is None:
            return
        message = f"{job.state} · {speed_line(job)}"
        if job.state == "done" and job.verification.get("ok") is False and job.metrics.edits:
            message = f"unverified · {speed_line(job)}: {job.verification.get('details')}"
        if job.error:
            message += f": {job.error}"
        self._server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        forget_progress(self._server, token)
        self.progress_jobs.pop(token, None)


def _text_edit(document: Document, edit: SentEdit) -> types.TextEdit:
    (sl, sc), (el, ec) = document.to_client(edit.start), document.to_client(edit.end)
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=sl, character=sc),
            end=types.Position(line=el, character=ec),
        ),
        new_text=edit.text,
    )


def counts_code_points(params: types.InitializeParams) -> bool:
    """Whether the client counts a line's ``character`` in code points while it declares no
    position encoding: lsp-mode (``clientInfo.name`` "emacs"), whose positions are Emacs'
    columns whatever the server answers (8.0: ``lsp--cur-position``). Served in UTF-16, an
    emoji (two UTF-16 units, one column) shifted every position after it on its line by one:
    a job's next edit after one landed a column off and the job stopped as "edited". Such a
    client is served in UTF-32, what it means; one that declares encodings gets what pygls
    chose from them."""
    general = params.capabilities.general
    declared = general.position_encodings if general is not None else None
    info = params.client_info
    return not declared and info is not None and info.name == "emacs"
