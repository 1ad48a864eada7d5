"""The bench's figures measured in one warm session: first edit, streams, cancel, sync, code
actions, completions. Each adds its samples to :class:`~.bench_core.Figures` under fixed keys
(the report and ``--compare`` read them by key), so that rounds of alternating sessions pool.

Overheads are measured from outside the server: the client's time minus the stub's own time
(recorded by the stub per request, from the request's arrival to its last byte written).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import Any

from .bench_core import (
    CODE_AT,
    CODE_HOST,
    Editor,
    EditorModel,
    Figures,
    code_tokens,
    complete_rest,
    cpu_seconds,
    python_lines,
)
from .bench_floors import RawStreamClient, bare_reader_cpu
from .bench_lines import ANSWER_TOKENS, first_lines
from .lsp_client import LspClient, LspError
from .stub import Answer, StubModelServer

#: Stream figures: (tokens per second, tokens streamed).
RATES = ((1_000, 2_000), (5_000, 5_000), (20_000, 20_000))
#: The same rates with ``--quick``: a tenth of the tokens.
QUICK_RATES = tuple((rate, count // 10) for rate, count in RATES)
#: The first-line figures' answer with ``--quick`` (tokens; else ``bench_lines.ANSWER_TOKENS``).
QUICK_ANSWER_TOKENS = 200
#: Document sizes (lines) for the incremental sync figure.
SYNC_LINES = (1_000, 10_000, 50_000)
DEBUG_TIMINGS = "fastedit/debugTimings"


async def first_edit(
    client: LspClient, editor: Editor, stub: StubModelServer, runs: int, figures: Figures
) -> None:
    """executeCommand → first applyEdit, the request's arrival at the stub, and the floors."""
    uri = "file:///bench/first_edit.py"
    editor.open(uri, "x = \n")
    stub.default = Answer(text="1", role_chunk=False, chunk_per_event=editor.model.chunk_per_event)
    reach: list[float] = []
    ttft: list[float] = []

    async def once() -> float:
        before = len(editor.edits[uri])
        seen = len(stub.requests)
        sent = time.monotonic()
        job_id = await complete_rest(client, uri)
        await editor.edits_reach(uri, before + 1)
        arrived = editor.edits[uri][before][0]
        record = (await stub.wait_for_requests(seen + 1, timeout=30))[-1]
        job = await client.command("fastedit.wait", {"jobId": job_id})
        editor.change(uri, [{"text": "x = \n"}])  # back to the same text for the next run
        reach.append((record.started_at - sent) * 1000)
        ttft.append(float(job.get("metrics", {}).get("ttftMs") or "nan"))
        return (arrived - sent) * 1000

    async def rtt() -> float:
        # A trivial command: setting the mode it already has answers {mode} and nothing else.
        sent = time.monotonic()
        await client.command("fastedit.setMode", {"mode": "fast"})
        return (time.monotonic() - sent) * 1000

    raw = RawStreamClient(stub.base_url)
    try:
        figures.note_load()
        await figures.time("first edit", runs, once)
        figures.add("first edit: command → request at the stub", reach[1:])
        figures.add("first edit: job's own TTFT (server-reported)", ttft[1:])
        await figures.time("floor: stub first event (raw socket)", runs, raw.first_event_ms)
        await figures.time("floor: LSP round trip", runs, rtt)
    finally:
        await raw.close()
    editor.close(uri)


async def streams(
    client: LspClient,
    editor: Editor,
    stub: StubModelServer,
    runs: int,
    figures: Figures,
    env: dict[str, str],
    rates: tuple[tuple[int, int], ...] = RATES,
) -> None:
    """Edit span ÷ stub span, edits per second and CPU per 1,000 tokens at each rate (tokens
    per second, tokens streamed); at the lowest rate also a bare httpx reader's CPU on the
    same stream."""
    pid = client.proc.pid
    for rate, count in rates:
        tokens = code_tokens(count)
        stub.default = Answer(
            tokens=tokens, tps=rate, role_chunk=False, chunk_per_event=editor.model.chunk_per_event
        )
        figures.note_load()
        edits_per_stream: list[float] = []
        for run in range(runs):
            uri = f"file:///bench/stream_{rate}_{run}.py"
            editor.open(uri, CODE_HOST)
            seen = len(stub.requests)
            cpu_before = cpu_seconds(pid)
            job_id = await complete_rest(client, uri, *CODE_AT)
            record = (await stub.wait_for_requests(seen + 1, timeout=30))[-1]
            job = await client.command("fastedit.wait", {"jobId": job_id, "timeoutMs": 120_000})
            cpu = cpu_seconds(pid) - cpu_before
            await stub.wait_closed(record)
            editor.close(uri)
            arrivals = [at for at, _ in editor.edits.pop(uri)]
            asked = len(stub.requests) - seen
            if job["state"] != "done" or record.tokens_sent != count or len(arrivals) < 2:
                raise RuntimeError(
                    f"stream at {rate} tok/s: job {job['state']} ({job.get('error')}), "
                    f"{record.tokens_sent}/{count} tokens sent, {len(arrivals)} edits"
                )
            if asked != 1 or not job.get("verification", {}).get("ok"):
                # A draft the checks refuse is asked again: the figures would count two streams
                # (and their checks) per ``count`` tokens.
                raise RuntimeError(
                    f"stream at {rate} tok/s: {asked} requests, verification "
                    f"{job.get('verification')}: the bench's draft must pass the checks"
                )
            assert record.first_token_at is not None and record.last_token_at is not None
            stub_span = record.last_token_at - record.first_token_at
            edit_span = arrivals[-1] - arrivals[0]
            figures.add(f"stream overhead, {rate:,} tok/s", [edit_span / stub_span], "×")
            figures.add(
                f"edits per second, {rate:,} tok/s", [(len(arrivals) - 1) / edit_span], "/s"
            )
            figures.add(f"server CPU per 1,000 tokens, {rate:,} tok/s", [cpu / count * 1000], "s")
            edits_per_stream.append(len(arrivals))
            if rate == rates[0][0]:
                bare = await bare_reader_cpu(stub.base_url, count, env)
                figures.add(
                    f"bare httpx reader CPU per 1,000 tokens, {rate:,} tok/s",
                    [bare / count * 1000],
                    "s",
                )
        figures.add(
            f"edits per 1,000 tokens, {rate:,} tok/s",
            [e / count * 1000 for e in edits_per_stream],
            "",
        )


