"""``fastedit-lsp bench``'s parse-check section: the check's time on a 10,000-line document.

In process: the check is a pure function (``engines.parse``), the same code the server runs
when a draft ends. Per language, the document is parsed once in full (the first job on it), then
each run checks a draft in the middle of it, parsing only the members around the region (goal:
p50 ≤ 2 ms), and times a new job's first check after the user typed elsewhere: the job's
verifier takes the document's parse from ``engines.parse_trees.ParseTrees``, which the server
keeps current after each ``didChange`` (``lsp.parse_trees``: an incremental reparse in steps of
bounded time, off the request path; timed here step by step), then checks. The same first check
is timed also when it comes before that refresh could run (it then reparses the document
itself), so that no cost is hidden; and a job's drafts again in the document broken about 100
lines above them (an open parenthesis: the user writing code there).
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


def _job_input(language: str, text: str, start: int, end: int, trees: Any) -> Any:
    """What a job on ``text``'s region gives its action (as the job runner makes it)."""
    from ..actions.base import ActionInput
    from ..core.document import Document
    from ..core.jobs import Inputs
    from ..prompting import context

    document = Document(f"file:///bench/doc.{language}", text, language_id=language)
    a, b = _point(text, start), _point(text, end)
    path = f"/bench/doc.{language}"
    return ActionInput(
        document=document,
        start=a,
        end=b,
        ctx=context.around(document, a, b, budget_tokens=1_000, path=path),
        path=path,
        inputs=Inputs(),
        max_tokens=256,
        temperature=0.0,
        trees=trees,
    )


def _point(text: str, offset: int) -> Any:
    from ..core.document import Point

    line = text.count("\n", 0, offset)
    return Point(line, offset - (text.rfind("\n", 0, offset) + 1))


def measure(runs: int, lines: int = LINES) -> dict[str, Any]:
    """Per language (ms): the full parse of a document version (the first job on a document);
    each draft's check within a job (a good draft and a bad one, from the job's parse of its
    text before); and a new job's first check after the user typed elsewhere (one line 100
    lines above), as the server runs it: the verifier made at the job's start and its first
    check, which takes the document's parse from ``ParseTrees``. That parse was kept current
    by the refresh the server runs after the user's edit (``didChange``: in steps of at most
    :data:`~fastedit_lsp.lsp.parse_trees.STEP` seconds, off the request path; its whole time and
    its longest step are reported too), and, for the case where the job's check comes before
    that refresh ran, the same check reparsing the document itself."""
    from ..actions import parse_check
    from ..engines.parse import check_edit, parse
    from ..engines.parse_trees import ParseTrees
    from ..lsp.parse_trees import STEP

    out: dict[str, Any] = {}
    for language, (_make, good, bad) in _TEMPLATES.items():
        text, start, end = document(language, lines)
        started = time.perf_counter()
        before = parse(language, text)
        full = (time.perf_counter() - started) * 1000
        timings: dict[str, list[float]] = {
            key: [] for key in ("good", "bad", "job", "stale", "refresh", "step")
        }
        verdicts: dict[str, bool] = {}
        fresh, stale = ParseTrees(), ParseTrees()
        uri = f"file:///bench/doc.{language}"
        fresh.parse(uri, language, text)
        stale.parse(uri, language, text)
        for run in range(runs):
            for name, draft in (("good", good), ("bad", bad)):
                started = time.perf_counter()
                verdict = check_edit(before, start, end, draft)
                timings[name].append((time.perf_counter() - started) * 1000)
                verdicts[name] = verdict.ok
            version = _typed(text, start, run)
            shift = len(version) - len(text)
            # The refresh after the user's edit, step by step (the server yields between).
            spent = 0.0
            if fresh.refresh(uri, version):
                while True:
                    started = time.perf_counter()
                    done = fresh.advance(uri, STEP)
                    took = (time.perf_counter() - started) * 1000
                    timings["step"].append(took)
                    spent += took
                    if done:
                        break
            timings["refresh"].append(spent)
            for key, trees in (("job", fresh), ("stale", stale)):
                data = _job_input(language, version, start + shift, end + shift, trees)
                started = time.perf_counter()
                verify = parse_check.verifier(data)
                assert verify is not None
                result = verify(good)
                timings[key].append((time.perf_counter() - started) * 1000)
                verdicts[key] = bool(result["ok"])
        # The same drafts in the document broken about 100 lines above the region (the user is
        # writing code there): an open parenthesis.
        at = text.rfind("\n", 0, max(0, start - 3_000)) + 1
        broken = parse(language, text[:at] + "x = (\n" + text[at:])
        for _run in range(runs):
            for name, draft in (("brokenGood", good), ("brokenBad", bad)):
                started = time.perf_counter()
                verdict = check_edit(broken, start + 6, end + 6, draft)
                timings.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        out[language] = {
            "lines": text.count("\n"),
            "fullParseMs": round(full, 3),
            "goodDraftMs": _ms(timings["good"]),
            "badDraftMs": _ms(timings["bad"]),
            "newJobMs": _ms(timings["job"]),
            "refreshMs": _ms(timings["refresh"]),
            "refreshStepMs": _ms(timings["step"]),
            "newJobBeforeRefreshMs": _ms(timings["stale"]),
            "brokenElsewhereGoodDraftMs": _ms(timings["brokenGood"]),
            "brokenElsewhereBadDraftMs": _ms(timings["brokenBad"]),
            "goodPasses": verdicts["good"] and verdicts["job"] and verdicts["stale"],
            "badFails": not verdicts["bad"],
        }
    return out


def report(results: dict[str, Any]) -> str:
    """The section's Markdown table."""

    def cell(figure: dict[str, float]) -> str:
        return f"{figure['p50']} / {figure['p90']} / {figure['p99']}"

    rows = [
        f"| {language} | {r['lines']:,} | {r['fullParseMs']} | {cell(r['goodDraftMs'])} | "
        f"{cell(r['badDraftMs'])} | {cell(r['newJobMs'])} | {cell(r['refreshMs'])} | "
        f"{r['refreshStepMs']['p99']} | {cell(r['newJobBeforeRefreshMs'])} | "
        f"{'yes' if max(r['goodDraftMs']['p50'], r['newJobMs']['p50']) <= GOAL_MS else 'no'} | "
        f"{'yes' if r['goodPasses'] and r['badFails'] else 'NO'} |"
        for language, r in results.items()
    ]
    return (
        "\n| parse check, in process (ms: p50 / p90 / p99) | lines | full parse (first job on a "
        "document) | a job's good draft | its bad draft | new job's first check after an edit "
        "elsewhere | the refresh after that edit (off the request path) | its longest step, "
        "p99 | new job's first check before the refresh ran | p50 ≤ 2 ms (drafts, new job) | "
        "verdicts right |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
        "\n| the same, in a document broken 100 lines above the draft (ms: p50 / p90 / p99) | "
        "a job's good draft | its bad draft |\n|---|---|---|\n"
        + "\n".join(
            f"| {language} | {cell(r['brokenElsewhereGoodDraftMs'])} | "
            f"{cell(r['brokenElsewhereBadDraftMs'])} |"
            for language, r in results.items()
        )
        + "\n"
    )
