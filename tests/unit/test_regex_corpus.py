"""The regex corpus (tests/data/regex/, format in its README): held-out pass rates of the local
synthesiser and of grex, side by side, and the floor the local one must meet.

The figures print in a "regex corpus" section at the end of every pytest run that includes this
test (and with ``-s`` as it runs); they are also in the assertion message when the floor is missed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from grex import RegExpBuilder

from fastedit_lsp.engines.regex.synth import SynthesisError, grex_to_python, synthesize
from tests.support.summary_figures import section_lines

CORPUS = Path(__file__).resolve().parents[1] / "data" / "regex"
# Issue 3 asks for 85%. Measured: 49/52 = 94.2%; the held-out examples were written before the
# synthesiser and were not changed for it, and the failures printed below are what is missing
# (ipv6's shortened groups, a URL's port, Windows paths of other depths: nothing in their training
# examples shows them). Never lower this to pass.
FLOOR = 0.85

# grex's conversions, the most general first (the order matters only for "grex, first").
GREX_CONVERSIONS: tuple[tuple[str, ...], ...] = (
    ("words", "whitespace", "repetitions"),
    ("words", "repetitions"),
    ("words",),
    ("digits", "whitespace", "repetitions"),
    ("digits", "repetitions"),
    ("digits", "whitespace"),
    ("digits",),
    ("repetitions",),
    (),
)


@dataclass(frozen=True)
class Task:
    name: str
    description: str
    train_match: list[str]
    train_reject: list[str]
    held_match: list[str]
    held_reject: list[str]

    def passes(self, pattern: str | None) -> bool:
        """Every held-out example classified right by ``re.fullmatch``."""
        if pattern is None:
            return False
        try:
            compiled = re.compile(pattern)
        except re.error:
            return False
        return all(compiled.fullmatch(s) for s in self.held_match) and not any(
            compiled.fullmatch(s) for s in self.held_reject
        )

    def consistent(self, pattern: str) -> bool:
        compiled = re.compile(pattern)
        return all(compiled.fullmatch(s) for s in self.train_match) and not any(
            compiled.fullmatch(s) for s in self.train_reject
        )


def load_tasks() -> list[Task]:
    tasks = []
    for path in sorted(CORPUS.glob("*.json")):
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        tasks.append(
            Task(
                path.stem,
                data["description"],
                data["train"]["match"],
                data["train"]["reject"],
                data["held_out"]["match"],
                data["held_out"]["reject"],
            )
        )
    return tasks


def grex_patterns(positives: list[str]) -> Iterator[str]:
    for conversion in GREX_CONVERSIONS:
        builder = RegExpBuilder.from_test_cases(positives)
        for name in conversion:
            builder = getattr(builder, f"with_conversion_of_{name}")()
        yield grex_to_python(builder.build())


def local_pattern(task: Task) -> str | None:
    try:
        return synthesize(task.train_match, task.train_reject)
    except SynthesisError:
        return None


TASKS = load_tasks()


def test_corpus_is_well_formed() -> None:
    assert len(TASKS) >= 40
    for task in TASKS:
        assert task.description, task.name
        assert 2 <= len(task.train_match) <= 5, task.name
        assert 1 <= len(task.train_reject) <= 4, task.name
        assert len(task.held_match) >= 4, task.name
        assert len(task.held_reject) >= 3, task.name
        everything = task.train_match + task.train_reject + task.held_match + task.held_reject
        assert len(set(everything)) == len(everything), f"{task.name}: an example repeats"


def test_local_synthesis_beats_grex_and_meets_the_floor(request: pytest.FixtureRequest) -> None:
    local_failed: list[str] = []
    grex_first_passed = 0
    grex_best_passed = 0
    for task in TASKS:
        pattern = local_pattern(task)
        if not task.passes(pattern):
            local_failed.append(f"  {task.name}: {pattern}")
        # grex ignores negatives: keep the conversions whose pattern rejects the training ones.
        usable = [p for p in grex_patterns(task.train_match) if task.consistent(p)]
        grex_first_passed += bool(usable) and task.passes(usable[0])
        grex_best_passed += any(task.passes(p) for p in usable)
    total = len(TASKS)
    local = (total - len(local_failed)) / total
    lines = [
        f"local synthesiser: {total - len(local_failed)}/{total} tasks = {local:.1%} "
        f"(floor {FLOOR:.0%}; issue 3 asks 85%)",
        f"grex, best conversion per task (chosen with the held-out answers: an upper bound): "
        f"{grex_best_passed}/{total} = {grex_best_passed / total:.1%}",
        f"grex, most general conversion that rejects the training negatives: "
        f"{grex_first_passed}/{total} = {grex_first_passed / total:.1%}",
        "local failures (task: pattern):",
        *local_failed,
    ]
    summary = "\n".join(lines)
    print("\n" + summary)  # noqa: T201 (the corpus figures are the point of this test)
    section_lines(request, "regex corpus").extend(lines)
    assert local >= FLOOR, summary
    assert local > grex_best_passed / total, summary
