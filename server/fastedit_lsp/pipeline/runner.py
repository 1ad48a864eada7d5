"""One job, start to finish: context, route, backend stream, filters, edit session, record.

Runs as a background task once ``executeCommand`` has answered with the job id. Every outcome
ends in a finished job record, a ``fastedit/status`` notification and the end of its progress.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from .. import actions
from ..actions.base import ActionError, ActionInput, Draft, Verification
from ..backends.base import Backend, BackendError, ChatMessage, ChatRequest, StreamInfo
from ..core.document import Document, Point
from ..core.jobs import NOTHING_TO_VERIFY, Attempt, Job
from ..core.tracking import RegionTracker, SentEdit
from ..prompting import context
from ..prompting.context import CHARS_PER_TOKEN
from ..settings import ResolvedProfile
from .edits import ConflictError, EditRejectedError, EditSession
from .offline import MODEL, NEEDS_MODEL, PIECE, pieces
from .routing import Decision, Signals, choose, count_definitions

if TYPE_CHECKING:
    from ..backends.openai import OpenAICompatibleBackend
    from ..lsp.server import FasteditServer

log = logging.getLogger(__name__)

#: What each action is called where the user sees it (progress, errors).
TITLES = {
    "completeRest": "Complete the rest",
    "editSelection": "Edit selection",
    "generateRegex": "Generate regex",
    "generateTests": "Write tests",
    "fixSyntax": "Fix syntax",
}


class JobFailedError(Exception):
    """A job that cannot run, with the reason shown to the user."""


async def run(ls: FasteditServer, job: Job, document: Document) -> None:
    """Run ``job`` on ``document`` and record how it ended."""
    progress = ls.spawn(_begin_progress(ls, job))
    ls.send_status(job)
    state, error = "done", None
    try:
        await _execute(ls, job, document)
    except asyncio.CancelledError:
        state = "cancelled"
        error = f"Stopped: {job.stop_reason}" if job.stop_reason else None
    except ConflictError as exc:
        state, error = "cancelled", f"Stopped: {exc}"
    except (BackendError, JobFailedError, EditRejectedError) as exc:
        state, error = "failed", str(exc)
    except TimeoutError:
        state = "failed"
        error = "the editor did not answer workspace/applyEdit; the job stopped sending edits"
    except Exception as exc:  # a bug: never let it take the server down
        log.exception("job %s crashed", job.id)
        state, error = "failed", f"internal error: {type(exc).__name__}: {exc}"
    job.finish(state, error)  # type: ignore[arg-type]
    if state == "failed" and error:
        ls.show_message(f"fastedit: {error}", types.MessageType.Error)
    if not progress.done():
        progress.cancel()
    await asyncio.gather(progress, return_exceptions=True)
    _end_progress(ls, job)
    ls.send_status(job)


#: Failures after which a job moves on along ``failover`` (when nothing was edited yet).
FAILOVER_KINDS = frozenset({"rate_limit", "blocked", "connect", "timeout", "server"})
#: Failures that count against a (baseUrl, model)'s circuit breaker.
BREAKER_KINDS = frozenset({"connect", "timeout", "server", "dropped"})


def _signals(job: Job, document: Document, budget_tokens: int) -> Signals:
    """What auto routing may look at, without a model call."""
    tracker = job.tracker
    # Whole lines, so that indentation tells nested definitions from top-level ones.
    lines = document.get_text(
        Point(tracker.start.line, 0),
        Point(tracker.end.line, len(document.line(tracker.end.line))),
    )
    selection = len(document.get_text(tracker.start, tracker.end))
    around = min(document.offset_of(document.end), budget_tokens * CHARS_PER_TOKEN)
    return Signals(
        kind=job.kind,
        lines=tracker.end.line - tracker.start.line + 1,
        prompt_tokens=(selection + around) // CHARS_PER_TOKEN,
        definitions=count_definitions(lines) if tracker.start != tracker.end else 0,
        diagnostics=int(job.inputs.get("diagnostics", 0) or 0),
        instruction=str(job.inputs.get("instruction", "")),
    )


def failover_chain(first: str, failover: tuple[str, ...]) -> list[str]:
    """The routes a job tries: its own, then those after it in ``failover`` (fast → standard →
    local by default)."""
    chain = [first]
    rest = failover[failover.index(first) + 1 :] if first in failover else failover
    chain.extend(route for route in rest if route not in chain)
    return chain


async def _execute(ls: FasteditServer, job: Job, document: Document) -> None:
    settings = ls.resolved.settings
    forced = job.inputs.get("profile")
    if forced in ("fast", "standard"):
        decision = Decision(forced, f"retry with {forced}")
    else:
        decision = choose(
            ls.mode,
            _signals(job, document, settings.context.budget_tokens),
            routing=settings.routing,
            failure_rates=ls.failure_rates(),
        )
    job.reason = decision.reason
    routes = failover_chain(decision.profile, settings.failover)
    # Only the chosen profile announces falling back to the offline engine; the others are
    # resolved quietly (their messages would only repeat it).
    profiles = [_profile(ls, route, announce=i == 0) for i, route in enumerate(routes)]
    if job.kind == "generateTests" and "testPath" not in job.inputs:
        destination = await _test_destination(ls, job, document)
        if destination is None:
            await _write_tests_on_disk(ls, job, profiles[-1])
            return
        document = destination
    session = _session(ls, job, document)
    skip: set[int] = set()  # routes passed over (a rejected fast answer in fast mode)
    for index, profile in enumerate(profiles):
        if index in skip:
            continue
        if profile.is_local and index == 0:
            job.reason += f" → offline engine ({profile.fallback_reason or 'local profile'})"
        try:
            await _attempt(ls, job, document, profile, session)
        except BackendError as exc:
            if exc.kind != "rejected":
                job.attempts.append(Attempt(routes[index], job.model, None, error=str(exc)))
            following = _after_failure(ls, exc, routes, index)
            if session.edits or following is None:
                raise
            if exc.kind == "rejected":
                to_standard = routes[following] == "standard" and not profiles[following].is_local
                job.escalated = job.escalated or to_standard
                then = "escalated to standard" if to_standard else "offline engine"
                job.reason += f"; {routes[index]} answers failed verification → {then}"
            else:
                job.reason += (
                    f"; {routes[index]} {exc.kind.replace('_', ' ')} → failover to "
                    f"{'offline engine' if profiles[following].is_local else routes[following]}"
                )
            skip.update(range(index + 1, following))
            ls.send_status(job)
            continue
        ls.record_verification(job)
        if _should_escalate(ls, job):
            await _escalate(ls, job, document)
        ls.record_speed(job)
        return


def _session(
    ls: FasteditServer, job: Job, document: Document, *, edits_before: int = 0
) -> EditSession:
    """An edit session streaming into the job's region of ``document``."""
    settings = ls.resolved.settings
    return EditSession(
        document,
        job.tracker,
        lambda edit: ls.apply_edit(
            job.uri, edit, document=document, unreported=job.tracker.unreported_before(edit)
        ),
        max_edits_per_second=settings.max_edits_per_second,
        streaming=settings.streaming,
        on_edit=lambda n: _on_edit(ls, job, edits_before + n),
    )


