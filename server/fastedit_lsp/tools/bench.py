"""``fastedit-lsp bench``: what the server adds on top of the model, measured, not asserted.

Starts the real server over stdio with a scripted editor and the loopback stub model, and
reports median, p90, p99, the number of runs and the load average of every figure:

- **cold start**: process start → ``initialize`` reply and the RSS then, beside
  jedi-language-server (a pygls peer, the ``bench`` extra) started alternately;
- **first job of a session**: sent 300 ms after ``initialized``, its first edit against a warm
  job's, the RSS after that idle time (the warm-up), the modules the first job imported;
- **first edit**: ``executeCommand`` → first ``workspace/applyEdit``, against its floor: a
  minimal raw-socket client's time to the stub's first event plus one trivial LSP round trip;
  and when the model request reached the stub;
- **first line and last edit** (``bench_lines``): command → the edit after which the buffer
  holds the answer's whole first line, beside command → the stub's write of that line's end, and
  the model's last byte → the last edit, for complete-the-rest and edit selection;
- **streams** at 1,000, 5,000 and 20,000 tok/s: edit span ÷ stub span, edits per second and per
  1,000 tokens, server CPU per 1,000 tokens (``/proc``), and at 1,000 tok/s a bare httpx
  reader's CPU on the same stream (its own process);
- **cancel**: ``fastedit.cancel`` → the job cancelled and the stub seeing the close;
- **didChange handler** and **code actions**: the server's own time (``fastedit/debugTimings``)
  and the round trip;
- **inline completion**, stub answering at once: round trip, the stub's own time (request
  arrival → last byte, recorded by the stub), and the overhead from outside (their difference).

The servers are measured as ``pip install`` leaves them: byte-compiled (:func:`byte_compile`). An
editable install run with ``PYTHONDONTWRITEBYTECODE`` set (this project's build machines set it)
never writes its ``.pyc`` files, so every start compiled each module it imported again: 60–150 ms
of the cold start and of the warm-up that a user's installation does not pay.

How the editor behaves moves these figures, so it is explicit (:class:`~.bench_core.EditorModel`):
``--ack-ms`` (the editor's time to apply an edit and reply), ``--no-echo`` (no ``didChange``
echo of applied edits), ``--chunk batch|event`` (the stub's HTTP chunking).

``--compare REF`` measures another checkout or revision the same way in the same minute:
``--rounds`` alternating rounds of each side (cold starts alternate one by one), then prints the
ratio of every figure. ``--quick`` (:data:`QUICK`) runs every section and prints every figure
and table with smaller workloads, to check that the bench works (the tests run it): its figures
are not the goals' and are not comparable with a default run's. Modules: ``bench_core``
(samples, processes, the editor), ``bench_floors`` (raw-socket and bare-reader yardsticks),
``bench_figures`` (warm-session figures), ``bench_start`` (fresh-process figures),
``bench_compare``, ``bench_report``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from . import bench_report
from .bench_compare import Pairs, describe_this, reference, this_server
from .bench_core import INIT_OPTIONS, EditorModel, Figures, Server, base_env, initialize, machine
from .bench_figures import SECTIONS, session_figures
from .bench_start import cold_start, first_job, jedi_server, start_once
from .bytecode import byte_compile as compile_package
from .lsp_client import LspError
from .stub import StubModelServer

#: Every side's figures name our server this way (so that two sides' keys match).
OURS = "fastedit-lsp"
#: The PNG written by ``--plot`` without a path.
DEFAULT_PLOT = "docs/benchmarks.png"
#: The default editor: replies 1 ms after an edit arrives, echoes it, one HTTP chunk per event.
DEFAULT_EDITOR = EditorModel(ack_ms=1.0)
#: The fewest runs of a figure whose count ``--runs`` scales (cold starts, first lines, a
#: round's first edits, the parse and names checks); with ``--quick``, :data:`QUICK_FLOOR`.
FLOOR = 5
QUICK_FLOOR = 3
#: The parse check's document with ``--quick`` (lines; else ``bench_parse.LINES``).
QUICK_PARSE_LINES = 2_000
#: What ``--quick`` shrinks, for the note under its report.
QUICK = (
    "--quick: smaller workloads (at least 3 runs of a figure, streams of a tenth of the tokens, "
    "first-line answers of 200 tokens, parse checks on 2,000 lines); a check that the bench "
    "works, not figures to compare"
)


async def _session(
    server: Server,
    env: dict[str, str],
    stub: StubModelServer,
    runs: int,
    figures: Figures,
    model: EditorModel,
    only: frozenset[str],
    quick: bool = False,
) -> None:
    client, _ = await initialize(server.environ(env), server.command, INIT_OPTIONS)
    try:
        # A warm session: its background start-up work (the warm-up) is over.
        with contextlib.suppress(LspError):
            await client.request(
                "fastedit/debugStats", {"settle": True, "timeoutMs": 10_000}, seconds=30
            )
        await session_figures(client, stub, runs, figures, model, env, only, quick=quick)
    finally:
        await client.shutdown()


async def _run(
    runs: int,
    model: EditorModel,
    ref: Server | None,
    rounds: int,
    only: frozenset[str],
    pairs: Pairs | None = None,
    quick: bool = False,
) -> tuple[Figures, Figures | None]:
    env = base_env()
    floor = QUICK_FLOOR if quick else FLOOR
    ours = this_server() if ref is not None else Server(OURS)
    byte_compile(ours, ref)
    ours = Server(OURS, ours.command, ours.env)
    sides: list[tuple[Server, Figures]] = [(ours, Figures())]
    if ref is not None:
        sides.append((Server(OURS, ref.command, ref.env), Figures()))
    mine = sides[0][1]
    # Cold starts: every side (and the peer, measured once) alternately.
    peer = jedi_server() if ref is None else None
    if "cold-start" in only:
        await _cold_starts(env, sides, peer, max(floor, runs // 5), mine, pairs)
    rounds = rounds if ref is not None else 1
    async with await StubModelServer.start() as stub:
        env = {**env, "FASTEDIT_FAST_BASE_URL": stub.base_url, "FASTEDIT_FAST_MODEL": "stub-fast"}
        env["FASTEDIT_MODE"] = "fast"
        per_round = max(floor, runs // rounds)
        # Paired: one first-job session per side and round, the round's two sessions adjacent.
        sessions = 1 if pairs is not None else max(3, runs // 10 // rounds)
        for index in range(rounds):
            order = sides if index % 2 == 0 else list(reversed(sides))
            if pairs is not None:
                pairs.start_round(mine, sides[1][1])
            for server, figures in order:
                if "first-job" in only:
                    await first_job(env, server, stub, sessions, figures, model)
                if only - {"cold-start", "first-job", "parse", "names"}:
                    await _session(server, env, stub, per_round, figures, model, only, quick)
            if pairs is not None:
                pairs.end_round(mine, sides[1][1])
    return mine, sides[1][1] if ref is not None else None


def byte_compile(*servers: Server | None) -> None:
    """Byte-compile each measured server's package where it lives (as ``pip install`` does for
    a user; an editable checkout's ``__pycache__`` is git-ignored)."""
    for server in servers:
        if server is None:
            continue
        paths = [p for p in server.env.get("PYTHONPATH", "").split(os.pathsep) if p]
        for root in paths or [str(Path(__file__).resolve().parents[2])]:
            package = Path(root) / "fastedit_lsp"
            if package.is_dir():
                compile_package(package)


