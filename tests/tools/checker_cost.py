"""The project's checkers' cost per job (ruff, mypy), in process: ``run_checkers`` on a
file's text before and after a one-line draft (a comment added after its first ``return``),
the first run and the median of the next ones.

    PYTHONPATH=server python -m tests.tools.checker_cost [ROOT FILE] [RUNS]
"""

from __future__ import annotations

import asyncio
import statistics
import sys

from fastedit_lsp.engines.checkers import shadow, verdict
from fastedit_lsp.project.checkers import run_checkers


def main(argv: list[str]) -> None:
    root = argv[0] if argv else "."
    path = argv[1] if len(argv) > 1 else "server/fastedit_lsp/pipeline/verify.py"
    runs = int(argv[2]) if len(argv) > 2 else 6
    with open(path, encoding="utf-8") as handle:
        before = handle.read()
    start = before.index("\n    return ") + 1
    end = before.index("\n", start)
    for name in ("ruff", "mypy"):
        ms = []
        said = ""
        for k in range(runs):
            draft = shadow(path, "python", before, start, end, before[start:end] + f"  # {k}")
            (run,) = asyncio.run(
                run_checkers(draft, root, [name], trust_workspace=False, listed=None)
            )
            ms.append(run.ms)
            said = str(verdict(draft, run)["details"])
        rest = ms[1:] or ms
        sys.stdout.write(
            f"{name}: first {ms[0]:.0f} ms, then median {statistics.median(rest):.0f} ms, "
            f"max {max(rest):.0f} ms ({said})\n"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