def _after_failure(
    ls: FasteditServer, exc: BackendError, routes: list[str], index: int
) -> int | None:
    """Which route to try after ``routes[index]`` failed with ``exc``, if any.

    A model that is down or rate-limited hands over to the next route. One whose answers all
    failed verification escalates to standard in auto mode only; otherwise (and after standard)
    the offline engine answers, when it is in the chain.
    """
    later = range(index + 1, len(routes))
    if exc.kind in FAILOVER_KINDS:
        return index + 1 if index + 1 < len(routes) else None
    if exc.kind != "rejected":
        return None
    if ls.mode == "auto" and routes[index] == "fast":
        return next((i for i in later if routes[i] == "standard"), None) or next(
            (i for i in later if routes[i] == "local"), None
        )
    return next((i for i in later if routes[i] == "local"), None)


async def _verified(
    backend: Backend, draft: Draft, job: Job, info: StreamInfo
) -> AsyncIterator[str]:
    """A model's answers, verified before they touch the buffer; asked again with what failed.

    Every answer is recorded in ``attempts``; only a passing one is yielded. When all fail,
    nothing was inserted and the job moves on (or fails, listing what failed).
    """
    assert draft.request is not None and draft.verify is not None and draft.refine is not None
    request: ChatRequest | None = draft.request
    result: Verification = {"ok": None, "details": "no answer"}
    for _ in range(draft.rounds):
        if request is None:
            break
        parts = [text async for text in _filtered(_ask(backend, request, info), draft, job, info)]
        text = "".join(parts)
        result = draft.verify(text)
        job.attempts.append(Attempt(job.route, job.model, dict(result)))
        if result.get("ok") is not False:
            job.verification = result
            yield text
            return
        request = draft.refine(text, result)
    raise BackendError(
        "rejected", f"{job.model}'s answers failed verification: {result.get('details')}"
    )


