"""The ``test_module`` strategy (write tests): the job moves to the test module the host finds
or creates and appends there, or (an editor that cannot open it) the offline engine's tests are
written to the file on disk; with ``tests.run``, only tests that pass land, and the module's
tests are collected or run once they did.

Pure asyncio: the file system and pytest are reached only through the
:class:`~fastedit_lsp.pipeline.ports.TestModuleHost`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

from ..actions.base import Draft, Verification
from ..actions.write_tests import unparsed_source
from ..backends.base import Backend
from ..core.document import Document
from ..core.jobs import Attempt, Job, TestModule
from ..settings import ResolvedProfile
from .drafts import JobFailedError
from .edits import EditSession
from .job_run import JobRun
from .offline import MODEL, needs_model
from .passing_tests import keep_passing, passing_only
from .ports import TestModuleHost
from .region import move_to_module


def _tests(run: JobRun) -> TestModuleHost:
    if run.tests is None:
        raise JobFailedError(f"{run.spec.title}: this server cannot write test modules")
    return run.tests


async def enter(run: JobRun, document: Document, last: ResolvedProfile) -> Document | None:
    """Move the job into its test module (found or created by the host): the editor's document
    of it, or None when the tests were written on disk instead (the job is then done)."""
    job = run.job
    if job.destination is not None:  # a retry: the job was placed in the module already
        return document
    destination, opened = await _tests(run).test_module(job, document)
    job.destination = destination
    if opened is None:
        await write_on_disk(run, destination, last)
        return None
    move_to_module(job, destination, opened)
    # A status may have named the job's first document already: editors that group a job's
    # edits by the documents its status names (Neovim's one undo step) learn where they land
    # before the first one does.
    run.host.status(job)
    return opened


async def write_on_disk(run: JobRun, destination: TestModule, profile: ResolvedProfile) -> None:
    """For an editor that did not open the module for the server: the offline engine's tests
    delivered whole at the end (``destination.delivery``: on disk, a new module in one
    exclusive create and an existing one appended to; or one workspace edit)."""
    job, path = run.job, destination.path
    if not profile.is_local:
        raise JobFailedError(
            f"this editor cannot open {os.path.basename(path)} (it does not support "
            "window/showDocument), so a model's tests cannot stream into it; nothing was "
            "written. Open the file and run again, or use the offline engine."
        )
    document = Document(destination.uri, destination.existing, language_id="python")
    end = document.end
    draft = run.drafts.prepare(job, document, profile, region=(end, end))
    got = await _offline_text(job, draft, document, destination)
    if got is None:
        return
    text, answer = got
    ran: Verification = {}
    unparsed = unparsed_source(destination.source)
    if run.host.settings.tests.run and unparsed is None:
        text, ran = await keep_passing(_tests(run), destination, text)
        if not text:
            job.step(ran["details"])
            job.verification = {"ok": None, "details": ran["details"]}
            return
    where = await _tests(run).write_tests(destination, text)
    job.metrics.edits = 1
    if draft.verify is not None:
        job.verification = draft.verify(answer)
    if ran and job.verification.get("ok") is True:
        job.verification["details"] += f"; {ran['details']}"
    job.step(where)
    job.attempts.append(Attempt(job.route, job.model, dict(job.verification)))


async def _offline_text(
    job: Job, draft: Draft, document: Document, destination: TestModule
) -> tuple[str, str] | None:
    """The offline engine's tests as the module on disk grows by them, and its answer (None:
    no tests)."""
    if draft.offline is None:
        raise JobFailedError(needs_model(job, "Write tests"))
    answer = await draft.offline()
    if answer is not None and answer.note:
        job.step(answer.note)
    if answer is None or not answer.text:
        job.step(draft.no_suggestion)
        job.verification = {"ok": None, "details": draft.no_suggestion}
        return None
    job.route, job.model = "local", MODEL
    if draft.region is None:
        return answer.text, answer.text
    # Placed for an editor's buffer (before the module's last line break): on disk the
    # module grows at its end by the same text.
    document.replace(*draft.region, answer.text)
    grown, existing = document.text, destination.existing
    return (grown[len(existing) :] if grown.startswith(existing) else grown), answer.text


async def leave(run: JobRun) -> None:
    """The job is over: a module the editor created for it that it wrote nothing into is not
    left behind empty; tests written for a module that does not parse (elsewhere than the
    function) are flagged with the line."""
    job = run.job
    destination = job.destination
    if destination is None:
        return
    if destination.created and not job.metrics.edits:
        await _tests(run).discard(destination)
    unparsed = unparsed_source(destination.source)
    # Flagged last, after auto mode's choices: another model cannot make the module parse.
    if unparsed is not None and job.metrics.edits and job.verification.get("ok") is True:
        _flag(job, unparsed)


def passing(
    run: JobRun,
    source: AsyncIterator[str] | None,
    draft: Draft,
    backend: Backend | None,
    ran: Verification,
    notes: list[str],
) -> AsyncIterator[str] | None:
    """With ``tests.run``, a test-writing job's text without the tests that fail (what pytest
    said goes into ``ran``); any other source unchanged."""
    destination = run.job.destination
    if source is None or destination is None or not run.host.settings.tests.run:
        return source
    if unparsed_source(destination.source) is not None:
        return source  # pytest cannot import the module: its tests land flagged (check)
    supplement = draft.supplement if backend is not None else None
    return passing_only(_tests(run), destination, source, ran, supplement, notes)


async def check(run: JobRun, session: EditSession, ran: Verification) -> None:
    """A passing test module's verification, with what pytest said of it (opt-in only:
    collecting imports the user's code and their conftest.py)."""
    job, tests = run.job, run.host.settings.tests
    if not session.edits or job.verification.get("ok") is not True:
        return
    unparsed = unparsed_source(job.destination.source) if job.destination is not None else None
    if unparsed is not None:
        return  # pytest cannot import the module yet: flagged when the job is over (leave)
    if ran:
        job.verification = {
            "ok": ran["ok"],
            "details": f"{job.verification.get('details')}; {ran['details']}",
        }
    elif job.destination is not None and (tests.verify_collect or tests.run):
        module_text = job.destination.existing + session.sent_text
        ok, details = await _tests(run).check_tests(job.destination, module_text, run=tests.run)
        job.verification = {"ok": ok, "details": f"{job.verification.get('details')}; {details}"}


def _flag(job: Job, unparsed: str) -> None:
    """The tests landed, but the module they test does not parse: flagged, with the line."""
    job.verification = {
        "ok": False,
        "details": f"{unparsed} ({job.verification.get('details')})",
    }
    job.step(unparsed)
