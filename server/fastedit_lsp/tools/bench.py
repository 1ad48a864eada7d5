"""``fastedit-lsp bench``: what the server adds on top of the model, measured, not asserted.

Starts the real server over stdio with a scripted client (``lsp_client``) and the loopback stub
model, and reports median, p90, p99 and the number of runs for:

- **cold start**: process start to the ``initialize`` reply, and the RSS right after it, beside
  ``jedi-language-server`` (a pygls-based peer) started alternately in the same run, as a ratio
  (install the ``bench`` extra to have it; without it the row says so);
- **first edit**: ``executeCommand`` sent to the first ``workspace/applyEdit`` received, beside
  its floor measured in the same run (the stub's own time to first event over a direct streamed
  request, plus a trivial LSP round trip), and their ratio;
- **stream overhead** at 1,000, 5,000 and 20,000 tokens/s: the time from the first to the last
  edit received ÷ the stub's own time from the first to the last token written, edits per
  second, and the server process' CPU seconds (``/proc/<pid>/stat``) per 1,000 tokens;
- **cancel latency**: ``fastedit.cancel`` sent to both the job reported cancelled (the reply)
  and the stub seeing its connection closed;
- **incremental sync**: the server's own handler time of a one-character ``didChange`` on 1k-,
  10k- and 50k-line documents (measured inside the server, read back by
  ``fastedit/debugTimings``: no transport, no JSON decoding);
- **code actions** on a 10,000-line Python file: warm (same document version) and right after an
  edit, the server's own time and the client's round trip;
- **inline completion**: the server's own time per request (the time spent waiting for the model
  excluded; read back from ``fastedit.status``) with a stub answering at once, uncached and
  answered from the cache, and the client's round trip for each.

Output: a table on stdout (with the goals of issue 8 checked), ``--json PATH`` for the figures
and their samples, ``--plot PATH`` for a PNG of the distributions (needs matplotlib: the
``bench`` extra).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TextIO

from .lsp_client import LspClient
from .stub import Answer, StubModelServer

#: Stream figures: (tokens per second, tokens streamed).
RATES = ((1_000, 2_000), (5_000, 5_000), (20_000, 20_000))
#: Document sizes (lines) for the incremental sync figure.
SYNC_LINES = (1_000, 10_000, 50_000)
DEBUG_TIMINGS = "fastedit/debugTimings"
#: The PNG written by ``--plot`` without a path.
DEFAULT_PLOT = "docs/benchmarks.png"
#: Settings for the bench session: room for the longest stream.
INIT_OPTIONS = {"fastedit": {"profiles": {"fast": {"maxTokens": 32768}}}}


def _stats(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    if not ordered:
        return {"median": float("nan"), "p90": float("nan"), "p99": float("nan"), "runs": 0}

    def pct(p: int) -> float:
        return round(ordered[max(0, -(-p * len(ordered) // 100) - 1)], 4)

    return {
        "median": round(statistics.median(ordered), 4),
        "p90": pct(90),
        "p99": pct(99),
        "runs": len(ordered),
    }


class _Figures:
    """Every distribution measured, kept for the JSON file and the plot."""

    def __init__(self) -> None:
        self.samples: dict[str, tuple[list[float], str]] = {}

    def add(self, key: str, samples: Sequence[float], unit: str = "ms") -> dict[str, float]:
        self.samples[key] = (list(samples), unit)
        return _stats(samples)

    async def time(
        self, key: str, runs: int, once: Callable[[], Awaitable[float]]
    ) -> dict[str, float]:
        await once()  # warm-up
        return self.add(key, [await once() for _ in range(runs)])


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads), from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        # The command name may hold spaces: the fields after it start past the last ")".
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def _jedi_command() -> list[str] | None:
    """How to start jedi-language-server, if it is installed (the ``bench`` extra)."""
    if importlib.util.find_spec("jedi_language_server") is not None:
        # What its console script runs, with the interpreter our server runs on.
        code = "import sys; from jedi_language_server.cli import cli; sys.exit(cli())"
        return [sys.executable, "-c", code]
    found = shutil.which("jedi-language-server")
    return [found] if found else None


async def _initialize(
    env: dict[str, str], command: Sequence[str] | None = None, options: Any = None
) -> tuple[LspClient, float]:
    """Start a server and initialize it; the time from spawn to the ``initialize`` reply."""
    started = time.perf_counter()
    client = await LspClient.start(env, command)
    client.handlers["workspace/configuration"] = lambda params: [None]
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": None,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "workspace": {"applyEdit": True},
                # The bench times jobs by their fastedit/status, sent only to clients that opt in.
                "experimental": {"fastedit": {"statusNotification": True}},
            },
            "initializationOptions": options,
        },
    )
    elapsed = (time.perf_counter() - started) * 1000
    client.notify("initialized", {})
    return client, elapsed


async def _cold_start(env: dict[str, str], runs: int, figures: _Figures) -> dict[str, Any]:
    """Our server and jedi-language-server started alternately, so both see the same load."""
    jedi = _jedi_command()
    servers: dict[str, Sequence[str] | None] = {"fastedit": None}
    if jedi is not None:
        servers["jedi"] = jedi
    times: dict[str, list[float]] = {name: [] for name in servers}
    rss: dict[str, list[float]] = {name: [] for name in servers}
    for run in range(runs + 1):
        order = list(servers) if run % 2 else list(reversed(servers))
        for name in order:
            client, elapsed = await _initialize(env, servers[name])
            if run:  # the first round warms the disk cache
                times[name].append(elapsed)
                rss[name].append(_rss_mib(client.proc.pid))
            await client.shutdown()
    out: dict[str, Any] = {
        name: {
            "initializeMs": figures.add(f"cold start: {name}", times[name]),
            "rssMiB": figures.add(f"RSS: {name}", rss[name], "MiB"),
        }
        for name in servers
    }
    if jedi is None:
        out["jedi"] = None
        out["ratio"] = None
        out["note"] = "jedi-language-server is not installed (pip install 'fastedit-lsp[bench]')"
    else:
        ours, theirs = out["fastedit"]["initializeMs"], out["jedi"]["initializeMs"]
        out["ratio"] = round(ours["median"] / theirs["median"], 3)
    return out


class _Editor:
    """The bench's editor: every edit is applied at once and reported back like an editor does
    (the server waits for the report before finishing a job); arrival times are kept."""

    def __init__(self, client: LspClient) -> None:
        self.client = client
        self.versions: dict[str, int] = {}
        #: Per URI: arrival time (monotonic) and size of the new text of each applyEdit.
        self.edits: dict[str, list[tuple[float, int]]] = {}
        #: Per job id: when its ``fastedit/status`` first said it finished, and the state.
        self.finished: dict[str, tuple[float, str]] = {}
        self._waiters: list[tuple[str, int, asyncio.Future[None]]] = []
        client.handlers["workspace/applyEdit"] = self.apply
        client.on_notification = self.notification

    def open(self, uri: str, text: str, language_id: str = "python") -> None:
        self.versions[uri] = 1
        self.edits[uri] = []
        self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}},
        )

    def close(self, uri: str) -> None:
        self.versions.pop(uri, None)
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def change(self, uri: str, changes: list[dict[str, Any]]) -> None:
        self.versions[uri] += 1
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": changes,
            },
        )

    def apply(self, params: dict[str, Any]) -> dict[str, Any]:
        now = time.monotonic()
        for uri, edits in (params["edit"].get("changes") or {}).items():
            self.edits.setdefault(uri, []).append((now, sum(len(e["newText"]) for e in edits)))
            if uri in self.versions:
                self.change(uri, [{"range": e["range"], "text": e["newText"]} for e in edits])
            count = len(self.edits[uri])
            for waiter in [w for w in self._waiters if w[0] == uri and count >= w[1]]:
                self._waiters.remove(waiter)
                if not waiter[2].done():
                    waiter[2].set_result(None)
        return {"applied": True}

    def notification(self, method: str, params: Any) -> None:
        job = params.get("job") if method == "fastedit/status" and params else None
        finished = ("done", "cancelled", "failed")
        if job and job.get("state") in finished and job["jobId"] not in self.finished:
            self.finished[job["jobId"]] = (time.monotonic(), job["state"])

    async def edits_reach(self, uri: str, count: int, seconds: float = 30) -> None:
        if len(self.edits.get(uri, [])) >= count:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((uri, count, waiter))
        await asyncio.wait_for(waiter, seconds)


def _code_tokens(count: int) -> list[str]:
    """``count`` tokens of plausible code, about four characters each."""
    tokens: list[str] = []
    line = 0
    while len(tokens) < count:
        line += 1
        tokens += ["    ", "tota", f"l_{line % 97}", " += ", "valu", f"e * {line % 13}", "\n"]
    return tokens[:count]


async def _first_edit(
    client: LspClient, editor: _Editor, stub: StubModelServer, runs: int, figures: _Figures
) -> dict[str, Any]:
    import httpx

    uri = "file:///bench/first_edit.py"
    editor.open(uri, "x = \n")
    stub.default = Answer(text="1", role_chunk=False)

    async def once() -> float:
        before = len(editor.edits[uri])
        sent = time.monotonic()
        started = await client.command(
            "fastedit.completeRest", {"uri": uri, "position": {"line": 0, "character": 4}}
        )
        await editor.edits_reach(uri, before + 1)
        arrived = editor.edits[uri][before][0]
        await client.command("fastedit.wait", {"jobId": started["jobId"]})
        editor.change(uri, [{"text": "x = \n"}])  # back to the same text for the next run
        return (arrived - sent) * 1000

    async def rtt() -> float:
        # A trivial command: setting the mode it already has answers {mode} and nothing else.
        sent = time.monotonic()
        await client.command("fastedit.setMode", {"mode": "fast"})
        return (time.monotonic() - sent) * 1000

    async with httpx.AsyncClient(trust_env=False) as http:

        async def stub_ttft() -> float:
            sent = time.monotonic()
            body = {"model": "stub-fast", "stream": True, "messages": [], "max_tokens": 8}
            async with http.stream("POST", f"{stub.base_url}/chat/completions", json=body) as r:
                async for chunk in r.aiter_raw():
                    if b"data:" in chunk:
                        break
            return (time.monotonic() - sent) * 1000

        measured = await figures.time("first edit", runs, once)
        floor_stub = await figures.time("floor: stub first event", runs, stub_ttft)
        floor_rtt = await figures.time("floor: LSP round trip", runs, rtt)
    editor.close(uri)
    floor = floor_stub["median"] + floor_rtt["median"]
    return {
        "firstEditMs": measured,
        "floorMs": {"stubFirstEvent": floor_stub, "lspRoundTrip": floor_rtt, "median": floor},
        "ratioToFloor": round(measured["median"] / floor, 2) if floor else None,
    }


async def _job(client: LspClient, uri: str) -> str:
    started = await client.command(
        "fastedit.completeRest", {"uri": uri, "position": {"line": 0, "character": 4}}
    )
    return str(started["jobId"])


async def _streams(
    client: LspClient, editor: _Editor, stub: StubModelServer, runs: int, figures: _Figures
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pid = client.proc.pid
    for rate, count in RATES:
        tokens = _code_tokens(count)
        stub.default = Answer(tokens=tokens, tps=rate, role_chunk=False)
        ratios, rates, cpus, edits = [], [], [], []
        cpu_total = tokens_total = 0.0
        for run in range(runs):
            uri = f"file:///bench/stream_{rate}_{run}.py"
            editor.open(uri, "x = \n")
            seen = len(stub.requests)
            cpu_before = _cpu_seconds(pid)
            job_id = await _job(client, uri)
            record = (await stub.wait_for_requests(seen + 1, timeout=30))[-1]
            job = await client.command("fastedit.wait", {"jobId": job_id, "timeoutMs": 120_000})
            cpu = _cpu_seconds(pid) - cpu_before
            await stub.wait_closed(record)
            editor.close(uri)
            arrivals = [at for at, _ in editor.edits.pop(uri)]
            if job["state"] != "done" or record.tokens_sent != count or len(arrivals) < 2:
                raise RuntimeError(
                    f"stream at {rate} tok/s: job {job['state']} ({job.get('error')}), "
                    f"{record.tokens_sent}/{count} tokens sent, {len(arrivals)} edits"
                )
            assert record.first_token_at is not None and record.last_token_at is not None
            stub_span = record.last_token_at - record.first_token_at
            edit_span = arrivals[-1] - arrivals[0]
            ratios.append(edit_span / stub_span)
            rates.append((len(arrivals) - 1) / edit_span)
            cpus.append(cpu / count * 1000)
            edits.append(len(arrivals))
            cpu_total += cpu
            tokens_total += count
        out[str(rate)] = {
            "tokens": count,
            "overhead": figures.add(f"stream overhead, {rate:,} tok/s", ratios, "×"),
            "editsPerSecond": figures.add(f"edits per second, {rate:,} tok/s", rates, "/s"),
            "cpuSecondsPer1000Tokens": figures.add(f"server CPU, {rate:,} tok/s", cpus, "s"),
            "editsPerStream": _stats(edits),
            "cpuSecondsPer1000TokensOverall": round(cpu_total / tokens_total * 1000, 4),
        }
    return out


async def _cancel(
    client: LspClient, editor: _Editor, stub: StubModelServer, runs: int, figures: _Figures
) -> dict[str, Any]:
    # A stream far longer than the wait: it is always cancelled mid-way.
    stub.default = Answer(tokens=_code_tokens(30_000), tps=1_000, role_chunk=False)
    replies: list[float] = []
    closes: list[float] = []

    async def once() -> float:
        uri = f"file:///bench/cancel_{len(stub.requests)}.py"
        editor.open(uri, "x = \n")
        seen = len(stub.requests)
        job_id = await _job(client, uri)
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

    total = await figures.time("cancel", runs, once)
    return {
        "cancelMs": total,
        "replyMs": _stats(replies[1:]),
        "streamClosedMs": _stats(closes[1:]),
    }


def _python_lines(count: int) -> list[str]:
    lines: list[str] = []
    index = 0
    while len(lines) < count:
        lines += [f"def function_{index}(x: int) -> int:", f"    return x + {index}", "", ""]
        index += 1
    return lines[:count]


async def _sync(client: LspClient, editor: _Editor, runs: int, figures: _Figures) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for count in SYNC_LINES:
        uri = f"file:///bench/sync_{count}.py"
        editor.open(uri, "\n".join(_python_lines(count)) + "\n")
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
        out[str(count)] = figures.add(f"didChange handler, {count:,} lines", samples)
    return out


async def _code_actions(
    client: LspClient, editor: _Editor, runs: int, figures: _Figures
) -> dict[str, Any]:
    lines = _python_lines(10_000)
    uri = "file:///bench/big.py"
    editor.open(uri, "\n".join(lines) + "\n")
    line = 5000

    async def listing() -> float:
        sent = time.monotonic()
        await client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {
                    "start": {"line": line, "character": 0},
                    "end": {"line": line, "character": 0},
                },
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

    async def server_time(key: str) -> dict[str, float]:
        timings = await client.request(DEBUG_TIMINGS, {"reset": True})
        return figures.add(key, timings["timingsMs"].get("codeAction", [])[1:])

    await client.request(DEBUG_TIMINGS, {"reset": True})
    warm = await figures.time("code actions round trip, warm", runs, listing)
    warm_server = await server_time("code actions server, warm")
    edited = await figures.time("code actions round trip, after an edit", runs, after_edit)
    edited_server = await server_time("code actions server, after an edit")
    editor.close(uri)
    return {
        "lines": len(lines),
        "warmMs": warm,
        "afterEditMs": edited,
        "serverWarmMs": warm_server,
        "serverAfterEditMs": edited_server,
    }


async def _completions(
    client: LspClient, editor: _Editor, stub: StubModelServer, runs: int, figures: _Figures
) -> dict[str, Any]:
    uri = "file:///bench/complete.py"
    head = "import math\n\n\ndef area(radius):\n    return math.pi * radius ** 2\n\n\n"
    editor.open(uri, head)
    stub.default = Answer(text="area(1.0)\n", role_chunk=False)
    line = head.count("\n") + 1  # "value = " below the run's comment line

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
        sent = time.monotonic()
        await request()
        return (time.monotonic() - sent) * 1000

    async def cached() -> float:
        sent = time.monotonic()
        await request()
        return (time.monotonic() - sent) * 1000

    round_trip_model = await figures.time("inline completion round trip, model", runs, uncached)
    round_trip_cached = await figures.time("inline completion round trip, cached", runs, cached)
    report = (await client.command("fastedit.status"))["completions"]
    editor.close(uri)
    return {
        "serverMs": report["serverMs"],
        "firstServerMs": report["firstServerMs"],
        "roundTripMs": {"model": round_trip_model, "cache": round_trip_cached},
        "modelRequests": report["modelRequests"],
        "cacheHits": report["cacheHits"],
    }


async def _run(runs: int, figures: _Figures) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FASTEDIT_")}
    env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
    few = max(3, runs // 10)
    results: dict[str, Any] = {
        "machine": _machine(),
        "coldStart": await _cold_start(env, max(5, runs // 5), figures),
    }
    async with await StubModelServer.start() as stub:
        env = {**env, "FASTEDIT_FAST_BASE_URL": stub.base_url, "FASTEDIT_FAST_MODEL": "stub-fast"}
        env["FASTEDIT_MODE"] = "fast"
        client, _ = await _initialize(env, options=INIT_OPTIONS)
        editor = _Editor(client)
        try:
            results["firstEdit"] = await _first_edit(client, editor, stub, runs, figures)
            results["streams"] = await _streams(client, editor, stub, few, figures)
            results["cancel"] = await _cancel(client, editor, stub, runs, figures)
            results["sync"] = await _sync(client, editor, runs, figures)
            results["codeActions"] = await _code_actions(client, editor, runs, figures)
            results["completions"] = await _completions(client, editor, stub, runs, figures)
            results["rssAfterSessionMiB"] = _rss_mib(client.proc.pid)
        finally:
            await client.shutdown()
    return results


def _machine() -> dict[str, Any]:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                model,
            )
    except OSError:
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "loadAverage": [round(x, 2) for x in load],
    }


def _num(value: float) -> str:
    if value != value:  # NaN
        return "–"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"


def _row(name: str, stats: dict[str, float], unit: str = "ms") -> str:
    # Ratios near 1 need their third decimal.
    fmt = (lambda v: f"{v:.3f}") if unit == "×" else _num
    return (
        f"| {name} | {fmt(stats['median'])} {unit} | {fmt(stats['p90'])} {unit} "
        f"| {fmt(stats['p99'])} {unit} | {int(stats['runs'])} |"
    )


def _goals(results: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """Issue 8's goals: (goal, measured, met); met is None when it could not be measured."""
    first = results["firstEdit"]
    floor = first["floorMs"]["median"]
    streams, cold = results["streams"], results["coldStart"]
    cpu = max(s["cpuSecondsPer1000TokensOverall"] for s in streams.values())
    fast = streams["20000"]
    goals: list[tuple[str, str, bool | None]] = [
        (
            "first edit p50 ≤ 1.5 × floor + 1 ms",
            f"{_num(first['firstEditMs']['median'])} ms ≤ {_num(1.5 * floor + 1)} ms",
            first["firstEditMs"]["median"] <= 1.5 * floor + 1,
        ),
        (
            "stream overhead ≤ 1.03 at 5,000 tok/s",
            f"{streams['5000']['overhead']['median']:.3f}",
            streams["5000"]["overhead"]["median"] <= 1.03,
        ),
        (
            "keeps up at 20,000 tok/s, edits ≤ 60/s",
            f"overhead {fast['overhead']['median']:.3f}, "
            f"{_num(fast['editsPerSecond']['p99'])} edits/s (p99)",
            fast["overhead"]["median"] <= 1.03
            and max(s["editsPerSecond"]["p99"] for s in streams.values()) <= 60,
        ),
        ("server CPU ≤ 0.05 s per 1,000 tokens", f"{_num(cpu)} s (worst rate)", cpu <= 0.05),
        (
            "cancel p99 ≤ 10 ms",
            f"{_num(results['cancel']['cancelMs']['p99'])} ms",
            results["cancel"]["cancelMs"]["p99"] <= 10,
        ),
        (
            "didChange handler ≤ 0.5 ms on 50k lines",
            f"{_num(results['sync']['50000']['median'])} ms (p50)",
            results["sync"]["50000"]["median"] <= 0.5,
        ),
        (
            "code actions ≤ 1 ms server time, warm",
            f"{_num(results['codeActions']['serverWarmMs']['median'])} ms (p50)",
            results["codeActions"]["serverWarmMs"]["median"] <= 1,
        ),
    ]
    rss = cold["fastedit"]["rssMiB"]["median"]
    if cold["ratio"] is None:
        goals.append(("cold start ≤ 0.85 × jedi-language-server", cold["note"], None))
    else:
        goals.append(
            (
                "cold start ≤ 0.85 × jedi-language-server",
                f"{cold['ratio']:.2f} × ({_num(cold['fastedit']['initializeMs']['median'])} vs "
                f"{_num(cold['jedi']['initializeMs']['median'])} ms)",
                cold["ratio"] <= 0.85,
            )
        )
    goals.append(("RSS after initialize ≤ 60 MB", f"{_num(rss)} MiB", rss <= 60))
    return goals