async def _cold_starts(
    env: dict[str, str],
    sides: list[tuple[Server, Figures]],
    peer: Server | None,
    runs: int,
    mine: Figures,
    pairs: Pairs | None = None,
) -> None:
    """Cold starts of every side alternately (and of the peer, into our figures); with
    ``pairs``, each run's two starts are a pair."""
    if len(sides) == 1:
        servers = [sides[0][0]] + ([peer] if peer is not None else [])
        await cold_start(env, servers, runs, mine)
        return
    # Two sides share the key names: measure them alternately into separate figures.
    mine.note_load()
    for run in range(runs + 1):
        order = sides if run % 2 else list(reversed(sides))
        if pairs is not None:
            pairs.start_round(mine, sides[1][1])
        for server, figures in order:
            await start_once(env, server, figures if run else None)
        if pairs is not None:
            pairs.end_round(mine, sides[1][1])


def sections(only: str | None) -> frozenset[str]:
    """The sections named by ``--only`` (comma-separated); all of them without it."""
    if not only:
        return frozenset(SECTIONS)
    names = frozenset(name.strip() for name in only.split(",") if name.strip())
    if unknown := sorted(names - set(SECTIONS)):
        raise SystemExit(
            f"fastedit-lsp bench --only: unknown section {', '.join(unknown)}; "
            f"choose among {', '.join(SECTIONS)}"
        )
    return names


