"""The opt-in recorder (``tests.run``): runs the user's function on planned calls, and its
one-change variants on the same calls, in a subprocess; what it observed.

The plan (the calls, the variants) and what becomes of the observations are the test generator's
(``engines.test_stubs.recorded``, pure); this module only runs code: ``record_worker.py`` as a
script, with the server's interpreter, the project's root and the module's folder first on its
``sys.path`` (as :mod:`.pytest_check` runs pytest), in a temporary working directory, without
the ``*_API_KEY`` variables, with a time limit per call (the worker's alarm), per function and in
total (the process is killed; what it finished is kept). A cancelled job kills it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ..engines.test_stubs import Recording, RecordPlan, recording_from
from .processes import run_process, user_code_env

WORKER = Path(__file__).with_name("record_worker.py")
#: One call of the function (or of a variant) at most.
CALL_SECONDS = 1.0
#: One function's calls and variants at most.
TARGET_SECONDS = 10.0
#: The whole recording at most (the process is killed after a little more).
TOTAL_SECONDS = 30.0


async def record(
    plans: Sequence[RecordPlan],
    paths: Sequence[str],
    *,
    call_seconds: float = CALL_SECONDS,
    target_seconds: float = TARGET_SECONDS,
    seconds: float = TOTAL_SECONDS,
    progress: Callable[[int, int], None] | None = None,
) -> list[Recording]:
    """What each plan's function did (in order; an empty recording with its ``error`` for one
    the worker did not finish). ``paths`` go first on the worker's ``sys.path``.
    ``progress`` is told, as the worker goes, which plan it records (its index) and how many
    of that plan's variants it has run."""
    if not plans:
        return []
    with tempfile.TemporaryDirectory(prefix="fastedit-record-") as tmp:
        output = os.path.join(tmp, "observations.jsonl")
        job = os.path.join(tmp, "job.json")
        data = {
            "targets": [
                {
                    "module": p.module,
                    "qualname": p.qualname,
                    "calls": list(p.calls),
                    "variants": list(p.variants),
                    "imports": list(p.imports),
                    "templates": list(p.templates),
                }
                for p in plans
            ],
            "paths": list(paths),
            "call_seconds": call_seconds,
            "target_seconds": target_seconds,
            "seconds": seconds,
            "output": output,
            "progress": os.path.join(tmp, "progress.json"),
        }
        await asyncio.to_thread(Path(job).write_text, json.dumps(data), encoding="utf-8")
        env = user_code_env(paths)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # The worker stops itself at ``seconds``; the kill is for a call its alarm cannot stop
        # (one in C that holds the interpreter) and the import of a slow module.
        running = asyncio.ensure_future(
            run_process([sys.executable, str(WORKER), job], cwd=tmp, env=env, seconds=seconds + 10)
        )
        try:
            if progress is not None:
                await _follow(running, os.path.join(tmp, "progress.json"), progress)
            code, _ = await running
        finally:
            if not running.done():  # a cancelled job: run_process kills the worker
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
        text = await asyncio.to_thread(_read, output)
    answers: dict[int, Recording] = {}
    for line in text.splitlines():
        try:
            answer = json.loads(line)
        except ValueError:
            continue  # the last line of a killed worker
        if isinstance(answer, dict) and isinstance(answer.get("index"), int):
            answers[answer["index"]] = recording_from(answer)
    why = "the recorder took too long" if code is None else f"the recorder stopped ({code})"
    return [answers.get(i, Recording(error=why)) for i in range(len(plans))]


#: How often the worker's answers so far are read for the progress (seconds).
POLL_SECONDS = 0.25


async def _follow(
    running: asyncio.Future[tuple[int | None, bytes]],
    path: str,
    progress: Callable[[int, int], None],
) -> None:
    """Tell ``progress`` what the worker's progress file says (the target, the variants it
    ran) whenever that changes, until the worker ends (and once after)."""
    told: object = None
    ended = False
    while not ended:
        ended = running.done()
        if not ended:
            await asyncio.wait([running], timeout=POLL_SECONDS)
        try:
            index, tried = json.loads(await asyncio.to_thread(_read, path))
        except (ValueError, TypeError):
            continue  # not written yet, or being written
        if isinstance(index, int) and isinstance(tried, int) and (index, tried) != told:
            told = (index, tried)
            progress(index, tried)


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError:
        return ""