def report(results: dict[str, Any]) -> str:
    """The Markdown tables printed by ``fastedit-lsp bench``."""
    cold, first, actions = results["coldStart"], results["firstEdit"], results["codeActions"]
    completions, streams, cancel = results["completions"], results["streams"], results["cancel"]
    rows = [
        _row("cold start to initialize reply: fastedit-lsp", cold["fastedit"]["initializeMs"]),
    ]
    if cold["jedi"] is None:
        rows.append(f"| cold start: jedi-language-server | {cold['note']} | | | |")
    else:
        rows.append(_row("cold start: jedi-language-server", cold["jedi"]["initializeMs"]))
    rows.append(_row("RSS after initialize: fastedit-lsp", cold["fastedit"]["rssMiB"], "MiB"))
    if cold["jedi"] is not None:
        rows.append(
            _row("RSS after initialize: jedi-language-server", cold["jedi"]["rssMiB"], "MiB")
        )
    rows += [
        _row("first edit (executeCommand → first applyEdit)", first["firstEditMs"]),
        _row("  floor: stub first event", first["floorMs"]["stubFirstEvent"]),
        _row("  floor: LSP round trip", first["floorMs"]["lspRoundTrip"]),
    ]
    for rate, s in streams.items():
        label = f"{int(rate):,} tok/s × {s['tokens']:,} tokens"
        rows += [
            _row(f"stream overhead (edit span ÷ stub span), {label}", s["overhead"], "×"),
            _row(f"  edits per second, {label}", s["editsPerSecond"], "/s"),
            _row(f"  server CPU per 1,000 tokens, {label}", s["cpuSecondsPer1000Tokens"], "s"),
        ]
    rows += [
        _row("cancel (fastedit.cancel → job cancelled and stream closed)", cancel["cancelMs"]),
        _row("  cancel → reply", cancel["replyMs"]),
        _row("  cancel → stub sees the connection closed", cancel["streamClosedMs"]),
    ]
    for lines, stats in results["sync"].items():
        rows.append(_row(f"didChange handler (server), {int(lines):,} lines", stats))
    n = f"{actions['lines']:,} lines"
    rows += [
        _row(f"code actions (server), {n}, warm", actions["serverWarmMs"]),
        _row(f"code actions (server), {n}, after an edit", actions["serverAfterEditMs"]),
        _row(f"code actions round trip, {n}, warm", actions["warmMs"]),
        _row(f"code actions round trip, {n}, after an edit", actions["afterEditMs"]),
        _row("inline completion round trip, model", completions["roundTripMs"]["model"]),
        _row("inline completion round trip, cached", completions["roundTripMs"]["cache"]),
    ]
    text = "| measure | median | p90 | p99 | runs |\n|---|---|---|---|---|\n" + "\n".join(rows)
    ratio = cold["ratio"]
    text += (
        f"\n\nfirst edit / floor (medians): {first['ratioToFloor']}; cold start / "
        f"jedi-language-server (medians): {ratio if ratio is not None else cold['note']}; "
        f"RSS after the bench session: {results['rssAfterSessionMiB']} MiB\n"
    )
    text += "\n| inline completion, server time | p50 | p99 | requests |\n|---|---|---|---|\n"
    text += "\n".join(
        f"| {source} | {v['p50']} ms | {v['p99']} ms | {v['count']} |"
        for source, v in sorted(completions["serverMs"].items())
    )
    text += (
        f"\n\nthe session's first completion (loads the completion modules): "
        f"{completions['firstServerMs']} ms server time"
    )
    text += "\n\n| goal (issue 8) | measured | met |\n|---|---|---|\n"
    text += "\n".join(
        f"| {goal} | {measured} | {'–' if met is None else ('yes' if met else 'no')} |"
        for goal, measured, met in _goals(results)
    )
    machine = results["machine"]
    text += (
        f"\n\nMachine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, "
        f"load average {' '.join(map(str, machine['loadAverage']))} at the start.\n"
    )
    return text


