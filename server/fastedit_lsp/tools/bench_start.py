"""The bench's figures that need fresh server processes: cold start and the first job of a
session.

- **cold start**: process start → ``initialize`` reply, and the RSS then; servers under test
  (ours, another checkout with ``--compare``, jedi-language-server as a peer) started
  alternately, so that all see the same load.
- **first job of a session**: ``initialized`` and the file's ``didOpen``, 300 ms of idle, then
  a job in that file: its first edit, against a second (warm) job's in the same session; the
  RSS after the idle time (the warm-up's) and the modules the first job still had to import.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import sys
import time
from collections.abc import Mapping, Sequence

from .bench_core import (
    INIT_OPTIONS,
    Editor,
    EditorModel,
    Figures,
    Server,
    complete_rest,
    initialize,
    rss_mib,
)
from .lsp_client import LspClient, LspError
from .stub import Answer, StubModelServer

#: The idle time between ``initialized`` and the first job (the issue's figure).
FIRST_JOB_AFTER = 0.3
DEBUG_TIMINGS = "fastedit/debugTimings"
RSS_WARM = f"RSS after the warm-up ({FIRST_JOB_AFTER * 1000:.0f} ms after initialized)"


def jedi_server() -> Server | None:
    """jedi-language-server, if it is installed (the ``bench`` extra)."""
    if importlib.util.find_spec("jedi_language_server") is not None:
        # What its console script runs, with the interpreter our server runs on.
        code = "import sys; from jedi_language_server.cli import cli; sys.exit(cli())"
        return Server("jedi-language-server", (sys.executable, "-c", code))
    found = shutil.which("jedi-language-server")
    return Server("jedi-language-server", (found,)) if found else None


async def cold_start(
    env: Mapping[str, str], servers: Sequence[Server], runs: int, figures: Figures
) -> None:
    """Each server started ``runs`` times, alternating (the first round warms the disk cache)."""
    figures.note_load()
    for run in range(runs + 1):
        order = list(servers) if run % 2 else list(reversed(servers))
        for server in order:
            await start_once(env, server, figures if run else None)


async def start_once(env: Mapping[str, str], server: Server, figures: Figures | None) -> None:
    """Start ``server`` once; its cold start and RSS go to ``figures`` (None: a warm-up)."""
    client, elapsed = await initialize(server.environ(env), server.command)
    if figures is not None:
        figures.add(f"cold start to initialize reply: {server.name}", [elapsed])
        figures.add(f"RSS after initialize: {server.name}", [rss_mib(client.proc.pid)], "MiB")
    await client.shutdown()


async def first_job(
    env: Mapping[str, str],
    server: Server,
    stub: StubModelServer,
    sessions: int,
    figures: Figures,
    model: EditorModel,
) -> None:
    """The first job of ``sessions`` fresh sessions against a warm job in each."""
    figures.note_load()
    stub.default = Answer(text="1", role_chunk=False, chunk_per_event=model.chunk_per_event)
    for _ in range(sessions):
        client, _ = await initialize(server.environ(env), server.command, INIT_OPTIONS)
        editor = Editor(client, model)
        try:
            # An editor opens the files it shows as the session starts (``didOpen`` right after
            # ``initialized``); the user's first job comes later.
            uri = "file:///bench/first_job.py"
            editor.open(uri, "x = \n")
            await asyncio.sleep(FIRST_JOB_AFTER)
            figures.add(RSS_WARM, [rss_mib(client.proc.pid)], "MiB")
            before = await _module_names(client)
            for key in ("first job of a session: first edit", "warm job: first edit"):
                count = len(editor.edits[uri])
                sent = time.monotonic()
                job_id = await complete_rest(client, uri)
                await editor.edits_reach(uri, count + 1)
                figures.add(key, [(editor.edits[uri][count][0] - sent) * 1000])
                await client.command("fastedit.wait", {"jobId": job_id})
                editor.change(uri, [{"text": "x = \n"}])
                if before is not None and key.startswith("first job"):
                    after = await _module_names(client)
                    if after is not None:
                        figures.add("modules imported by the first job", [len(after - before)], "")
            figures.add("RSS after two jobs", [rss_mib(client.proc.pid)], "MiB")
        finally:
            await client.shutdown()


async def _module_names(client: LspClient) -> set[str] | None:
    try:
        reply = await client.request(DEBUG_TIMINGS, {"modules": True})
    except LspError:
        return None
    modules = reply.get("modules") if isinstance(reply, dict) else None
    return set(modules) if isinstance(modules, list) else None
