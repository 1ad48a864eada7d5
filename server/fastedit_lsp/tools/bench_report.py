"""What ``fastedit-lsp bench`` prints: the figures table, the goals (issues 16 and 27),
``--compare``'s ratios, and the plot (``--plot``, needs matplotlib: the ``bench`` extra)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .bench_core import Figures
from .bench_figures import RATES, SYNC_LINES
from .bench_lines import ACTIONS, FIRST_LINE, LAST_EDIT, LINE_GAP, LINE_RATES, MODEL_LINE, NAMES
from .bench_lines import key as line_key
from .bench_start import RSS_WARM

if TYPE_CHECKING:
    from .bench_compare import Pairs

#: Goals as (description, measured text, met), met None when it could not be measured.
Goal = tuple[str, str, bool | None]


def _num(value: float) -> str:
    if value != value:  # NaN
        return "–"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"


def _fmt(value: float, unit: str) -> str:
    # Ratios near 1 need their third decimal.
    text = f"{value:.3f}" if unit == "×" and value == value else _num(value)
    return f"{text} {unit}".rstrip()


def row_keys(figures: Figures, ours: str) -> list[str]:
    """The table's rows, in reading order; keys never measured are left out."""
    keys = [
        f"cold start to initialize reply: {ours}",
        "cold start to initialize reply: jedi-language-server",
        f"RSS after initialize: {ours}",
        "RSS after initialize: jedi-language-server",
        "first job of a session: first edit",
        "warm job: first edit",
        "modules imported by the first job",
        RSS_WARM,
        "RSS after two jobs",
        "first edit",
        "first edit: command → request at the stub",
        "first edit: job's own TTFT (server-reported)",
        "floor: stub first event (raw socket)",
        "floor: LSP round trip",
    ]
    for rate in LINE_RATES:
        keys += [line_key(name, action, rate) for action in ACTIONS for name in NAMES]
    for rate, _ in RATES:
        keys += [
            f"stream overhead, {rate:,} tok/s",
            f"edits per second, {rate:,} tok/s",
            f"edits per 1,000 tokens, {rate:,} tok/s",
            f"server CPU per 1,000 tokens, {rate:,} tok/s",
            f"bare httpx reader CPU per 1,000 tokens, {rate:,} tok/s",
        ]
    keys += [
        "cancel → cancelled",
        "cancel → reply",
        "cancel → stub sees the connection closed",
    ]
    keys += [f"didChange handler (server), {n:,} lines" for n in SYNC_LINES]
    keys += [
        "code actions (server), 10,000 lines, warm",
        "code actions (server), 10,000 lines, after an edit",
        "code actions round trip, 10,000 lines, warm",
        "code actions round trip, 10,000 lines, after an edit",
        "inline completion round trip, model",
        "inline completion: the stub's own time",
        "inline completion overhead (round trip − stub's own time)",
        "model requests per completion",
        "inline completion round trip, cached",
    ]
    known = [k for k in keys if figures.has(k)]
    return known + [k for k in figures.samples if k not in keys and figures.has(k)]


def table(figures: Figures, ours: str) -> str:
    rows = ["| measure | median | p90 | p99 | runs | load |", "|---|---|---|---|---|---|"]
    for key in row_keys(figures, ours):
        s, unit = figures.stats(key), figures.samples[key][1]
        rows.append(
            f"| {key} | {_fmt(s['median'], unit)} | {_fmt(s['p90'], unit)} "
            f"| {_fmt(s['p99'], unit)} | {int(s['runs'])} | {figures.load(key)} |"
        )
    return "\n".join(rows)


