"""lookup.py: prompt-lookup completion, the offline engine's "complete the rest".

Each case is a document cut at the cursor (``|`` marks it) plus other documents, and what the
lookup proposes there (None: no suggestion).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.engines.lookup import LONG_MATCH, complete

CURSOR = "|"


def at_cursor(document: str) -> tuple[str, str]:
    prefix, suffix = document.split(CURSOR)
    return prefix, suffix


# Two functions that begin alike: what follows a line typed as in them is known twice over.
TWICE = (
    "def load(path):\n"
    "    with open(path) as handle:\n"
    "        return json.load(handle)\n"
    "\n"
    "\n"
    "def load_config(path):\n"
    "    with open(path) as handle:\n"
    "        return json.load(handle)\n"
    "\n"
    "\n"
)

CASES = [
    pytest.param("|", (), None, id="empty-document"),
    pytest.param("   \n\n|", (), None, id="whitespace-only-prefix"),
    pytest.param("import os\nx = compute_something(|)\n", (), None, id="nothing-matches"),
    pytest.param(
        TWICE + "def load_state(path):\n    with op|\n",
        (),
        "en(path) as handle:",
        id="rest-of-line-agreed-by-two-matches",
    ),
    pytest.param(
        "value = 1\nresult = compute(value, 2)\nother = 3\nresult = comp|\n",
        (),
        None,
        id="short-match-seen-once-needs-agreement",
    ),
    pytest.param(
        "a = sorted(items, key=len)\nb = sorted(items, key=str)\nc = sorted(items, k|\n",
        (),
        None,
        id="matches-that-disagree-propose-nothing",
    ),
    pytest.param(
        "a = sorted(items, key=len)\nb = sorted(items, key=len)\n"
        "c = sorted(items, key=str)\nd = sorted(items, k|\n",
        (),
        "ey=len)",
        id="majority-of-matches-wins",
    ),
    pytest.param(
        "self.assertEqual(parse_header(raw_line), expected_header)\n"
        "other()\n"
        "self.assertEqual(parse_header(raw|\n",
        (),
        "_line), expected_header)",
        id="long-match-seen-once-is-enough",
    ),
    pytest.param(
        "for key, value in sorted(mapping.items()):\n    print(key, value)\n"
        "for key, value in sorted(mapping.items()):\n    print(key, value)\n"
        "for key, value in sorted(mapp|\n",
        (),
        "ing.items()):",
        id="mid-line-cursor-stops-at-end-of-line",
    ),
    pytest.param(
        "x = 1\n|",
        ("def helper_function(argv):\n    return run(argv)\n",),
        None,
        id="a-line-break-alone-is-no-evidence",
    ),
    pytest.param(
        "import json\n\n\ndef read(path):\n    with open(p|\n",
        (TWICE,),
        "ath) as handle:",
        id="match-in-another-document",
    ),
    pytest.param(
        "    if not items:\n        raise ValueError('empty')\n\n"
        "x = 1\n    if not items:\n        ra|",
        (),
        None,
        id="text-after-cursor-that-only-repeats-is-dropped",
    ),
]


@pytest.mark.parametrize(("document", "others", "expected"), CASES)
def test_proposals(document: str, others: tuple[str, ...], expected: str | None) -> None:
    prefix, suffix = at_cursor(document)
    assert complete(prefix, suffix, others) == expected


def test_a_match_in_the_text_after_the_cursor_counts() -> None:
    prefix = "def first(self):\n    self.assertEqual(resp"
    suffix = (
        "\n\n"
        "def second(self):\n    self.assertEqual(response.status_code, 200)\n"
        "def third(self):\n    self.assertEqual(response.status_code, 200)\n"
    )
    assert complete(prefix, suffix) == "onse.status_code, 200)"


def test_the_cursor_position_itself_is_no_match() -> None:
    # The only earlier "x = compute(a, b)\n" is the line just above the cursor.
    assert complete("x = compute(a, b)\n", "") is None
    assert complete("x = compute(a, b)\nx = compute(a, b)\n", "\n") is None


BLOCK = (
    "def area(shape):\n"
    "    if shape.kind == 'circle':\n"
    "        return math.pi * shape.r ** 2\n"
    "    return shape.w * shape.h\n"
    "\n"
    "\n"
    "def perimeter(shape):\n"
    "    if shape.kind == 'circle':\n"
    "        return 2 * math.pi * shape.r\n"
    "    return 2 * (shape.w + shape.h)\n"
)


def test_line_start_proposes_the_statement_and_its_block() -> None:
    prefix = BLOCK + "\n\ndef describe(shape):\n    "
    # Both earlier functions begin with this line; their bodies differ.
    assert complete(prefix, "\n") == "if shape.kind == 'circle':"
    prefix = BLOCK + "\n\ndef describe(shape):\n    if shape.kind == 'circle':\n"
    assert complete(prefix, "\n") is None
    same = "    if shape.kind == 'circle':\n        return 0\n"
    document = f"def area(shape):\n{same}\n\ndef size(shape):\n{same}\n\ndef draw(shape):\n    "
    assert complete(document, "\n") == "if shape.kind == 'circle':\n        return 0"


def test_after_a_block_opener_the_block_follows() -> None:
    config = "CONFIG = dict(\n    host='localhost',\n    port=8080,\n)\n"
    document = f"# Settings\n{config}\n{config}\nCONFIG = dict("
    assert complete(document, "\n") == "\n    host='localhost',\n    port=8080,\n)"


def test_a_block_stops_at_a_blank_line_and_at_a_dedent() -> None:
    body = "try:\n    step_one()\n    step_two()\n\n    step_three()\nexcept OSError:\n    pass\n"
    document = f"{body}\n{body}\ntry:"
    assert complete(document, "\n") == "\n    step_one()\n    step_two()"
    dedent = "if ready:\n    go()\nelse:\n    wait()\n"
    assert complete(f"{dedent}{dedent}if ready:", "\n") == "\n    go()"


def test_a_block_keeps_the_documents_line_endings() -> None:
    body = "with lock:\r\n    counter += 1\r\n    notify()\r\n"
    assert complete(f"{body}{body}with lock:", "\r\n") == "\r\n    counter += 1\r\n    notify()"


def test_a_tail_already_after_the_cursor_is_left_out() -> None:
    document = "total = add(first, second)\ntotal = add(first, second)\ntotal = add("
    assert complete(document, ")\n") == "first, second"


def test_the_proposal_never_only_repeats_the_suffix() -> None:
    document = "total = add(first, second)\ntotal = add(first, second)\ntotal = add("
    assert complete(document, "first, second)\n") is None


def test_max_chars_bounds_the_proposal() -> None:
    prefix = BLOCK + "\n\ndef describe(shape):\n    "
    assert complete(prefix, "\n", max_chars=30) == "if shape.kind == 'circle':"
    assert complete(prefix, "\n", max_chars=10) is None
    assert complete(prefix, "\n", max_chars=0) is None


def test_tabs_are_indentation_like_spaces() -> None:
    body = "def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n"
    assert complete(f"{body}\n{body}\ndef g():\n\t", "\n") == "if x:\n\t\treturn 1"


def test_long_match_threshold_is_what_lets_one_match_stand_alone() -> None:
    line = "result = transform(" + "argument_name, " * 4
    assert len(line) > LONG_MATCH
    assert complete(f"{line}final)\nx = 1\n{line}", "\n") == "final)"


@given(
    text=st.text(alphabet="ab ():\n\t\r", max_size=200),
    cut=st.integers(0, 200),
    others=st.lists(st.text(alphabet="ab ():\n", max_size=80), max_size=2),
    max_chars=st.integers(0, 60),
)
def test_proposals_are_bounded_and_never_repeat_the_suffix(
    text: str, cut: int, others: list[str], max_chars: int
) -> None:
    prefix, suffix = text[:cut], text[cut:]
    proposal = complete(prefix, suffix, others, max_chars=max_chars)
    if proposal is not None:
        assert proposal.strip()
        assert len(proposal) <= max_chars
        assert not suffix.startswith(proposal)
        assert not suffix.lstrip().startswith(proposal.strip())
