"""The answer reconciler: each answer shape in each language lands as the code the model meant,
whatever the chunking, holding back at most one line, never dropping the user's text."""

from __future__ import annotations

import functools
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.prompting.reconcile import Reconciler, Target, reconcile_text, unwrapped
from tests.support import answer_corpus
from tests.support.answer_corpus import Case, lands_exactly


@functools.cache
def _corpus_cases(language: str) -> tuple[Case, ...]:
    found: list[Case] = []
    for fn in answer_corpus.functions(language):
        found += answer_corpus._completion_cases(fn, language, "complete_rest")
        found += answer_corpus._selection_cases(fn, language)
    return tuple(c for c in found if not c.held_out)


@pytest.mark.parametrize("action", ["complete_rest", "edit_selection"])
@pytest.mark.parametrize("language", answer_corpus.LANGUAGES)
def test_each_answer_shape_lands_exactly_in_each_language(language: str, action: str) -> None:
    cases = [c for c in _corpus_cases(language) if c.action == action]
    if not cases:
        pytest.skip(f"no {language} sources here: {answer_corpus.missing_sources()}")
    first_of_shape: dict[str, list[Case]] = {}
    for case in cases:
        first_of_shape.setdefault(case.shape, []).append(case)
    wrong = []
    for shape, of_shape in first_of_shape.items():
        # The first three cases of each shape, each streamed in one piece and a character at a
        # time.
        for case in of_shape[:3]:
            for chunks in ([case.answer], list(case.answer)):
                if not lands_exactly(case, chunks):
                    wrong.append((shape, case.path, case.start, len(chunks)))
    assert len(first_of_shape) >= 15
    assert not wrong


# -- the same result whatever the chunking; at most one line held -----------------------------

PY_BEFORE = "def total(items):\n    count = 0\n    for item in items:\n        count += item\n    "
PY_AFTER = "\n\n\ndef other():\n    pass\n"
GO_BEFORE = "func sum(xs []int) int {\n\tn := 0\n\tfor _, x := range xs {\n\t\t"
GO_AFTER = "\n\t}\n\treturn n\n}\n"
EXAMPLES = [
    (Target(PY_BEFORE, PY_AFTER), "return count\n"),
    (
        Target(PY_BEFORE, PY_AFTER),
        "```python\ndef total(items):\n    count = 0\n    return count\n```",
    ),
    (Target(PY_BEFORE, PY_AFTER), "<think>the sum</think>\n```\nreturn count\n```\nDone."),
    (
        Target(PY_BEFORE, PY_AFTER),
        "    for item in items:\n        count += item\n    return count\n",
    ),
    (Target(PY_BEFORE, PY_AFTER), "if not items:\n    return 0\nreturn count\n"),
    (Target(GO_BEFORE, GO_AFTER), "n += x\n\t}\n\treturn n\n}\n"),
    (Target(GO_BEFORE, GO_AFTER), "Here is the code:\n```go\n    n += x\n```"),
    (Target(GO_BEFORE.replace("\n", "\r\n"), GO_AFTER.replace("\n", "\r\n")), "n += x\r\n"),
    (
        Target("x = 1\n    y = 2\n", "\n    z = 3\n", selection="    y = 2", replace=True),
        "```python\ny = 20\n```",
    ),
    (Target("x = 1\n", "z = 3\n", selection="y = 2\nw = 4\n", replace=True), "y = 20\nw = 40\n"),
    (Target("x = 1\n", "y = 2\nz = 3\n"), "w = 0\nv = 1\n"),
]


def _streamed(target: Target, chunks: list[str]) -> tuple[str, int]:
    reconciler = Reconciler(target)
    out = []
    most = 0
    for chunk in chunks:
        out.append(reconciler.feed(chunk))
        most = max(most, reconciler.holding.count("\n"))
    out.append(reconciler.finish())
    return "".join(out), most


@given(
    example=st.sampled_from(EXAMPLES),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=12),
)
def test_the_result_does_not_depend_on_how_the_answer_is_cut(
    example: tuple[Target, str], cuts: list[int]
) -> None:
    target, answer = example
    bounds = sorted({0, len(answer), *(c for c in cuts if c < len(answer))})
    chunks = [answer[a:b] for a, b in itertools.pairwise(bounds)]
    streamed, most_held = _streamed(target, chunks)
    assert streamed == reconcile_text(target, answer)
    assert streamed == _streamed(target, list(answer))[0]
    assert most_held <= 1  # one whole line, and the line being written


def test_the_examples_land_as_meant() -> None:
    results = [reconcile_text(target, answer) for target, answer in EXAMPLES]
    assert results == [
        "return count",
        "return count",
        "return count",
        "return count",
        "if not items:\n        return 0\n    return count",
        "n += x",
        "n += x",
        "n += x",
        "    y = 20",
        "y = 20\nw = 40\n",
        "w = 0\nv = 1\n",
    ]


# -- streaming ---------------------------------------------------------------------------------


def test_plainly_new_text_streams_from_its_first_piece() -> None:
    reconciler = Reconciler(Target(PY_BEFORE, PY_AFTER))
    assert reconciler.feed("if not") == "if not"