def goals(
    figures: Figures, ours: str, ref: Figures | None = None, ref_name: str = ""
) -> list[Goal]:
    """Issues 16's, 27's and 29's goals, from this run's figures (and the compared checkout's)."""
    m, s = figures.median, figures.stats
    out: list[Goal] = []
    floor = m("floor: stub first event (raw socket)") + m("floor: LSP round trip")
    first = m("first edit")
    out.append(
        (
            "first edit p50 ≤ 1.5 × floor + 1 ms",
            f"{_num(first)} ms vs {_num(1.5 * floor + 1)} ms (floor {_num(floor)} ms; "
            f"{_num(first / floor)} × floor)",
            None if first != first else first <= 1.5 * floor + 1,
        )
    )
    out.extend(_line_goals(figures))
    cold, warm = m("first job of a session: first edit"), m("warm job: first edit")
    out.append(
        (
            "first job of a session ≤ 1.2 × warm + 1 ms",
            f"{_num(cold)} ms vs {_num(1.2 * warm + 1)} ms (warm {_num(warm)} ms)",
            None if cold != cold else cold <= 1.2 * warm + 1,
        )
    )
    start_key = f"cold start to initialize reply: {ours}"
    if ref is not None and ref.has(start_key):
        ratio = m(start_key) / ref.median(start_key)
        out.append(
            (
                f"cold start not worse than {ref_name}",
                f"{ratio:.2f} × (same run, alternating)",
                ratio <= 1.05,
            )
        )
    peer_key = "cold start to initialize reply: jedi-language-server"
    if figures.has(start_key) and figures.has(peer_key):
        ours_ms, peer_ms = m(start_key), m(peer_key)
        out.append(
            (
                "cold start ≤ 0.85 × jedi-language-server's",
                f"{_num(ours_ms)} vs {_num(peer_ms)} ms ({ours_ms / peer_ms:.2f} ×, alternating)",
                ours_ms <= 0.85 * peer_ms,
            )
        )
    overhead = s("inline completion overhead (round trip − stub's own time)")
    out.append(
        (
            "inline completion overhead p50 ≤ 3 ms, p99 ≤ 8 ms",
            f"p50 {_num(overhead['median'])} ms, p99 {_num(overhead['p99'])} ms",
            None if not overhead["runs"] else overhead["median"] <= 3 and overhead["p99"] <= 8,
        )
    )
    for rate, limit in ((5_000, 1.03), (20_000, 1.05)):
        ratio = m(f"stream overhead, {rate:,} tok/s")
        out.append(
            (
                f"stream edit span ÷ stub span ≤ {limit} at {rate:,} tok/s",
                f"{ratio:.3f}",
                None if ratio != ratio else ratio <= limit,
            )
        )
    for rate in (5_000, 20_000):
        cpu = m(f"server CPU per 1,000 tokens, {rate:,} tok/s")
        out.append(
            (
                f"server CPU per 1,000 tokens ≤ 0.05 s at {rate:,} tok/s",
                f"{_num(cpu)} s",
                None if cpu != cpu else cpu <= 0.05,
            )
        )
    low = RATES[0][0]
    cpu, bare = (
        m(f"server CPU per 1,000 tokens, {low:,} tok/s"),
        m(f"bare httpx reader CPU per 1,000 tokens, {low:,} tok/s"),
    )
    out.append(
        (
            f"server CPU at {low:,} tok/s ≤ 1.3 × a bare httpx reader",
            f"{_num(cpu)} s vs {_num(bare)} s ({_num(cpu / bare)} ×)",
            None if bare != bare else cpu <= 1.3 * bare,
        )
    )
    cancel = s("cancel → cancelled")["p99"]
    out.append(
        (
            "cancel → cancelled p99 ≤ 10 ms",
            f"{_num(cancel)} ms",
            None if cancel != cancel else cancel <= 10,
        )
    )
    out.extend(_memory_goals(figures, ours, ref, ref_name))
    return out


def _line_goals(figures: Figures) -> list[Goal]:
    """Issue 27's goals: the answer's first line in the buffer p50 ≤ the model's first line +
    2 ms, the last edit p50 ≤ 3 ms after the model's last byte; each action at each rate."""
    m = figures.median
    out: list[Goal] = []
    for action in ACTIONS:
        parts, met = [], []
        for rate in LINE_RATES:
            shown, said = (
                m(line_key(FIRST_LINE, action, rate)),
                m(line_key(MODEL_LINE, action, rate)),
            )
            gap = m(line_key(LINE_GAP, action, rate))
            parts.append(
                f"{rate:,} tok/s: {_num(shown)} vs {_num(said)} + 2 ms (per run +{_num(gap)} ms)"
            )
            met.append(None if shown != shown else shown <= said + 2)
        out.append(
            (
                f"first model line in the buffer p50 ≤ the model's first line + 2 ms, {action}",
                "; ".join(parts),
                None if None in met else all(met),
            )
        )
    for action in ACTIONS:
        lasts = [m(line_key(LAST_EDIT, action, rate)) for rate in LINE_RATES]
        out.append(
            (
                f"last edit after the model's last byte p50 ≤ 3 ms, {action}",
                "; ".join(
                    f"{r:,} tok/s: {_num(v)} ms" for r, v in zip(LINE_RATES, lasts, strict=True)
                ),
                None if any(v != v for v in lasts) else all(v <= 3 for v in lasts),
            )
        )
    return out


