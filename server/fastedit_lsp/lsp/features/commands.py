"""workspace/executeCommand: fastedit's commands (the editor contract in docs/actions.md).

Job commands, one per action of the registry, answer at once with ``{jobId}``; the job runs in
the background (``pipeline.runner``).
Arguments are one object (``[{...}]``; "none" is ``[]`` or ``[{}]``); malformed arguments get
-32602 with a message naming the field.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer

from ...actions.registry import ActionSpec, Registry
from ...core.document import Document, Point, PositionError
from ...core.jobs import Inputs, Job, JobRegistry, TestModule
from ...core.timings import Timings
from ...core.tracking import RegionTracker, SentEdit
from ..client import ClientChannel
from ..config import Config
from ..documents import DocumentStore
from ..reporter import JobReporter

# The argument models (pydantic), the job runner and the actions are imported by the first
# command that needs them, not at start-up (bench: cold start).
if TYPE_CHECKING:
    from .command_args import PositionArg, RangeArg

#: LSP's RequestFailed: the request was valid but cannot be done now.
REQUEST_FAILED = -32803
#: How long revert waits for the editor to report the job's last edits.
ECHO_WAIT = 2.0


#: Starts a placed job in the background (``FasteditServer.start_job``).
StartJob = Callable[[Job, Document], None]


def _document(documents: DocumentStore, command: str, uri: str) -> Document:
    document = documents.get(uri)
    if document is None:
        raise JsonRpcInvalidParams(f"{command}: uri: the document is not open: {uri}")
    return document


def _point(command: str, field: str, document: Document, position: PositionArg) -> Point:
    try:
        return document.to_point(position.line, position.character, strict=True)
    except PositionError as exc:
        raise JsonRpcInvalidParams(f"{command}: {field}: {exc}") from None


def _range(command: str, document: Document, rng: RangeArg) -> tuple[Point, Point]:
    start = _point(command, "range.start", document, rng.start)
    end = _point(command, "range.end", document, rng.end)
    if end < start:
        raise JsonRpcInvalidParams(f"{command}: range: start is after end")
    return start, end


def _refuse_overlap(jobs: JobRegistry, document: Document, start: Point, end: Point) -> None:
    for other in jobs.running(document.uri):
        t = other.tracker
        region_end = t.next_edit("").start if t.pending else t.end
        if start <= region_end and t.start <= end:
            raise JsonRpcException(
                f"{other.id} ({other.kind}) is still running on this region: cancel it first "
                "(fastedit.cancel)",
                code=REQUEST_FAILED,
            )


def _start_job(
    jobs: JobRegistry,
    start_job: StartJob,
    kind: str,
    document: Document,
    start: Point,
    end: Point,
    inputs: Inputs,
    tracker: RegionTracker | None = None,
    destination: TestModule | None = None,
) -> dict[str, str]:
    _refuse_overlap(jobs, document, start, end)
    if tracker is None:
        tracker = RegionTracker(start, end, document.get_text(start, end))
    job = Job(
        id=jobs.new_id(),
        kind=kind,
        uri=document.uri,
        range=(document.to_client(start), document.to_client(end)),
        tracker=tracker,
        inputs=inputs,
        destination=destination,
    )
    start_job(job, document)
    return {"jobId": job.id}


def _action_command(
    spec: ActionSpec, documents: DocumentStore, jobs: JobRegistry, start_job: StartJob
) -> Callable[..., dict[str, str]]:
    """The handler of an action's command: arguments → the action places the job → spawn.

    Synchronous: pygls answers with the job's id as the command is handled, before the job's
    task writes the model request (it awaits the answer's first piece in its own step). As a
    task of its own the answer went out a loop turn later, after the request, close to the
    first edit: lsp-mode 8 drops the messages that arrive in the same read as the answer to
    its synchronous request (the action's command is one), and the first edit went unanswered.
    """
    name = spec.command

    def run_action(ls: LanguageServer, *args: Any) -> dict[str, str]:
        from ...actions.base import ActionError, CommandInput
        from .command_args import arguments, parse

        a = parse(name, arguments(spec.args), args)
        document = _document(documents, name, a.uri)
        if a.position is not None:
            start = end = _point(name, "position", document, a.position)
        else:
            assert a.range is not None
            start, end = _range(name, document, a.range)
        command = CommandInput(
            start, end, diagnostics=a.diagnostics, instruction=a.instruction, plan=a.plan
        )
        try:
            placed = spec.load().start(document, command)
        except ActionError as exc:
            raise JsonRpcException(f"{name}: {exc}", code=REQUEST_FAILED) from None
        return _start_job(
            jobs, start_job, spec.kind, document, placed.start, placed.end, placed.inputs
        )

    run_action.__doc__ = f"{name}: {spec.title} (a job; the reply is its id)."
    return run_action


def register(
    server: LanguageServer,
    *,
    actions: Registry,
    jobs: JobRegistry,
    documents: DocumentStore,
    config: Config,
    client: ClientChannel,
    reporter: JobReporter,
    timings: Timings,
    cancellable: dict[Any, asyncio.Task[Any]],
    start_job: StartJob,
    status: Callable[[], dict[str, Any]],
) -> None:
    """``cancellable``: the running requests ``$/cancelRequest`` stops
    (``ProtocolHooks.cancellable``); ``status``: the reply of ``fastedit.status``."""
    for spec in actions:
        server.command(spec.command)(_action_command(spec, documents, jobs, start_job))

    @server.command("fastedit.retry")
    async def retry(ls: LanguageServer, *args: Any) -> dict[str, str]:
        """fastedit.retry {jobId, profile?}: re-run a finished job on a profile (standard)."""
        from .command_args import RetryArgs, parse

        name = "fastedit.retry"
        a = parse(name, RetryArgs, args)
        old = jobs.get(a.jobId)
        if old is None:
            raise JsonRpcInvalidParams(f"{name}: jobId: no job {a.jobId}")
        problem = None
        document = documents.get(old.uri)
        if not old.is_finished:
            problem = f"{old.id} is still running"
        elif old.state == "reverted":
            problem = f"{old.id} was reverted: run the action again"
        elif document is None:
            problem = "its document is not open"
        elif old.tracker.pending or old.tracker.verify(document) is not None:
            problem = "its text changed since: run the action again"
        if problem is not None or document is None:
            raise JsonRpcException(f"{name}: {problem}", code=REQUEST_FAILED)
        t = old.tracker
        # The new job replaces the old one's text; revert still restores the user's original.
        tracker = RegionTracker(t.start, t.end, t.original)
        if t.replaced and t.text:
            tracker.text, tracker.replaced = t.text, True
            tracker.restart()
        inputs = dataclasses.replace(old.inputs, profile=a.profile)
        return _start_job(
            jobs, start_job, old.kind, document, t.start, t.end, inputs, tracker, old.destination
        )

    @server.command("fastedit.toggleFastMode")
    async def toggle_fast_mode(ls: LanguageServer, *args: Any) -> dict[str, str]:
        """fastedit.toggleFastMode: flip between fast and the last non-fast mode."""
        from .command_args import Args, parse

        parse("fastedit.toggleFastMode", Args, args)
        config.toggle_fast()
        return {"mode": config.mode}

    @server.command("fastedit.setMode")
    async def set_mode(ls: LanguageServer, *args: Any) -> dict[str, str]:
        """fastedit.setMode {mode}: fast, standard or auto."""
        from .command_args import SetModeArgs, parse

        a = parse("fastedit.setMode", SetModeArgs, args)
        config.set_mode(a.mode)
        return {"mode": config.mode}

    @server.command("fastedit.cancel")
    async def cancel(ls: LanguageServer, *args: Any) -> dict[str, list[str]]:
        """fastedit.cancel {jobId} | {uri} | none: stop running jobs, report which."""
        from .command_args import TargetArgs, parse

        started = time.perf_counter()
        a = parse("fastedit.cancel", TargetArgs, args)
        if a.jobId is not None:
            job = jobs.get(a.jobId)
            if job is None:
                raise JsonRpcInvalidParams(f"fastedit.cancel: jobId: no job {a.jobId}")
            stopped = [] if job.is_finished else [job]
        else:
            stopped = jobs.running(a.uri)
        for job in stopped:
            job.stop(None)
        tasks = [j.task for j in stopped if j.task is not None]
        if tasks:
            # The reply comes once the streams have stopped and their last edit was answered.
            await asyncio.wait(tasks, timeout=5)
            # The server's own share of a cancel's time (bench: "cancel (server)").
            timings.record("cancel", time.perf_counter() - started)
        return {"cancelled": [j.id for j in stopped]}

    @server.command("fastedit.revert")
    async def revert(ls: LanguageServer, *args: Any) -> dict[str, Any]:
        """fastedit.revert {jobId} | {uri} | none: restore a finished job's original text."""
        from .command_args import TargetArgs, parse

        a = parse("fastedit.revert", TargetArgs, args)
        if a.jobId is not None:
            job = jobs.get(a.jobId)
            if job is None:
                raise JsonRpcInvalidParams(f"fastedit.revert: jobId: no job {a.jobId}")
        else:
            job = jobs.last_finished(a.uri)
            if job is None:
                return {"reverted": False, "reason": "no finished job to revert"}
        return await _revert(job, documents=documents, client=client, reporter=reporter)

    @server.command("fastedit.wait")
    async def wait(ls: LanguageServer, *args: Any) -> dict[str, Any]:
        """fastedit.wait {jobId, timeoutMs?}: the job record once finished (or at the timeout)."""
        from .command_args import WaitArgs, parse

        a = parse("fastedit.wait", WaitArgs, args)
        job = jobs.get(a.jobId)
        if job is None:
            raise JsonRpcInvalidParams(f"fastedit.wait: jobId: no job {a.jobId}")
        msg_id = ls.protocol.msg_id
        task = asyncio.current_task()
        if msg_id is not None and task is not None:
            cancellable[msg_id] = task
        try:
            await asyncio.wait_for(job.finished.wait(), a.timeoutMs / 1000)
        except TimeoutError:
            pass
        except asyncio.CancelledError:
            # pygls answers -32800 itself; a CancelledError escaping a command would leave the
            # request unanswered (pygls 2.1.1).
            raise JsonRpcRequestCancelled(f"fastedit.wait {a.jobId} cancelled") from None
        finally:
            if msg_id is not None:
                cancellable.pop(msg_id, None)
        return job.record()

    @server.command("fastedit.status")
    async def fastedit_status(ls: LanguageServer, *args: Any) -> dict[str, Any]:
        """fastedit.status: mode, profiles, the last 50 job records, version."""
        from .command_args import Args, parse

        parse("fastedit.status", Args, args)
        return status()


async def _revert(
    job: Job, *, documents: DocumentStore, client: ClientChannel, reporter: JobReporter
) -> dict[str, Any]:
    if not job.is_finished:
        return {"reverted": False, "reason": f"{job.id} is still running: cancel it first"}
    if job.state == "reverted":
        return {"reverted": False, "reason": f"{job.id} was already reverted"}
    tracker = job.tracker
    document = documents.get(job.uri)
    if document is None:
        return {"reverted": False, "reason": "the document is not open"}
    if not await documents.wait_reported(tracker, ECHO_WAIT) and tracker.conflict is None:
        return {
            "reverted": False,
            "reason": "the editor has not reported the job's edits yet; try again",
        }
    where = tracker.revert_range(document)
    if isinstance(where, str):
        return {"reverted": False, "reason": f"the region changed since the job: {where}"}
    if job.metrics.edits == 0 or not tracker.replaced:
        return {"reverted": False, "reason": "the job made no edit"}
    edit = SentEdit(*where, tracker.original)
    also, kept = _added_line_removal(job, document, where[0])
    if not await client.apply_edit(job.uri, edit, document=document, also=also):
        return {"reverted": False, "reason": "the editor refused the edit"}
    job.state = "reverted"
    reporter.reverted(job)
    return {"reverted": True, **({"kept": kept} if kept else {})}


def _added_line_removal(
    job: Job, document: Document, start: Point
) -> tuple[list[SentEdit], str | None]:
    """The edit removing the line the job added (``import re``), or why it stays."""
    if job.added_line is None:
        return [], None
    at = [i for i in range(document.line_count) if document.line(i).strip() == job.added_line]
    if len(at) != 1 or at[0] >= start.line or at[0] + 1 >= document.line_count:
        # Another copy appeared, or it moved: it may be the user's now.
        return [], f"{job.added_line} (the line changed since the job)"
    line = at[0]
    return [SentEdit(Point(line, 0), Point(line + 1, 0), "")], None
