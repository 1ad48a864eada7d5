"""Offline syntax repair beyond Python through the real server: no model, ``fastedit.fixSyntax``
on JavaScript and Go documents with a brace missing lands the closer and verifies by a reparse."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.uris import from_fs_path

from fastedit_lsp.engines.parse import parse_errors
from tests.support.harness import Editor

from .conftest import MakeEditor

JS = """function total(items) {
  let sum = 0;
  for (const item of items) {
    if (item > 0) {
      sum += item;
  }
  return sum;
}

const x = total([1, 2]);
console.log(x);
"""

GO = """package main

func total(items []int) int {
\tsum := 0
\tfor _, item := range items {
\t\tsum += item

\treturn sum
}

func main() {
\tprintln(total(nil))
}
"""


@pytest.fixture
async def offline(make_editor: MakeEditor) -> Editor:
    return await make_editor(model=False)


@pytest.mark.parametrize(
    ("name", "language", "broken", "fixed"),
    [
        ("total.js", "javascript", JS, JS.replace("sum += item;\n", "sum += item;\n    }\n")),
        # The blank line after the body is where a deleted closer leaves its line: it goes there.
        ("total.go", "go", GO, GO.replace("\t\tsum += item\n\n", "\t\tsum += item\n\t}\n")),
    ],
)
async def test_offline_fix_syntax_inserts_the_missing_brace_and_verifies(
    offline: Editor, tmp_path: Path, name: str, language: str, broken: str, fixed: str
) -> None:
    uri = from_fs_path(str(tmp_path / name))
    assert uri is not None
    offline.open(uri, broken, language_id=language)
    grammar = "javascript" if language == "javascript" else "go"
    assert parse_errors(grammar, broken)
    # The cursor where the editor shows the error: tree-sitter reports the brace missing at the
    # end of the enclosing block, the repair puts it where the indentation says.
    here = {"line": 9, "character": 0}
    record = await offline.run(
        "fastedit.fixSyntax", {"uri": uri, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done", record
    assert record["route"] == "local"
    assert record["verification"]["ok"] is True, record["verification"]
    assert offline.text(uri) == fixed
    assert parse_errors(grammar, offline.text(uri)) == []
    assert await offline.command("fastedit.revert", {"jobId": record["jobId"]}) == {
        "reverted": True
    }
    assert offline.text(uri) == broken


async def test_offline_fix_syntax_without_a_small_repair_says_so(
    offline: Editor, tmp_path: Path
) -> None:
    """No insertion fixes a doubled operator: the job ends with no suggestion, the buffer as it
    was."""
    uri = from_fs_path(str(tmp_path / "stray.go"))
    assert uri is not None
    text = "package main\n\nfunc main() {\n\tx := := 1\n\tprintln(x)\n}\n"
    offline.open(uri, text, language_id="go")
    here = {"line": 3, "character": 0}
    record = await offline.run(
        "fastedit.fixSyntax", {"uri": uri, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done", record
    assert record["metrics"]["edits"] == 0
    assert "no insertion of a missing token" in record["reason"]
    assert offline.text(uri) == text
