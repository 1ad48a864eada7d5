"""The opt-in recorder (``tests.run``): runs the user's function on planned calls, and its
one-change variants on the same calls, in a subprocess; what it observed.

The plan (the calls, the variants) and what becomes of the observations are the test generator's
(``engines.test_stubs.recorded``, pure); this module only runs code: ``record_worker.py`` as a
script, with the server's interpreter, the project's root and the module's folder first on its
``sys.path`` (as :mod:`.pytest_check` runs pytest), in a temporary working directory, without
the ``*_API_KEY`` variables, with a time limit per call (the worker's alarm), per function and in
total (the process is killed; what it finished is kept). A cancelled job kills it. Then two
checks run every kept call once more, side by side, each in a process of its own with another
hash seed and the wall clock shifted (:data:`CHECKS`): a call one of them sees otherwise is
left out as ``unstable``, as one whose two runs in the recording disagreed is.
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
from typing import Any

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
        data: dict[str, object] = {
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
            "progress": os.path.join(tmp, "progress.json"),
        }
        code, text = await _run(tmp, "record", data, paths, HASH_SEED, seconds, progress)
        answers: dict[int, dict[str, Any]] = {}
        for line in text.splitlines():
            try:
                answer = json.loads(line)
            except ValueError:
                continue  # the last line of a killed worker
            if isinstance(answer, dict) and isinstance(answer.get("index"), int):
                answers[answer["index"]] = answer
        await _check(tmp, plans, answers, paths, call_seconds, target_seconds, seconds)
    why = "the recorder took too long" if code is None else f"the recorder stopped ({code})"
    return [
        recording_from(answers[i]) if i in answers else Recording(error=why)
        for i in range(len(plans))
    ]


#: The recording's hash seed, and the checks': each check runs every kept call once more in
#: another process, with another seed and the clock shifted by another amount, and a call it
#: sees otherwise is left out as ``unstable`` (its outcome depends on the order of a set of
#: texts, or on the time). Two checks, side by side: a set of two texts keeps its order under
#: another seed half the time.
HASH_SEED = "1"
CHECKS = (("2", 90061.5), ("3", -31626061.25))


async def _check(
    tmp: str,
    plans: Sequence[RecordPlan],
    answers: dict[int, dict[str, Any]],
    paths: Sequence[str],
    call_seconds: float,
    target_seconds: float,
    seconds: float,
) -> None:
    """Leave out of ``answers`` the observations another process sees otherwise (see
    :data:`CHECKS`)."""
    indices = [i for i in sorted(answers) if answers[i].get("observations")]
    if not indices:
        return
    data = {
        "check": True,
        "targets": [
            {
                "module": plans[i].module,
                "qualname": plans[i].qualname,
                "imports": list(plans[i].imports),
                "observations": answers[i]["observations"],
            }
            for i in indices
        ],
        "paths": list(paths),
        "call_seconds": call_seconds,
        "target_seconds": target_seconds,
        "seconds": seconds,
    }
    # Each check's working directory sits deeper than the recording's (one and two folders
    # more): a path made relative to it (``ntpath.relpath``) differs, as it would where pytest
    # runs the tests.
    runs = await asyncio.gather(
        *(
            _run(
                tmp, f"check{n}", {**data, "clock_shift": shift}, paths, seed, seconds, depth=n + 1
            )
            for n, (seed, shift) in enumerate(CHECKS)
        )
    )
    unstable: dict[int, set[int]] = {}
    for _, text in runs:
        for line in text.splitlines():
            try:
                found = json.loads(line)
                index = indices[found["index"]]
                unstable.setdefault(index, set()).update(int(u) for u in found["unstable"])
            except (ValueError, TypeError, KeyError, IndexError):
                continue
    for index, left_out in unstable.items():
        if not left_out:
            continue
        answer = answers[index]
        answer["observations"] = [
            o for n, o in enumerate(answer["observations"]) if n not in left_out
        ]
        dropped = answer.setdefault("dropped", {})
        if isinstance(dropped, dict):
            dropped["unstable"] = dropped.get("unstable", 0) + len(left_out)


async def _run(
    tmp: str,
    name: str,
    data: dict[str, object],
    paths: Sequence[str],
    seed: str,
    seconds: float,
    progress: Callable[[int, int], None] | None = None,
    depth: int = 0,
) -> tuple[int | None, str]:
    """The worker on the job ``data`` (with ``PYTHONHASHSEED`` ``seed``): its exit code
    (None: killed) and what it wrote; its working directory ``depth`` folders deeper."""
    output = os.path.join(tmp, f"{name}.jsonl")
    job = os.path.join(tmp, f"{name}.json")
    # Each process in an empty folder of its own (the job's files stay beside it): a call's
    # outcome cannot depend on what another process's calls left, nor on the job's files.
    workdir = os.path.join(tmp, f"{name}-cwd", *["deeper"] * depth)
    await asyncio.to_thread(os.makedirs, workdir)
    await asyncio.to_thread(
        Path(job).write_text,
        json.dumps({**data, "output": output, "workdir": workdir}),
        encoding="utf-8",
    )
    env = user_code_env(paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = seed
    # The worker stops itself at ``seconds``; the kill is for a call its alarm cannot stop
    # (one in C that holds the interpreter) and the import of a slow module.
    running = asyncio.ensure_future(
        run_process([sys.executable, str(WORKER), job], cwd=workdir, env=env, seconds=seconds + 10)
    )
    try:
        if progress is not None and isinstance(data.get("progress"), str):
            await _follow(running, str(data["progress"]), progress)
        code, _ = await running
    finally:
        if not running.done():  # a cancelled job: run_process kills the worker
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
    return code, await asyncio.to_thread(_read, output)


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