def _should_escalate(ls: FasteditServer, job: Job) -> bool:
    """Auto mode re-runs a fast draft that failed verification on the standard profile."""
    return (
        ls.mode == "auto"
        and job.route == "fast"
        and job.verification.get("ok") is False
        and not job.escalated
        and not job.tracker.pending
        and job.tracker.conflict is None
        and not ls.profile("standard", announce=False).is_local
    )


async def _escalate(ls: FasteditServer, job: Job, document: Document) -> None:
    """Replace the fast draft (the job's own text) with the standard profile's answer."""
    details = job.verification.get("details", "")
    job.escalated = True
    job.reason += f"; fast draft failed verification ({details}) → escalated to standard"
    first_edits = job.metrics.edits
    job.tracker.restart()
    job.verification = dict(NOTHING_TO_VERIFY)
    session = _session(ls, job, document, edits_before=first_edits)
    try:
        await _attempt(ls, job, document, ls.profile("standard", announce=False), session)
    finally:
        job.metrics.edits = first_edits + session.edits


def _profile(ls: FasteditServer, route: str, *, announce: bool) -> ResolvedProfile:
    if route == "local":
        settings = ls.resolved.settings.profiles.fast
        return ResolvedProfile("fast", "local", None, None, None, None, settings, "failover")
    return ls.profile(route, announce=announce)


async def _attempt(
    ls: FasteditServer,
    job: Job,
    document: Document,
    profile: ResolvedProfile,
    session: EditSession,
) -> None:
    """One try at the job with one profile: model or offline engine, stream, verify."""
    settings = ls.resolved.settings
    path = to_fs_path(job.uri) or job.uri
    if not profile.is_local:
        # What the model would see: this document, and for tests the module under test. Git's
        # answer was asked for when the document was opened (a ``git check-ignore`` per job cost
        # milliseconds before the first edit).
        for seen in filter(None, [job.uri, str(job.inputs.get("sourceUri", ""))]):
            pattern = await ls.excluded_checked(seen)
            if pattern:
                name = os.path.basename(to_fs_path(seen) or seen)
                raise JobFailedError(
                    f"{name} matches context.exclude ({pattern}): it is never sent to a model"
                )
    draft = _prepare(ls, job, document, path, profile)
    if draft.region is not None:
        _retarget(job, document, *draft.region)
    info = StreamInfo(pace=session.pace)
    source: AsyncIterator[str] | None
    key: tuple[str, str] | None = None
    if profile.is_local or draft.request is None:
        # No model configured, or nothing to ask one (the file parses...): the offline answer.
        job.route, job.model = "local", MODEL
        source = await _offline(job, document, draft)
    else:
        backend = await model_backend(ls, profile)
        job.route, job.model = profile.name, backend.model
        key = (profile.base_url or "", backend.model)
        if (wait := ls.breakers.allow(key, time.monotonic())) is not None:
            raise BackendError(
                "blocked",
                f"{backend.model} at {profile.base_url} failed repeatedly: not called for "
                f"another {wait:.0f} s (circuit open)",
            )
        if draft.refine is not None:
            source = _verified(backend, draft, job, info)
        else:
            source = _filtered(_ask(backend, draft.request, info), draft, job, info)
    ls.send_status(job)
    try:
        if source is not None:
            await session.run(source)
    except BackendError as exc:
        if key is not None and exc.kind in BREAKER_KINDS:
            ls.breakers.failure(key, time.monotonic())
        raise
    finally:
        job.metrics.edits = session.edits
        job.metrics.tokens = info.completion_tokens or info.deltas or job.metrics.tokens
        if job.metrics.first_token_at is not None:
            job.metrics.stream_seconds = time.monotonic() - job.metrics.first_token_at
    if key is not None:
        ls.breakers.success(key)
    await _settle(ls, job)
    if session.edits == 0:
        job.reason += f"; {draft.no_suggestion}"
        # A verified answer that put nothing in the buffer verified nothing in it.
        job.verification = dict(NOTHING_TO_VERIFY)
    elif draft.verify is not None:
        job.verification = draft.verify(session.sent_text)
    if draft.refine is None or key is None:  # verified answers were recorded as they came
        job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))
    if draft.extra is not None and session.edits and job.verification.get("ok") is not False:
        await _extra_insertion(ls, job, document, *draft.extra)
    tests = settings.tests
    if (
        job.kind == "generateTests"
        and session.edits
        and job.verification.get("ok") is True
        and (tests.verify_collect or tests.run)
    ):
        # Opt-in only: collecting imports the user's code (and their conftest.py).
        module_text = str(job.inputs.get("existing", "")) + session.sent_text
        ok, details = await _pytest_check(ls, job, module_text, run=tests.run)
        job.verification = {
            "ok": ok,
            "details": f"{job.verification.get('details')}; {details}",
        }


