"""routing.py: which profile answers a job, and the reason recorded with it."""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import replace

import pytest

from fastedit_lsp.pipeline.routing import (
    RULES,
    Decision,
    Signals,
    choose,
    count_definitions,
    find_hard_word,
)
from fastedit_lsp.settings import Mode, RoutingSettings

#: The defaults: every row below also pins a default threshold.
DEFAULTS = RoutingSettings()
EDIT = Signals("editSelection", 3, instruction="rename x to count")


def words(n: int) -> str:
    return " ".join(["word"] * n)


def fast(reason: str) -> Decision:
    return Decision("fast", reason)


def standard(reason: str) -> Decision:
    return Decision("standard", reason)


# One row per signal, each at its threshold (fast) and one past it (standard):
# (id, mode, signals, failure rates, settings, decision).
ROWS = [
    # -- the user's mode wins over every signal
    ("fast-mode-ignores-every-signal", "fast",
     Signals("editSelection", 500, 9000, 9, 9, "refactor " + words(40)), {"fast": 1.0}, DEFAULTS,
     fast("fast mode")),
    ("standard-mode-for-a-one-line-regex", "standard", Signals("generateRegex", 1), None, DEFAULTS,
     standard("standard mode")),
    # -- kind: every action is fast by default, unless fastKinds leaves it out
    ("kind-complete-rest-is-fast", "auto", Signals("completeRest", 1), None, DEFAULTS,
     fast("fast: complete rest, 1 line")),
    ("kind-regex-is-fast", "auto", Signals("generateRegex", 3), None, DEFAULTS,
     fast("fast: regex, 3 lines")),
    ("kind-test-stub-is-fast", "auto", Signals("generateTests", 12), None, DEFAULTS,
     fast("fast: test stub, 12 lines")),
    ("kind-syntax-fix-is-fast", "auto", Signals("fixSyntax", 2), None, DEFAULTS,
     fast("fast: syntax fix, 2 lines")),
    ("kind-edit-selection-is-fast", "auto", EDIT, None, DEFAULTS, fast("fast: edit, 3 lines")),
    ("kind-left-out-of-fast-kinds", "auto", EDIT, None,
     RoutingSettings(fast_kinds=("generateRegex", "fixSyntax")),
     standard("standard: editSelection is not in fastKinds")),
    # -- lines
    ("lines-at-threshold", "auto", replace(EDIT, lines=60), None, DEFAULTS,
     fast("fast: edit, 60 lines")),
    ("lines-over-threshold", "auto", replace(EDIT, lines=61), None, DEFAULTS,
     standard("standard: 61 lines in the selection (> 60)")),
    ("lines-apply-to-every-kind", "auto", Signals("fixSyntax", 61), None, DEFAULTS,
     standard("standard: 61 lines in the selection (> 60)")),
    # -- definitions
    ("definitions-at-threshold", "auto", replace(EDIT, definitions=1), None, DEFAULTS,
     fast("fast: edit, 3 lines")),
    ("definitions-over-threshold", "auto", replace(EDIT, definitions=2), None, DEFAULTS,
     standard("standard: 2 definitions in the selection (> 1)")),
    ("definitions-configured", "auto", replace(EDIT, definitions=4), None,
     RoutingSettings(fast_max_definitions=3),
     standard("standard: 4 definitions in the selection (> 3)")),
    # -- prompt size
    ("prompt-at-threshold", "auto", replace(EDIT, prompt_tokens=3000), None, DEFAULTS,
     fast("fast: edit, 3 lines")),
    ("prompt-over-threshold", "auto", replace(EDIT, prompt_tokens=3001), None, DEFAULTS,
     standard("standard: prompt of ~3001 tokens (> 3000)")),
    # -- diagnostics
    ("diagnostics-at-threshold", "auto", Signals("fixSyntax", 5, diagnostics=3), None, DEFAULTS,
     fast("fast: syntax fix, 5 lines")),
    ("diagnostics-over-threshold", "auto", Signals("fixSyntax", 5, diagnostics=4), None, DEFAULTS,
     standard("standard: 4 diagnostics in range (> 3)")),
    # -- instruction length (editSelection only)
    ("instruction-at-threshold", "auto", replace(EDIT, instruction=words(25)), None, DEFAULTS,
     fast("fast: edit, 3 lines")),
    ("instruction-over-threshold", "auto", replace(EDIT, instruction=words(26)), None, DEFAULTS,
     standard("standard: instruction of 26 words (> 25)")),
    ("instruction-length-only-for-edit-selection", "auto",
     Signals("completeRest", 3, instruction=words(26)), None, DEFAULTS,
     fast("fast: complete rest, 3 lines")),
    # -- hard words (editSelection only)
    ("hard-word", "auto", replace(EDIT, instruction="refactor this loop"), None, DEFAULTS,
     standard('standard: instruction says "refactor" (in hardWords)')),
    ("hard-word-inflected-and-capitalised", "auto",
     replace(EDIT, instruction="Optimizing the hot path"), None, DEFAULTS,
     standard('standard: instruction says "Optimizing" (in hardWords)')),
    ("hard-word-spelled-with-a-space", "auto", replace(EDIT, instruction="make it thread safe"),
     None, DEFAULTS, standard('standard: instruction says "thread safe" (in hardWords)')),
    ("hard-word-only-at-a-word-start", "auto", replace(EDIT, instruction="fix the prefactor"),
     None, DEFAULTS, fast("fast: edit, 3 lines")),
    ("hard-words-configured-off", "auto", replace(EDIT, instruction="refactor this"), None,
     RoutingSettings(hard_words=()), fast("fast: edit, 3 lines")),
    ("hard-words-only-for-edit-selection", "auto",
     Signals("generateTests", 3, instruction="refactor"), None, DEFAULTS,
     fast("fast: test stub, 3 lines")),
    # -- the fast route's recent verification failure rate
    ("failure-rate-at-threshold", "auto", EDIT, {"fast": 0.5}, DEFAULTS,
     fast("fast: edit, 3 lines")),
    ("failure-rate-over-threshold", "auto", EDIT, {"fast": 0.6}, DEFAULTS,
     standard("standard: fast route failed verification in 60% of recent jobs (> 50%)")),
    ("failure-rate-of-standard-is-not-read", "auto", EDIT, {"standard": 0.9}, DEFAULTS,
     fast("fast: edit, 3 lines")),
    ("failure-rate-rule-off-at-one", "auto", EDIT, {"fast": 1.0},
     RoutingSettings(max_fast_failure_rate=1.0), fast("fast: edit, 3 lines")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "signals", "rates", "routing", "expected"),
    [pytest.param(*row, id=name) for name, *row in ROWS],
)
def test_choose_routes_by_mode_then_by_the_first_rule_that_fires(
    mode: Mode,
    signals: Signals,
    rates: Mapping[str, float] | None,
    routing: RoutingSettings,
    expected: Decision,
) -> None:
    assert choose(mode, signals, routing=routing, failure_rates=rates) == expected


