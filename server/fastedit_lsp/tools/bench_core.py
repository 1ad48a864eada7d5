"""What every part of ``fastedit-lsp bench`` shares: samples, processes, the scripted editor.

- :class:`Figures`: every distribution measured (samples and unit), summarised as median, p90,
  p99 and runs; samples of one key add up, so that alternating rounds (``--compare``) pool.
- :class:`Server`: how to start one server under test (ours, another checkout's, a peer).
- :class:`Editor`: the bench's editor, with the delays editors have (see :class:`EditorModel`).
- ``/proc`` readings (RSS, CPU time), the load average, the machine.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .lsp_client import LspClient

#: Settings for the bench session: room for the longest stream.
INIT_OPTIONS = {"fastedit": {"profiles": {"fast": {"maxTokens": 32768}}}}


def stats(samples: Sequence[float]) -> dict[str, float]:
    """Median, p90, p99 (nearest rank) and the number of runs."""
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


class Figures:
    """Every distribution measured, by key: samples and unit (ms, MiB, s, ×, /s)."""

    def __init__(self) -> None:
        self.samples: dict[str, tuple[list[float], str]] = {}
        #: Figures that are one number per run (counts, notes), last value wins.
        self.notes: dict[str, Any] = {}
        #: Load averages seen while measuring (1-minute), one per section.
        self.loads: list[float] = []
        #: Per key, the 1-minute load average each time samples were added.
        self.load_at: dict[str, list[float]] = {}

    def add(self, key: str, samples: Sequence[float], unit: str = "ms") -> None:
        kept = self.samples.setdefault(key, ([], unit))[0]
        kept.extend(samples)
        self.load_at.setdefault(key, []).append(load_average()[0])

    def load(self, key: str) -> float:
        """The mean 1-minute load average while ``key`` was measured."""
        loads = self.load_at.get(key) or [float("nan")]
        return round(sum(loads) / len(loads), 1)

    def stats(self, key: str) -> dict[str, float]:
        return stats(self.samples.get(key, ([], ""))[0])

    def counts(self) -> dict[str, int]:
        """How many samples each key holds (``--paired`` reads a round's samples after these)."""
        return {key: len(samples) for key, (samples, _) in self.samples.items()}

    def since(self, key: str, count: int) -> list[float]:
        """The samples of ``key`` added after its first ``count``."""
        return self.samples.get(key, ([], ""))[0][count:]

    def median(self, key: str) -> float:
        return self.stats(key)["median"]

    def has(self, key: str) -> bool:
        return bool(self.samples.get(key, ([], ""))[0])

    def note_load(self) -> None:
        self.loads.append(load_average()[0])

    async def time(
        self, key: str, runs: int, once: Callable[[], Awaitable[float]], *, warm: int = 1
    ) -> None:
        for _ in range(warm):
            await once()
        self.add(key, [await once() for _ in range(runs)])


def load_average() -> tuple[float, float, float]:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return (float("nan"),) * 3
    return round(one, 2), round(five, 2), round(fifteen, 2)


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads), from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        # The command name may hold spaces: the fields after it start past the last ")".
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def machine() -> dict[str, Any]:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                model,
            )
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "loadAverage": list(load_average()),
    }


