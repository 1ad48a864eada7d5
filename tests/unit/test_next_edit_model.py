"""The model's side of next edits, without a model: the window, the prompt, the answer turned
into one minimal edit, and the rate-limit headroom that decides whether to ask."""

from __future__ import annotations

from fastedit_lsp.backends.ratelimit import RateLimits, headroom_of
from fastedit_lsp.core.document import Point
from fastedit_lsp.engines.next_edit.lines import ListLines, Prediction
from fastedit_lsp.engines.next_edit.model import (
    CURSOR,
    edit_from_rewrite,
    updated_block,
    window,
)
from fastedit_lsp.prompting.next_edit import next_edit_messages

LINES = ListLines(["def f(x):", "    acc = 0", "    count += 1", "    return count"])


def test_the_window_marks_the_cursor_and_the_prompt_carries_history_and_window() -> None:
    win = window(LINES, Point(1, 7))
    assert (win.start, win.end) == (0, 4)
    assert win.marked().split("\n")[1] == f"    acc{CURSOR} = 0"
    system, user = next_edit_messages(
        "/p/m.py", [("    count = 0", "    acc = 0")], win.marked(), 0
    )
    assert system.role == "system" and "<updated>" in system.content
    assert (
        "<original>\n    count = 0\n</original>\n<updated>\n    acc = 0\n</updated>" in user.content
    )
    assert f"    acc{CURSOR} = 0" in user.content and "File: /p/m.py" in user.content


def test_the_rewrite_becomes_the_minimal_edit_nearest_after_the_cursor() -> None:
    win = window(LINES, Point(1, 7))
    answer = "Sure:\n<updated>\ndef f(x):\n    acc = 0\n    acc += 1\n    return acc\n</updated>"
    updated = updated_block(answer)
    assert updated is not None
    assert edit_from_rewrite(win, updated) == Prediction(Point(2, 4), Point(2, 9), "acc", "model")


def test_an_unchanged_window_or_no_block_is_no_edit() -> None:
    win = window(LINES, Point(1, 7))
    assert edit_from_rewrite(win, win.text) is None
    assert updated_block("I would rename it.") is None
    # The cursor mark echoed back is not text to insert.
    assert (
        edit_from_rewrite(win, updated_block(f"<updated>\n{win.marked()}\n</updated>") or "")
        is None
    )


def test_a_line_added_after_the_window_ends_the_window_line() -> None:
    win = window(LINES, Point(1, 7))
    updated = win.text + "\n    pass"
    assert edit_from_rewrite(win, updated) == Prediction(
        Point(3, 16), Point(3, 16), "\n    pass", "model"
    )


def test_rate_limit_headroom_is_the_smallest_fraction_left() -> None:
    headers = {
        "x-ratelimit-limit-requests": "100",
        "x-ratelimit-remaining-requests": "80",
        "x-ratelimit-limit-tokens": "1000",
        "x-ratelimit-remaining-tokens": "300",
    }
    assert headroom_of(headers) == 0.3
    assert headroom_of({"x-ratelimit-remaining-requests": "5"}) is None  # no limit to divide by
    limits = RateLimits()
    assert limits.headroom(("u", "m")) is None
    limits.record_headroom(("u", "m"), headers)
    assert limits.headroom(("u", "m")) == 0.3
