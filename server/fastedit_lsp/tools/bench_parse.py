"""``fastedit-lsp bench``'s parse-check section: the check's time on a 10,000-line document.

In process: the check is a pure function (``engines.parse``), the same code the server runs
when a draft ends. Per language, the document is parsed once in full (the first job on it), then
each run checks a draft in the middle of it, parsing only the members around the region (goal:
p50 ≤ 2 ms), and times a new job's first check after the user typed elsewhere: its text before
reparsed incrementally from the document's last parse (``actions.parse_check.ParseTrees``, kept
per document across jobs), then the check.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

#: Lines of the measured documents.
LINES = 10_000
#: Goal for the incremental check's median (ms).
GOAL_MS = 2.0

#: Per language: a function of ~5 lines (named by ``i``), a good draft and a bad one.
_TEMPLATES: dict[str, tuple[Callable[[int], str], str, str]] = {
    "python": (
        lambda i: f"def f{i}(x):\n    y = x + {i}\n    if y > 3:\n        return y\n    return x\n",
        "y = x * 2",
        "y = (x * 2",
    ),
    "javascript": (
        lambda i: (
            f"function f{i}(x) {{\n  const y = x + {i};\n  if (y > 3) {{ return y; }}\n"
            "  return x;\n}\n"
        ),
        "const y = x * 2;",
        "const y = (x * 2 {;",
    ),
    "typescript": (
        lambda i: (
            f"function f{i}(x: number): number {{\n  const y = x + {i};\n"
            "  if (y > 3) { return y; }\n  return x;\n}\n"
        ),
        "const y = x * 2;",
        "const y = (x * 2 {;",
    ),
    "tsx": (
        lambda i: (
            f"function F{i}(x: number) {{\n  const y = x + {i};\n"
            "  if (y > 3) { return <b>{y}</b>; }\n  return <i>{x}</i>;\n}\n"
        ),
        "const y = x * 2;",
        "const y = (x * 2 {;",
    ),
    "go": (
        lambda i: (
            f"func f{i}(x int) int {{\n\ty := x + {i}\n\tif y > 3 {{\n\t\treturn y\n\t}}\n"
            "\treturn x\n}\n"
        ),
        "y := x * 2",
        "y := (x * 2 {",
    ),
    "rust": (
        lambda i: (
            f"fn f{i}(x: i32) -> i32 {{\n    let y = x + {i};\n"
            "    if y > 3 { return y; }\n    x\n}\n"
        ),
        "let y = x * 2;",
        "let y = (x * 2 {;",
    ),
    "java": (
        lambda i: (
            f"  int f{i}(int x) {{\n    int y = x + {i};\n    if (y > 3) {{ return y; }}\n"
            "    return x;\n  }\n"
        ),
        "int y = x * 2;",
        "int y = (x * 2 {;",
    ),
    "c": (
        lambda i: (
            f"int f{i}(int x) {{\n  int y = x + {i};\n  if (y > 3) {{ return y; }}\n"
            "  return x;\n}\n"
        ),
        "int y = x * 2;",
        "int y = (x * 2 {;",
    ),
    "cpp": (
        lambda i: (
            f"int f{i}(int x) {{\n  auto y = x + {i};\n  if (y > 3) {{ return y; }}\n"
            "  return x;\n}\n"
        ),
        "auto y = x * 2;",
        "auto y = (x * 2 {;",
    ),
    "c_sharp": (
        lambda i: (
            f"  int F{i}(int x) {{\n    int y = x + {i};\n    if (y > 3) {{ return y; }}\n"
            "    return x;\n  }\n"
        ),
        "int y = x * 2;",
        "int y = (x * 2 {;",
    ),
}


def document(language: str, lines: int = LINES) -> tuple[str, int, int]:
    """A document of about ``lines`` lines, and the code points of one statement in its middle
    (the region a draft replaces)."""
    make, _good, _bad = _TEMPLATES[language]
    per = make(0).count("\n")
    count = lines // per
    body = "".join(make(i) for i in range(count))
    if language in ("java", "c_sharp"):  # methods live in a class
        body = "class Big {\n" + body + "}\n"
    middle = make(count // 2)
    at = body.index(middle)
    line = middle.split("\n")[1]
    start = at + middle.index(line) + len(line) - len(line.lstrip())
    return body, start, at + middle.index(line) + len(line)


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {
        "p50": round(statistics.median(ordered), 3),
        "p90": pick(0.9),
        "p99": pick(0.99),
        "runs": len(ordered),
    }


def _typed(text: str, start: int, run: int) -> str:
    """``text`` as the user left it before a new job: one character typed (or taken back) about
    100 lines above the region."""
    at = text.rfind("\n", 0, max(0, start - 3_000)) + 1
    return text if run % 2 else text[:at] + "\n" + text[at:]


def measure(runs: int, lines: int = LINES) -> dict[str, Any]:
    """Per language: the full parse of a document version (once), the check of a good and a bad
    draft from that parse (each draft of a job), and a new job's first check after the user
    typed elsewhere (its text before reparsed from the document's last parse, then checked)
    (ms)."""
    from ..actions.parse_check import ParseTrees
    from ..engines.parse import check_edit, parse

    out: dict[str, Any] = {}
    for language, (_make, good, bad) in _TEMPLATES.items():
        text, start, end = document(language, lines)
        started = time.perf_counter()
        before = parse(language, text)
        full = (time.perf_counter() - started) * 1000
        timings: dict[str, list[float]] = {"good": [], "bad": [], "job": []}
        verdicts: dict[str, bool] = {}
        trees = ParseTrees()
        trees.parse("bench", language, text)
        for run in range(runs):
            for name, draft in (("good", good), ("bad", bad)):
                started = time.perf_counter()
                verdict = check_edit(before, start, end, draft)
                timings[name].append((time.perf_counter() - started) * 1000)
                verdicts[name] = verdict.ok
            version = _typed(text, start, run)
            shift = len(version) - len(text)
            started = time.perf_counter()
            parsed = trees.parse("bench", language, version)
            verdict = check_edit(parsed, start + shift, end + shift, good)
            timings["job"].append((time.perf_counter() - started) * 1000)
            verdicts["job"] = verdict.ok
        out[language] = {
            "lines": text.count("\n"),
            "fullParseMs": round(full, 3),
            "goodDraftMs": _ms(timings["good"]),
            "badDraftMs": _ms(timings["bad"]),
            "newVersionMs": _ms(timings["job"]),
            "goodPasses": verdicts["good"] and verdicts["job"],
            "badFails": not verdicts["bad"],
        }
    return out


def report(results: dict[str, Any]) -> str:
    """The section's Markdown table."""
    rows = [
        f"| {language} | {r['lines']:,} | {r['fullParseMs']} | {r['goodDraftMs']['p50']} | "
        f"{r['goodDraftMs']['p99']} | {r['badDraftMs']['p50']} | {r['badDraftMs']['p99']} | "
        f"{r['newVersionMs']['p50']} | {r['newVersionMs']['p99']} | "
        f"{'yes' if r['goodDraftMs']['p50'] <= GOAL_MS else 'no'} | "
        f"{'yes' if r['goodPasses'] and r['badFails'] else 'NO'} |"
        for language, r in results.items()
    ]
    return (
        "\n| parse check, in process (ms) | lines | full parse (first job on a document) | "
        "good draft p50 | p99 | bad draft p50 | p99 | job after an edit elsewhere p50 | p99 | "
        "draft p50 ≤ 2 ms | verdicts right |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )
