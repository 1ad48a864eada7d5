"""The project's checkers' cost per job, in process: ``run_checkers`` on a file's text before
and after a one-line draft (a comment added after its first ``return``), the first run and the
median of the next ones; each checker of the file's language (ruff, mypy, pyright for ``.py``;
tsc for ``.ts``), or those named.

    PYTHONPATH=server python -m tests.tools.checker_cost [ROOT FILE [RUNS [CHECKER...]]]
"""

from __future__ import annotations

import asyncio
import re
import statistics
import sys

from fastedit_lsp.engines.checkers import FOR_LANGUAGE, shadow, verdict
from fastedit_lsp.project.checkers import run_checkers


def main(argv: list[str]) -> None:
    root = argv[0] if argv else "."
    path = argv[1] if len(argv) > 1 else "server/fastedit_lsp/pipeline/verify.py"
    runs = int(argv[2]) if len(argv) > 2 else 6
    language = "typescript" if path.endswith(".ts") else "python"
    names = argv[3:] or FOR_LANGUAGE[language]
    with open(path, encoding="utf-8") as handle:
        before = handle.read()
    found = re.search(r"^[ \t]+return\b", before, re.MULTILINE)
    if found is None:
        raise SystemExit(f"{path} has no indented return line to add the comment after")
    start = found.start()
    end = before.index("\n", start)
    for name in names:
        ms = []
        said = ""
        for k in range(runs):
            comment = "  # " if language == "python" else "  // "
            draft = shadow(path, language, before, start, end, before[start:end] + comment + str(k))
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