@dataclass(frozen=True)
class Server:
    """One server under test: a name, its command, and what its environment adds."""

    name: str
    command: tuple[str, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        return {**base, **self.env}


@dataclass(frozen=True)
class EditorModel:
    """How the bench's editor behaves, the three things that move the figures.

    - ``ack_ms``: time from an applyEdit's arrival to the editor's reply (the editor applying
      the edit: undo step, redraw). The server sends the next edit only after the reply.
    - ``echo``: the editor reports each applied edit as ``didChange`` (every editor does), sent
      before its reply as VS Code and Neovim do; ``False``: it never reports (the server then
      waits its settle time at the end of every job, which the figures here do not include).
    - ``chunk_per_event``: the stub flushes each SSE event in its own HTTP chunk, as hosted
      providers do; off, the events due at one time share one chunk (fewer reads).
    """

    ack_ms: float = 0.0
    echo: bool = True
    chunk_per_event: bool = True


def base_env() -> dict[str, str]:
    """The bench's environment: nothing of the user's fastedit settings or keys."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FASTEDIT_")}
    return {k: v for k, v in env.items() if not k.endswith("_API_KEY")}


async def initialize(
    env: Mapping[str, str],
    command: Sequence[str] | None = None,
    options: Any = None,
    *,
    initialized: bool = True,
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
                "textDocument": {"inlineCompletion": {}},
                # The bench times jobs by their fastedit/status, sent only to clients that opt in.
                "experimental": {"fastedit": {"statusNotification": True}},
            },
            "initializationOptions": options,
        },
        seconds=60,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if initialized:
        client.notify("initialized", {})
    return client, elapsed


class Editor:
    """The bench's editor: applies every edit, reports it back and replies (see
    :class:`EditorModel`); keeps each edit's arrival time."""

    def __init__(self, client: LspClient, model: EditorModel = EditorModel()) -> None:
        self.client = client
        self.model = model
        self.versions: dict[str, int] = {}
        #: Per URI: arrival time (monotonic) and size of the new text of each applyEdit.
        self.edits: dict[str, list[tuple[float, int]]] = {}
        #: Per job id: when its ``fastedit/status`` first said it finished, and the state.
        self.finished: dict[str, tuple[float, str]] = {}
        #: The buffer's text, for the documents opened with ``keep_text`` only (applying every
        #: edit to a copy costs the bench's process time the other figures should not pay).
        self.texts: dict[str, str] = {}
        #: Per kept document, a line watched for (:meth:`watch_line`) and when the first applied
        #: edit after which the buffer held it as a whole line arrived (None: not yet).
        self.line_seen: dict[str, tuple[str, float | None]] = {}
        self._waiters: list[tuple[str, int, asyncio.Future[None]]] = []
        client.handlers["workspace/applyEdit"] = self.apply
        client.on_notification = self.notification

    def open(
        self, uri: str, text: str, language_id: str = "python", *, keep_text: bool = False
    ) -> None:
        self.versions[uri] = 1
        self.edits[uri] = []
        if keep_text:
            self.texts[uri] = text
        self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}},
        )

    def close(self, uri: str) -> None:
        self.versions.pop(uri, None)
        self.texts.pop(uri, None)
        self.line_seen.pop(uri, None)
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def change(self, uri: str, changes: list[dict[str, Any]], *, echo: bool = False) -> None:
        """Send ``didChange``; ``echo``: the report of an applied edit (already in the copy)."""
        self.versions[uri] += 1
        if uri in self.texts and not echo:
            for change in changes:
                if "range" in change:
                    edit = {"range": change["range"], "newText": change["text"]}
                    self.texts[uri] = apply_text_edits(self.texts[uri], [edit])
                else:
                    self.texts[uri] = change["text"]
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": changes,
            },
        )

    async def apply(self, params: dict[str, Any]) -> dict[str, Any]:
        now = time.monotonic()
        changes = params["edit"].get("changes") or {}
        for change in params["edit"].get("documentChanges") or []:
            changes[change["textDocument"]["uri"]] = change["edits"]
        for uri, edits in changes.items():
            self.edits.setdefault(uri, []).append((now, sum(len(e["newText"]) for e in edits)))
            if uri in self.texts:
                self._keep(uri, edits, now)
            count = len(self.edits[uri])
            for waiter in [w for w in self._waiters if w[0] == uri and count >= w[1]]:
                self._waiters.remove(waiter)
                if not waiter[2].done():
                    waiter[2].set_result(None)
        if self.model.ack_ms > 0:
            await asyncio.sleep(self.model.ack_ms / 1000)
        for uri, edits in changes.items():
            if self.model.echo and uri in self.versions:
                changed = [{"range": e["range"], "text": e["newText"]} for e in edits]
                self.change(uri, changed, echo=True)
        return {"applied": True}

    def watch_line(self, uri: str, line: str) -> None:
        """Note when the buffer of ``uri`` (opened with ``keep_text``) first holds ``line`` as a
        whole line (in :attr:`line_seen`): whichever edits brought it there."""
        if line in self.texts[uri].split("\n"):
            raise ValueError(f"the buffer already holds {line!r}")
        self.line_seen[uri] = (line, None)

    def _keep(self, uri: str, edits: list[dict[str, Any]], now: float) -> None:
        text = apply_text_edits(self.texts[uri], edits)
        self.texts[uri] = text
        watched = self.line_seen.get(uri)
        if watched is not None and watched[1] is None and watched[0] in text.split("\n"):
            self.line_seen[uri] = (watched[0], now)

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


def apply_text_edits(text: str, edits: Sequence[Mapping[str, Any]]) -> str:
    """``text`` after one ``WorkspaceEdit``'s edits of it (LSP ``TextEdit`` objects, positions in
    the text before them, none overlapping; UTF-16 columns read as code points: the bench's
    documents are ASCII)."""
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(position: Mapping[str, int]) -> int:
        line = position["line"]
        if line >= len(starts):
            return len(text)
        return min(starts[line] + position["character"], len(text))

    spans = sorted(
        ((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits),
        key=lambda span: (span[0], span[1]),
    )
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


#: Where :func:`code_tokens` belong: a function whose names they read (its body's next line,
#: :data:`CODE_AT`), so that the draft passes the checks as a good answer does.
CODE_HOST = (
    "def accumulate(value):\n    " + " = ".join(f"total_{i}" for i in range(97)) + " = 0\n\n"
)
CODE_AT = (2, 0)


def code_tokens(count: int) -> list[str]:
    """``count`` tokens of plausible code, about four characters each: lines of the body of
    :data:`CODE_HOST`'s function."""
    tokens: list[str] = []
    line = 0
    while count - len(tokens) >= 7:
        line += 1
        tokens += ["    ", "tota", f"l_{line % 97}", " += ", "valu", f"e * {line % 13}", "\n"]
    # Whole lines to the end (a cut name would be a draft the checks refuse).
    rest, last = count - len(tokens), "    total_0 += 1\n"
    cuts = [round(i * len(last) / rest) for i in range(rest + 1)] if rest else []
    return tokens + [last[a:b] for a, b in itertools.pairwise(cuts)]


def python_lines(count: int) -> list[str]:
    lines: list[str] = []
    index = 0
    while len(lines) < count:
        lines += [f"def function_{index}(x: int) -> int:", f"    return x + {index}", "", ""]
        index += 1
    return lines[:count]


async def complete_rest(client: LspClient, uri: str, line: int = 0, character: int = 4) -> str:
    started = await client.command(
        "fastedit.completeRest", {"uri": uri, "position": {"line": line, "character": character}}
    )
    return str(started["jobId"])
