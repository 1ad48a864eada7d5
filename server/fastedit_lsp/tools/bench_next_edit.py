"""``fastedit-lsp bench --next-edit``: the server's time per next-edit suggestion, measured.

Starts the real server over stdio with the loopback stub model and a 10,000-line Python document
(standard-library modules, read where installed), lets it settle (its warm-up done), then for
each run makes one user edit and asks ``fastedit.nextEdit`` at the cursor:

- **offline**: a rename in a function (the engine carries it); the server's own time per request,
  measured inside the server (read back from ``fastedit.status``: wall time, and the CPU time of
  its thread, which other processes on the cores do not inflate), and the client's round trip;
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


class _Session:
    def __init__(self, client: LspClient, lines: list[str]) -> None:
        self.client = client
        self.lines = lines
        self.version = 1

    def replace(self, line: int, start: int, end: int, text: str) -> None:
        self.version += 1
        self.lines[line] = self.lines[line][:start] + text + self.lines[line][end:]
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": URI, "version": self.version},
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
            {"uri": URI, "position": {"line": line, "character": character}},
        )
        return (time.perf_counter() - sent) * 1000, answer


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
        sites = [i for i, text in enumerate(lines) if _ASSIGNMENT.match(text)]
        step = max(1, len(sites) // (runs + 1))
        offline_trips, suggested = [], 0
        for index in sites[::step][: runs + 1]:
            match = _ASSIGNMENT.match(session.lines[index])
            assert match is not None
            start = len(match.group(1))
            end = start + len(match.group(2))
            session.replace(index, start, end, match.group(2) + "_b")
            trip, answer = await session.ask(index, end + 2)
            offline_trips.append(trip)
            suggested += bool(answer["edits"])
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
    return {
        "runs": runs,
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
    o, m = r["offline"], r["model"]
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
    )
    return 0