#: How long a job waits at its end for the editor to report its last edits.
SETTLE_SECONDS = 1.0


async def _settle(ls: FasteditServer, job: Job) -> None:
    """Wait (briefly) until the editor has reported the job's edits, to know where they landed.

    An editor that reports late (eglot: after 0.5 s idle) may reveal a change the user made
    before the job's last edits arrived, which then landed off target: the job must say so
    instead of claiming success. An editor that stays silent longer is not waited for.
    """
    job.settling = True  # typing after the text is no longer typing into a stream
    await ls.wait_reported(job.tracker, SETTLE_SECONDS)
    if job.tracker.conflict is not None:
        raise ConflictError(job.tracker.conflict)


async def _extra_insertion(
    ls: FasteditServer, job: Job, document: Document, line: int, text: str
) -> None:
    """Insert one line outside the region (``import re``) once the region's edits are in.

    Sent last, so that it cannot move the region under edits still in flight; skipped (and said)
    when the editor has not reported them in time.
    """
    reported = await ls.wait_reported(job.tracker, 2.0)
    stripped = text.strip()
    if (
        not reported
        or job.tracker.conflict is not None
        or line > job.tracker.start.line
        or line >= document.line_count
    ):
        job.verification["details"] += f"; add `{stripped}` (not added: the region moved)"
        return
    if any(document.line(i).strip() == stripped for i in range(document.line_count)):
        return
    at = Point(line, 0)
    if await ls.apply_edit(job.uri, SentEdit(at, at, text), document=document):
        job.metrics.edits += 1
        job.added_line = stripped


def _prepare(
    ls: FasteditServer, job: Job, document: Document, path: str, profile: ResolvedProfile
) -> Draft:
    """The action's draft for this job (ActionError: it cannot run here)."""
    settings = ls.resolved.settings
    tracker = job.tracker
    data = ActionInput(
        document=document,
        start=tracker.start,
        end=tracker.end,
        ctx=context.around(
            document,
            tracker.start,
            tracker.end,
            budget_tokens=settings.context.budget_tokens,
            path=path,
        ),
        path=path,
        inputs=job.inputs,
        max_tokens=profile.settings.max_tokens,
        temperature=profile.settings.temperature,
        # Joined only if the offline engine needs them (complete the rest).
        others=lambda: [d.text for uri, d in ls.documents.items() if uri != job.uri],
    )
    try:
        return actions.prepare(job.kind, data)
    except ActionError as exc:
        raise JobFailedError(str(exc)) from None


