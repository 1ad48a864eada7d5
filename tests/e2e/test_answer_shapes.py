"""Answers in the shapes real chat models give land as the code they meant, through the real
server (docs/answers.md): fences, prose, reasoning, the current line or the function re-sent,
dedented, CRLF, run on into the code that follows; for complete the rest, edit selection and
inline completion; and nothing the user types during the stream is lost."""

from __future__ import annotations

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer
from fastedit_lsp.tools.stub_answers import ANSWER_SHAPES
from tests.support import shared_server
from tests.support.harness import Editor
from tests.support.shared_server import MakeEditor

# One server and stub for the module, reset between tests (tests/support/shared_server.py).
pytestmark = pytest.mark.asyncio(loop_scope="module")
module_stub, module_editor = shared_server.module_stub, shared_server.module_editor
stub, editor, make_editor = shared_server.stub, shared_server.editor, shared_server.make_editor

URI = "file:///tmp/fastedit-e2e/shapes.py"
# Third-party code (CPython's textwrap.indent), cut inside its body.
ORIGINAL = (
    "def indent(text, prefix, predicate=None):\n"
    "    if predicate is None:\n"
    "        def predicate(line):\n"
    "            return line.strip()\n"
    "\n"
    "    def prefixed_lines():\n"
    "        for line in text.splitlines(True):\n"
    "            yield (prefix + line if predicate(line) else line)\n"
    "    return ''.join(prefixed_lines())\n"
    "\n"
    "\n"
    "def other():\n"
    "    pass\n"
)
CURSOR_LINE = "    def prefixed_lines():\n"
MISSING = (
    "def prefixed_lines():\n"
    "        for line in text.splitlines(True):\n"
    "            yield (prefix + line if predicate(line) else line)\n"
    "    return ''.join(prefixed_lines())"
)
CUT_AT = ORIGINAL.index(CURSOR_LINE) + 4
DOCUMENT = ORIGINAL[:CUT_AT] + ORIGINAL[ORIGINAL.index("\n\n\ndef other") :]
FUNCTION_START = ORIGINAL[:CUT_AT]  # the function re-sent from its first line


async def _complete_rest(editor: Editor, stub: StubModelServer, answer: Answer) -> None:
    editor.open(URI, DOCUMENT)
    stub.script(answer)
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, CUT_AT)}
    )
    assert record["state"] == "done", record


@pytest.mark.parametrize("shape", ANSWER_SHAPES)
async def test_complete_the_rest_lands_each_answer_shape_exactly(
    editor: Editor, stub: StubModelServer, shape: str
) -> None:
    await _complete_rest(editor, stub, Answer(text=MISSING, shape=shape, token_size=2))
    assert editor.text(URI) == ORIGINAL


@pytest.mark.parametrize(
    ("repeat", "shape"),
    [
        pytest.param("    ", "plain", id="the-current-line-repeated-with-its-indentation"),
        pytest.param(FUNCTION_START, "fence", id="the-function-re-sent-in-fences"),
        pytest.param(FUNCTION_START, "think_fence", id="think-then-the-function-in-fences"),
        pytest.param(
            "        def predicate(line):\n            return line.strip()\n\n    ",
            "plain",
            id="the-lines-above-repeated",
        ),
    ],
)
async def test_complete_the_rest_drops_what_the_answer_repeats_from_before_the_cursor(
    editor: Editor, stub: StubModelServer, repeat: str, shape: str
) -> None:
    answer = Answer(text=MISSING, repeat=repeat, shape=shape, token_size=2)
    await _complete_rest(editor, stub, answer)
    assert editor.text(URI) == ORIGINAL


async def test_complete_the_rest_stops_where_the_answer_runs_into_the_code_that_follows(
    editor: Editor, stub: StubModelServer
) -> None:
    run_on = MISSING + "\n\n\ndef other():\n    pass\n"
    await _complete_rest(editor, stub, Answer(text=run_on, token_size=2))
    assert editor.text(URI) == ORIGINAL


@pytest.mark.parametrize("shape", ["plain", "fence", "dedent", "think", "crlf"])
async def test_edit_selection_lands_the_rewrite_exactly(
    editor: Editor, stub: StubModelServer, shape: str
) -> None:
    editor.open(URI, ORIGINAL)
    first = ORIGINAL.index("    def prefixed_lines")
    last = ORIGINAL.index("    return ''.join")
    selection = ORIGINAL[first : last - 1]
    renamed = selection.replace("prefixed_lines", "lines_with_prefix")
    stub.script(Answer(text=renamed, shape=shape, token_size=2))
    record = await editor.run(
        "fastedit.editSelection",
        {
            "uri": URI,
            "range": {"start": editor.pos(URI, first), "end": editor.pos(URI, last - 1)},
            "instruction": "rename prefixed_lines to lines_with_prefix",
        },
    )
    assert record["state"] == "done", record
    assert editor.text(URI) == ORIGINAL[:first] + renamed + ORIGINAL[last - 1 :]


async def test_typing_above_during_a_repeated_answer_is_kept(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, DOCUMENT)
    stub.script(Answer(text=MISSING, repeat=FUNCTION_START, shape="fence", token_size=2, tps=300))
    started = await editor.command(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, CUT_AT)}
    )
    await editor.wait_applied(1)
    editor.type(URI, 0, "# typed\n")
    record = await editor.wait_job(started["jobId"])
    assert record["state"] == "done", record
    assert editor.text(URI) == "# typed\n" + ORIGINAL


@pytest.mark.parametrize("shape", ["plain", "fence", "think_fence", "dedent"])
async def test_inline_completion_items_are_exact(
    make_editor: MakeEditor, stub: StubModelServer, shape: str
) -> None:
    editor = await make_editor(inline=True, init_options={"completionDeadlineMs": 20000})
    text = "def area(r):\n    scale = 2\n    \n"
    editor.open(URI, text)
    cursor = text.index("    \n") + 4
    stub.script(Answer(text="return scale * r", repeat="    ", shape=shape, token_size=2))
    result = await editor.inline_completion(URI, cursor, automatic=False)
    items = result.items if hasattr(result, "items") else result
    assert [item.insert_text for item in items] == ["return scale * r"]