async def cancel(
    client: LspClient, editor: Editor, stub: StubModelServer, runs: int, figures: Figures
) -> None:
    """fastedit.cancel → the job cancelled (reply and status) and the stub seeing the close."""
    # A stream far longer than the wait: it is always cancelled mid-way.
    stub.default = Answer(
        tokens=code_tokens(30_000),
        tps=1_000,
        role_chunk=False,
        chunk_per_event=editor.model.chunk_per_event,
    )
    replies: list[float] = []
    closes: list[float] = []

    async def once() -> float:
        uri = f"file:///bench/cancel_{len(stub.requests)}.py"
        editor.open(uri, "x = \n")
        seen = len(stub.requests)
        job_id = await complete_rest(client, uri)
        record = (await stub.wait_for_requests(seen + 1, timeout=30))[-1]
        await editor.edits_reach(uri, 3)
        sent = time.monotonic()
        reply = await client.command("fastedit.cancel", {"jobId": job_id})
        replied = time.monotonic()
        await stub.wait_closed(record)
        editor.close(uri)
        ended = editor.finished.get(job_id)
        if reply["cancelled"] != [job_id] or ended is None or ended[1] != "cancelled":
            raise RuntimeError(f"cancel: {reply}, job ended as {ended}")
        if not record.client_closed or record.closed_at is None:
            raise RuntimeError("cancel: the stub's stream was not closed by the server")
        replies.append((replied - sent) * 1000)
        closes.append((record.closed_at - sent) * 1000)
        return (max(replied, ended[0], record.closed_at) - sent) * 1000

    figures.note_load()
    await client.request(DEBUG_TIMINGS, {"reset": True})
    await figures.time("cancel → cancelled", runs, once)
    figures.add("cancel → reply", replies[1:])
    figures.add("cancel → stub sees the connection closed", closes[1:])
    # The server's own time from the command to its reply: what load on the client adds is the
    # difference (its part includes the editor's answer to the edit on the wire).
    timings = await client.request(DEBUG_TIMINGS, {"reset": True})
    figures.add("cancel (server): command → reply", timings["timingsMs"].get("cancel", [])[1:])


async def sync(client: LspClient, editor: Editor, runs: int, figures: Figures) -> None:
    """The server's own didChange handler time (read back by fastedit/debugTimings)."""
    for count in SYNC_LINES:
        uri = f"file:///bench/sync_{count}.py"
        editor.open(uri, "\n".join(python_lines(count)) + "\n")
        await client.request(DEBUG_TIMINGS, {"reset": True})
        line = count // 2
        for run in range(runs + 1):
            at = {"line": line, "character": 4}
            if run % 2 == 0:  # type one character, then delete it
                change = {"range": {"start": at, "end": at}, "text": "x"}
            else:
                end = {"line": line, "character": 5}
                change = {"range": {"start": at, "end": end}, "text": ""}
            editor.change(uri, [change])
        # Requests are answered after the notifications sent before them.
        timings = await client.request(DEBUG_TIMINGS, {"reset": True})
        editor.close(uri)
        samples = timings["timingsMs"].get("didChange", [])[1:]
        figures.add(f"didChange handler (server), {count:,} lines", samples)