async def _test_destination(ls: FasteditServer, job: Job, source: Document) -> Document | None:
    """Find, open or create the test module; move the job there (append at its end).

    Returns None when the editor cannot open documents: the tests are then written on disk.
    """
    from ..engines.test_stubs import module_name, test_path

    module_path = to_fs_path(source.uri)
    if module_path is None:
        raise JobFailedError("tests can be written for files on disk only")
    root = ls.workspace_root_for(module_path) or await asyncio.to_thread(_project_root, module_path)
    tests_dirs, package_dirs = await asyncio.to_thread(_layout, module_path, root)
    destination = test_path(module_path, root, tests_dirs)
    job.inputs["module"] = module_name(module_path, root, package_dirs)
    job.inputs["source"] = source.text
    job.inputs["testPath"] = destination
    uri = from_fs_path(destination) or destination
    document = ls.documents.get(uri)
    if document is None:
        created = await asyncio.to_thread(_create_exclusive, destination)
        job.inputs["created"] = created
        if not ls.client_supports("window.show_document.support"):
            return None
        opened = ls.next_open(uri)
        await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=False))
        await asyncio.wait([opened], timeout=5)
        document = ls.documents.get(uri)
        if document is None:
            return None
    end = document.end
    job.inputs["existing"] = document.text
    job.inputs["sourceUri"] = source.uri
    job.inputs["workspaceModule"] = _workspace_reader(root or os.path.dirname(module_path))
    job.uri = uri
    job.tracker = RegionTracker(end, end, "")
    job.range = (document.to_client(end), document.to_client(end))
    return document


def _workspace_reader(root: str) -> Callable[[str], str | None]:
    """The source of a workspace module by dotted name, or None when it is not one."""

    def read(dotted: str) -> str | None:
        base = os.path.join(root, *dotted.split("."))
        for path in (base + ".py", os.path.join(base, "__init__.py")):
            try:
                with open(path, encoding="utf-8") as f:
                    return f.read()
            except (OSError, UnicodeDecodeError):
                continue
        return None

    return read


_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "tox.ini")


def _project_root(module_path: str) -> str:
    """Without a workspace folder: the nearest folder with a project marker, else the module's."""
    directory = os.path.dirname(module_path)
    probe = directory
    while True:
        if any(os.path.exists(os.path.join(probe, m)) for m in _PROJECT_MARKERS):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return directory
        probe = parent


def _layout(module_path: str, root: str | None) -> tuple[list[str], list[str]]:
    """Existing ``tests`` folders at or above the module (within the root), and package dirs."""
    tests: list[str] = []
    packages: list[str] = []
    directory = os.path.dirname(module_path)
    while True:
        candidate = os.path.join(directory, "tests")
        if os.path.isdir(candidate):
            tests.append(candidate)
        if os.path.isfile(os.path.join(directory, "__init__.py")):
            packages.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory or (root is not None and not _within(directory, root)):
            break
        if root is not None and os.path.normpath(directory) == os.path.normpath(root):
            break
        directory = parent
    return tests, packages


