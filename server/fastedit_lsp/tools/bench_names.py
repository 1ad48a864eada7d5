"""``fastedit-lsp bench``'s names section: the names check's time on a 2,000-line document.

In process, the same code the verifier runs (``engines.names``) on the document after a draft
(its tree given: the verifier has it from the parse check's reparse, timed here too). Warm: the
check of a draft in the middle of the document, once the grammar's queries and the stubs it
reads are loaded (goal: p50 ≤ 5 ms, p99 ≤ 20 ms). First use: the same check in a new Python
process, where it compiles its queries and reads the standard library's stubs it needs.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

#: Lines of the measured document.
LINES = 2_000
GOAL_P50_MS = 5.0
GOAL_P99_MS = 20.0

_HEAD = (
    "import json\nimport os\nimport re\nfrom collections import defaultdict\n"
    "from pathlib import Path\n\n\n"
)


def _function(i: int) -> str:
    return (
        f"def step_{i}(path, items, limit=3):\n"
        f'    """Read {i} things."""\n'
        "    found = defaultdict(list)\n"
        "    for index, item in enumerate(items):\n"
        "        name = os.path.join(str(path), item)\n"
        "        if re.match(r'\\w+', name) and index < limit:\n"
        f"            found[name].append(json.dumps({{'i': {i}}}))\n"
        f"    return step_{max(0, i - 1)}(Path(path), list(found), limit) if {i} else found\n\n\n"
    )


def document(lines: int = LINES) -> tuple[str, int, int]:
    """A Python document of about ``lines`` lines, and a draft's region in its middle."""
    count = max(2, (lines - 7) // 10)
    functions = [_function(i) for i in range(count)]
    middle = count // 2
    text = _HEAD + "".join(functions)
    at = text.index(f"def step_{middle}(")
    start = text.index("    found", at)
    end = text.index("    return", start)
    return text, start, end


def _check(text: str, start: int, end: int) -> tuple[float, bool | None, float]:
    """(ms of the names check, its verdict, ms of the draft's reparse) on ``text``."""
    from ..engines.names import check_names
    from ..engines.parse import parse, reparse

    draft = text[start:end]
    before = parse("python", text[:start] + text[end:])
    clock = time.perf_counter()
    after = reparse(before, start, start, draft)
    reparse_ms = (time.perf_counter() - clock) * 1000
    s = after.byte_of(start)
    clock = time.perf_counter()
    verdict = check_names("python", after.tree, after.data, s, s + len(draft.encode()))
    return (time.perf_counter() - clock) * 1000, verdict.ok, reparse_ms


def first_use() -> dict[str, Any]:
    """The check's first use in this process (call it in a new one)."""
    text, start, end = document()
    ms, ok, _ = _check(text, start, end)
    return {"ms": round(ms, 2), "ok": ok}


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {"p50": round(statistics.median(ordered), 3), "p99": round(p99, 3)}


def measure(runs: int, lines: int = LINES) -> dict[str, Any]:
    """The section's figures: first use (a new process), warm p50/p99, the draft's reparse."""
    from ..engines.cpython import block, rejects
    from ..engines.names import check_names
    from ..engines.parse import parse, reparse

    code = "import json; from fastedit_lsp.tools.bench_names import first_use as f; "
    code += "print(json.dumps(f()))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    first = json.loads(done.stdout.strip().splitlines()[-1])
    text, start, end = document(lines)
    draft = text[start:end]
    before = parse("python", text[:start] + text[end:])
    bad = draft.replace("found[name]", "fund[name]", 1)
    warm: list[float] = []
    cpu: list[float] = []
    compiles: list[float] = []
    reparses: list[float] = []
    verdicts: set[tuple[bool | None, bool | None]] = set()
    for _ in range(max(20, runs * 4)):
        clock = time.perf_counter()
        after = reparse(before, start, start, draft)
        reparses.append((time.perf_counter() - clock) * 1000)
        s = after.byte_of(start)
        clock, thread = time.perf_counter(), time.thread_time()
        good = check_names("python", after.tree, after.data, s, s + len(draft.encode()))
        warm.append((time.perf_counter() - clock) * 1000)
        cpu.append((time.thread_time() - thread) * 1000)
        clock = time.perf_counter()
        rejects(block(after.tree, after.data, s, s + len(draft.encode()))[0])
        compiles.append((time.perf_counter() - clock) * 1000)
        broken = reparse(before, start, start, bad)
        wrong = check_names("python", broken.tree, broken.data, s, s + len(bad.encode()))
        verdicts.add((good.ok, wrong.ok))
    return {
        "lines": text.count("\n"),
        "firstUseMs": first["ms"],
        "warmMs": _ms(warm),
        "warmCpuMs": _ms(cpu),
        "cpythonCompileMs": _ms(compiles),
        "draftReparseMs": _ms(reparses),
        "verdictsRight": verdicts == {(True, False)},
    }


def report(result: dict[str, Any]) -> str:
    """The section's Markdown table."""
    warm, cpu = result["warmMs"], result["warmCpuMs"]
    met = warm["p50"] <= GOAL_P50_MS and warm["p99"] <= GOAL_P99_MS
    return (
        "\n| names check, Python, in process (ms) | lines | first use (new process) | warm p50 "
        "/ p99 | its CPU time p50 / p99 | the draft's reparse p50 / p99 (for the names check) | "
        "CPython's compile of the statements around p50 / p99 (the Python parse check) | "
        "p50 ≤ 5, p99 ≤ 20 | verdicts right |\n|---|---|---|---|---|---|---|---|---|\n"
        f"| python | {result['lines']:,} | {result['firstUseMs']} | {warm['p50']} / "
        f"{warm['p99']} | {cpu['p50']} / {cpu['p99']} | {result['draftReparseMs']['p50']} / "
        f"{result['draftReparseMs']['p99']} | {result['cpythonCompileMs']['p50']} / "
        f"{result['cpythonCompileMs']['p99']} | {'yes' if met else 'no'} | "
        f"{'yes' if result['verdictsRight'] else 'NO'} |\n"
    )
