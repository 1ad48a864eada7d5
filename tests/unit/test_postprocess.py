"""The reconciler's wrapper stage (Unwrap) and the actions' filters: what of a model's answer
reaches the buffer (the reconciler itself: test_reconcile.py).

Streaming must not change the result: every answer is also fed split at every position, one
character at a time and in random chunks, and must come out exactly as when fed at once.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.prompting.reconcile import Reconciler, Target, Unwrap

Filter = Unwrap | Reconciler


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


# -- Unwrap --------------------------------------------------------------------------------

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
def test_unwrap_strips_fences_and_chatter_around_code(answer: str, expected: str) -> None:
    assert one_shot(Unwrap, answer) == expected


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
def test_unwrap_gives_the_same_text_split_at_any_position(answer: str) -> None:
    expected = one_shot(Unwrap, answer)
    for cut in range(len(answer) + 1):
        assert feed_all(Unwrap, [answer[:cut], answer[cut:]]) == expected, cut
    assert feed_all(Unwrap, list(answer)) == expected


@given(st.sampled_from(STREAM_SAFE).flatmap(split_anywhere))
def test_unwrap_gives_the_same_text_in_random_chunks(chunks: list[str]) -> None:
    assert feed_all(Unwrap, chunks) == one_shot(Unwrap, "".join(chunks))


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


def test_unwrap_holds_back_at_most_the_current_line() -> None:
    f = Unwrap()
    emitted = ""
    body = one_shot(Unwrap, LONG_ANSWER)
    for index, ch in enumerate(LONG_ANSWER):
        emitted += f.feed(ch)
        assert body.startswith(emitted)
        if ch == "\n":
            # Every complete line of the code is out as soon as its newline arrives.
            fed = LONG_ANSWER[: index + 1]
            complete_code_lines = one_shot(Unwrap, fed)
            assert emitted == complete_code_lines
    emitted += f.finish()
    assert emitted == body


def test_unwrap_streams_a_code_line_before_it_ends() -> None:
    f = Unwrap()
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
def test_unwrap_holds_an_undecided_start_of_line(held: str) -> None:
    assert Unwrap().feed(held) == ""


def test_unwrap_keeps_code_fenced_after_a_leading_blank_line() -> None:
    assert "x = 1\n" in one_shot(Unwrap, "\n```python\nx = 1\n```\n")


def test_unwrap_keeps_code_after_backticks_that_arrive_mid_line() -> None:
    f = Unwrap()
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
def test_unwrap_holds_every_chatter_opener_until_it_is_decided(tokens: list[str]) -> None:
    answer = "".join(tokens) + "```\nx = 1\n```\n"
    assert feed_all(Unwrap, [*tokens, "```\nx = 1\n```\n"]) == one_shot(Unwrap, answer)


# -- the actions' filters: the reconciler at their target -------------------------------------


def _filters(action: str, before: str, selection: str, after: str) -> Filter:
    target = Target(before, after, selection=selection, replace=bool(selection))
    return Reconciler(target)


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
    for chunks in ([answer], list(answer)):
        assert feed_all(lambda: _filters("complete", "foo(", "", suffix), chunks) == expected


def test_edit_selection_answer_loses_fences_and_the_closer_already_after_the_selection() -> None:
    answer = "```python\n1, 2, 3]\n```\n"
    assert one_shot(lambda: _filters("edit", "x = [\n", "1, 2", "]\n"), answer) == "1, 2, 3"
    # Text that does not repeat the rest of the line stays.
    assert one_shot(lambda: _filters("edit", "x = [\n", "1, 2", "]\n"), "1, 2, 3") == "1, 2, 3"


ANSWER_LINES = [
    "```python\n", "```\n", "~~~\n", "Here is the code:\n", "Sure!\n", "I've fixed it.\n",
    "Note: see below.\n", "Let me know if this helps.\n", "\n", "   \n", "x = 1\n",
    "    return a + b\n", 's = "```"\n', "The total\n", "print('ok')\n", "a, b)",
]  # fmt: skip


# Not strict: hypothesis finds the bugs pinned strictly above almost always, not always.
@given(st.lists(st.sampled_from(ANSWER_LINES), max_size=8).map("".join).flatmap(split_anywhere))
def test_unwrap_streams_any_answer_like_it_filters_it_at_once(chunks: list[str]) -> None:
    assert feed_all(Unwrap, chunks) == one_shot(Unwrap, "".join(chunks))