def _memory_goals(figures: Figures, ours: str, ref: Figures | None, ref_name: str) -> list[Goal]:
    """The issue's row "RSS after initialize, and after the warm-up: ≤ 60 MiB, and ≤ 1.2 ×
    main's", read pairwise: after initialize at most 60 MiB; after the warm-up (which loads
    what the first job would, by design) at most 1.2 × main's in the same run (``--compare``
    with main before issue 16; main itself held 60.9 MiB then, with no warm-up). Each row also
    shows the other bound, so the strict reading (both bounds on both) can be read off."""
    out: list[Goal] = []
    for key, absolute in ((f"RSS after initialize: {ours}", True), (RSS_WARM, False)):
        rss = figures.median(key)
        theirs = ref.median(key) if ref is not None else float("nan")
        compared = theirs == theirs
        ratio = f"{_num(rss / theirs)} × {ref_name}'s {_num(theirs)} MiB" if compared else ""
        met: bool | None
        if absolute:
            goal, met = f"{key} ≤ 60 MiB", rss <= 60
            measured = f"{_num(rss)} MiB" + (f" ({ratio})" if ratio else "")
        else:
            goal = f"{key} ≤ 1.2 × main's (--compare main before issue 16)"
            met = rss <= 1.2 * theirs if compared else None
            measured = f"{_num(rss)} MiB" + (f" ({ratio})" if ratio else "; no --compare")
            if rss == rss:
                measured += f"; {'≤' if rss <= 60 else '>'} 60 MiB"
        out.append((goal, measured, None if rss != rss else met))
    return out


def goals_table(rows: list[Goal]) -> str:
    text = "| goal | measured | met |\n|---|---|---|\n"
    return text + "\n".join(
        f"| {goal} | {measured} | {'–' if met is None else ('yes' if met else 'no')} |"
        for goal, measured, met in rows
    )


def ratios(ours: Figures, ours_name: str, ref: Figures, ref_name: str) -> str:
    """Each figure measured on both sides: ours ÷ theirs at the median, p90 and p99."""
    rows = [
        f"| measure | {ours_name} ÷ {ref_name}: median | p90 | p99 | {ref_name} median |",
        "|---|---|---|---|---|",
    ]
    for key in row_keys(ours, ours_name):
        if not ref.has(key):
            continue
        a, b, unit = ours.stats(key), ref.stats(key), ours.samples[key][1]

        def ratio(name: str, a: dict[str, float] = a, b: dict[str, float] = b) -> str:
            return f"{a[name] / b[name]:.2f}" if b[name] else "–"

        rows.append(
            f"| {key} | {ratio('median')} | {ratio('p90')} "
            f"| {ratio('p99')} | {_fmt(b['median'], unit)} |"
        )
    return "\n".join(rows)


def paired(figures: Figures, pairs: Pairs, ours: str) -> str:
    """``--paired``: per figure, the median of the per-round ratios (this ÷ reference), their
    10th–90th percentile, and in how many rounds this side was lower."""
    rows = [
        "| measure | ratio per round: median | p10–p90 | this lower in | rounds |",
        "|---|---|---|---|---|",
    ]
    for key in row_keys(figures, ours):
        s = pairs.summary(key)
        if not s["rounds"]:
            continue
        rows.append(
            f"| {key} | {s['median']:.3f} | {s['p10']:.3f}–{s['p90']:.3f} "
            f"| {int(s['lower'])} | {int(s['rounds'])} |"
        )
    return "\n".join(rows)


def notes(figures: Figures) -> str:
    return "\n".join(f"- {key}: {value}" for key, value in figures.notes.items())


def plot(figures: Figures, path: str) -> str | None:
    """Write the distributions as a PNG; returns why not when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install 'fastedit-lsp[bench]'): no plot"
    groups: list[tuple[str, Callable[[str, str], bool]]] = [
        ("Latency (ms)", lambda k, u: u == "ms" and not k.startswith(("cold", "didChange"))),
        ("didChange handler, server (ms)", lambda k, u: k.startswith("didChange")),
        ("Cold start to initialize reply (ms)", lambda k, u: k.startswith("cold")),
        ("Stream overhead (edit span ÷ stub span)", lambda k, u: u == "×"),
        ("CPU seconds per 1,000 tokens", lambda k, u: u == "s"),
    ]
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 17))
    for ax, (title, keep) in zip(axes, groups, strict=True):
        chosen = [(k, s) for k, (s, u) in figures.samples.items() if keep(k, u) and s]
        if not chosen:
            ax.set_visible(False)
            continue
        ax.boxplot(
            [s for _, s in chosen],
            vert=False,
            tick_labels=[k for k, _ in chosen],
            showfliers=True,
            whis=(1, 99),
        )
        if title.startswith("Latency"):
            ax.set_xscale("log")
        ax.set_title(title + " — whiskers p1/p99")
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def machine_line(machine: dict[str, Any], loads: list[float]) -> str:
    seen = f", 1-minute load {min(loads):.1f}–{max(loads):.1f} while measuring" if loads else ""
    return (
        f"Machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, "
        f"load average {' '.join(map(str, machine['loadAverage']))} at the start{seen}."
    )
