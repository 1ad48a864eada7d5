"""Java's and Rust's names checks through the real server: what the disk says around the file
is read (a Java superclass in the package's directory, a Rust package's ``Cargo.toml``), a good
draft passes its names check and a misspelled or never-imported name lands flagged on the name
in fast mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

from .conftest import MakeEditor

JAVA = (
    "package demo;\n\nclass Shout extends Base {\n"
    "    String shout(String word) {\n        String loud = word.toUpperCase();\n"
    "        @\n    }\n}\n"
)
BASE = 'package demo;\n\nclass Base {\n    protected String suffix() { return "!"; }\n}\n'
RUST = "pub fn shout(word: &str) -> String {\n    let loud = word.to_uppercase();\n    @\n}\n"
MANIFEST = '[package]\nname = "shout"\nversion = "0.1.0"\nedition = "2021"\n'


def _open(editor: Editor, folder: Path, language: str) -> tuple[str, str, int]:
    if language == "java":
        (folder / "demo").mkdir()
        (folder / "demo" / "Base.java").write_text(BASE)
        path, template = folder / "demo" / "Shout.java", JAVA
    else:
        (folder / "Cargo.toml").write_text(MANIFEST)
        (folder / "src").mkdir()
        path, template = folder / "src" / "lib.rs", RUST
    text = template.replace("@", "", 1)
    path.write_text(text)
    uri = path.as_uri()
    editor.open(uri, text, language_id=language)
    return uri, text, template.index("@")


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


async def _land(
    make_editor: MakeEditor, stub: StubModelServer, folder: Path, language: str, draft: str
) -> tuple[dict[str, Any], Editor, str, str, int]:
    editor = await make_editor(init_options={"mode": "fast"})
    uri, text, cursor = _open(editor, folder, language)
    stub.script(Answer(text=draft), Answer(text=draft))
    record = await _complete(editor, uri, cursor)
    assert record["state"] == "done" and record["escalated"] is False, record
    assert editor.text(uri) == text[:cursor] + draft + text[cursor:]
    return record, editor, uri, text, cursor


async def test_a_good_java_draft_using_an_inherited_method_read_from_disk_passes(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    record, *_ = await _land(make_editor, stub, tmp_path, "java", "return loud + suffix();")
    checks = {c["name"]: c["ok"] for c in record["verification"]["checks"]}
    assert checks == {"parse": True, "names": True}


async def test_a_misspelled_java_local_lands_flagged_on_the_name(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    bad = "return lowd + suffix();"
    record, editor, uri, text, cursor = await _land(make_editor, stub, tmp_path, "java", bad)
    assert record["verification"]["details"] == "names check: line 6: 'lowd' is not defined"
    (diagnostic,) = [d for d in editor.client.diagnostics.get(uri, []) if d.source == "fastedit"]
    line = text[:cursor].count("\n")
    column = cursor - (text.rfind("\n", 0, cursor) + 1) + bad.index("lowd")
    assert diagnostic.range.start == types.Position(line=line, character=column)


async def test_a_rust_draft_using_a_std_module_it_never_imports_lands_flagged(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    bad = "loud.repeat(cmp::max(word.len(), 1))"
    record, *_ = await _land(make_editor, stub, tmp_path, "rust", bad)
    checks = {c["name"]: c for c in record["verification"]["checks"]}
    assert checks["names"]["ok"] is False and checks["names"]["symbol"] == "cmp"
    assert record["verification"]["details"] == "names check: line 3: 'cmp' is not defined"


async def test_a_rust_draft_naming_an_unknown_module_passes_without_a_manifest(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    editor = await make_editor(init_options={"mode": "fast"})
    (tmp_path / "lib.rs").write_text(RUST.replace("@", "", 1))
    uri, text = (tmp_path / "lib.rs").as_uri(), RUST.replace("@", "", 1)
    editor.open(uri, text, language_id="rust")
    cursor = RUST.index("@")
    stub.script(Answer(text="helpers::shout(&loud)"))
    record = await _complete(editor, uri, cursor)
    names = [c for c in record["verification"]["checks"] if c["name"] == "names"]
    assert record["state"] == "done" and names[0]["ok"] is True  # may be a crate: not flagged
