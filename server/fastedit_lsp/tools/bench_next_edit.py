"""``fastedit-lsp bench --next-edit``: the server's time per next-edit suggestion, measured.

Starts the real server over stdio with the loopback stub model and a 10,000-line Python document
(standard-library modules, read where installed), lets it settle (its warm-up done), then for
each run makes one user edit and asks ``fastedit.nextEdit`` at the cursor:

- **offline**: a rename in a function (the engine carries it); the server's own time per request,
  measured inside the server (read back from ``fastedit.status``: wall time, and the CPU time of
  its thread, which other processes on the cores do not inflate), and the client's round trip;
- **Go**: the same renames on a generated 10,000-line Go document, in a session of its own (the
  rename's scope comes from a tree-sitter parse of the function around it);
- **model** (``nextEdit.useModel``, no debounce): an edit the offline engine has nothing for, so
  the stub's scripted rewrite of the window is asked for; the server's time is the client's round
  trip minus the stub's own time serving the request.
"""

from __future__ import annotations

import asyncio
import os
import re
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .lsp_client import LspClient
from .stub import Answer, StubModelServer

MODULES = ("argparse.py", "inspect.py", "tarfile.py", "pydoc.py", "typing.py", "difflib.py")
LINES = 10_000
URI = "file:///bench/next_edit.py"
_ASSIGNMENT = re.compile(r"^(\s{4,})([a-z_]\w{2,}) = ")
GO_URI = "file:///bench/next_edit.go"
_GO_LOCAL = re.compile(r"^(\t)(count|total|average) := ")


def _document() -> list[str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    lines: list[str] = []
    for name in MODULES:
        path = stdlib / name
        if path.is_file():
            lines += path.read_text(encoding="utf-8").split("\n")
    return (lines + ["pass"] * LINES)[:LINES]


def _pct(samples: Sequence[float], p: int) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, -(-p * len(ordered) // 100) - 1))]


def _go_document() -> list[str]:
    """A 10,000-line Go file, generated (no Go sources ship with Python): functions with locals,
    loops, comments and strings naming them, and same-named locals in every function."""
    lines = ["package bench", ""]
    n = 0
    while len(lines) < LINES:
        lines += [
            f"// process{n} averages the weights of items up to limit (count is how many).",
            f"func process{n}(items []Item, limit int) (int, error) {{",
            "\tcount := 0",
            "\ttotal := 0",
            "\tfor index, item := range items {",
            "\t\tif index >= limit {",
            "\t\t\tbreak",
            "\t\t}",
            f"\t\tweight := item.Weight * {n % 7 + 1}",
            "\t\t// the weight, scaled, joins the total",
            "\t\ttotal += weight",
            "\t\tcount++",
            "\t}",
            "\tif count == 0 {",
            f'\t\treturn 0, fmt.Errorf("process{n}: no items (count=%d)", count)',
            "\t}",
            "\taverage := total / count",
            '\tlog.Printf("average %d of %d", average, count)',
            "\treturn average, item.count",
            "}",
            "",
        ]
        n += 1
    return lines[:LINES]


class _Session:
    def __init__(self, client: LspClient, lines: list[str], uri: str = URI) -> None:
        self.client = client
        self.lines = lines
        self.uri = uri
        self.version = 1

    def replace(self, line: int, start: int, end: int, text: str) -> None:
        self.version += 1
        self.lines[line] = self.lines[line][:start] + text + self.lines[line][end:]
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": line, "character": start},
                            "end": {"line": line, "character": end},
                        },
                        "text": text,
                    }
                ],
            },
        )

    async def ask(self, line: int, character: int) -> tuple[float, Any]:
        sent = time.perf_counter()
        answer = await self.client.command(
            "fastedit.nextEdit",
            {"uri": self.uri, "position": {"line": line, "character": character}},
        )
        return (time.perf_counter() - sent) * 1000, answer