def report(
    figures: Figures,
    ref: Figures | None = None,
    ref_name: str = "",
    *,
    model: EditorModel = DEFAULT_EDITOR,
    info: dict[str, Any] | None = None,
    pairs: Pairs | None = None,
) -> str:
    """The Markdown printed by ``fastedit-lsp bench``."""
    info = info or machine()
    parts = [
        f"fastedit-lsp bench: {describe_this()}; editor: ack {model.ack_ms:g} ms, "
        f"didChange echo {'on' if model.echo else 'off'}, stub chunks "
        f"{'one per event' if model.chunk_per_event else 'one per write'}",
        bench_report.table(figures, OURS),
    ]
    if ref is not None:
        parts += [f"### {ref_name}", bench_report.table(ref, OURS)]
        parts += [
            f"### Ratios, this checkout ÷ {ref_name} (same run, alternating)",
            bench_report.ratios(figures, "this", ref, "ref"),
        ]
        if pairs is not None:
            parts += [
                f"### Paired rounds, this checkout ÷ {ref_name} (each round's two sides adjacent)",
                bench_report.paired(figures, pairs, OURS),
            ]
    parts.append(bench_report.goals_table(bench_report.goals(figures, OURS, ref, ref_name)))
    if figures.notes:
        parts.append(bench_report.notes(figures))
    parts.append(bench_report.machine_line(info, figures.loads + (ref.loads if ref else [])))
    return "\n\n".join(parts) + "\n"


def _json(figures: Figures) -> dict[str, Any]:
    return {
        "figures": {
            key: {**figures.stats(key), "unit": unit, "load": figures.load(key), "samples": s}
            for key, (s, unit) in figures.samples.items()
        },
        "notes": figures.notes,
    }


def main(
    out: TextIO,
    *,
    runs: int = 50,
    json_path: str | None = None,
    plot_path: str | None = None,
    compare: str | None = None,
    rounds: int = 3,
    model: EditorModel = DEFAULT_EDITOR,
    only: frozenset[str] = frozenset(SECTIONS),
    paired: bool = False,
    quick: bool = False,
) -> int:
    info = machine()
    floor = QUICK_FLOOR if quick else FLOOR
    pairs = Pairs() if paired and compare is not None else None
    if compare is None:
        figures, ref_figures = asyncio.run(_run(runs, model, None, 1, only, quick=quick))
        ref_name = ""
    else:
        with reference(compare) as ref:
            figures, ref_figures = asyncio.run(
                _run(runs, model, ref, max(1, rounds), only, pairs, quick)
            )
            ref_name = ref.name
    out.write(report(figures, ref_figures, ref_name, model=model, info=info, pairs=pairs))
    if quick:
        out.write(f"\n{QUICK}\n")
    parse_checks = None
    if "parse" in only:
        from . import bench_parse  # the parse check's section, in process

        parse_checks = bench_parse.measure(
            max(floor, runs // 2), QUICK_PARSE_LINES if quick else bench_parse.LINES
        )
        out.write(bench_parse.report(parse_checks))
    names_checks = None
    if "names" in only:
        from . import bench_names  # the names check's section, in process

        names_checks = bench_names.measure(max(floor, runs // 2))
        out.write(bench_names.report(names_checks))
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            data: dict[str, Any] = {"machine": info, "editor": asdict(model), **_json(figures)}
            if parse_checks is not None:
                data["parseCheck"] = parse_checks
            if names_checks is not None:
                data["namesCheck"] = names_checks
            if ref_figures is not None:
                data["compare"] = {"ref": ref_name, **_json(ref_figures)}
                if pairs is not None:
                    data["compare"]["paired"] = {
                        key: {**pairs.summary(key), "pairs": rounds}
                        for key, rounds in pairs.rounds.items()
                    }
            json.dump(data, f, indent=2)
    if plot_path:
        problem = bench_report.plot(figures, plot_path)
        out.write(f"\n{problem}\n" if problem else f"\nplot: {plot_path}\n")
    return 0
