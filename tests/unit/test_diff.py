"""The diff module: final line diffs, the streaming diff's ops, and character-level edits."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.core.diff import (
    CharEdit,
    Delete,
    Insert,
    Keep,
    StreamingDiff,
    apply_char_edits,
    apply_hunks,
    char_edits,
    diff_lines,
    replay,
    split_lines,
)

# Few distinct lines, so that originals and rewrites share lines and repeat them.
_LINES = st.sampled_from(
    ["a\n", "b\n", "\n", "}\n", "def f(x):\n", "    return x\n", "cc", "x = 1\n"]
)
_TEXTS = st.lists(_LINES, max_size=14).map("".join)


def _stream(original: str, rewrite: str, cuts: list[int]) -> tuple[list[object], StreamingDiff]:
    diff = StreamingDiff(original)
    ops: list[object] = []
    at = 0
    for cut in sorted(c % (len(rewrite) + 1) for c in cuts):
        ops += diff.feed(rewrite[at:cut])
        at = max(at, cut)
    ops += diff.feed(rewrite[at:])
    ops += diff.finish()
    return ops, diff


def test_split_lines_keeps_terminators_and_crlf() -> None:
    assert split_lines("a\r\nb\nc") == ["a\r\n", "b\n", "c"]
    assert split_lines("") == []
    assert split_lines("a\n") == ["a\n"]


def test_one_changed_line_is_one_hunk_of_that_line() -> None:
    original = "".join(f"line {i}\n" for i in range(40))
    rewrite = original.replace("line 17\n", "line seventeen\n")
    [hunk] = diff_lines(original, rewrite)
    assert (hunk.orig_start, hunk.orig_end, hunk.original) == (17, 18, "line 17\n")
    assert hunk.replacement == "line seventeen\n"
    ops, diff = _stream(original, rewrite, [5, 300, 301, 302])
    assert [op for op in ops if isinstance(op, Delete)] == [Delete(17, 18)]
    assert diff.hunks == [hunk]


def test_changed_line_streams_before_it_is_complete() -> None:
    diff = StreamingDiff("alpha\nbeta\ngamma\n")
    assert diff.feed("alpha\nbe") == [Keep(0)]
    assert diff.feed("e") == [Insert("bee")]  # "bee" is no prefix of any remaining line
    assert diff.feed("s\ngam") == [Insert("s\n")]
    assert diff.hunks == []  # the hunk is open until its end is known
    assert diff.feed("ma\n") == [Delete(1, 2), Keep(2)]
    assert [(h.orig_start, h.orig_end, h.replacement) for h in diff.hunks] == [(1, 2, "bees\n")]
    assert diff.finish() == []


def test_a_repeated_line_waits_for_the_next_before_deleting() -> None:
    diff = StreamingDiff("a\n}\nb\n}\nc\n")
    # "}" matches line 1 at once (the next original line): kept.
    assert diff.feed("a\n}\n") == [Keep(0), Keep(1)]
    # "}" again: the next line is "b", so "}" could be line 3 (b deleted) or new: held.
    assert diff.feed("}\n") == []
    assert diff.feed("c\n") == [Delete(2, 3), Keep(3), Keep(4)]


def test_a_held_line_that_the_next_line_refutes_is_inserted() -> None:
    diff = StreamingDiff("a\nb\n}\nc\n")
    assert diff.feed("a\n}\n") == [Keep(0)]
    assert diff.feed("b\n") == [Insert("}\n"), Keep(1)]


def test_distinctive_unique_line_deletes_at_once() -> None:
    diff = StreamingDiff("keep\ndrop me\nreturn value\n")
    assert diff.feed("keep\nreturn value\n") == [Keep(0), Delete(1, 2), Keep(2)]


def test_finish_deletes_what_is_left_and_closes_the_hunk() -> None:
    diff = StreamingDiff("a\nb\nc\n")
    assert diff.feed("a\n") == [Keep(0)]
    assert diff.finish() == [Delete(1, 3)]
    assert [(h.orig_start, h.orig_end, h.replacement) for h in diff.hunks] == [(1, 3, "")]


def test_char_edits_touch_only_changed_characters() -> None:
    original = "x = 1\ny = 2\nz = 3\n"
    rewrite = "x = 1\ny = 20\nz = 4\n"
    edits = char_edits(original, rewrite)
    assert edits == [CharEdit(11, 11, "0"), CharEdit(16, 17, "4")]
    assert apply_char_edits(original, edits) == rewrite


@given(_TEXTS, _TEXTS)
def test_hunks_applied_to_the_original_give_the_rewrite(original: str, rewrite: str) -> None:
    assert apply_hunks(original, diff_lines(original, rewrite)) == rewrite


@given(_TEXTS, _TEXTS, st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_streamed_ops_and_hunks_give_the_rewrite(
    original: str, rewrite: str, cuts: list[int]
) -> None:
    ops, diff = _stream(original, rewrite, cuts)
    assert replay(original, ops) == rewrite  # type: ignore[arg-type]
    assert apply_hunks(original, diff.hunks) == rewrite
    for hunk in diff.hunks:  # hunks are changes, in order, never empty
        assert hunk.original != hunk.replacement
    starts = [h.orig_start for h in diff.hunks]
    assert starts == sorted(starts)


@given(_TEXTS)
def test_an_unchanged_rewrite_only_keeps(original: str) -> None:
    ops, diff = _stream(original, original, [3, 9])
    assert all(isinstance(op, Keep) for op in ops)
    assert diff.hunks == []


@given(_TEXTS, _TEXTS)
def test_char_edits_give_the_rewrite_and_are_ordered(original: str, rewrite: str) -> None:
    edits = char_edits(original, rewrite)
    assert apply_char_edits(original, edits) == rewrite
    assert all(a.end <= b.start for a, b in itertools.pairwise(edits))