async def _renames(
    session: _Session, pattern: re.Pattern[str], runs: int
) -> tuple[list[float], int]:
    """Rename the variable assigned on ``runs + 1`` lines ``pattern`` matches, spread over the
    document, asking for the next edit after each: (round trips, how many were suggested)."""
    sites = [i for i, text in enumerate(session.lines) if pattern.match(text)]
    step = max(1, len(sites) // (runs + 1))
    trips, suggested = [], 0
    for index in sites[::step][: runs + 1]:
        match = pattern.match(session.lines[index])
        assert match is not None
        start = len(match.group(1))
        end = start + len(match.group(2))
        session.replace(index, start, end, match.group(2) + "_b")
        trip, answer = await session.ask(index, end + 2)
        trips.append(trip)
        suggested += bool(answer["edits"])
    return trips, suggested


async def _go(env: dict[str, str], runs: int) -> dict[str, Any]:
    """The offline renames on a 10,000-line Go document (scopes from tree-sitter), in a session
    of their own (the status' percentiles are per session)."""
    client = await LspClient.start(env)
    client.handlers["workspace/configuration"] = lambda params: [None]
    options = {"nextEdit": {"useModel": False, "debounceMs": 0}}
    init: dict[str, Any] = {"processId": os.getpid(), "rootUri": None, "capabilities": {}}
    await client.request("initialize", init | {"initializationOptions": options})
    client.notify("initialized", {})
    lines = _go_document()
    item = {"uri": GO_URI, "languageId": "go", "version": 1, "text": "\n".join(lines)}
    client.notify("textDocument/didOpen", {"textDocument": item})
    await client.request("fastedit/debugStats", {"settle": True, "timeoutMs": 10_000})
    trips, suggested = await _renames(_Session(client, lines, GO_URI), _GO_LOCAL, runs)
    status = (await client.command("fastedit.status"))["nextEdit"]
    await client.shutdown()
    return {
        "serverMs": status["serverMs"],
        "serverCpuMs": status["serverCpuMs"],
        "roundTripP50": _pct(trips, 50),
        "roundTripP99": _pct(trips, 99),
        "suggested": suggested,
    }


async def _run(runs: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FASTEDIT_")}
    async with await StubModelServer.start() as stub:
        env |= {"FASTEDIT_FAST_BASE_URL": stub.base_url, "FASTEDIT_FAST_MODEL": "stub-fast"}
        client = await LspClient.start(env)
        client.handlers["workspace/configuration"] = lambda params: [None]
        options = {"nextEdit": {"useModel": False, "debounceMs": 0}}
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {},
                "initializationOptions": options,
            },
        )
        client.notify("initialized", {})
        lines = _document()
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": URI,
                    "languageId": "python",
                    "version": 1,
                    "text": "\n".join(lines),
                }
            },
        )
        # A warm session, as the main bench measures: the warm-up's background imports and the
        # outline of the opened document are done (they hold the GIL in their worker threads).
        await client.request("fastedit/debugStats", {"settle": True, "timeoutMs": 10_000})
        session = _Session(client, lines)
        offline_trips, suggested = await _renames(session, _ASSIGNMENT, runs)
        status = (await client.command("fastedit.status"))["nextEdit"]
        offline, offline_cpu = status["serverMs"], status["serverCpuMs"]

        client.notify(
            "workspace/didChangeConfiguration",
            {"settings": {"fastedit": {"nextEdit": {"useModel": True, "debounceMs": 0}}}},
        )
        model_server, model_trips = [], []
        for run in range(runs + 1):
            line = 200 + run * (LINES - 400) // (runs + 1)
            session.replace(line, 0, 0, "# ")  # a comment: nothing for the offline engine
            lo, hi = max(0, line - 12), min(LINES, line + 13)
            window = session.lines[lo:hi]
            target = next((i for i, t in enumerate(window) if i + lo > line and t.strip()), 0)
            rewritten = list(window)
            rewritten[target] = "# " + rewritten[target]
            stub.script(Answer(text="<updated>\n" + "\n".join(rewritten) + "\n</updated>"))
            before = len(stub.requests)
            trip, _ = await session.ask(line, 2)
            served = stub.requests[before:] if len(stub.requests) > before else []
            stub_ms = sum(((r.ended_at or r.started_at) - r.started_at) * 1000 for r in served)
            if run:  # the first one loads the backend modules
                model_trips.append(trip)
                model_server.append(max(0.0, trip - stub_ms))
        own = (await client.command("fastedit.status"))["nextEdit"]["modelServerMs"]
        await client.shutdown()
        go = await _go(env, runs)
    return {
        "runs": runs,
        "go": go,
        "offline": {
            "serverMs": offline,
            "serverCpuMs": offline_cpu,
            "roundTripP50": _pct(offline_trips, 50),
            "roundTripP99": _pct(offline_trips, 99),
            "suggested": suggested,
        },
        "model": {
            "ownMs": own,
            "serverP50": _pct(model_server, 50),
            "serverP99": _pct(model_server, 99),
            "roundTripP50": _pct(model_trips, 50),
            "roundTripP99": _pct(model_trips, 99),
        },
    }


def main(out: TextIO, *, runs: int = 50) -> int:
    r = asyncio.run(_run(runs))
    o, m, g = r["offline"], r["model"], r["go"]
    out.write(
        f"next-edit suggestions on a {LINES:,}-line Python document ({r['runs']} runs)\n"
        f"  offline, server time        p50 {o['serverMs']['p50']:.3f} ms   "
        f"p99 {o['serverMs']['p99']:.3f} ms   (n={o['serverMs']['n']}, "
        f"{o['suggested']} suggested)\n"
        f"  offline, server CPU time    p50 {o['serverCpuMs']['p50']:.3f} ms   "
        f"p99 {o['serverCpuMs']['p99']:.3f} ms   (the server thread's own; the time above also "
        "counts other processes holding the cores)\n"
        f"  offline, client round trip  p50 {o['roundTripP50']:.3f} ms   "
        f"p99 {o['roundTripP99']:.3f} ms\n"
        f"  model, server's own time    p50 {m['ownMs']['p50']:.3f} ms   "
        f"p99 {m['ownMs']['p99']:.3f} ms   (inside the server, the wait for the answer excluded)\n"
        f"  model, server time          p50 {m['serverP50']:.3f} ms   "
        f"p99 {m['serverP99']:.3f} ms   (round trip minus the stub's own time)\n"
        f"  model, client round trip    p50 {m['roundTripP50']:.3f} ms   "
        f"p99 {m['roundTripP99']:.3f} ms\n"
        f"next-edit renames on a {LINES:,}-line Go document (scopes from tree-sitter)\n"
        f"  offline, server time        p50 {g['serverMs']['p50']:.3f} ms   "
        f"p99 {g['serverMs']['p99']:.3f} ms   (n={g['serverMs']['n']}, "
        f"{g['suggested']} suggested)\n"
        f"  offline, server CPU time    p50 {g['serverCpuMs']['p50']:.3f} ms   "
        f"p99 {g['serverCpuMs']['p99']:.3f} ms\n"
        f"  offline, client round trip  p50 {g['roundTripP50']:.3f} ms   "
        f"p99 {g['roundTripP99']:.3f} ms\n"
    )
    return 0
