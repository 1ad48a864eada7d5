"""Text that a job adds at the end of a document goes in before its last line break.

``actions.write_tests.placed`` (the test module) and ``actions.regex`` (a pattern below an
example block that ends the file).

Neovim keeps a line break at the end of every buffer and reports an empty file as "\\n"; an
insertion after a module's last line break becomes a line of its own there (a blank first line
in a new module, and a reported change that stopped the job). The text goes in before that line
break instead: the module must end up the same in the server's arithmetic and in Neovim's.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.actions.regex import insertion, target
from fastedit_lsp.actions.write_tests import placed
from fastedit_lsp.core.document import Document, Point

GENERATED = (
    '"""Tests for geometry."""\n\nfrom geometry import clamp\n\n\n'
    "def test_clamp() -> None:\n    assert clamp(5, 0, 3) == 3\n"
)


def _spliced(existing: str, text: str) -> str:
    offset, insertion = placed(existing, text)
    return existing[:offset] + insertion + existing[offset:]


def _neovim(existing: str, text: str) -> str:
    """What Neovim's buffer holds after the insertion, as it reports it: lines joined, plus the
    line break it keeps at the end (an empty file is one empty line)."""
    lines = existing.split("\n")
    if existing.endswith("\n"):
        lines.pop()
    lines = lines or [""]
    offset, insertion = placed(existing, text)
    row = existing[:offset].count("\n")
    col = offset - (existing.rfind("\n", 0, offset) + 1)
    if row >= len(lines):  # past the last line: Neovim appends lines
        lines.extend(insertion.split("\n"))
    else:
        line = lines[row]
        new = (line[:col] + insertion + line[col:]).split("\n")
        lines[row : row + 1] = new
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        ("", GENERATED),  # VS Code, Emacs: an empty file is empty
        ("\n", GENERATED),  # Neovim: an empty file is one empty line
        ("import pytest\n", "import pytest\n" + GENERATED),
        ("import pytest", "import pytest" + GENERATED),
    ],
    ids=["empty", "neovim-empty", "existing", "no-final-line-break"],
)
def test_the_module_ends_up_as_the_existing_text_and_the_tests(
    existing: str, expected: str
) -> None:
    assert _spliced(existing, GENERATED) == expected


def test_nothing_new_to_add_inserts_nothing() -> None:
    # A second run on a module with the same tests: no blank line added, "no suggestion".
    assert placed("import pytest\n", "") == (len("import pytest"), "")
    assert placed("\n", "")[1] == ""


def test_nothing_is_inserted_after_the_modules_last_line_break() -> None:
    for existing in ["\n", "import pytest\n", "x = 1\r\n"]:
        offset, _ = placed(existing, GENERATED)
        assert offset < len(existing), existing


@given(
    existing=st.lists(st.text("ab =", max_size=6), min_size=1, max_size=4).map(
        lambda lines: "".join(line + "\n" for line in lines)
    ),
    added=st.lists(st.text("cd()", min_size=1, max_size=6), min_size=1, max_size=4).map(
        lambda lines: "".join(line + "\n" for line in lines)
    ),
)
def test_neovim_holds_what_the_server_computes(existing: str, added: str) -> None:
    # Every Neovim buffer ends with a line break (an empty one is "\n").
    module = _spliced(existing, added)
    assert _neovim(existing, added) == module
    # A module of line breaks only gets the tests at its top (its line breaks after them).
    assert module == (existing + added if existing.strip("\n") else added + existing[1:])


@pytest.mark.parametrize(
    "tail", ["", "\n", "\nprint(1)\n"], ids=["no-line-break", "last", "not-last"]
)
def test_a_pattern_below_a_block_at_the_end_goes_before_the_last_line_break(tail: str) -> None:
    text = "# regex: year\n# match: 2024\n# reject: 24" + tail
    document = Document("file:///w/y.py", text, language_id="python")
    t = target(document, Point(0, 0), Point(0, 0))
    inserted = insertion(t, "\\d{4}")
    offset = document.offset_of(t.start)
    assert t.start == t.end
    if tail == "\n":
        assert offset < len(text)  # not after the document's last line break
        assert inserted.startswith("\n") and not inserted.endswith("\n")
    spliced = text[:offset] + inserted + text[offset:]
    line = 'YEAR = re.compile(r"\\d{4}")'
    if tail == "":  # the pattern's line is a line of its own
        assert spliced == text + "\n" + line, spliced
    else:
        assert spliced == text.replace("# reject: 24\n", f"# reject: 24\n{line}\n"), spliced
