"""Prompt-lookup completion measured on the running interpreter's standard library.

Lines of real files are cut at seeded random points inside their code; the lookup gets the file
before the cut as the prefix, the file after the cut line as the suffix, and the next two files of
the corpus as other open documents. It should propose exactly the rest of the line (a mid-line
cursor's block boundary is the end of the line) or nothing. Printed: coverage (how often it
proposes) and precision (how often a proposal equals the rest of the line exactly).
Floor: precision >= 60% with coverage >= 15%.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from fastedit_lsp.engines.lookup import complete
from tests.support.stdlib_corpus import stdlib_modules

FILES = 30
CUTS_PER_FILE = 40
SEED = 0
MIN_LINES, MAX_LINES = 200, 2000
PRECISION_FLOOR = 0.60
COVERAGE_FLOOR = 0.15


@dataclass(frozen=True)
class Cut:
    prefix: str
    suffix: str
    rest: str  # the rest of the line: what a perfect proposal is
    others: tuple[str, str]


def corpus_files() -> list[str]:
    return stdlib_modules(FILES, MIN_LINES, MAX_LINES)


def cuts() -> list[Cut]:
    rng = random.Random(SEED)
    texts = corpus_files()
    found = []
    for index, text in enumerate(texts):
        others = (texts[(index + 1) % len(texts)], texts[(index + 2) % len(texts)])
        lines = text.splitlines(keepends=True)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        candidates = [i for i, line in enumerate(lines) if len(line.strip()) >= 2]
        for _ in range(CUTS_PER_FILE):
            i = rng.choice(candidates)
            code = lines[i].rstrip()
            indent = len(code) - len(code.lstrip())
            # Strictly inside the code: after its first character, before its last.
            col = rng.randint(indent + 1, len(code) - 1)
            found.append(
                Cut(
                    prefix=text[: starts[i] + col],
                    suffix=text[starts[i] + len(code) :],
                    rest=code[col:],
                    others=others,
                )
            )
    return found


def test_lookup_precision_and_coverage_on_the_standard_library() -> None:
    if len(corpus_files()) < FILES:
        pytest.skip("the standard library sources are not available")
    sample = cuts()
    proposed = exact = 0
    for cut in sample:
        proposal = complete(cut.prefix, cut.suffix, cut.others)
        if proposal is not None:
            proposed += 1
            exact += proposal == cut.rest
    coverage = proposed / len(sample)
    precision = exact / proposed if proposed else 0.0
    print(  # noqa: T201 (the corpus figures are the point of this test)
        f"\nlookup corpus: {len(sample)} cuts in {FILES} stdlib modules (seed {SEED})\n"
        f"  coverage: {proposed}/{len(sample)} = {coverage:.1%} (floor {COVERAGE_FLOOR:.0%})\n"
        f"  precision: {exact}/{proposed} = {precision:.1%} (floor {PRECISION_FLOOR:.0%})"
    )
    assert len(sample) >= 300
    assert coverage >= COVERAGE_FLOOR
    assert precision >= PRECISION_FLOOR