def _within(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return os.path.commonpath([path, root]) == root


def _create_exclusive(path: str) -> bool:
    """Create an empty file unless one exists (never overwrite); return whether it was created."""
    try:
        with open(path, "x", encoding="utf-8"):
            pass
    except FileExistsError:
        return False
    return True


async def _write_tests_on_disk(ls: FasteditServer, job: Job, profile: ResolvedProfile) -> None:
    """For an editor that cannot open documents: append the tests to the file on disk."""
    destination = str(job.inputs["testPath"])
    existing = await asyncio.to_thread(_read, destination)
    document = Document(from_fs_path(destination) or destination, existing, language_id="python")
    draft = _prepare(ls, job, document, destination, profile)
    if not profile.is_local:
        raise JobFailedError("this editor cannot open the test module; use the offline engine")
    if draft.offline is None:
        raise JobFailedError(NEEDS_MODEL)
    answer = await draft.offline()
    if answer is None or not answer.text:
        job.reason += f"; {draft.no_suggestion}"
        return
    job.route, job.model = "local", MODEL
    await asyncio.to_thread(_append, destination, answer.text)
    job.metrics.edits = 1
    if draft.verify is not None:
        job.verification = draft.verify(answer.text)
    job.reason += f"; written to {destination}"
    job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _append(path: str, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


#: How long an opted-in pytest run on generated tests may take.
PYTEST_SECONDS = 60


async def _pytest_check(
    ls: FasteditServer, job: Job, module_text: str, *, run: bool
) -> tuple[bool, str]:
    """Collect (or run) the generated test module in a subprocess, on a copy, with a time limit."""
    test_path = str(job.inputs.get("testPath", "test_generated.py"))
    source_path = to_fs_path(str(job.inputs.get("sourceUri", ""))) or test_path
    root = ls.workspace_root_for(source_path) or os.path.dirname(source_path)
    with tempfile.TemporaryDirectory(prefix="fastedit-tests-") as tmp:
        copy = os.path.join(tmp, os.path.basename(test_path))
        await asyncio.to_thread(Path(copy).write_text, module_text, encoding="utf-8")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += ["--rootdir", tmp, copy] if run else ["--collect-only", "--rootdir", tmp, copy]
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["PYTHONPATH"] = os.pathsep.join(
            [root, os.path.dirname(source_path), env.get("PYTHONPATH", "")]
        )
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=root,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(proc.communicate(), PYTEST_SECONDS)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return False, f"pytest took longer than {PYTEST_SECONDS} s"
    text = output.decode("utf-8", "replace")
    summary = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    if proc.returncode == 0:
        return True, f"pytest: {summary.strip('= ')}"
    verb = "run" if run else "collection"
    return False, f"pytest {verb} failed: {summary.strip('= ')}"


def _retarget(job: Job, document: Document, start: Point, end: Point) -> None:
    job.tracker.retarget(start, end, document.get_text(start, end))
    job.range = (document.to_client(start), document.to_client(end))


async def _offline(job: Job, document: Document, draft: Draft) -> AsyncIterator[str] | None:
    """The offline engine's answer as a stream, after moving the region if it chose one."""
    if draft.offline is None:
        raise JobFailedError(f"{TITLES.get(job.kind, job.kind)} {NEEDS_MODEL}")
    job.metrics.first_token_at = None
    answer = await draft.offline()
    if answer is None or not answer.text:
        return None
    if answer.start is not None and answer.end is not None:
        _retarget(job, document, answer.start, answer.end)
    job.metrics.first_token_at = time.monotonic()
    job.metrics.tokens = -(-len(answer.text) // PIECE)
    return pieces(answer.text)


def _ask(backend: Backend, request: ChatRequest, info: StreamInfo) -> AsyncIterator[str]:
    """The backend's stream for ``request``, its text made sendable.

    An editor can send lone surrogates (JSON ``\\ud800``), which no UTF-8 body can carry: they go
    to the model as U+FFFD instead of failing the job.
    """
    messages = tuple(ChatMessage(m.role, _sendable(m.content)) for m in request.messages)
    return backend.stream(dataclasses.replace(request, messages=messages), info)


def _sendable(text: str) -> str:
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


#: A model that ignores ``max_tokens`` is cut off: at most this many text deltas beyond it, and
#: this many characters per requested token (generous: a token is a few characters, rarely 20).
OUTPUT_SLACK_DELTAS = 16
OUTPUT_CHARS_PER_TOKEN = 64


async def _filtered(
    stream: AsyncIterator[str], draft: Draft, job: Job, info: StreamInfo
) -> AsyncIterator[str]:
    """The backend's deltas through the action's filters, counting tokens as they arrive.

    The answer is capped (tokens and characters) whatever the model does with ``max_tokens``.
    """
    pipeline = draft.pipeline
    whole: list[str] = []
    max_tokens = draft.request.max_tokens if draft.request is not None else 1024
    max_deltas = max_tokens + OUTPUT_SLACK_DELTAS
    max_chars = max_tokens * OUTPUT_CHARS_PER_TOKEN
    received = 0
    try:
        async for delta in stream:
            received += len(delta)
            if info.deltas > max_deltas or received > max_chars:
                raise BackendError(
                    "protocol",
                    f"{job.model} sent more than its maxTokens ({max_tokens}) allows "
                    f"({info.deltas} deltas, {received:,} characters so far): the answer was "
                    "cut off there. Check the profile's model and maxTokens.",
                )
            if job.metrics.first_token_at is None:
                job.metrics.first_token_at = info.first_delta_at or time.monotonic()
            job.metrics.tokens = info.completion_tokens or info.deltas
            if text := pipeline.feed(delta):
                if draft.transform is None:
                    yield text
                else:
                    whole.append(text)
        tail = pipeline.finish()
        if draft.transform is not None:
            yield draft.transform("".join(whole) + tail)
        elif tail:
            yield tail
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


async def model_backend(ls: FasteditServer, profile: ResolvedProfile) -> OpenAICompatibleBackend:
    """The profile's model backend (the model id asked from /v1/models once, if unset)."""
    assert profile.base_url is not None
    from ..backends.openai import OpenAICompatibleBackend, list_models

    model = profile.model or ls.discovered_models.get(f"{profile.name}:{profile.base_url}")
    if model is None:
        models = await list_models(
            ls.http,
            profile.base_url,
            profile.api_key,
            provider=profile.provider,
            key_hint=profile.key_hint,
        )
        if not models:
            raise JobFailedError(
                f"profiles.{profile.name}: {profile.base_url}/models lists no model; set "
                f"profiles.{profile.name}.model"
            )
        model = models[0]
        ls.discovered_models[f"{profile.name}:{profile.base_url}"] = model
        ls.discovered_models[profile.name] = model
        ls.log_message(f"profiles.{profile.name}: using model {model} (first listed)")
    return OpenAICompatibleBackend(
        ls.http,
        provider=profile.provider,
        base_url=profile.base_url,
        model=model,
        api_key=profile.api_key,
        timeout_ms=profile.settings.timeout_ms,
        rate_limits=ls.rate_limits,
        reasoning_effort=profile.settings.reasoning_effort,
        key_hint=profile.key_hint,
        profile=profile.name,
    )


async def git_ignored(path: str) -> bool:
    """Whether git says ``path`` is ignored (False without git or outside a repository)."""
    directory = os.path.dirname(path)
    if not await asyncio.to_thread(os.path.isdir, directory):
        return False
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            "check-ignore",
            "-q",
            "--",
            path,
            cwd=directory,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return False  # no git: nothing is git-ignored
    try:
        return await asyncio.wait_for(proc.wait(), 5) == 0
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return False


def _on_edit(ls: FasteditServer, job: Job, edits: int) -> None:
    job.metrics.edits = edits
    if job.metrics.first_token_at is not None:
        job.metrics.stream_seconds = time.monotonic() - job.metrics.first_token_at
    if ls.send_status(job, streaming=True) and job.progress_token is not None:
        ls.work_done_progress.report(
            job.progress_token, types.WorkDoneProgressReport(message=speed_line(job))
        )


def speed_line(job: Job) -> str:
    """What the progress shows: "⚡ fast · <model> · 1,840 tok/s"."""
    metrics = job.metrics.record()
    icon = {"fast": "⚡ ", "standard": "◆ ", "local": "○ "}.get(job.route, "")
    parts = [f"{icon}{job.route or 'routing'}", job.model or "…"]
    if metrics["tokensPerSecond"]:
        parts.append(f"{metrics['tokensPerSecond']:,.0f} tok/s")
    elif metrics["tokens"]:
        parts.append(f"{metrics['tokens']} tokens")
    return " · ".join(parts)


#: How long a job's progress waits for the client to accept its token.
PROGRESS_CREATE_TIMEOUT = 10.0


async def _begin_progress(ls: FasteditServer, job: Job) -> None:
    """Show cancellable work-done progress, when the client supports it (off the stream's path)."""
    if not ls.client_supports("window.work_done_progress"):
        return
    token = f"fastedit-{job.id}"
    # A task of its own, in the background: when the job ends first this one is cancelled, but
    # the request waits on for the client's reply (or its timeout), so that nothing is left
    # pending. The token is registered only by begin() below: a job that ended leaves none.
    create = ls.spawn(
        ls.request(
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
    ls.progress_jobs[token] = job
    job.progress_token = token
    ls.work_done_progress.begin(
        token,
        types.WorkDoneProgressBegin(
            title=f"fastedit: {TITLES.get(job.kind, job.kind)}",
            cancellable=True,
            message=speed_line(job),
        ),
    )


def _end_progress(ls: FasteditServer, job: Job) -> None:
    token = job.progress_token
    if token is None:
        return
    message = f"{job.state} · {speed_line(job)}"
    if job.error:
        message += f": {job.error}"
    ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
    # pygls never forgets tokens (notes/toolchain.md, defect 6).
    ls.work_done_progress.tokens.pop(token, None)
    ls.progress_jobs.pop(token, None)
