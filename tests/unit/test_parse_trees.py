"""engines/parse_trees.ParseTrees: each document's last parse, kept across jobs so that a job's
text before is reparsed incrementally from it (issue 15: the tree per document version, not per
job), kept current after the user's edits by a refresh in bounded steps (engines/parse.Reparse),
and the verifier that uses it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.actions import parse_check
from fastedit_lsp.engines import parse as ts_parse
from fastedit_lsp.engines.parse_trees import ParseTrees, _difference

SOURCE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40))


def _sexp(parsed: ts_parse.Parsed) -> str:
    return str(parsed.tree.root_node)


def test_a_new_version_is_reparsed_from_the_last_parse_not_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trees = ParseTrees()
    first = trees.parse("file:///a.py", "python", SOURCE)
    assert trees.parse("file:///a.py", "python", SOURCE) is first

    def no_full_parse(language: str, text: str) -> ts_parse.Parsed:
        raise AssertionError("parsed anew")

    monkeypatch.setattr(ts_parse, "parse", no_full_parse)
    edited = SOURCE.replace("return x + 7\n", "return (x + 7) * 2\n")
    second = trees.parse("file:///a.py", "python", edited)
    monkeypatch.undo()
    assert second.text == edited
    assert _sexp(second) == _sexp(ts_parse.parse("python", edited))
    # A broken version, then its repair: the trees follow.
    broken = trees.parse("file:///a.py", "python", edited.replace("def f9(x):", "def f9(x:"))
    assert broken.has_errors
    repaired = trees.parse("file:///a.py", "python", edited)
    assert not repaired.has_errors


def test_documents_are_kept_apart_and_the_oldest_dropped() -> None:
    trees = ParseTrees(size=2)
    a = trees.parse("file:///a.py", "python", SOURCE)
    trees.parse("file:///b.go", "go", "package b\n")
    assert trees.parse("file:///a.py", "python", SOURCE) is a
    trees.parse("file:///c.rs", "rust", "fn main() {}\n")  # drops b, the least recent
    assert trees.parse("file:///a.py", "python", SOURCE) is a
    # Another grammar for the same URI (the languageId changed): parsed anew.
    assert trees.parse("file:///a.py", "javascript", "let a = 1;\n").language == "javascript"
    trees.forget("file:///a.py")
    assert trees.parse("file:///a.py", "python", SOURCE) is not a


@given(st.text("ab\n", max_size=12), st.text("ab\n", max_size=12))
def test_difference_rebuilds_the_new_text(old: str, new: str) -> None:
    start, end, text = _difference(old, new)
    assert old[:start] + text + old[end:] == new
    assert 0 <= start <= end <= len(old)


def test_the_verifier_starts_from_the_documents_last_parse() -> None:
    from fastedit_lsp.core.document import Document, Point

    class Data:  # the fields the verifier reads of an ActionInput
        document = Document("file:///a.py", SOURCE, language_id="python")
        path = "/a.py"
        start = Point(7, 4)
        end = Point(7, 16)
        original = None
        trees = ParseTrees()

    data = Data()
    verify = parse_check.verifier(data)  # type: ignore[arg-type]
    assert verify is not None
    assert "file:///a.py" not in data.trees  # nothing parsed before a draft is checked
    assert verify("return x * 3")["ok"] is True
    assert "file:///a.py" in data.trees  # the job's text before, kept for the next job
    assert verify("return (x * 3")["ok"] is False


BIG = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y\n\n" for i in range(3_000))


@pytest.mark.parametrize("old", [True, False], ids=["incremental", "from scratch"])
def test_a_reparse_in_steps_stops_at_each_deadline_and_ends_with_the_same_tree(old: bool) -> None:
    before = ts_parse.parse("python", BIG)
    at = BIG.index("def f1500")
    edited = BIG[:at] + "\n" + BIG[at:]
    work = (
        ts_parse.Reparse("python", before, at, at, "\n")
        if old
        else ts_parse.Reparse("python", None, 0, 0, edited)
    )
    assert work.text == edited
    results = []
    while not results or results[-1] is None:
        results.append(work.step(0.0))  # a deadline already past: each step stops at once
    assert len(results) > 2  # the parse was resumed where it stopped, more than once
    done = results[-1]
    assert done is not None and done.text == edited
    assert _sexp(done) == _sexp(ts_parse.parse("python", edited))
    assert work.finish() is done


def test_the_refresh_brings_the_kept_parse_to_the_new_text_and_the_next_job_finds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trees = ParseTrees()
    uri = "file:///a.py"
    assert not trees.refresh(uri, SOURCE)  # nothing kept: no job checked a draft there
    trees.parse(uri, "python", SOURCE)
    assert not trees.refresh(uri, SOURCE)  # current already
    edited = SOURCE.replace("return x + 3\n", "return (x + 3) * 2\n")
    assert trees.refresh(uri, edited)
    while not trees.advance(uri, 0.0):
        pass
    hits = trees.hits

    def no_parse(*_args: object) -> ts_parse.Parsed:
        raise AssertionError("parsed at the job's check")

    monkeypatch.setattr(ts_parse, "parse", no_parse)
    monkeypatch.setattr(ts_parse, "reparse", no_parse)
    kept = trees.parse(uri, "python", edited)
    monkeypatch.undo()
    assert trees.hits == hits + 1
    assert _sexp(kept) == _sexp(ts_parse.parse("python", edited))


def test_a_job_before_the_refresh_is_done_finishes_it_and_a_newer_text_replaces_it() -> None:
    trees = ParseTrees()
    uri = "file:///a.py"
    trees.parse(uri, "python", SOURCE)
    first = SOURCE.replace("return x + 3\n", "return x + 33\n")
    second = first.replace("return x + 5\n", "return x + 55\n")
    assert trees.refresh(uri, first)
    # The user typed again before it ran: the refresh now targets the newer text.
    assert trees.refresh(uri, second)
    kept = trees.parse(uri, "python", second)  # the job comes first: it finishes the refresh
    assert kept.text == second
    assert trees.advance(uri, 0.0)  # nothing left to do
    assert _sexp(kept) == _sexp(ts_parse.parse("python", second))
    # A job whose text differs from the refresh's (its region holds its own text) reparses.
    assert trees.refresh(uri, first)
    assert trees.parse(uri, "python", SOURCE).text == SOURCE
    assert trees.advance(uri, 0.0)
    trees.forget(uri)
    assert not trees.refresh(uri, second)