def test_where_the_last_break_is_kept_a_line_goes_out_with_its_break_on_the_piece_ending_it() -> (
    None
):
    # A selection of whole lines: the rewrite's line breaks are all kept, so a line is whole in
    # the buffer as soon as the model ends it (the rewrite's diff is fed whole lines).
    target = Target(
        "def f(x):\n    total = 0\n",
        "    return total\n",
        selection="    total += x\n    total *= 2\n",
        replace=True,
    )
    reconciler = Reconciler(target)
    assert reconciler.feed("    acc += x") == "    acc += x"
    assert reconciler.feed("\n") == "\n"
    assert reconciler.feed("    acc *= 2\n") == "    acc *= 2\n"
    assert reconciler.finish() == ""  # the last break already went out: not sent twice


def test_at_the_end_of_a_document_a_lines_break_stays_owed_to_the_next_line() -> None:
    # The answer's last line break is dropped there: a break goes out only with more text.
    reconciler = Reconciler(Target("def f(x):\n    total = 0\n", ""))
    assert reconciler.feed("    total += x") == "    total += x"
    assert reconciler.feed("\n") == ""
    assert reconciler.feed("    ") == ""
    assert reconciler.feed("total *= 2\n") == "\n    total *= 2"
    assert reconciler.finish() == ""


def test_a_first_line_that_could_repeat_a_line_above_is_held_until_decided() -> None:
    reconciler = Reconciler(Target(PY_BEFORE, PY_AFTER))
    assert reconciler.feed("    for item in it") == ""
    assert reconciler.feed("ems:\n") == ""  # held: the line above it repeats, or new code?
    assert reconciler.holding == "    for item in items:"
    assert reconciler.feed("        count += item\n") == ""  # a repeat: both dropped
    assert reconciler.feed("    return") == "return"


def test_a_line_like_the_next_one_is_decided_at_the_following_line_not_at_the_end() -> None:
    reconciler = Reconciler(Target(GO_BEFORE, GO_AFTER))
    assert reconciler.feed("n += x\n\t}\n") == "n += x"
    assert reconciler.feed("\tn *= 2\n") == "\n\t}\n\tn *= 2"


# -- controls: right answers that repeat their surroundings ------------------------------------


def test_a_statement_identical_to_the_one_above_is_kept() -> None:
    before = "def f(x):\n    x += 1\n    "
    assert reconcile_text(Target(before, "\n"), "x += 1\n    return x\n") == "x += 1\n    return x"


def test_a_closer_that_also_follows_at_another_depth_is_kept() -> None:
    before = "func f() {\n\tif ok {\n\t\t"
    answer = "run()\n\t}\n"
    assert reconcile_text(Target(before, "\n}\n"), answer) == "run()\n\t}"


def test_a_closer_already_there_is_dropped() -> None:
    before = "func f() {\n\t"
    assert reconcile_text(Target(before, "\n}\n"), "run()\n}\n") == "run()"


def test_a_blank_line_and_comment_the_file_has_are_kept() -> None:
    before = "def f(x):\n    # step\n    y = x\n\n    "
    answer = "# step\n    return y\n"
    assert reconcile_text(Target(before, "\n"), answer) == "# step\n    return y"


def test_a_comment_continued_at_the_cursor_is_not_prose() -> None:
    before = "def f(x):\n    # "
    answer = "Here is the reason we add one.\n"
    assert reconcile_text(Target(before, "\n    return x\n"), answer) == answer.strip()


def test_tabs_as_the_file_uses_them() -> None:
    answer = "```go\nif x {\n    n++\n}\n```"
    assert reconcile_text(Target(GO_BEFORE, GO_AFTER), answer) == "if x {\n\t\t\tn++\n\t\t}"


def test_an_answer_that_never_leaves_its_reasoning_inserts_nothing() -> None:
    assert reconcile_text(Target(PY_BEFORE, PY_AFTER), "<think>Let me see, the sum") == ""


def test_unwrapped_keeps_only_the_code() -> None:
    assert unwrapped("Sure! Here's the pattern:\n```\n^a+$\n```\nIt matches a.") == "^a+$\n"


def test_an_answer_that_only_repeats_the_next_line_inserts_nothing() -> None:
    target = Target("def f(x):\n    ", "\n    return y\n")
    assert reconcile_text(target, "return y\n") == ""
    assert reconcile_text(target, "y = x\n    return y\n") == "y = x"


@pytest.mark.parametrize(
    "answer",
    [
        "    total += x\n    return total\n",
        "    total += x\n    return total",
        "```python\n    total += x\n    return total\n```\n",
    ],
)
def test_an_answer_running_into_the_line_the_target_starts_lands_no_blank_line(
    answer: str,
) -> None:
    # The target at column 0 of `    return total`: that line repeated by the model is the code
    # that follows. Its indentation went out (the rest of the line held only its words) and
    # left a line of spaces: `    total += x\n    \n`.
    target = Target(
        before="def f(xs):\n    total = 0\n", after="    return total\n", language_id="python"
    )
    assert reconcile_text(target, answer) == "    total += x\n"
    rec = Reconciler(target)
    assert "".join(rec.feed(char) for char in answer) + rec.finish() == "    total += x\n"
