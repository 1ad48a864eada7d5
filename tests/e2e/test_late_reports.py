"""Streaming into an editor that reports its changes late (Neovim debounces didChange 150 ms).

While a stream runs, the server's copy of the document lacks the edits the editor has applied but
not reported yet; each next edit's position is in the editor's text, past the end of the server's
stale line (or past its last line), and must not be clamped to it.
"""

from __future__ import annotations

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer, split_tokens

from .conftest import MakeEditor

URI = "file:///tmp/fastedit-e2e/late.py"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
@pytest.mark.parametrize(
    "answer",
    ["a + b  # the sum of both numbers, é 😀", "(\n        a\n        + b\n    )  # 😀 é"],
    ids=["one-line", "multi-line"],
)
async def test_a_stream_at_the_end_of_a_line_lands_in_order_when_reports_come_late(
    make_editor: MakeEditor, stub: StubModelServer, encoding: str, answer: str
) -> None:
    editor = await make_editor(sync="batched", encoding=encoding)
    editor.batch_delay = 0.3
    text = "def add(a, b):\n    return \n"
    editor.open(URI, text)
    stub.script(Answer(tokens=split_tokens(answer, 3), tps=80))
    cursor = text.index("return ") + len("return ")
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, cursor)}
    )
    assert record["state"] == "done", record
    assert record["metrics"]["edits"] >= 2, record
    assert editor.text(URI) == text[:cursor] + answer + text[cursor:]
