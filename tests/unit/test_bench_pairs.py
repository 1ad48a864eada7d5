"""``fastedit-lsp bench``'s bookkeeping that needs no server: ``--paired``'s rounds and the cold
start's goal against jedi-language-server (the e2e side is tests/e2e/test_cli.py)."""

from __future__ import annotations

from fastedit_lsp.tools import bench_report
from fastedit_lsp.tools.bench_compare import Pairs
from fastedit_lsp.tools.bench_core import Figures

KEY = "first job of a session: first edit"


def _round(pairs: Pairs, this: Figures, ref: Figures, a: list[float], b: list[float]) -> None:
    pairs.start_round(this, ref)
    this.add(KEY, a)
    ref.add(KEY, b)
    pairs.end_round(this, ref)


def test_each_round_pairs_the_medians_of_what_each_side_measured_in_it() -> None:
    pairs, this, ref = Pairs(), Figures(), Figures()
    # The load doubles between rounds: the pooled medians' ratio moves, the per-round one not.
    _round(pairs, this, ref, [10, 12, 11], [20, 22, 21])
    _round(pairs, this, ref, [40], [80])
    _round(pairs, this, ref, [30], [20])
    assert pairs.rounds[KEY] == [(11, 21), (40, 80), (30, 20)]
    summary = pairs.summary(KEY)
    assert summary["rounds"] == 3 and summary["lower"] == 2
    assert summary["median"] == round(11 / 21, 4)
    assert summary["p10"] == 0.5 and summary["p90"] == 1.5
    table = bench_report.paired(this, pairs, "fastedit-lsp")
    assert f"| {KEY} | 0.524 | 0.500–1.500 | 2 | 3 |" in table


def test_a_key_only_one_side_measured_in_a_round_and_a_zero_reference_make_no_pair() -> None:
    pairs, this, ref = Pairs(), Figures(), Figures()
    pairs.start_round(this, ref)
    this.add(KEY, [5])
    ref.add("warm job: first edit", [5])
    pairs.end_round(this, ref)
    assert pairs.rounds == {}
    pairs.add("modules imported by the first job", 3, 0)
    assert pairs.summary("modules imported by the first job")["rounds"] == 0


def test_the_cold_start_goal_against_jedi_language_server() -> None:
    figures = Figures()
    figures.add("cold start to initialize reply: fastedit-lsp", [400, 420])
    figures.add("cold start to initialize reply: jedi-language-server", [500, 520])
    goals = bench_report.goals(figures, "fastedit-lsp")
    (goal,) = [g for g in goals if g[0] == "cold start ≤ 0.85 × jedi-language-server's"]
    assert goal[1:] == ("410 vs 510 ms (0.80 ×, alternating)", True)
