"""The realistic-shape corpus: how often an answer lands exactly, per action, with floors.

Third-party functions in five languages (tests/support/answer_corpus.py), cut at statement
boundaries; the answer in each shape chat models produce, streamed in the stub's 3- and
7-code-point pieces through the path the server runs. A case counts when every chunking lands
exactly. The held-out part (files whose path hashes to bucket 0 of 5) was fixed before tuning
and is only ever read as a figure. Controls are right answers whose lines repeat the text around
the target: a trim that drops them counts as wrong.

Run: ``PYTHONPATH=server pytest tests/unit/test_answer_corpus.py`` (figures in the summary).
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from tests.support.answer_corpus import cases, chunkings, lands_exactly, missing_sources, strict
from tests.support.summary_figures import section_lines

FLOOR = 0.98
HELD_OUT_FLOOR = 0.95
CONTROL_FLOOR = 0.99


def test_every_language_of_the_corpus_is_here_under_ci() -> None:
    missing = missing_sources()
    if missing and not strict():
        pytest.skip("sources absent here: " + "; ".join(missing))
    assert not missing, "the answer corpus needs: " + "; ".join(missing)


def test_answers_in_realistic_shapes_land_exactly(request: pytest.FixtureRequest) -> None:
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for case in cases():
        ok = all(lands_exactly(case, chunks) for chunks in chunkings(case.answer))
        part = "held out" if case.held_out else "tuned"
        keys = [(case.action, part)] + (
            [("controls", part), ("controls", "all")] if case.control else []
        )
        for key in keys:
            counts[key][0] += ok
            counts[key][1] += 1
    rows = {key: landed / total for key, (landed, total) in counts.items()}
    lines = section_lines(request, "answer corpus: exact landings (docs/answers.md)")
    for key in sorted(counts):
        landed, total = counts[key]
        lines.append(f"{key[0]:>15} {key[1]:>8}: {landed}/{total} = {100 * landed / total:.1f} %")
    for (action, part), share in rows.items():
        if action == "controls":
            # One figure over both parts: the held-out part alone has too few (one case = 2 %).
            assert part != "all" or share >= CONTROL_FLOOR, (action, part, share)
        else:
            assert share >= (FLOOR if part == "tuned" else HELD_OUT_FLOOR), (action, part, share)
    assert {action for action, _ in rows} >= {"complete_rest", "edit_selection", "inline"}
