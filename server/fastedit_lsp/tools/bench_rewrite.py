"""``fastedit-lsp bench --rewrite``: a 200-line rewrite changing 10 % of its lines, three ways.

The real server over stdio, a minimal editor that applies every edit and reports it back at
once, and the loopback stub model streaming the same answer at the same rate:

- **delete and retype**: the whole rewrite streamed as typed text (what a rewrite cost before
  minimal-diff streaming: the selection replaced, every line sent again);
- **minimal diff**: ``fastedit.editSelection``, kept lines untouched, changed lines sent as
  soon as they are known;
- **prediction**: the same with ``prediction: on``; the stub emulates a provider's
  accepted-prediction speed-up (``prediction_speedup``, 3× here: an emulation, not a provider
  measurement).

For each: the time from ``executeCommand`` to the last edit received, the edits, the characters
the edits deleted and inserted, and the server's CPU seconds per 1,000 tokens. Medians of
``runs``. ``--quick`` (:data:`QUICK_LINES`): a 50-line rewrite, to check that the bench works.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any, TextIO

from .lsp_client import LspClient
from .stub import Answer, StubModelServer

LINES = 200
#: The rewrite's lines with ``--quick``.
QUICK_LINES = 50
#: Every tenth line changes.
EVERY = 10
TPS = 2_000
#: The emulated speed-up of an accepted prediction (stub knob).
SPEEDUP = 3.0


def _texts(lines: int) -> tuple[str, str]:
    original = "".join(
        f"    total_{i} = compute(values[{i}], scale={i % 7})\n" for i in range(lines)
    )
    rewrite = "".join(
        f"    total_{i} = compute(values[{i}], scale={i % 7}, fast=True)\n"
        if i % EVERY == EVERY // 2
        else f"    total_{i} = compute(values[{i}], scale={i % 7})\n"
        for i in range(lines)
    )
    return original, rewrite


class _Editor:
    """Applies every edit at once and reports it back; counts what the edits did."""

    def __init__(self, client: LspClient) -> None:
        self.client = client
        self.version = 0
        self.uri = ""
        self.text = ""
        self.arrivals: list[float] = []
        self.deleted = 0
        self.inserted = 0
        client.handlers["workspace/applyEdit"] = self.apply
        client.handlers["workspace/configuration"] = lambda params: [None]

    def open(self, uri: str, text: str) -> None:
        self.uri, self.text, self.version = uri, text, 1
        self.arrivals, self.deleted, self.inserted = [], 0, 0
        self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )

    def _offset(self, position: dict[str, int]) -> int:
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[: position["line"]]) + position["character"]

    def apply(self, params: dict[str, Any]) -> dict[str, Any]:
        self.arrivals.append(time.monotonic())
        edit = params["edit"]
        edits = (edit.get("changes") or {}).get(self.uri, [])
        for change in edit.get("documentChanges") or []:
            edits += change["edits"]
        changes = []
        for e in edits:
            start, end = self._offset(e["range"]["start"]), self._offset(e["range"]["end"])
            self.deleted += end - start
            self.inserted += len(e["newText"])
            self.text = self.text[:start] + e["newText"] + self.text[end:]
            changes.append({"range": e["range"], "text": e["newText"]})
        self.version += 1
        self.client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": changes},
        )
        return {"applied": True}


def _cpu_seconds(pid: int) -> float:
    """The process' CPU seconds (0 where there is no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _one(
    client: LspClient, editor: _Editor, stub: StubModelServer, way: str, run: int, lines: int
) -> dict[str, float]:
    original, rewrite = _texts(lines)
    uri = f"file:///bench/rewrite_{way}_{run}.py"
    stub.default = Answer(text=rewrite, tps=TPS, prediction_speedup=SPEEDUP)
    if way == "retype":
        editor.open(uri, "def f():\n")
        argument: dict[str, Any] = {"uri": uri, "position": {"line": 1, "character": 0}}
        command = "fastedit.completeRest"
    else:
        editor.open(uri, "def f():\n" + original)
        argument = {
            "uri": uri,
            "range": {
                "start": {"line": 1, "character": 0},
                "end": {"line": 1 + lines, "character": 0},
            },
            "instruction": "pass fast=True where the scale is 5",
        }
        command = "fastedit.editSelection"
    pid = client.proc.pid
    cpu = _cpu_seconds(pid)
    sent = time.monotonic()
    started = await client.command(command, argument)
    job = await client.command("fastedit.wait", {"jobId": started["jobId"], "timeoutMs": 60_000})
    # The reconciler leaves out an answer's last line break at the end of the document.
    if job["state"] != "done" or not editor.text.rstrip("\n").endswith(rewrite.rstrip("\n")):
        raise RuntimeError(f"{way}: job {job['state']} ({job.get('error')})")
    cpu = (_cpu_seconds(pid)) - cpu
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    tokens = job["metrics"]["tokens"] or 1
    return {
        "lastEditMs": (editor.arrivals[-1] - sent) * 1000,
        "edits": len(editor.arrivals),
        "deleted": editor.deleted,
        "inserted": editor.inserted,
        "cpuSecondsPer1000Tokens": cpu / tokens * 1000,
    }


async def _run(runs: int, lines: int) -> dict[str, dict[str, float]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FASTEDIT_")}
    env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
    out: dict[str, dict[str, float]] = {}
    async with await StubModelServer.start() as stub:
        env |= {"FASTEDIT_FAST_BASE_URL": stub.base_url, "FASTEDIT_FAST_MODEL": "stub-fast"}
        env["FASTEDIT_MODE"] = "fast"
        for way, prediction in (("retype", "off"), ("minimal", "off"), ("prediction", "on")):
            client = await LspClient.start(env, None)
            editor = _Editor(client)
            options = {"profiles": {"fast": {"maxTokens": 32768, "prediction": prediction}}}
            await client.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": None,
                    "capabilities": {"workspace": {"applyEdit": True}},
                    "initializationOptions": {"fastedit": options},
                },
            )
            client.notify("initialized", {})
            try:
                samples = [await _one(client, editor, stub, way, run, lines) for run in range(runs)]
            finally:
                await client.shutdown()
            out[way] = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    return out


def report(results: dict[str, dict[str, float]], runs: int, rewritten: int = LINES) -> str:
    names = {
        "retype": "delete and retype",
        "minimal": "minimal diff",
        "prediction": f"prediction ({SPEEDUP:g}× emulated)",
    }
    lines = [
        f"rewrite of {rewritten} lines changing {100 // EVERY} % of them, {TPS:,} tok/s, "
        f"median of {runs} runs",
        f"{'':28} {'last edit':>10} {'edits':>6} {'deleted':>8} {'inserted':>9} "
        f"{'CPU s/1k tok':>13}",
    ]
    for way, row in results.items():
        lines.append(
            f"{names[way]:28} {row['lastEditMs']:>8.0f}ms {row['edits']:>6.0f} "
            f"{row['deleted']:>8.0f} {row['inserted']:>9.0f} "
            f"{row['cpuSecondsPer1000Tokens']:>13.4f}"
        )
    return "\n".join(lines) + "\n"


def main(out: TextIO, runs: int = 5, *, quick: bool = False) -> int:
    lines = QUICK_LINES if quick else LINES
    results = asyncio.run(_run(runs, lines))
    out.write(report(results, runs, lines))
    return 0
