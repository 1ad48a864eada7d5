"""``fastedit-lsp bench``: what the server adds on top of the model, measured, not asserted.

Starts the real server over stdio with a scripted client (``lsp_client``) and the loopback stub
model, and reports median, p90, p99 and the number of runs for:

- **cold start**: process start to the ``initialize`` reply, and the server's RSS after it;
- **first edit**: ``executeCommand`` sent to the first ``workspace/applyEdit`` received, beside
  its floor measured in the same run (the stub's own time to first event over a direct streamed
  request, plus a trivial LSP round trip), and their ratio;
- **code actions** on a 10,000-line Python file: warm (same document version) and right after an
  edit (the parse behind them is cached per version and refreshed off the request path);
- **inline completion**: the server's own time per request (request handled → answer built, the
  time spent waiting for the model excluded; measured inside the server and read back from
  ``fastedit.status``) with a stub answering at once, uncached and answered from the cache, and
  the client's round trip for each.

Output: a table on stdout and, with ``--json PATH``, the figures as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from .lsp_client import LspClient
from .stub import Answer, StubModelServer


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pct(p: int) -> float:
        return round(ordered[max(0, -(-p * len(ordered) // 100) - 1)], 3)

    return {
        "median": round(statistics.median(ordered), 3),
        "p90": pct(90),
        "p99": pct(99),
        "runs": len(ordered),
    }


async def _time(runs: int, once: Callable[[], Awaitable[float]]) -> dict[str, float]:
    await once()  # warm-up
    return _stats([await once() for _ in range(runs)])


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


async def _session(env: dict[str, str]) -> tuple[LspClient, float]:
    started = time.perf_counter()
    client = await LspClient.start(env)
    client.handlers["workspace/configuration"] = lambda params: [None]
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": None,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "workspace": {"applyEdit": True},
            },
        },
    )
    elapsed = (time.perf_counter() - started) * 1000
    client.notify("initialized", {})
    return client, elapsed


async def _cold_start(env: dict[str, str], runs: int) -> dict[str, Any]:
    times, rss = [], []
    for _ in range(runs):
        client, elapsed = await _session(env)
        times.append(elapsed)
        rss.append(_rss_mib(client.proc.pid))
        await client.shutdown()
    return {"initializeMs": _stats(times), "rssMiB": _stats(rss)}


async def _first_edit(client: LspClient, stub: StubModelServer, runs: int) -> dict[str, Any]:
    import httpx

    first_edit: asyncio.Future[float] | None = None
    versions = {"v": 1}
    uri = "file:///bench/first_edit.py"
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = \n"}},
    )

    def apply(params: dict[str, Any]) -> dict[str, Any]:
        if first_edit is not None and not first_edit.done():
            first_edit.set_result(time.perf_counter())
        # Like an editor: report the change back (the server waits for it before "done").
        edits = [e for es in (params["edit"].get("changes") or {}).values() for e in es]
        versions["v"] += 1
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": versions["v"]},
                "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in edits],
            },
        )
        return {"applied": True}

    client.handlers["workspace/applyEdit"] = apply
    stub.default = Answer(text="1", role_chunk=False)

    async def once() -> float:
        nonlocal first_edit
        first_edit = asyncio.get_running_loop().create_future()
        sent = time.perf_counter()
        started = await client.command(
            "fastedit.completeRest", {"uri": uri, "position": {"line": 0, "character": 4}}
        )
        arrived = await first_edit
        await client.command("fastedit.wait", {"jobId": started["jobId"]})
        # Back to the same text for the next run.
        versions["v"] += 1
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": versions["v"]},
                "contentChanges": [{"text": "x = \n"}],
            },
        )
        return (arrived - sent) * 1000

    async def rtt() -> float:
        # A trivial command: setting the mode it already has answers {mode} and nothing else.
        sent = time.perf_counter()
        await client.command("fastedit.setMode", {"mode": "fast"})
        return (time.perf_counter() - sent) * 1000

    async with httpx.AsyncClient(trust_env=False) as http:

        async def stub_ttft() -> float:
            sent = time.perf_counter()
            body = {"model": "stub-fast", "stream": True, "messages": [], "max_tokens": 8}
            async with http.stream("POST", f"{stub.base_url}/chat/completions", json=body) as r:
                async for chunk in r.aiter_raw():
                    if b"data:" in chunk:
                        break
            return (time.perf_counter() - sent) * 1000

        measured = await _time(runs, once)
        floor_stub = await _time(runs, stub_ttft)
        floor_rtt = await _time(runs, rtt)
    floor = floor_stub["median"] + floor_rtt["median"]
    return {
        "firstEditMs": measured,
        "floorMs": {"stubFirstEvent": floor_stub, "lspRoundTrip": floor_rtt, "median": floor},
        "ratioToFloor": round(measured["median"] / floor, 2) if floor else None,
    }


async def _code_actions(client: LspClient, runs: int) -> dict[str, Any]:
    lines = []
    for i in range(2500):
        lines += [f"def function_{i}(x: int) -> int:", f"    return x + {i}", "", ""]
    text = "\n".join(lines) + "\n"
    uri = "file:///bench/big.py"
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )
    version = {"v": 1}
    line = 5000

    async def listing() -> float:
        sent = time.perf_counter()
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
        return (time.perf_counter() - sent) * 1000

    async def after_edit() -> float:
        version["v"] += 1
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version["v"]},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": 1, "character": 4},
                            "end": {"line": 1, "character": 4},
                        },
                        "text": " " if version["v"] % 2 else "",
                    }
                ],
            },
        )
        return await listing()

    return {
        "lines": len(lines),
        "warmMs": await _time(runs, listing),
        "afterEditMs": await _time(runs, after_edit),
    }


async def _completions(client: LspClient, stub: StubModelServer, runs: int) -> dict[str, Any]:
    uri = "file:///bench/complete.py"
    head = "import math\n\n\ndef area(radius):\n    return math.pi * radius ** 2\n\n\n"
    version = {"v": 1}
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": head}},
    )
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
        version["v"] += 1
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version["v"]},
                "contentChanges": [{"text": f"{head}# run {version['v']}\nvalue = \n"}],
            },
        )
        sent = time.perf_counter()
        await request()
        return (time.perf_counter() - sent) * 1000

    async def cached() -> float:
        sent = time.perf_counter()
        await request()
        return (time.perf_counter() - sent) * 1000

    round_trip_model = await _time(runs, uncached)
    round_trip_cached = await _time(runs, cached)
    report = (await client.command("fastedit.status"))["completions"]
    return {
        "serverMs": report["serverMs"],
        "firstServerMs": report["firstServerMs"],
        "roundTripMs": {"model": round_trip_model, "cache": round_trip_cached},
        "modelRequests": report["modelRequests"],
        "cacheHits": report["cacheHits"],
    }


def _row(name: str, stats: dict[str, float], unit: str = "ms") -> str:
    return (
        f"| {name} | {stats['median']} {unit} | {stats['p90']} {unit} | {stats['p99']} {unit} "
        f"| {int(stats['runs'])} |"
    )


async def _run(runs: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FASTEDIT_")}
    env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
    results: dict[str, Any] = {"coldStart": await _cold_start(env, max(5, runs // 10))}
    async with await StubModelServer.start() as stub:
        env = {**env, "FASTEDIT_FAST_BASE_URL": stub.base_url, "FASTEDIT_FAST_MODEL": "stub-fast"}
        env["FASTEDIT_MODE"] = "fast"
        client, _ = await _session(env)
        try:
            results["firstEdit"] = await _first_edit(client, stub, runs)
            results["codeActions"] = await _code_actions(client, runs)
            results["completions"] = await _completions(client, stub, runs)
        finally:
            await client.shutdown()
    return results


def main(out: TextIO, *, runs: int = 50, json_path: str | None = None) -> int:
    results = asyncio.run(_run(runs))
    cold, first, actions = results["coldStart"], results["firstEdit"], results["codeActions"]
    completions = results["completions"]
    server_ms = completions["serverMs"]
    out.write(
        "| measure | median | p90 | p99 | runs |\n|---|---|---|---|---|\n"
        + "\n".join(
            [
                _row("cold start to initialize reply", cold["initializeMs"]),
                _row("RSS after initialize", cold["rssMiB"], "MiB"),
                _row("first edit (executeCommand → first applyEdit)", first["firstEditMs"]),
                _row("  floor: stub first event", first["floorMs"]["stubFirstEvent"]),
                _row("  floor: LSP round trip", first["floorMs"]["lspRoundTrip"]),
                _row(f"code actions, {actions['lines']} lines, warm", actions["warmMs"]),
                _row(
                    f"code actions, {actions['lines']} lines, after an edit", actions["afterEditMs"]
                ),
                _row("inline completion round trip, model", completions["roundTripMs"]["model"]),
                _row("inline completion round trip, cached", completions["roundTripMs"]["cache"]),
            ]
        )
        + f"\n\nfirst edit / floor (medians): {first['ratioToFloor']}\n"
        + "\n| inline completion, server time | p50 | p99 | requests |\n|---|---|---|---|\n"
        + "\n".join(
            f"| {source} | {v['p50']} ms | {v['p99']} ms | {v['count']} |"
            for source, v in sorted(server_ms.items())
        )
        + f"\n\nthe session's first completion (loads the completion modules): "
        f"{completions['firstServerMs']} ms server time\n"
    )
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0
