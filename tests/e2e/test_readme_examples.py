"""The README's own examples of the actions, run offline (no key, no network) through the real
server, as the README writes them: complete the rest (the command, ghost text and the completion
item) in the sample file the README points at, the regex block, the syntax fix. And where the
offline engine has nothing to complete, it says once what it can do."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path

from tests.support.errors import wait_shown

from .conftest import MakeEditor

REPO = Path(__file__).resolve().parents[2]
#: The README as one line of text (its sentences wrap anywhere).
README = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
SAMPLE = REPO / "examples" / "python" / "validators.py"
URI = from_fs_path(str(SAMPLE)) or str(SAMPLE)


def _completion_example() -> tuple[str, str]:
    """The README's complete-the-rest example: what is typed, and what it becomes."""
    found = re.search(
        r"`(return \w+\.fullmatch\()` becomes `(return \w+\.fullmatch\([^`]*)`", README
    )
    assert found is not None, "the README's complete-the-rest example moved"
    return found.group(1), found.group(2)


def _sample_ending_with(line: str) -> str:
    """The sample file the README points at, its unfinished last line replaced by ``line``."""
    lines = SAMPLE.read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert "fullmatch(" in lines[-1]
    return "\n".join([*lines[:-1], "    " + line]) + "\n"


def _position(text: str, offset: int) -> dict[str, int]:
    line = text.count("\n", 0, offset)
    return {"line": line, "character": offset - (text.rfind("\n", 0, offset) + 1)}


def _texts(result: Any) -> list[str]:
    if isinstance(result, types.InlineCompletionList):
        return [str(item.insert_text) for item in result.items]
    if isinstance(result, types.CompletionList):
        return [item.text_edit.new_text for item in result.items if item.text_edit]
    return []


async def test_the_readmes_complete_the_rest_example_is_completed_offline(
    make_editor: MakeEditor,
) -> None:
    typed, becomes = _completion_example()
    text = _sample_ending_with(typed)
    end = len(text) - 1
    rest = becomes[len(typed) :]
    settings = {"completionDeadlineMs": 20000, "completionItemsWaitMs": 20000}
    # Ghost text (a client that shows inline completions)...
    ghost = await make_editor(model=False, inline=True, init_options=settings)
    ghost.open(URI, text)
    assert _texts(await ghost.inline_completion(URI, end, automatic=False)) == [rest]
    # ...the completion item (one without)...
    items = await make_editor(model=False, init_options=settings)
    items.open(URI, text)
    assert [t[len(t) - len(rest) :] for t in _texts(await items.completion(URI, end))] == [rest]
    # ...and the command.
    record = await items.run(
        "fastedit.completeRest", {"uri": URI, "position": _position(text, end)}
    )
    assert record["state"] == "done", record
    assert items.text(URI) == text[:end] + rest + "\n"


async def test_the_readmes_regex_example_lands_as_the_readme_shows(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n( *# regex:.*?)```", readme, re.S)
    assert block is not None, "the README's regex example moved"
    *comments, pattern_line = textwrap.dedent(block.group(1)).strip("\n").split("\n")
    editor = await make_editor(model=False)
    uri = from_fs_path(str(tmp_path / "dates.py")) or ""
    text = "import re\n\n" + "\n".join(comments) + "\n"
    editor.open(uri, text)
    here = {"line": 2, "character": 0}
    record = await editor.run(
        "fastedit.generateRegex", {"uri": uri, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done" and record["verification"]["ok"] is True, record
    assert editor.text(uri) == text + pattern_line + "\n"


async def test_the_readmes_syntax_fix_example_is_fixed_offline(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    found = re.search(r"`(for \w+ in \w+)` becomes `(for \w+ in \w+:)`", README)
    assert found is not None, "the README's fix-syntax example moved"
    broken, fixed = found.groups()
    editor = await make_editor(model=False)
    uri = from_fs_path(str(tmp_path / "total.py")) or ""
    text = f"def total(items):\n    count = 0\n    {broken}\n        count += 1\n    return count\n"
    editor.open(uri, text)
    start, end = {"line": 0, "character": 0}, _position(text, len(text))
    record = await editor.run(
        "fastedit.fixSyntax", {"uri": uri, "range": {"start": start, "end": end}}
    )
    assert record["state"] == "done" and record["verification"]["ok"] is True, record
    assert editor.text(uri) == text.replace(broken, fixed)


@pytest.mark.parametrize("inline", [True, False], ids=["ghost-text", "completion-item"])
async def test_offline_with_nothing_to_complete_it_says_once_what_it_completes(
    make_editor: MakeEditor, tmp_path: Path, inline: bool
) -> None:
    editor = await make_editor(model=False, inline=inline)
    typed, _ = _completion_example()
    uri = from_fs_path(str(tmp_path / "alone.py")) or ""
    # The README's line alone: nothing earlier in the open files continues it.
    text = f"def is_semver(text):\n    {typed}\n"
    editor.open(uri, text)
    ask = editor.inline_completion if inline else editor.completion
    assert _texts(await ask(uri, len(text) - 1)) == []
    said = await wait_shown(editor, "only continue code", kind=types.MessageType.Info)
    assert "already in your open files" in said and "fastedit-lsp doctor" in said
    assert _texts(await ask(uri, len(text) - 1)) == []
    # Once: a second empty answer (and the first's status round trip) brings no second message.
    await editor.command("fastedit.status")
    assert [m.message for m in editor.client.messages].count(said) == 1
