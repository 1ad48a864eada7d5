"""context.py and the actions' prompts: what of a document a model may see."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.actions import complete_rest, edit_selection
from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.prompting.context import CHARS_PER_TOKEN, DEFAULT_EXCLUDE, around, is_excluded

# -- is_excluded -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        pytest.param(".env", ".env", id="dotenv"),
        pytest.param("/home/u/proj/.env", ".env", id="dotenv-absolute"),
        pytest.param(".env.local", ".env.*", id="dotenv-local"),
        pytest.param("deploy/prod.env", "*.env", id="named-env"),
        pytest.param(".envrc", ".envrc", id="envrc"),
        pytest.param("id_rsa", "id_rsa*", id="ssh-key"),
        pytest.param("/home/u/.ssh/id_ed25519.pub", "id_ed25519*", id="ssh-pubkey"),
        pytest.param("server.pem", "*.pem", id="pem"),
        pytest.param("certs/tls.key", "*.key", id="key-file"),
        pytest.param("a/b/secrets.json", "secrets.*", id="secrets-json-nested"),
        pytest.param("credentials", "credentials*", id="credentials"),
        pytest.param("C:\\Users\\u\\proj\\.env", ".env", id="windows-separators"),
        pytest.param("repo/.git/config", ".git/**", id="git-dir"),
        pytest.param(".netrc", ".netrc", id="netrc"),
    ],
)
def test_default_exclude_matches_secrets(path: str, pattern: str) -> None:
    assert is_excluded(path, DEFAULT_EXCLUDE) == pattern


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("main.py", id="python"),
        pytest.param("src/env.py", id="env-in-a-name"),
        pytest.param("docs/keys.md", id="keys-in-a-name"),
        pytest.param("environment.yml", id="environment"),
        pytest.param("src/git/util.py", id="git-without-dot"),
        pytest.param("tests/test_secrets.py", id="secrets-not-at-name-start"),
    ],
)
def test_default_exclude_leaves_ordinary_source_files_alone(path: str) -> None:
    assert is_excluded(path, DEFAULT_EXCLUDE) is None


@pytest.mark.parametrize(
    ("path", "patterns", "expected"),
    [
        pytest.param("proj/secrets/db.txt", ("secrets/**",), "secrets/**", id="dir-glob-any-depth"),
        pytest.param("secrets/a/b.txt", ("secrets/**",), "secrets/**", id="dir-glob-nested"),
        pytest.param("proj/config/prod.json", ("config/*.json",), "config/*.json", id="dir-file"),
        pytest.param("proj/config/prod.yml", ("config/*.json",), None, id="dir-file-other-ext"),
        pytest.param("proj/src/secrets.py", ("secrets/**",), None, id="file-named-like-dir"),
        pytest.param("a/b/c.txt", ("a/b/c.txt",), "a/b/c.txt", id="exact-path"),
        pytest.param("x/a/b/c.txt", ("a/b/c.txt",), "a/b/c.txt", id="path-tail"),
        pytest.param("a/b/c.txt", ("b/c.txt", "*.txt"), "b/c.txt", id="first-pattern-wins"),
        pytest.param("main.py", (), None, id="no-patterns"),
    ],
)
def test_patterns_with_a_slash_match_the_path_or_a_tail_of_it(
    path: str, patterns: tuple[str, ...], expected: str | None
) -> None:
    assert is_excluded(path, patterns) == expected


@pytest.mark.parametrize("path", ["private/notes.txt", "proj/private/deep/key.txt"])
def test_a_directory_pattern_with_a_trailing_slash_excludes_the_directory(path: str) -> None:
    assert is_excluded(path, ("private/",)) == "private/"


# -- around ---------------------------------------------------------------------------------------

# 60 characters with the newline: four such lines fit the minimum budget of 64 tokens (256 chars).
LINE = "x" * 59
MIN_BUDGET = 64 * CHARS_PER_TOKEN


def _doc(lines: list[str], eol: str = "\n") -> Document:
    return Document("file:///w/m.py", eol.join(lines), language_id="python")


def test_around_fills_the_budget_alternately_nearest_line_first() -> None:
    lines = [f"b3{LINE}"[:59], f"b2{LINE}"[:59], f"b1{LINE}"[:59], "cur()"]
    lines += [f"a1{LINE}"[:59], f"a2{LINE}"[:59], f"a3{LINE}"[:59]]
    cursor = Point(3, 4)
    ctx = around(_doc(lines), cursor, cursor, budget_tokens=1, path="m.py")
    # 256 - len("cur(") - len(")") = 251: b1, a1, b2, a2 (60 each) fit; b3 and a3 do not.
    assert ctx.prefix == f"{lines[1]}\n{lines[2]}\ncur("
    assert ctx.suffix == f")\n{lines[4]}\n{lines[5]}"
    assert ctx.selection == ""
    assert ctx.truncated


def test_around_keeps_going_on_one_side_when_the_other_runs_out() -> None:
    lines = ["top", "cur", *(f"{i:02d}{LINE}"[:59] for i in range(10))]
    cursor = Point(1, 3)
    ctx = around(_doc(lines), cursor, cursor, budget_tokens=1, path="m.py")
    assert ctx.prefix == "top\ncur"
    assert ctx.suffix == "\n" + "\n".join(lines[2:6])
    assert ctx.truncated


def test_around_stops_a_side_at_a_line_that_does_not_fit_and_never_cuts_a_line() -> None:
    long = "y" * 300
    lines = ["far", long, "cur", "below"]
    ctx = around(_doc(lines), Point(2, 0), Point(2, 0), budget_tokens=1, path="m.py")
    assert ctx.prefix == ""
    assert ctx.suffix == "cur\nbelow"
    assert "far" not in ctx.prefix  # the line beyond the long one is not reached either
    assert ctx.truncated


def test_around_takes_the_whole_document_when_it_fits() -> None:
    text = "import os\n\ndef f():\n    return \n\nprint(f())\n"
    doc = _doc(text.split("\n"))
    cursor = Point(3, 11)
    ctx = around(doc, cursor, cursor, budget_tokens=2048, path="m.py")
    assert ctx.prefix + ctx.suffix == text
    assert ctx.prefix.endswith("return ")
    assert not ctx.truncated
    assert (ctx.language_id, ctx.path) == ("python", "m.py")


def test_around_returns_the_selection_between_prefix_and_suffix() -> None:
    doc = _doc(["a = 1", "b = [", "  1, 2,", "]", "c = 3"])
    ctx = around(doc, Point(1, 5), Point(3, 0), budget_tokens=2048, path="m.py")
    assert ctx.selection == "\n  1, 2,\n"
    assert ctx.prefix == "a = 1\nb = ["
    assert ctx.suffix == "]\nc = 3"


def test_around_joins_lines_with_lf_whatever_the_document_uses() -> None:
    ctx = around(
        _doc(["a", "b", "c"], eol="\r\n"), Point(1, 1), Point(1, 1), budget_tokens=64, path=""
    )
    assert (ctx.prefix, ctx.suffix) == ("a\nb", "\nc")


lines_strategy = st.lists(st.text(alphabet="ab é😀\t", max_size=120), min_size=1, max_size=25)


@given(lines_strategy, st.integers(64, 200), st.data())
def test_around_stays_within_the_budget_with_whole_lines_around_the_cursor(
    lines: list[str], budget: int, data: st.DataObject
) -> None:
    doc = _doc(lines)
    line = data.draw(st.integers(0, len(lines) - 1))
    start = Point(line, data.draw(st.integers(0, len(lines[line]))))
    end_line = data.draw(st.integers(line, min(line + 2, len(lines) - 1)))
    end_col = data.draw(st.integers(start.col if end_line == line else 0, len(lines[end_line])))
    end = Point(end_line, end_col)
    ctx = around(doc, start, end, budget_tokens=budget, path="m.py")
    text = "\n".join(lines)
    before = "\n".join(lines[:line]) + ("\n" if line else "") + lines[line][: start.col]
    after = lines[end_line][end.col :] + "".join("\n" + x for x in lines[end_line + 1 :])
    assert ctx.selection == doc.get_text(start, end)
    # Whole lines: the prefix starts at a line start, the suffix ends at a line end.
    assert before.endswith(ctx.prefix)
    assert ctx.prefix == before or before[: len(before) - len(ctx.prefix)].endswith("\n")
    assert after.startswith(ctx.suffix)
    assert ctx.suffix == after or after[len(ctx.suffix) :].startswith("\n")
    # Within the budget, unless the cursor's own lines alone exceed it.
    cursor_lines = (
        len(lines[line][: start.col]) + len(ctx.selection) + len(lines[end_line][end.col :])
    )
    assert len(ctx.prefix + ctx.selection + ctx.suffix) <= max(
        budget * CHARS_PER_TOKEN, cursor_lines
    )
    assert ctx.truncated == (ctx.prefix + ctx.selection + ctx.suffix != text)


# -- prompts ---------------------------------------------------------------------------------------


def test_complete_rest_prompt_marks_the_cursor_between_prefix_and_suffix() -> None:
    ctx = around(
        _doc(["def add(a, b):", "    return ", "", "print(add(1, 2))"]),
        Point(1, 11),
        Point(1, 11),
        budget_tokens=2048,
        path="/w/m.py",
    )
    req = complete_rest.request(ctx, max_tokens=77, temperature=0.1)
    system, user = req.messages
    assert (system.role, user.role) == ("system", "user")
    assert f"    return {complete_rest.CURSOR}\n\nprint(add(1, 2))" in user.content
    assert "/w/m.py" in user.content
    assert "python" in user.content
    assert (req.max_tokens, req.temperature) == (77, 0.1)


@pytest.mark.parametrize(
    ("selection_chars", "max_tokens", "budget"),
    [
        pytest.param(0, 1024, 256, id="empty-selection"),
        pytest.param(1000, 1024, 756, id="grows-with-the-selection"),
        pytest.param(4000, 1024, 1024, id="capped-by-max-tokens"),
        pytest.param(0, 40, 40, id="max-tokens-below-the-floor"),
    ],
)
def test_edit_selection_asks_for_a_tight_budget_sized_by_the_selection(
    selection_chars: int, max_tokens: int, budget: int
) -> None:
    selection = "s" * selection_chars
    doc = _doc(["x = (", selection, ")"])
    ctx = around(doc, Point(1, 0), Point(1, selection_chars), budget_tokens=4096, path="m.py")
    req = edit_selection.request(ctx, "make it faster", max_tokens=max_tokens, temperature=0.0)
    assert req.max_tokens == budget
    user = req.messages[1].content
    assert "Instruction: make it faster" in user
    assert f"Selection:\n```python\n{selection}\n```" in user
    assert "Code before the selection:\n```python\nx = (\n\n```" in user
    assert "Code after the selection:\n```python\n\n)\n```" in user