async def code_actions(client: LspClient, editor: Editor, runs: int, figures: Figures) -> None:
    lines = python_lines(10_000)
    uri = "file:///bench/big.py"
    editor.open(uri, "\n".join(lines) + "\n")
    line = 5000

    async def listing() -> float:
        sent = time.monotonic()
        here = {"line": line, "character": 0}
        await client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": here, "end": here},
                "context": {"diagnostics": []},
            },
        )
        return (time.monotonic() - sent) * 1000

    async def after_edit() -> float:
        at = {"line": 1, "character": 4}
        if editor.versions[uri] % 2:
            change = {"range": {"start": at, "end": at}, "text": " "}
        else:
            change = {"range": {"start": at, "end": {"line": 1, "character": 5}}, "text": ""}
        editor.change(uri, [change])
        return await listing()

    async def server_time(key: str) -> None:
        timings = await client.request(DEBUG_TIMINGS, {"reset": True})
        figures.add(key, timings["timingsMs"].get("codeAction", [])[1:])

    await client.request(DEBUG_TIMINGS, {"reset": True})
    await figures.time("code actions round trip, 10,000 lines, warm", runs, listing)
    await server_time("code actions (server), 10,000 lines, warm")
    await figures.time("code actions round trip, 10,000 lines, after an edit", runs, after_edit)
    await server_time("code actions (server), 10,000 lines, after an edit")
    editor.close(uri)


async def completions(
    client: LspClient, editor: Editor, stub: StubModelServer, runs: int, figures: Figures
) -> None:
    """Inline completions with a stub answering at once: the client's round trip, the stub's own
    time for the request it caused, and their difference (the overhead, from outside)."""
    uri = "file:///bench/complete.py"
    head = "import math\n\n\ndef area(radius):\n    return math.pi * radius ** 2\n\n\n"
    editor.open(uri, head)
    stub.default = Answer(
        text="area(1.0)\n", role_chunk=False, chunk_per_event=editor.model.chunk_per_event
    )
    line = head.count("\n") + 1  # "value = " below the run's comment line
    stub_ms: list[float] = []
    overhead: list[float] = []
    requests: list[float] = []
    connections: set[int] = set()

    def request() -> Awaitable[Any]:
        return client.request(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": uri},
                "position": {"line": line, "character": 8},
                "context": {"triggerKind": 1},
            },
        )

    async def uncached() -> float:
        # A new line each time: a new prefix, so neither the cache nor a stream can answer.
        editor.change(uri, [{"text": f"{head}# run {editor.versions[uri]}\nvalue = \n"}])
        seen = len(stub.requests)
        sent = time.monotonic()
        await request()
        elapsed = (time.monotonic() - sent) * 1000
        made = stub.requests[seen:]
        requests.append(len(made))
        if len(made) == 1:
            record = await stub.wait_closed(made[0])
            connections.add(record.connection)
            if record.last_byte_at is not None:
                own = (record.last_byte_at - record.started_at) * 1000
                stub_ms.append(own)
                overhead.append(elapsed - own)
        return elapsed

    async def cached() -> float:
        sent = time.monotonic()
        await request()
        return (time.monotonic() - sent) * 1000

    figures.note_load()
    await figures.time("inline completion round trip, model", runs, uncached)
    figures.add("inline completion: the stub's own time", stub_ms[1:])
    figures.add("inline completion overhead (round trip − stub's own time)", overhead[1:])
    figures.add("model requests per completion", requests[1:], "")
    figures.notes["connections opened by completions"] = len(connections)
    figures.notes["completions measured"] = len(requests)
    await figures.time("inline completion round trip, cached", runs, cached)
    try:
        report = (await client.command("fastedit.status"))["completions"]
        figures.notes["completion server time (fastedit.status)"] = report.get("serverMs")
        figures.notes["first completion server time (fastedit.status)"] = report.get(
            "firstServerMs"
        )
    except (LspError, KeyError, TypeError):
        pass
    editor.close(uri)


#: The sections of the bench, for ``--only`` (the first two need fresh server processes; the
#: last runs in process: ``tools.bench_parse``).
SECTIONS = (
    "cold-start",
    "first-job",
    "first-edit",
    "first-line",
    "streams",
    "cancel",
    "sync",
    "code-actions",
    "completions",
    "parse",
    "names",
)


async def session_figures(
    client: LspClient,
    stub: StubModelServer,
    runs: int,
    figures: Figures,
    model: EditorModel,
    env: dict[str, str],
    only: frozenset[str] = frozenset(SECTIONS),
    *,
    quick: bool = False,
) -> None:
    """Every warm-session figure (those of the ``only`` sections), in one session of ``client``;
    ``quick``: smaller workloads (``fastedit-lsp bench --quick``)."""
    editor = Editor(client, model)
    few = max(3, runs // 10)
    if "first-edit" in only:
        await first_edit(client, editor, stub, runs, figures)
    if "first-line" in only:
        count = QUICK_ANSWER_TOKENS if quick else ANSWER_TOKENS
        lines_runs = max(3 if quick else 5, runs // 5)
        await first_lines(client, editor, stub, lines_runs, figures, count=count)
    if "streams" in only:
        await streams(client, editor, stub, few, figures, env, QUICK_RATES if quick else RATES)
    if "cancel" in only:
        await cancel(client, editor, stub, runs, figures)
    if "sync" in only:
        await sync(client, editor, runs, figures)
    if "code-actions" in only:
        await code_actions(client, editor, runs, figures)
    if "completions" in only:
        await completions(client, editor, stub, runs, figures)
