"""Regex synthesis off the event loop, in a process with a hard time limit.

:func:`fastedit_lsp.engines.regex.synth.synthesize` is CPU-bound and, in its grex fallback,
native code that holds the GIL: a thread would freeze the server. So each request runs in a
process of its own, which is killed (SIGKILL) when the time limit passes or the caller is
cancelled, and always reaped before :func:`synthesize_async` returns or raises: nothing
outlives the call.

Where the platform has it (Linux, macOS) the process is forked from multiprocessing's fork server,
which has the synthesiser and grex imported already: after the first request (about 0.1 s, which
starts the fork server; :func:`warm_up` does that ahead of time) a request costs about 6 ms more
than the synthesis itself. Elsewhere each request spawns a fresh interpreter (about 0.1 s).
The fork server is multiprocessing's own helper, shared by the process and gone with it.

The waits (starting the process, its answer, reaping it) run in worker threads so the event loop
never blocks on them. A worker's stdout goes to /dev/null: the server's stdout is the protocol.
As with any multiprocessing program, the main module must not start work on import (the entry
points ``fastedit-lsp`` and ``python -m fastedit_lsp`` do not).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess

from .synth import SynthesisError, check_bounds, synthesize

__all__ = ["SynthesisError", "synthesize_async", "warm_up"]

_PRELOAD = ["__main__", "fastedit_lsp.engines.regex.worker", "grex"]
# How long reaping a killed process may take before we give up waiting for it (it never should).
_REAP_SECONDS = 5.0


def _context() -> ForkServerContext | SpawnContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # Only takes effect when the fork server starts (the first request); harmless after.
        context.set_forkserver_preload(_PRELOAD)
        return context
    return multiprocessing.get_context("spawn")


def _child(conn: Connection, positives: list[str], negatives: list[str], sleep: float) -> None:
    """The worker process: one synthesis, its answer on ``conn``."""
    # Inherited stdout is the server's LSP channel: nothing a worker prints may reach it.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    try:
        if sleep > 0:
            time.sleep(sleep)  # tests: stands in for a synthesis that hangs
        conn.send(("ok", synthesize(positives, negatives)))
    except SynthesisError as exc:
        conn.send(("error", str(exc)))
    except Exception as exc:  # a bug must reach the user as an error, not as a time-out
        conn.send(("error", f"regex synthesis failed: {type(exc).__name__}: {exc}"))
    finally:
        conn.close()


async def synthesize_async(
    positives: Sequence[str],
    negatives: Sequence[str],
    *,
    timeout: float = 5.0,  # noqa: ASYNC109 (a hard limit that kills the process, not a wait)
    _debug_sleep: float = 0.0,
    _on_start: Callable[[int], None] | None = None,
) -> str:
    """``synth.synthesize`` in a separate process, at most ``timeout`` s.

    Raises :class:`SynthesisError` when no pattern can be made (or the examples exceed the
    bounds) and :class:`TimeoutError` when the time limit passes; the process is killed then, and
    when the calling task is cancelled. ``_debug_sleep`` makes the process sleep first and
    ``_on_start`` receives its pid: test hooks, not API.
    """
    check_bounds(positives, negatives)
    context = _context()
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(
        target=_child,
        args=(writer, list(positives), list(negatives), _debug_sleep),
        name="fastedit-regex",
        daemon=True,
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    starting = asyncio.ensure_future(asyncio.to_thread(process.start))
    answer: asyncio.Future[bool] | None = None
    try:
        await asyncio.shield(starting)
        if _on_start is not None and process.pid is not None:
            _on_start(process.pid)
        answer = asyncio.ensure_future(
            asyncio.to_thread(reader.poll, max(0.0, deadline - loop.time()))
        )
        if not await asyncio.shield(answer):
            raise TimeoutError(f"regex synthesis took longer than {timeout:g} s and was stopped")
        try:
            status, payload = reader.recv()
        except EOFError:
            raise SynthesisError(
                f"the regex synthesis process stopped without an answer (exit code "
                f"{process.exitcode})"
            ) from None
    finally:
        await asyncio.shield(_dispose(process, starting, answer, reader, writer))
    if status != "ok":
        raise SynthesisError(payload)
    return str(payload)


async def _dispose(
    process: BaseProcess,
    starting: asyncio.Future[None],
    answer: asyncio.Future[bool] | None,
    reader: Connection,
    writer: Connection,
) -> None:
    """Kill and reap the process, then close the pipe (after the thread polling it returned)."""
    with contextlib.suppress(Exception):  # it never ran: nothing to kill
        await starting
    writer.close()
    if process.pid is not None:
        if process.exitcode is None:
            process.kill()
        # The child's end closes when it dies, so a poll still running returns at once.
        if answer is not None:
            await asyncio.wait([answer])
        await asyncio.to_thread(process.join, _REAP_SECONDS)
        if process.exitcode is not None:
            process.close()
    reader.close()


async def warm_up() -> None:
    """Start the fork server now, so the first real request does not pay for it (~0.1 s)."""
    with contextlib.suppress(SynthesisError, TimeoutError):
        await synthesize_async(["0"], [], timeout=30.0)
