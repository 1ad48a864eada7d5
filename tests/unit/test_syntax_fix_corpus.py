"""Offline syntax repair measured on mutants of the running interpreter's standard library.

Real files are broken at seeded random positions, one mutation each, in equal shares: delete a
bracket, delete a colon, delete a quote, duplicate a token, dedent a line. Mutants that still
compile are dropped. A mutant counts as repaired when the whole file compiles after the repair
and every line it changed lies inside the error region (:func:`error_region`). Printed: the repair
rate, per mutation, and how often the repair restored the original file exactly.
Floors: >= 70% repaired, and no repair changes a line outside the region.
"""

from __future__ import annotations

import difflib
import io
import random
import tokenize
import warnings
from collections import Counter
from dataclasses import dataclass

import pytest

from fastedit_lsp.engines.syntax_fix.python import Repair, error_region, repair
from tests.support.stdlib_corpus import stdlib_modules

FILES = 30
MUTANTS_PER_FILE = 10
SEED = 0
MIN_LINES, MAX_LINES = 150, 1500
REPAIR_FLOOR = 0.70
KINDS = ("bracket", "colon", "quote", "duplicate", "dedent")


@dataclass(frozen=True)
class Mutant:
    kind: str
    original: str
    text: str


def compiles(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<mutant>", "exec", dont_inherit=True)
        except SyntaxError:
            return False
    return True


def corpus_files() -> list[str]:
    return stdlib_modules(FILES, MIN_LINES, MAX_LINES)


def mutate(text: str, tokens: list[tokenize.TokenInfo], kind: str, rng: random.Random) -> str:
    """The text with one mutation of the kind at a random position."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        return starts[position[0] - 1] + position[1]

    def delete(at: int) -> str:
        return text[:at] + text[at + 1 :]

    if kind in ("bracket", "colon"):
        chars = "()[]{}" if kind == "bracket" else ":"
        token = rng.choice([t for t in tokens if t.type == tokenize.OP and t.string in chars])
        return delete(offset(token.start))
    if kind == "quote":
        token = rng.choice([t for t in tokens if t.type == tokenize.STRING])
        if rng.random() < 0.5:
            return delete(
                offset(token.start) + len(token.string) - len(token.string.lstrip("rRbBuUfF"))
            )
        return delete(offset(token.end) - 1)
    if kind == "duplicate":
        kinds = (tokenize.NAME, tokenize.OP, tokenize.NUMBER)
        token = rng.choice([t for t in tokens if t.type in kinds])
        separator = "" if token.type == tokenize.OP else " "
        at = offset(token.end)
        return text[:at] + separator + token.string + text[at:]
    # dedent: the first line of an indented statement loses one level (4 spaces or a tab).
    firsts = []
    previous = tokenize.NEWLINE
    for t in tokens:
        if t.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            continue
        if previous == tokenize.NEWLINE and t.start[1] > 0:
            firsts.append(t.start[0] - 1)
        previous = t.type
    i = rng.choice(firsts)
    line = lines[i]
    cut = 1 if line.startswith("\t") else min(4, len(line) - len(line.lstrip(" ")))
    return "".join(lines[:i]) + line[cut:] + "".join(lines[i + 1 :])


def mutants() -> list[Mutant]:
    rng = random.Random(SEED)
    found = []
    for text in corpus_files():
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        for i in range(MUTANTS_PER_FILE):
            kind = KINDS[i % len(KINDS)]
            mutated = mutate(text, tokens, kind, rng)
            if not compiles(mutated):
                found.append(Mutant(kind, text, mutated))
    return found


def applied(text: str, fix: Repair) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[: fix.start_line]) + fix.new_text + "".join(lines[fix.end_line + 1 :])


def changed_lines(before: str, after: str) -> set[int]:
    """Lines of ``before`` that the change replaced or deleted, or next to which it inserted."""
    matcher = difflib.SequenceMatcher(
        None, before.splitlines(keepends=True), after.splitlines(keepends=True), autojunk=False
    )
    changed: set[int] = set()
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(i1, i2) if i2 > i1 else (i1,))
    return changed


def test_syntax_repair_rate_on_standard_library_mutants() -> None:
    if len(corpus_files()) < FILES:
        pytest.skip("the standard library sources are not available")
    sample = mutants()
    totals: Counter[str] = Counter(m.kind for m in sample)
    repaired: Counter[str] = Counter()
    outside = restored = 0
    for mutant in sample:
        fix = repair(mutant.text)
        if fix is None:
            continue
        region = error_region(mutant.text)
        assert region is not None
        fixed = applied(mutant.text, fix)
        inside = region[0] <= fix.start_line <= fix.end_line <= region[1] and all(
            region[0] <= i <= region[1] for i in changed_lines(mutant.text, fixed)
        )
        outside += not inside
        if inside and compiles(fixed):
            repaired[mutant.kind] += 1
            restored += fixed == mutant.original
    rate = sum(repaired.values()) / len(sample)
    per_kind = ", ".join(f"{k} {repaired[k]}/{totals[k]}" for k in KINDS)
    print(  # noqa: T201 (the corpus figures are the point of this test)
        f"\nsyntax fix corpus: {len(sample)} mutants of {FILES} stdlib modules (seed {SEED})\n"
        f"  repaired: {sum(repaired.values())}/{len(sample)} = {rate:.1%} "
        f"(floor {REPAIR_FLOOR:.0%}); {per_kind}\n"
        f"  restored the original exactly: {restored}/{len(sample)} = "
        f"{restored / len(sample):.1%}\n"
        f"  repairs changing a line outside the error region: {outside}"
    )
    assert len(sample) >= 200
    assert rate >= REPAIR_FLOOR
    assert outside == 0
