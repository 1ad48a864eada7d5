"""Next-edit suggestions through the real server, offline: Copilot's
``textDocument/copilotInlineEdit`` wire shape, ``fastedit.nextEdit``, the inline-completion
form, the counters in ``fastedit.status``, the toggle, and what is never suggested (a stale
version, an excluded file). The server never applies a suggestion: the editor does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.uris import from_fs_path

from tests.support.harness import Editor, _plain

from .conftest import MakeEditor

SOURCE = """def total(items, scale):
    count = 0
    for item in items:
        count += item * scale
    log(count, "sum")
    return count


def other(count):
    log(count, "other")
    return count
"""


@pytest.fixture
async def offline(make_editor: MakeEditor) -> Editor:
    return await make_editor(model=False)


def _uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


def _offset(editor: Editor, uri: str, line: int, character: int) -> int:
    return editor.docs[uri].offset(line, character, editor.encoding)


def _retype(editor: Editor, uri: str, line: int, start: int, end: int, text: str) -> None:
    """The user deletes ``line[start:end]`` and types ``text`` one key at a time."""
    at = _offset(editor, uri, line, start)
    for _ in range(end - start):
        editor.delete(uri, at, at + 1)
    for index, ch in enumerate(text):
        editor.type(uri, at + index, ch)


def _accept(editor: Editor, uri: str, edit: dict[str, Any]) -> None:
    """What a client does on the accept key: apply the edit to its buffer (one change)."""
    start = edit["range"]["start"]
    end = edit["range"]["end"]
    a = _offset(editor, uri, start["line"], start["character"])
    b = _offset(editor, uri, end["line"], end["character"])
    editor._change(uri, a, b, edit["text"])


async def _inline_edit(editor: Editor, uri: str, line: int, character: int) -> dict[str, Any]:
    editor.flush()
    params = {
        "textDocument": {"uri": uri, "version": editor.docs[uri].version},
        "position": {"line": line, "character": character},
    }
    result = await editor.client.protocol.send_request_async(
        "textDocument/copilotInlineEdit", params
    )
    answer: dict[str, Any] = _plain(result)
    return answer


async def test_a_rename_is_carried_through_copilot_inline_edit_one_accept_at_a_time(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "rename.py")
    offline.open(uri, SOURCE)
    _retype(offline, uri, 1, 4, 9, "acc")  # count = 0 -> acc = 0
    lines = []
    for _ in range(5):
        answer = await _inline_edit(offline, uri, 1, 7)
        if not answer["edits"]:
            break
        (edit,) = answer["edits"]
        version = offline.docs[uri].version
        assert edit["textDocument"] == {"uri": uri, "version": version}
        assert edit["text"] == "acc"
        assert edit["command"]["command"] == "fastedit.acceptNextEdit"
        (offer_id,) = edit["command"]["arguments"]
        assert offline.text(uri) == offline.docs[uri].text  # the server applied nothing
        offline.client.protocol.notify(
            "textDocument/didShowInlineEdit", {"item": {"command": {"arguments": [offer_id]}}}
        )
        _accept(offline, uri, edit)
        await offline.command("fastedit.acceptNextEdit", offer_id)
        lines.append(edit["range"]["start"]["line"])
    assert lines == [3, 4, 5]
    text = offline.text(uri)
    assert '    acc += item * scale\n    log(acc, "sum")\n    return acc\n' in text
    assert 'def other(count):\n    log(count, "other")\n    return count\n' in text
    assert offline.applied == []  # no workspace/applyEdit: the editor applies suggestions
    status = await offline.command("fastedit.status")
    assert status["nextEdit"]["shown"] == 3 and status["nextEdit"]["accepted"] == 3
    assert status["nextEdit"]["enabled"] is True and status["nextEdit"]["useModel"] is False
    assert status["nextEdit"]["last"]["state"] == "accepted"


async def test_an_added_argument_is_carried_to_the_next_call_through_fastedit_next_edit(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "calls.py")
    offline.open(uri, SOURCE)
    line = SOURCE.splitlines()[4]
    col = line.index('"sum"') + len('"sum"')
    offline.type(uri, _offset(offline, uri, 4, col), ", level=2")
    offline.flush()
    here = {"line": 4, "character": col + len(", level=2")}
    answer = await offline.command("fastedit.nextEdit", {"uri": uri, "position": here})
    (edit,) = answer["edits"]
    assert edit["text"] == ", level=2"
    assert edit["range"]["start"] == edit["range"]["end"] == {"line": 9, "character": 22}
    _accept(offline, uri, edit)
    await offline.command("fastedit.acceptNextEdit", edit["command"]["arguments"][0])
    offline.flush()
    assert offline.text(uri).splitlines()[9] == '    log(count, "other", level=2)'
    again = await offline.command("fastedit.nextEdit", {"uri": uri, "position": here})
    assert again == {"edits": []}
    status = await offline.command("fastedit.status")
    assert status["nextEdit"]["accepted"] == 1 and status["nextEdit"]["shown"] == 1


GO_SOURCE = """package stats