# -- rule order -------------------------------------------------------------------------------

#: A job that trips every rule.
EVERYTHING = Signals(
    "editSelection", 100, prompt_tokens=5000, definitions=3, diagnostics=5,
    instruction="rewrite " + words(30),
)  # fmt: skip
#: Settings that turn each rule off, in the documented order.
SILENCE: list[dict[str, object]] = [
    {"fast_kinds": ("editSelection",)},
    {"fast_max_lines": 1000},
    {"fast_max_definitions": 10},
    {"fast_max_prompt_tokens": 10000},
    {"fast_max_diagnostics": 10},
    {"fast_max_instruction_words": 100},
    {"hard_words": ()},
    {"max_fast_failure_rate": 1.0},
]
ORDER = [
    "standard: editSelection is not in fastKinds",
    "standard: 100 lines in the selection (> 60)",
    "standard: 3 definitions in the selection (> 1)",
    "standard: prompt of ~5000 tokens (> 3000)",
    "standard: 5 diagnostics in range (> 3)",
    "standard: instruction of 31 words (> 25)",
    'standard: instruction says "rewrite" (in hardWords)',
    "standard: fast route failed verification in 90% of recent jobs (> 50%)",
    "fast: edit, 100 lines",
]


@pytest.mark.parametrize(
    ("silenced", "expected"),
    [pytest.param(n, reason, id=f"{n}-rules-off") for n, reason in enumerate(ORDER)],
)
def test_rules_are_checked_in_the_documented_order(silenced: int, expected: str) -> None:
    overrides: dict[str, object] = {"fast_kinds": ("generateRegex",)}
    for setting in SILENCE[:silenced]:
        overrides.update(setting)
    routing = RoutingSettings.model_validate(overrides)
    decision = choose("auto", EVERYTHING, routing=routing, failure_rates={"fast": 0.9})
    assert decision.reason == expected


