"""The sample files of examples/ do what examples/README.md says, offline (no key, no network):
the regex block gets its pattern, the unfinished last line is completed, the broken file is
fixed. Run through the real server, so the examples cannot rot."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pygls.uris import from_fs_path

from .conftest import MakeEditor

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

LANGUAGES = {".py": "python", ".js": "javascript", ".ts": "typescript", ".go": "go", ".rs": "rust"}

#: (file, what the regex lands as, what completing the last line adds)
TRY = [
    ("python/validators.py", "ISO_DATE_PATTERN = re.compile(", "text) is not None"),
    ("javascript/validators.js", "const SEMANTIC_VERSION_PATTERN = /^", "text);"),
    ("typescript/slug.ts", "const PAGE_SLUG_PATTERN = /^", "text);"),
    ("go/validate.go", "var API_HOSTNAME_PATTERN = regexp.MustCompile(`^", "text)"),
    ("rust/version.rs", "let release_version_tag = Regex::new(", "text));"),
]

#: (file, the line the fix must leave)
BROKEN = [
    ("python/inventory.py", "    for item in items:"),
    ("javascript/cart.js", "    sum += itemTotal(item);"),
    ("typescript/shapes.ts", "  return 2 * (shape.width + shape.height);"),
    ("go/stack.go", "\treturn last, true\n}"),
    ("rust/stats.rs", '    println!("{:?}", mean(&values))\n}'),
]


def _open(editor: Any, relative: str) -> tuple[str, str]:
    path = EXAMPLES / relative
    uri = from_fs_path(str(path)) or str(path)
    text = path.read_text(encoding="utf-8")
    editor.open(uri, text, LANGUAGES[path.suffix])
    return uri, text


def _position(text: str, offset: int) -> dict[str, int]:
    line = text.count("\n", 0, offset)
    return {"line": line, "character": offset - (text.rfind("\n", 0, offset) + 1)}


@pytest.mark.parametrize(("relative", "pattern", "_"), TRY, ids=[t[0] for t in TRY])
async def test_an_examples_regex_block_gets_its_pattern_offline(
    make_editor: MakeEditor, relative: str, pattern: str, _: str
) -> None:
    editor = await make_editor(model=False)
    uri, text = _open(editor, relative)
    block = re.search(r"^\s*(#|//) regex:.*$", text, re.M)
    assert block is not None
    here = _position(text, block.start() + len(block.group(0)) - len(block.group(0).lstrip()))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": uri, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done", record
    assert pattern in editor.text(uri), editor.text(uri)


@pytest.mark.parametrize(("relative", "_", "rest"), TRY, ids=[t[0] for t in TRY])
async def test_an_examples_unfinished_last_line_is_completed_offline(
    make_editor: MakeEditor, relative: str, _: str, rest: str
) -> None:
    editor = await make_editor(model=False)
    uri, text = _open(editor, relative)
    end = len(text.rstrip("\n"))
    record = await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": _position(text, end)}
    )
    assert record["state"] == "done", record
    assert editor.text(uri)[end:].startswith(rest), editor.text(uri)[end - 40 :]


@pytest.mark.parametrize(("relative", "fixed"), BROKEN, ids=[b[0] for b in BROKEN])
async def test_an_examples_syntax_error_is_fixed_offline(
    make_editor: MakeEditor, relative: str, fixed: str
) -> None:
    editor = await make_editor(model=False)
    uri, text = _open(editor, relative)
    assert fixed not in text
    start = {"line": 0, "character": 0}
    end = _position(text, len(text))
    record = await editor.run(
        "fastedit.fixSyntax", {"uri": uri, "range": {"start": start, "end": end}}
    )
    assert record["state"] == "done", record
    assert record["verification"]["ok"] is True, record
    assert fixed in editor.text(uri), editor.text(uri)
