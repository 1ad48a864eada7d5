"""postprocess.py and the actions' filters: what of a model's answer reaches the buffer.

Streaming must not change the result: every answer is also fed split at every position, one
character at a time and in random chunks, and must come out exactly as when fed at once.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.actions import complete_rest, edit_selection
from fastedit_lsp.prompting.context import CursorContext
from fastedit_lsp.prompting.filters import FenceFilter, Pipeline, SuffixDedup

Filter = FenceFilter | SuffixDedup | Pipeline


def feed_all(make: Callable[[], Filter], chunks: list[str]) -> str:
    f = make()
    return "".join(f.feed(chunk) for chunk in chunks) + f.finish()


def one_shot(make: Callable[[], Filter], answer: str) -> str:
    return feed_all(make, [answer])


def split_anywhere(answer: str) -> st.SearchStrategy[list[str]]:
    """The answer cut into chunks at random positions."""
    cuts = st.lists(st.integers(0, len(answer)), max_size=12).map(sorted)
    return cuts.map(
        lambda cs: [answer[a:b] for a, b in zip([0, *cs], [*cs, len(answer)], strict=True)]
    )


# -- FenceFilter --------------------------------------------------------------------------------

CODE = "def add(a, b):\n    return a + b\n"

FENCE_CASES = [
    pytest.param(CODE, CODE, id="bare-code-passes-through"),
    pytest.param(f"```python\n{CODE}```\n", CODE, id="fenced"),
    pytest.param(f"```python\n{CODE}```", CODE, id="fenced-without-final-newline"),
    pytest.param(f"~~~\n{CODE}~~~\n", CODE, id="tilde-fence"),
    pytest.param(f"Here is the code:\n```python\n{CODE}```\n", CODE, id="intro-then-fence"),
    pytest.param(f"Sure!\n\n```py\n{CODE}```\n", CODE, id="sure-blank-line-fence"),
    pytest.param(
        f"Sure! Here you go:\n```python\n{CODE}```\nLet me know if you need more.\n",
        CODE,
        id="closing-remark-after-fence",
    ),
    pytest.param(
        f"Certainly. Below is the fix.\n```\n{CODE}```\nThis function adds.\nHope this helps.",
        CODE,
        id="several-closing-lines",
    ),
    pytest.param(f"```\n{CODE}```\n```\nmore\n```\n", CODE, id="second-block-dropped"),
    pytest.param("Here is the code:\n\nx = 1\n", "x = 1\n", id="blank-line-after-intro-dropped"),
    pytest.param("Here's the regex:\n", "", id="chatter-only-is-nothing"),
    pytest.param("a, b)", "a, b)", id="completion-fragment-without-newline"),
    pytest.param("    x = 1\n", "    x = 1\n", id="indentation-kept"),
    pytest.param("", "", id="empty-answer"),
    pytest.param("x = 1\nHere is more\n", "x = 1\nHere is more\n", id="prose-after-code-is-code"),
    pytest.param("`a` + b\n", "`a` + b\n", id="backtick-code"),
]


@pytest.mark.parametrize(("answer", "expected"), FENCE_CASES)
def test_fence_filter_strips_fences_and_chatter_around_code(answer: str, expected: str) -> None:
    assert one_shot(FenceFilter, answer) == expected


# Every answer, streamed in any split, gives its one-shot result.


STREAMING_CASES = [
    *(
        pytest.param(
            p.values[0],
            id=p.id,
        )
        for p in FENCE_CASES
    ),
    pytest.param("Okay, done.\n```\nx\n```\n", id="okay-intro"),
    pytest.param("This version:\n```\nx\n```\n", id="this-version-intro"),
    pytest.param(
        's = "x"\nt = "```"\nu = 2\n',
        id="code-containing-backticks",
    ),
    pytest.param(
        "I've fixed it:\n```\nx = 1\n```\n",
        id="ive-intro",
    ),
    pytest.param(
        "Note: this needs re.\n```\nx = 1\n```\n",
        id="note-intro",
    ),
    pytest.param(
        "The corrected version:\nx = 1\n",
        id="long-chatter-word",
    ),
]
STREAM_SAFE = [p.values[0] for p in FENCE_CASES]


@pytest.mark.parametrize("answer", STREAMING_CASES)
def test_fence_filter_gives_the_same_text_split_at_any_position(answer: str) -> None:
    expected = one_shot(FenceFilter, answer)
    for cut in range(len(answer) + 1):
        assert feed_all(FenceFilter, [answer[:cut], answer[cut:]]) == expected, cut
    assert feed_all(FenceFilter, list(answer)) == expected


@given(st.sampled_from(STREAM_SAFE).flatmap(split_anywhere))
def test_fence_filter_gives_the_same_text_in_random_chunks(chunks: list[str]) -> None:
    assert feed_all(FenceFilter, chunks) == one_shot(FenceFilter, "".join(chunks))


LONG_ANSWER = (
    "Here is the updated code:\n"
    "```python\n"
    "import re\n"
    "\n"
    "def parse(line: str) -> list[str]:\n"
    "    # split on commas, ignoring 'quoted' parts\n"
    "    parts = [p.strip() for p in line.split(',')]\n"
    "    return [p for p in parts if p]\n"
    "```\n"
    "The function now ignores empty parts.\n"
)


def test_fence_filter_holds_back_at_most_the_current_line() -> None:
    f = FenceFilter()
    emitted = ""
    body = one_shot(FenceFilter, LONG_ANSWER)
    for index, ch in enumerate(LONG_ANSWER):
        emitted += f.feed(ch)
        assert body.startswith(emitted)
        if ch == "\n":
            # Every complete line of the code is out as soon as its newline arrives.
            fed = LONG_ANSWER[: index + 1]
            complete_code_lines = one_shot(FenceFilter, fed)
            assert emitted == complete_code_lines
    emitted += f.finish()
    assert emitted == body


def test_fence_filter_streams_a_code_line_before_it_ends() -> None:
    f = FenceFilter()
    f.feed("```python\n")
    assert f.feed("return total") == "return total"


@pytest.mark.parametrize(
    "held",
    [
        pytest.param("`", id="could-be-a-fence"),
        pytest.param("  ``", id="could-be-an-indented-fence"),
        pytest.param("Her", id="could-be-here-is"),
        pytest.param("Sure", id="could-be-sure"),
        pytest.param("    ", id="indentation-only"),
    ],
)
def test_fence_filter_holds_an_undecided_start_of_line(held: str) -> None:
    assert FenceFilter().feed(held) == ""


def test_fence_filter_keeps_code_fenced_after_a_leading_blank_line() -> None:
    assert "x = 1\n" in one_shot(FenceFilter, "\n```python\nx = 1\n```\n")


def test_fence_filter_keeps_code_after_backticks_that_arrive_mid_line() -> None:
    f = FenceFilter()
    out = f.feed("x = 1\n") + f.feed('t = "') + f.feed('```"\n') + f.feed("u = 2\n")
    assert out + f.finish() == 'x = 1\nt = "```"\nu = 2\n'


@pytest.mark.parametrize(
    "tokens",
    [
        pytest.param(["Note", ": the fix.\n"], id="note"),
        pytest.param(["Let", " me know\n"], id="let-me-know"),
        pytest.param(["Explanation", ": see below\n"], id="explanation"),
    ],
)
def test_fence_filter_holds_every_chatter_opener_until_it_is_decided(tokens: list[str]) -> None:
    answer = "".join(tokens) + "```\nx = 1\n```\n"
    assert feed_all(FenceFilter, [*tokens, "```\nx = 1\n```\n"]) == one_shot(FenceFilter, answer)


# -- SuffixDedup ----------------------------------------------------------------------------------

DEDUP_CASES = [
    pytest.param(")\n", "a, b)", "a, b", id="closing-paren-already-there"),
    pytest.param(")\nprint(x)\n", "a, b)\n", "a, b", id="paren-and-newline-already-there"),
    pytest.param(
        "\n    return x\n", "y = 1\n    return x\n", "y = 1", id="next-line-repeated-exactly"
    ),
    pytest.param(
        "\n    return x\n", "y = 1\nreturn x\n", "y = 1\n", id="next-line-repeated-other-indent"
    ),
    pytest.param(")\n", "a, b) + c", "a, b) + c", id="diverging-repeat-released"),
    pytest.param(")\n", "a, b", "a, b", id="no-repeat"),
    pytest.param("]\n", "x)", "x)", id="different-closer-kept"),
    pytest.param("", "a, b)", "a, b)", id="empty-suffix-keeps-everything"),
    pytest.param("\nfoo()\n", "x\n\n", "x\n", id="only-the-repeated-newline-dropped"),
    pytest.param("\nfoo()\n", "x\n\nfoo", "x\n", id="unfinished-repeat-at-the-end-dropped"),
    pytest.param("\nfoo()\n", "x\nfoo(1)", "x\nfoo(1)", id="diverging-next-line-kept"),
]


@pytest.mark.parametrize(("suffix", "answer", "expected"), DEDUP_CASES)
def test_suffix_dedup_drops_only_a_tail_repeating_the_text_after_the_cursor(
    suffix: str, answer: str, expected: str
) -> None:
    assert one_shot(lambda: SuffixDedup(suffix), answer) == expected


@pytest.mark.parametrize(("suffix", "answer", "expected"), DEDUP_CASES)
def test_suffix_dedup_gives_the_same_text_split_at_any_position(
    suffix: str, answer: str, expected: str
) -> None:
    for cut in range(len(answer) + 1):
        assert feed_all(lambda: SuffixDedup(suffix), [answer[:cut], answer[cut:]]) == expected
    assert feed_all(lambda: SuffixDedup(suffix), list(answer)) == expected


code_text = st.lists(st.sampled_from(["a", "(", ")", " ", "\n", "    ", "x", ","]), max_size=12)


@given(
    suffix=code_text.map("".join),
    answer=code_text.map("".join),
    data=st.data(),
)
def test_suffix_dedup_is_chunking_invariant_and_only_drops_a_tail(
    suffix: str, answer: str, data: st.DataObject
) -> None:
    expected = one_shot(lambda: SuffixDedup(suffix), answer)
    assert answer.startswith(expected)
    chunks = data.draw(split_anywhere(answer))
    assert feed_all(lambda: SuffixDedup(suffix), chunks) == expected


def test_suffix_dedup_releases_held_text_as_soon_as_it_diverges() -> None:
    dedup = SuffixDedup(")\nprint(x)\n")
    assert dedup.feed("a)") == "a"
    assert dedup.feed("\n") == ""
    assert dedup.feed("b") == ")\nb"


def test_suffix_dedup_does_not_hold_text_that_continues_past_the_whole_suffix() -> None:
    dedup = SuffixDedup(")")
    assert dedup.feed("a) + b(c)\nmore\n") == "a) + b(c)\nmore\n"


def test_suffix_dedup_drops_a_repeated_newline_at_the_end_of_the_file() -> None:
    assert one_shot(lambda: SuffixDedup("\n"), "return x\n") == one_shot(
        lambda: SuffixDedup("\nfoo()\n"), "return x\n"
    )


# -- Pipeline and the actions' filters -----------------------------------------------------------


def _ctx(prefix: str = "", selection: str = "", suffix: str = "") -> CursorContext:
    return CursorContext(prefix, selection, suffix, False, "python", "/w/main.py")


def test_pipeline_feeds_each_filters_output_to_the_next_and_flushes_in_order() -> None:
    pipeline = Pipeline(FenceFilter(), SuffixDedup(")\n"))
    out = pipeline.feed("```python\nfoo(a, b)")
    out += pipeline.finish()
    assert out == "foo(a, b"


@pytest.mark.parametrize(
    ("answer", "suffix", "expected"),
    [
        pytest.param("a, b)", ")\n", "a, b", id="completing-a-call"),
        pytest.param("```python\na, b)\n```\n", ")\nx = 1\n", "a, b", id="fenced-and-repeated"),
        pytest.param(
            "Here is the code:\n```\nreturn a + b\n```\nDone.",
            "\n\nprint(1)\n",
            "return a + b",
            id="chatter-fence-and-suffix",
        ),
    ],
)
def test_complete_rest_answer_reaches_the_buffer_without_fences_or_repeated_suffix(
    answer: str, suffix: str, expected: str
) -> None:
    ctx = _ctx(prefix="foo(", suffix=suffix)
    for chunks in ([answer], list(answer)):
        assert feed_all(lambda: complete_rest.filters(ctx), chunks) == expected


def test_edit_selection_answer_loses_fences_but_keeps_text_matching_the_suffix() -> None:
    ctx = _ctx(prefix="x = [\n", selection="1, 2", suffix="]\n")
    answer = "```python\n1, 2, 3]\n```\n"
    assert one_shot(lambda: edit_selection.filters(ctx), answer) == "1, 2, 3]\n"


ANSWER_LINES = [
    "```python\n", "```\n", "~~~\n", "Here is the code:\n", "Sure!\n", "I've fixed it.\n",
    "Note: see below.\n", "Let me know if this helps.\n", "\n", "   \n", "x = 1\n",
    "    return a + b\n", 's = "```"\n', "The total\n", "print('ok')\n", "a, b)",
]  # fmt: skip


# Not strict: hypothesis finds the bugs pinned strictly above almost always, not always.
@given(st.lists(st.sampled_from(ANSWER_LINES), max_size=8).map("".join).flatmap(split_anywhere))
def test_fence_filter_streams_any_answer_like_it_filters_it_at_once(chunks: list[str]) -> None:
    assert feed_all(FenceFilter, chunks) == one_shot(FenceFilter, "".join(chunks))
