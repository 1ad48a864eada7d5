"""Load and soak, bounded, loopback only: many jobs at once, then many jobs in a row.

Every job ends (done, or cancelled or failed with a reason), the user's text is intact, the
server's counts at rest are back where they were and its memory grew by less than 20 MB.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.leaks import at_rest, leaks
from tests.support.reliability import Recorder

from .conftest import MakeEditor

DOCS, JOBS_PER_DOC = 20, 5
#: Five insertion points, one per line, far enough apart for their jobs not to overlap.
TEXT = "".join(f"v{i} = \n# keep {i}\n" for i in range(JOBS_PER_DOC))
TPS = 5000
SEQUENTIAL = 2000
RSS_GROWTH_KB = 20 * 1024


async def test_100_concurrent_jobs_on_20_documents_all_end_cleanly(
    make_editor: MakeEditor, stub: StubModelServer, reliability: Recorder
) -> None:
    editor = await make_editor(init_options={"mode": "fast"})
    uris = [f"file:///tmp/fastedit-load/doc{d}.py" for d in range(DOCS)]
    for uri in uris:
        editor.open(uri, TEXT)
    stub.script(Answer(text="Q" * 10))
    warm = await editor.run(
        "fastedit.completeRest", {"uri": uris[0], "position": editor.pos(uris[0], 4)}
    )
    assert warm["state"] == "done", warm
    editor.delete(uris[0], 4, 14)
    before = await at_rest(editor)

    stub.default = Answer(text="Q" * 200, token_size=1, tps=TPS)
    starts: list[Any] = []
    for uri in uris:
        for line in range(JOBS_PER_DOC):
            position = {"line": 2 * line, "character": len(f"v{line} = ")}
            starts.append(
                editor.command("fastedit.completeRest", {"uri": uri, "position": position})
            )
    started = await asyncio.gather(*starts)
    records = await asyncio.gather(*(editor.wait_job(s["jobId"], 60000) for s in started))
    states = [r["state"] for r in records]
    assert len(records) == DOCS * JOBS_PER_DOC
    assert set(states) <= {"done", "cancelled", "failed"}, states
    for record in records:
        if record["state"] != "done":
            assert record["error"], record
    editor.flush()
    for uri in uris:
        # Whatever each job managed, the user's text is all there, in order.
        assert editor.text(uri).replace("Q", "") == TEXT, editor.text(uri)
    after = await at_rest(editor)
    assert leaks(before, after) == [], (before, after)
    growth = after["rssKb"] - before["rssKb"]
    assert growth < RSS_GROWTH_KB, (before, after)
    reliability(
        "load",
        f"{DOCS * JOBS_PER_DOC} concurrent completeRest jobs on {DOCS} documents "
        f"({JOBS_PER_DOC} regions each), stub at {TPS:,} tok/s",
        "every job ended (done, or stopped with a reason when a neighbour's edit moved its "
        "region mid-flight); the user's text intact in every document; no leaked task, "
        "descriptor, connection or progress token; RSS growth < 20 MB",
    )


async def test_2000_sequential_jobs_leak_nothing(
    make_editor: MakeEditor, stub: StubModelServer, reliability: Recorder
) -> None:
    editor = await make_editor(init_options={"mode": "fast"})
    uri = "file:///tmp/fastedit-load/soak.py"
    editor.open(uri, "x = \n")
    stub.default = Answer(text="1", tps=0)
    # Warm up, so that what is compared is the steady state.
    for _ in range(20):
        assert (await _append(editor, uri))["state"] == "done"
    before = await at_rest(editor)
    states: dict[str, int] = {}
    for _ in range(SEQUENTIAL):
        record = await _append(editor, uri)
        states[record["state"]] = states.get(record["state"], 0) + 1
    assert states == {"done": SEQUENTIAL}, states
    assert editor.text(uri) == "x = " + "1" * (SEQUENTIAL + 20) + "\n"
    after = await at_rest(editor)
    assert leaks(before, after) == [], (before, after)
    assert after["jobs"] <= 50, after  # the registry keeps the last 50
    growth = after["rssKb"] - before["rssKb"]
    assert growth < RSS_GROWTH_KB, (before, after)
    reliability(
        "load",
        f"{SEQUENTIAL:,} sequential completeRest jobs on one document",
        "all done; the document holds exactly their text; no leaked task, descriptor, "
        "connection, progress token or pending request; 50 job records kept; RSS growth "
        "< 20 MB",
    )


async def _append(editor: Any, uri: str) -> dict[str, Any]:
    """completeRest at the end of the first line."""
    end = len(editor.text(uri).split("\n", 1)[0])
    record: dict[str, Any] = await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": {"line": 0, "character": end}}
    )
    return record
