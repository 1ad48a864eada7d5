"""The import gate: background imports (the warm-up's, the grammars') run one at a time, only
while the server is idle and never while the event loop handles a message (two threads
importing at once once failed a job with ``_DeadlockError``)."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace
from typing import cast

import pytest

from fastedit_lsp.lsp import warmup
from fastedit_lsp.lsp.warmup import ImportGate, WarmUpOwners


async def test_a_background_import_waits_until_the_server_is_idle() -> None:
    busy = threading.Event()
    busy.set()
    gate = ImportGate(busy.is_set)
    ran: list[bool] = []
    waited = threading.Event()

    def load() -> str:
        ran.append(busy.is_set())
        return "loaded"

    def idle_soon() -> None:
        waited.wait()
        busy.clear()

    task = asyncio.ensure_future(gate.run(load))
    helper = asyncio.ensure_future(asyncio.to_thread(idle_soon))
    # The gate counts the import as pending at once: the loop's messages then take the lock.
    await asyncio.sleep(0)
    assert gate.own == {task}
    waited.set()
    assert await task == "loaded"
    await helper
    assert ran == [False]
    assert gate.own == set()


async def test_no_background_import_runs_while_the_loop_handles_a_message() -> None:
    busy = threading.Event()
    busy.set()
    gate = ImportGate(busy.is_set)
    inside = threading.Event()
    overlaps: list[bool] = []

    def load() -> None:
        overlaps.append(inside.is_set())

    task = asyncio.ensure_future(gate.run(load))
    await asyncio.sleep(0)
    with gate.foreground():  # blocks the thread's import until the message is handled
        inside.set()
        busy.clear()  # idle now, but the loop holds the gate
        # Give the worker thread every chance to run meanwhile.
        done, _ = await asyncio.wait([task], timeout=0.05)
        inside.clear()
    await task
    assert done == set()
    assert overlaps == [False]


async def test_a_message_waits_for_the_import_under_way() -> None:
    gate = ImportGate(lambda: False)
    started, release = threading.Event(), threading.Event()
    order: list[str] = []

    def load() -> None:
        started.set()
        release.wait()
        order.append("import")

    task = asyncio.ensure_future(gate.run(load))
    await asyncio.to_thread(started.wait)

    def handle() -> None:
        with gate.foreground():
            order.append("message")

    handler = asyncio.ensure_future(asyncio.to_thread(handle))
    release.set()
    await asyncio.gather(task, handler)
    assert order == ["import", "message"]


async def test_a_cancelled_import_frees_its_thread_although_the_server_stays_busy() -> None:
    gate = ImportGate(lambda: True)  # never idle: the server is exiting mid-job
    loaded: list[str] = []
    task = asyncio.ensure_future(gate.run(lambda: loaded.append("x")))
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    # asyncio.run joins the worker threads when the loop ends: the waiting one must return.
    await asyncio.wait_for(asyncio.get_running_loop().shutdown_default_executor(), 30)
    assert task.cancelled() and loaded == []


async def test_imports_waiting_for_an_idle_server_leave_the_worker_threads_free() -> None:
    # Twenty documents opened during a job queue twenty grammar loads: the job's own work in
    # the default executor (resolving the model's host, git) must still get a thread.
    gate = ImportGate(lambda: True)
    waiting = [asyncio.ensure_future(gate.run(lambda: None)) for _ in range(20)]
    await asyncio.sleep(0)
    assert await asyncio.wait_for(asyncio.to_thread(lambda: "resolved"), 30) == "resolved"
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    assert gate.own == set()


async def test_work_waiting_for_quiet_goes_on_once_no_message_came_for_that_long() -> None:
    gate = ImportGate(lambda: False)
    gate.last_message = time.monotonic()
    quiet = asyncio.ensure_future(gate.quiet_for(0.05))
    # Messages keep arriving: no quiet moment yet.
    for _ in range(5):
        await asyncio.sleep(0.02)
        gate.last_message = time.monotonic()
        assert not quiet.done()
    await asyncio.wait_for(quiet, 5)
    assert gate.own == set()  # waiting never made the server busy


async def test_work_waiting_for_quiet_waits_for_an_idle_server_and_hurry_ends_its_wait() -> None:
    busy = threading.Event()
    busy.set()
    gate = ImportGate(busy.is_set)
    gate.last_message = time.monotonic() - 10  # quiet for long, but a job runs
    quiet = asyncio.ensure_future(gate.quiet_for(0.01))
    done, _ = await asyncio.wait([quiet], timeout=0.05)
    assert done == set()
    assert gate.own == {quiet}  # waiting does not count as busy
    busy.clear()
    await asyncio.wait_for(quiet, 5)
    # hurry(): whatever waits for quiet goes on at once (debugStats' settle).
    gate.last_message = time.monotonic()
    gate.hurry()
    await asyncio.wait_for(gate.quiet_for(3600), 5)


async def test_a_grammar_opened_during_the_warm_up_loads_after_the_jobs_request_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A document opened with the session asks for its grammar before the warm-up has loaded
    # what a job needs up to its first edit; the grammar (34-47 ms) waits for that part instead
    # of coming first, and meanwhile does not make the server busy.
    gate = ImportGate(lambda: False)
    loaded: list[str] = []
    monkeypatch.setattr(warmup, "_load_grammar", lambda uri, language: loaded.append(uri))
    tasks: list[asyncio.Task[object]] = []
    owners = cast(
        WarmUpOwners,
        SimpleNamespace(imports=gate, spawn=lambda c: tasks.append(asyncio.ensure_future(c))),
    )
    gate.hold_grammars()
    warmup.grammar(owners, "file:///a.py", "python")
    await asyncio.sleep(0.05)
    assert loaded == [] and gate.own == set(tasks)
    gate.release_grammars()
    await tasks[0]
    assert loaded == ["file:///a.py"]
    # Without a warm-up (no hold), a grammar loads at once.
    warmup.grammar(owners, "file:///b.py", "python")
    await tasks[1]
    assert loaded == ["file:///a.py", "file:///b.py"]


def test_the_builtins_stub_is_read_in_the_quiet_work_not_with_a_grammar() -> None:
    # Reading typeshed's builtins.pyi (~45 ms in one step) right after a Python document's
    # grammar held the session's first job when it came then (bench: the first job 12.8 ms
    # against a warm 3.1 ms); the quiet work reads it, and a draft's check only needs it for a
    # name the running Python does not have.
    from fastedit_lsp.engines.names import python_stdlib

    python_stdlib.builtins.cache_clear()
    warmup._load_grammar("file:///a.py", "python")
    assert python_stdlib.builtins.cache_info().currsize == 0
    warmup._read_builtins()
    assert python_stdlib.builtins.cache_info().currsize == 1
    assert "print" in python_stdlib.builtins()


def test_a_draft_reading_only_the_running_pythons_builtins_reads_no_stub() -> None:
    from fastedit_lsp.engines.names import check_names, python_stdlib
    from fastedit_lsp.engines.parse import parse

    def findings(text: str) -> list[str]:
        parsed = parse("python", text)
        verdict = check_names("python", parsed.tree, parsed.data, 0, len(parsed.data))
        assert verdict.ok is not None, verdict.message
        return [f.message for f in verdict.findings]

    python_stdlib.builtins.cache_clear()
    assert findings("def f(xs):\n    return len(sorted(xs)) + sum(map(int, xs))\n") == []
    assert python_stdlib.builtins.cache_info().currsize == 0
    # A name the running Python lacks is looked up in the stub (another version's builtin is
    # not flagged), and flagged when no version has it.
    assert findings("def f(xs):\n    return len(bufer)\n") == ["line 2: 'bufer' is not defined"]
    assert python_stdlib.builtins.cache_info().currsize == 1
