"""Go's names check through the real server: a Go draft using a standard library member that
does not exist, or a local misspelled (its package read from the files next to it on disk),
lands flagged in fast mode with the warning on the name, and escalates in auto mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

from .conftest import MakeEditor

TEXT = (
    'package text\n\nimport "strings"\n\n'
    "func Shout(word string) string {\n\tloud := strings.ToUpper(word)\n\t@\n}\n"
)
SIBLING = 'package text\n\nfunc suffix() string { return "!" }\n'


def _open(editor: Editor, folder: Path) -> tuple[str, str, int]:
    (folder / "suffix.go").write_text(SIBLING)
    path = folder / "shout.go"
    text = TEXT.replace("@", "", 1)
    path.write_text(text)
    uri = path.as_uri()
    editor.open(uri, text, language_id="go")
    return uri, text, TEXT.index("@")


async def _complete(editor: Editor, uri: str, cursor: int) -> dict[str, Any]:
    record = await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, cursor)}
    )
    while True:
        for status in reversed(editor.statuses):
            job = status.get("job") or {}
            if job.get("jobId") == record["jobId"] and job.get("state") != "running":
                return dict(job)
        await editor.next_event()


async def _flagged(
    make_editor: MakeEditor, stub: StubModelServer, folder: Path, bad: str, name: str
) -> str:
    editor = await make_editor(init_options={"mode": "fast"})
    uri, text, cursor = _open(editor, folder)
    stub.script(Answer(text=bad), Answer(text=bad))
    record = await _complete(editor, uri, cursor)
    assert record["state"] == "done" and record["escalated"] is False, record
    assert editor.text(uri) == text[:cursor] + bad + text[cursor:]
    verification = record["verification"]
    checks = {c["name"]: c for c in verification["checks"]}
    assert checks["parse"]["ok"] is True and checks["names"]["ok"] is False
    assert checks["names"]["symbol"] == name
    diagnostics = [d for d in editor.client.diagnostics.get(uri, []) if d.source == "fastedit"]
    (diagnostic,) = diagnostics
    line = text[:cursor].count("\n")
    column = cursor - (text.rfind("\n", 0, cursor) + 1) + bad.index(name)
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (line, column)
    assert diagnostic.range.end == types.Position(line=line, character=column + len(name))
    return str(verification["details"])


async def test_a_go_member_the_standard_library_lacks_lands_flagged_in_fast_mode(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    bad = "return strings.Reverse(loud) + suffix()"
    details = await _flagged(make_editor, stub, tmp_path, bad, "Reverse")
    assert details == "names check: line 7: 'strings' has no member 'Reverse'"


async def test_a_misspelled_go_local_lands_flagged_in_fast_mode(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    details = await _flagged(make_editor, stub, tmp_path, "return lowd + suffix()", "lowd")
    assert details == "names check: line 7: 'lowd' is not defined"


async def test_a_hallucinated_go_name_escalates_in_auto_mode(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    editor = await make_editor(init_options={"mode": "auto"})
    uri, text, cursor = _open(editor, tmp_path)
    bad, good = "return strings.Reverse(loud)", "return loud + suffix()"
    stub.script(Answer(text=bad), Answer(text=bad), Answer(text=good))
    record = await _complete(editor, uri, cursor)
    assert record["state"] == "done" and record["escalated"] is True, record
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", False),
        ("standard", True),
    ]
    assert editor.text(uri) == text[:cursor] + good + text[cursor:]
    names = [c for c in record["verification"]["checks"] if c["name"] == "names"]
    assert names and names[0]["ok"] is True
