"""``fastedit-lsp bench``'s section of what the user waits for (``--only first-line``): the
answer's first line in the buffer beside the model's, and the last edit after the model's last
byte, for complete-the-rest and edit selection (``tools/bench_lines.py``). No time is asserted:
what is pinned is what the figures are made of."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from fastedit_lsp.tools import bench_lines, bench_report
from fastedit_lsp.tools.bench_core import (
    INIT_OPTIONS,
    Editor,
    EditorModel,
    Figures,
    apply_text_edits,
    initialize,
)
from fastedit_lsp.tools.lsp_client import LspClient
from fastedit_lsp.tools.stub import StubModelServer
from tests.support.harness import hermetic_env


def _edit(line: int, col: int, end_line: int, end_col: int, text: str) -> dict[str, Any]:
    return {
        "range": {
            "start": {"line": line, "character": col},
            "end": {"line": end_line, "character": end_col},
        },
        "newText": text,
    }


class _Client:
    """What :class:`Editor` needs of a client, without a server."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        self.sent: list[str] = []
        self.on_notification: Any = None

    def notify(self, method: str, params: Any) -> None:
        self.sent.append(method)


def test_edits_apply_to_the_editors_copy_as_an_editor_applies_them() -> None:
    text = "def f():\n    pass\n"
    # Edits of one WorkspaceEdit: positions in the text before them, applied in array order.
    edits = [_edit(1, 4, 1, 8, "return 1"), _edit(2, 0, 2, 0, "x"), _edit(2, 0, 2, 0, "y")]
    assert apply_text_edits(text, edits) == "def f():\n    return 1\nxy"


@pytest.mark.parametrize(
    "cuts",
    [["    total += 1\n"], ["    to", "tal += 1", "\n"], ["    total += 1", "\n    y"]],
    ids=["one edit", "three edits", "line then break"],
)
async def test_the_first_line_is_seen_with_the_edit_that_completes_it_however_edits_are_cut(
    cuts: list[str],
) -> None:
    client = _Client()
    editor = Editor(client, EditorModel(echo=False))  # type: ignore[arg-type]
    uri = "file:///bench/seen.py"
    editor.open(uri, "def f():\n    total = 0\n", keep_text=True)
    editor.watch_line(uri, "    total += 1")
    line, col = 2, 0
    completing = None
    for index, piece in enumerate(cuts):
        edit = _edit(line, col, line, col, piece)
        await editor.apply({"edit": {"changes": {uri: [edit]}}})
        if completing is None and "    total += 1" in editor.texts[uri].split("\n"):
            completing = index
        rows = piece.split("\n")
        line, col = line + len(rows) - 1, (col if len(rows) == 1 else 0) + len(rows[-1])
    assert completing is not None
    seen = editor.line_seen[uri][1]
    assert seen is not None and seen == editor.edits[uri][completing][0]
    with pytest.raises(ValueError, match="already holds"):
        editor.watch_line(uri, "    total = 0")  # a line the buffer had: nothing to wait for


def test_the_model_line_ends_at_the_token_carrying_its_line_break() -> None:
    case = bench_lines.complete_rest_case("file:///x.py", 70)
    assert "".join(case.tokens[: case.first_line_tokens]) == case.first_line + "\n"
    selection = bench_lines.edit_selection_case("file:///y.py", 70)
    # The selection's first line differs from the original's: the buffer does not hold it yet.
    assert selection.first_line not in selection.text.split("\n")
    assert selection.first_line in selection.expected.split("\n")


@pytest.fixture
async def session() -> AsyncIterator[tuple[LspClient, StubModelServer]]:
    async with await StubModelServer.start() as stub:
        env = hermetic_env(FASTEDIT_FAST_BASE_URL=stub.base_url, FASTEDIT_FAST_MODEL="stub-fast")
        client, _ = await initialize({**env, "FASTEDIT_MODE": "fast"}, None, INIT_OPTIONS)
        try:
            yield client, stub
        finally:
            await client.shutdown()


async def test_the_section_measures_both_actions_at_both_rates_and_each_answer_lands_exactly(
    session: tuple[LspClient, StubModelServer],
) -> None:
    client, stub = session
    editor = Editor(client, EditorModel(ack_ms=1.0))
    figures = Figures()
    # Short answers: what is pinned is the figures' making, not their values.
    await bench_lines.first_lines(client, editor, stub, 2, figures, count=70)
    for rate in bench_lines.LINE_RATES:
        for action in bench_lines.ACTIONS:
            for name in bench_lines.NAMES:
                assert figures.stats(bench_lines.key(name, action, rate))["runs"] == 2
            # The stub wrote the first line after the command went out.
            said = figures.samples[bench_lines.key(bench_lines.MODEL_LINE, action, rate)][0]
            assert all(ms > 0 for ms in said)
    # Every run's buffer ended as the document with the answer in place (one_run checks it),
    # and each stream's writes were recorded by the stub.
    streams = [r for r in stub.requests if r.answer is not None and r.answer.tps]
    assert len(streams) == 2 * 2 * 3  # a first, uncounted run and two counted of each
    assert all(r.token_writes and r.token_writes[-1][0] == r.tokens_sent for r in streams)
    goals = bench_report.goals_table(bench_report.goals(figures, "fastedit-lsp"))
    for action in bench_lines.ACTIONS:
        assert f"first model line in the buffer p50 ≤ the model's first line + 2 ms, {action}" in (
            goals
        )
        assert f"last edit after the model's last byte p50 ≤ 3 ms, {action}" in goals
    assert "| first model line in the buffer, edit selection, 5,000 tok/s |" in (
        bench_report.table(figures, "fastedit-lsp")
    )
