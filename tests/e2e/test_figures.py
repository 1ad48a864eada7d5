"""The job record's figures: a model's decode speed with its time to first token apart, and the
offline engine's elapsed time with no speed."""

from __future__ import annotations

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

from .conftest import MakeEditor

URI = "file:///tmp/fastedit-e2e/figures.py"
TEXT = "def area(width, height):\n    return \n"
RETURN = {"line": 1, "character": len("    return ")}


async def test_tokens_per_second_is_the_models_decode_speed_not_the_jobs(
    editor: Editor, stub: StubModelServer
) -> None:
    # Two tokens, the second 0.5 s after the first (the stub never sends a token early), after
    # 0.3 s of waiting: 1 token after the first in 0.5 s is 2 tok/s. Counting the first token,
    # and the time the edits and the editor's reports take, gave about twice that.
    stub.script(Answer(tokens=["width", " * height"], tps=2, ttft=0.3))
    editor.open(URI, TEXT)
    record = await editor.run("fastedit.completeRest", {"uri": URI, "position": RETURN})
    assert record["state"] == "done", record
    assert editor.text(URI) == "def area(width, height):\n    return width * height\n"
    metrics = record["metrics"]
    assert metrics["tokens"] == 2
    # Bounds, not a time: the rate is the stub's schedule read back, with room for a slow
    # machine on either side; the first token cannot come before the stub's 0.3 s.
    assert 1.2 <= metrics["tokensPerSecond"] <= 3.2, metrics
    assert metrics["ttftMs"] >= 300, metrics
    assert metrics["elapsedMs"] >= metrics["ttftMs"] + 300, metrics


async def test_the_offline_engine_reports_elapsed_time_and_no_speed(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    offline = await make_editor(model=False)
    doc = "# regex: ISO date\n#   match: 2024-01-31\n#   reject: 2024-1-31\n"
    offline.open(URI, doc)
    here = {"line": 0, "character": 0}
    record = await offline.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done" and record["route"] == "local", record
    metrics = record["metrics"]
    assert metrics["tokensPerSecond"] is None and metrics["ttftMs"] is None, metrics
    assert metrics["tokens"] == 0
    assert metrics["elapsedMs"] > 0 and metrics["edits"] >= 1
    assert stub.requests == []