// total sums xs: count is what it returns.
func total(xs []int) int {
\tcount := 0
\tfor _, x := range xs {
\t\tcount += x // add x to count
\t}
\tlog.Printf("count=%d", count)
\treturn count
}

func other(ys []int) int {
\tcount := len(ys)
\treturn count
}
"""


async def test_a_go_rename_is_carried_in_its_function_from_the_syntax_tree(
    offline: Editor, tmp_path: Path
) -> None:
    """Not to the other function's own ``count``, nor into the comment or the string."""
    uri = _uri(tmp_path / "stats.go")
    offline.open(uri, GO_SOURCE, language_id="go")
    _retype(offline, uri, 4, 1, 6, "sum")  # count := 0 -> sum := 0
    offline.flush()
    here = {"line": 4, "character": 4}
    starts = []
    for _ in range(5):
        answer = await offline.command("fastedit.nextEdit", {"uri": uri, "position": here})
        if not answer["edits"]:
            break
        (edit,) = answer["edits"]
        assert edit["text"] == "sum"
        assert edit["textDocument"] == {"uri": uri, "version": offline.docs[uri].version}
        _accept(offline, uri, edit)
        await offline.command("fastedit.acceptNextEdit", edit["command"]["arguments"][0])
        offline.flush()
        here = edit["range"]["start"]
        starts.append((here["line"], here["character"]))
    assert starts == [(6, 2), (8, 24), (9, 8)]
    text = offline.text(uri)
    assert "\t\tsum += x // add x to count\n" in text
    assert '\tlog.Printf("count=%d", sum)\n\treturn sum\n' in text
    assert "\tcount := len(ys)\n\treturn count\n" in text
    assert "// total sums xs: count is what it returns." in text
    status = await offline.command("fastedit.status")
    assert status["nextEdit"]["accepted"] == 3 and status["nextEdit"]["last"]["kind"] == "rename"


async def test_a_suggestion_for_a_stale_version_is_not_made(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "stale.py")
    offline.open(uri, SOURCE)
    _retype(offline, uri, 1, 4, 9, "acc")
    offline.flush()
    stale = offline.docs[uri].version - 1
    params = {
        "textDocument": {"uri": uri, "version": stale},
        "position": {"line": 1, "character": 7},
    }
    result = await offline.client.protocol.send_request_async(
        "textDocument/copilotInlineEdit", params
    )
    assert _plain(result) == {"edits": []}
    assert (await _inline_edit(offline, uri, 1, 7))["edits"]  # the current version gets one


async def test_the_toggle_turns_suggestions_off_and_on(offline: Editor, tmp_path: Path) -> None:
    uri = _uri(tmp_path / "toggle.py")
    offline.open(uri, SOURCE)
    _retype(offline, uri, 1, 4, 9, "acc")
    assert await offline.command("fastedit.toggleNextEdit") == {"enabled": False}
    assert (await _inline_edit(offline, uri, 1, 7))["edits"] == []
    assert (await offline.command("fastedit.status"))["nextEdit"]["enabled"] is False
    assert await offline.command("fastedit.toggleNextEdit", {}) == {"enabled": True}
    assert (await _inline_edit(offline, uri, 1, 7))["edits"]


async def test_an_excluded_file_teaches_nothing(offline: Editor, tmp_path: Path) -> None:
    uri = _uri(tmp_path / ".env.py")
    offline.open(uri, SOURCE)
    _retype(offline, uri, 1, 4, 9, "acc")
    assert (await _inline_edit(offline, uri, 1, 7))["edits"] == []


async def test_a_next_edit_at_the_cursor_is_an_inline_completion_with_a_range(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "inline.py")
    offline.open(uri, "g(a, b)\ng(c, d)\n")
    offline.type(uri, _offset(offline, uri, 0, 6), ", z=1")
    result = await offline.inline_completion(uri, _offset(offline, uri, 1, 6))
    (item,) = result.items
    assert item.insert_text == ", z=1"
    assert item.range is not None and item.range.start == item.range.end
    assert (item.range.start.line, item.range.start.character) == (1, 6)
    assert item.command is not None and item.command.command == "fastedit.acceptNextEdit"
    # With the cursor on another line it is not ghost text (copilotInlineEdit carries it).
    elsewhere = await offline.inline_completion(uri, _offset(offline, uri, 0, 0))
    assert all(i.command is None for i in (elsewhere.items if elsewhere else []))


async def test_bad_next_edit_arguments_get_an_error_naming_the_field(
    offline: Editor, tmp_path: Path
) -> None:
    from pygls.exceptions import JsonRpcInvalidParams

    with pytest.raises(JsonRpcInvalidParams, match="position"):
        await offline.command("fastedit.nextEdit", {"uri": "file:///nowhere.py"})
    with pytest.raises(JsonRpcInvalidParams, match="not open"):
        await offline.command(
            "fastedit.nextEdit",
            {"uri": "file:///nowhere.py", "position": {"line": 0, "character": 0}},
        )
    with pytest.raises(JsonRpcInvalidParams, match="id"):
        await offline.command("fastedit.acceptNextEdit")