def plot(figures: _Figures, path: str) -> str | None:
    """Write the distributions as a PNG; returns why not when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install 'fastedit-lsp[bench]'): no plot"
    groups: list[tuple[str, Callable[[str, str], bool]]] = [
        ("Latency (ms)", lambda k, u: u == "ms" and not k.startswith(("cold", "didChange"))),
        ("didChange handler, server (ms)", lambda k, u: k.startswith("didChange")),
        ("Cold start to initialize reply (ms)", lambda k, u: k.startswith("cold")),
        ("Stream overhead (edit span ÷ stub span)", lambda k, u: u == "×"),
    ]
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 14))
    for ax, (title, keep) in zip(axes, groups, strict=True):
        chosen = [(k, s) for k, (s, u) in figures.samples.items() if keep(k, u) and s]
        if not chosen:
            ax.set_visible(False)
            continue
        ax.boxplot(
            [s for _, s in chosen],
            vert=False,
            tick_labels=[k for k, _ in chosen],
            showfliers=True,
            whis=(1, 99),
        )
        if title.startswith("Latency"):
            ax.set_xscale("log")
        ax.set_title(title + " — whiskers p1/p99")
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def main(
    out: TextIO, *, runs: int = 50, json_path: str | None = None, plot_path: str | None = None
) -> int:
    figures = _Figures()
    results = asyncio.run(_run(runs, figures))
    out.write(report(results))
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            samples = {k: {"unit": u, "samples": s} for k, (s, u) in figures.samples.items()}
            json.dump({**results, "samples": samples}, f, indent=2)
    if plot_path:
        problem = plot(figures, plot_path)
        out.write(f"\n{problem}\n" if problem else f"\nplot: {plot_path}\n")
    return 0
