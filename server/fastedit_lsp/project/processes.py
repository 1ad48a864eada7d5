"""Running a helper program (git, pytest) from the event loop, in a worker thread.

Not ``asyncio.create_subprocess_exec``: on Python 3.11 a task cancelled while that call is
still starting the process never returns (the exit watcher is registered only once the pipes
are connected, and the cancel path waits for the exit), so a git check cancelled at exit hung
the server's shutdown (half of the runs that opened a document and exited at once). Here the
process runs under :class:`subprocess.Popen` in a thread, and a cancel kills it: the awaiting
task ends at once and the thread a moment later.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from collections.abc import Mapping, Sequence


def user_code_env(paths: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the user's code runs in (the opt-in pytest run, the recorder): the
    server's (or ``environ``), without the ``*_API_KEY`` variables, ``paths`` first on
    ``PYTHONPATH``."""
    source = os.environ if environ is None else environ
    env = {k: v for k, v in source.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
    return env


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    seconds: float,
    env: Mapping[str, str] | None = None,
    capture: bool = False,
    stdin: bytes | None = None,
    stderr: bool = True,
) -> tuple[int | None, bytes]:
    """Run ``argv``: its exit code (None: killed after ``seconds``) and, with
    ``capture``, its output (stdout and, unless ``stderr`` is False, stderr together);
    ``stdin``: what it reads. Raises :class:`OSError` when the program cannot be started; a
    cancel kills the process."""
    stop = threading.Event()
    started: list[subprocess.Popen[bytes]] = []

    def work() -> tuple[int | None, bytes]:
        if stop.is_set():
            return None, b""
        output = subprocess.PIPE if capture else subprocess.DEVNULL
        with subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=output,
            stderr=subprocess.STDOUT if capture and stderr else subprocess.DEVNULL,
        ) as proc:
            started.append(proc)
            if stop.is_set():  # cancelled while it started
                proc.kill()
            try:
                out, _ = proc.communicate(stdin, timeout=seconds)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                return None, b""
            return proc.returncode, out or b""

    try:
        return await asyncio.to_thread(work)
    except asyncio.CancelledError:
        stop.set()
        for proc in started:
            proc.kill()
        raise