def test_the_settings_table_lists_the_rules_in_the_order_they_are_checked() -> None:
    numbers = [
        int(m.group(1))
        for info in RoutingSettings.model_fields.values()
        if (m := re.search(r"rule (\d+)", info.description or ""))
    ]
    assert numbers == list(range(1, len(RULES) + 1))
    assert len(RoutingSettings.model_fields) == len(RULES)


def test_zero_thresholds_send_every_auto_job_to_standard() -> None:
    strict = RoutingSettings(fast_max_lines=0, fast_max_instruction_words=0)
    assert choose("auto", Signals("completeRest", 1), routing=strict).profile == "standard"
    decision = choose("auto", Signals("editSelection", 0, instruction="go"), routing=strict)
    assert decision == standard("standard: instruction of 1 word (> 0)")


# -- hard words -------------------------------------------------------------------------------

HARD = [
    ("stem-matches-inflections", "refactoring please", ("refactor",), "refactoring"),
    ("final-e-is-optional", "a rewritten loop", ("rewrite",), "rewritten"),
    ("any-case", "SECURITY review", ("security",), "SECURITY"),
    ("hyphen-matches-nothing", "threadsafe cache", ("thread-safe",), "threadsafe"),
    ("space-matches-hyphen", "a thread safe cache", ("thread-safe",), "thread safe"),
    ("first-in-the-instruction-wins", "optimize then refactor", ("refactor", "optimize"),
     "optimize"),
    ("not-inside-a-word", "the prefactor", ("refactor",), None),
    ("not-after-a-hyphen", "non-security fix", ("security",), None),
    ("blank-hard-words-are-ignored", "anything", ("", "  ", "-"), None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("instruction", "hard_words", "expected"),
    [pytest.param(*row, id=name) for name, *row in HARD],
)
def test_find_hard_word_reports_the_word_as_written(
    instruction: str, hard_words: tuple[str, ...], expected: str | None
) -> None:
    assert find_hard_word(instruction, hard_words) == expected


# -- count_definitions ------------------------------------------------------------------------

DEFINITIONS = [
    ("empty", "", 0),
    ("no-definitions", "x = 1\nprint(x)\n", 0),
    ("one-function", "def f():\n    return 1\n", 1),
    ("async-and-decorated",
     "@cache\nasync def f():\n    pass\n\n@dataclass\nclass C:\n    x: int\n", 2),
    ("class-and-its-methods", "class A:\n    def m(self):\n        pass\n\n    async def n(self):\n"
     "        pass\n", 3),
    ("nested-functions-and-classes-are-part-of-their-function",
     "def f():\n    def g():\n        pass\n    class Local:\n        pass\n    return g\n", 1),
    ("inside-top-level-blocks", "if TYPE_CHECKING:\n    def f(): ...\nelse:\n    class C: ...\n"
     "try:\n    def g(): ...\nexcept ImportError:\n    def g(): ...\n", 4),
    ("indented-methods",
     "    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n", 2),
    ("definitions-in-strings-are-not", 'x = """\ndef f():\n    pass\n"""\n', 0),
    # Fragments that do not parse: counted from def/class lines, scoped by indentation.
    ("fragment-two-functions", "def a():\n    x = (\n\ndef b():\n    pass\n", 2),
    ("fragment-nested-function", "def f():\n    def g():\n        pass\n    y = [\n", 1),
    ("fragment-class-methods", "class A:\n    def m(self):\n        y = [\n    def n(self):\n", 3),
    ("fragment-multi-line-signature", "def f(\n    a,\n):\n    def g(): pass\n    x = (\n", 1),
    ("fragment-comments-and-prose", "# def f():\ndefault = (\nclassic = 1\n", 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "expected"),
    [pytest.param(source, n, id=name) for name, source, n in DEFINITIONS],
)
def test_count_definitions_counts_top_level_and_class_level_statements(
    source: str, expected: int
) -> None:
    assert count_definitions(source) == expected


def test_count_definitions_parses_code_that_warns_even_when_warnings_are_errors() -> None:
    # Counted from lines, the docstring's "def g" would count as a second definition.
    source = 'PATTERN = "\\d+"\ndef f():\n    """\ndef g():\n"""\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert count_definitions(source) == 1
