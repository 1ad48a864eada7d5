"""routing.py: which profile answers a job, and the reason recorded with it."""

from __future__ import annotations

import pytest

from fastedit_lsp.jobs import Kind
from fastedit_lsp.routing import Decision, choose
from fastedit_lsp.settings import Mode, RoutingSettings

ROUTING = RoutingSettings(fast_max_lines=60, fast_max_instruction_words=25)
LONG = " ".join(["word"] * 26)
EXACT = " ".join(["word"] * 25)


# One row per signal: (mode, kind, lines, instruction) -> decision.
ROWS = [
    ("fast-mode", "fast", "completeRest", 500, "", "fast", "fast mode"),
    ("fast-mode-ignores-size", "fast", "editSelection", 500, LONG, "fast", "fast mode"),
    ("standard-mode", "standard", "completeRest", 1, "", "standard", "standard mode"),
    ("auto-one-line", "auto", "completeRest", 1, "", "fast", "auto: completeRest, 1 line"),
    ("auto-at-line-threshold", "auto", "fixSyntax", 60, "", "fast", "auto: fixSyntax, 60 lines"),
    ("auto-over-line-threshold", "auto", "fixSyntax", 61, "", "standard", "auto: 61 lines > 60"),
    ("auto-instruction-at-threshold", "auto", "editSelection", 3, EXACT, "fast",
     "auto: editSelection, 3 lines"),
    ("auto-long-instruction", "auto", "editSelection", 3, LONG, "standard",
     "auto: instruction of 26 words"),
    ("auto-instruction-counts-only-for-edit-selection", "auto", "completeRest", 3, LONG, "fast",
     "auto: completeRest, 3 lines"),
    ("auto-lines-checked-first", "auto", "editSelection", 61, LONG, "standard",
     "auto: 61 lines > 60"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "kind", "lines", "instruction", "expected"),
    [pytest.param(m, k, n, i, Decision(p, r), id=name) for name, m, k, n, i, p, r in ROWS],
)
def test_choose_routes_by_mode_then_by_size(
    mode: Mode, kind: Kind, lines: int, instruction: str, expected: Decision
) -> None:
    assert choose(mode, kind, lines=lines, instruction=instruction, routing=ROUTING) == expected


def test_auto_mode_follows_the_configured_thresholds() -> None:
    strict = RoutingSettings(fast_max_lines=0, fast_max_instruction_words=0)
    assert choose("auto", "completeRest", lines=1, routing=strict).profile == "standard"
    decision = choose("auto", "editSelection", lines=0, instruction="go", routing=strict)
    assert decision.profile == "standard"
    assert decision.reason.startswith("auto: instruction of 1 word")
