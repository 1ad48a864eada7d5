"""A first session: complete the rest streams the stub model's answer into the buffer."""

from __future__ import annotations

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

URI = "file:///tmp/fastedit-e2e/example.py"


async def test_complete_rest_streams_the_answer_as_partial_edits(
    editor: Editor, stub: StubModelServer
) -> None:
    text = "def add(a, b):\n    return \n\nprint(add(1, 2))\n"
    editor.open(URI, text)
    stub.script(Answer(text="a + b  # sum", tps=200))
    cursor = text.index("return ") + len("return ")
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, cursor)}
    )
    assert record["state"] == "done", record
    assert editor.text(URI) == text[:cursor] + "a + b  # sum" + text[cursor:]
    assert record["metrics"]["edits"] >= 2
    assert record["route"] in ("fast", "standard")
    assert record["model"] == "stub-fast"
