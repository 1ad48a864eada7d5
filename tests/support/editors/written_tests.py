"""Running the test module an editor's "write tests" wrote, as its user would: pytest, in a
subprocess, in the module's folder (so it imports the module under test as the user's pytest
does). The tests an action writes must pass on the code they test (issue 15), and an editor test
checks that on the file the editor saved, not on what the server meant to send.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

# A hang guard for the subprocess (the modules these tests write run in about a second).
LIMIT_S = 120
_SUMMARY = re.compile(r"(\d+) passed")


def run_written_tests(module: Path) -> str:
    """Run ``module`` with pytest; its summary line. Fails the test unless every test in it
    passes (or skips: the generator's TODOs) and at least one passes."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "FASTEDIT_", "COV_")) and not k.endswith("_API_KEY")
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            # Hypothesis properties draw the same examples on every run (deterministic).
            "--hypothesis-seed=0",
            "--rootdir",
            str(module.parent),
            str(module),
        ],
        cwd=module.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"the written tests fail (exit {done.returncode}):\n{output}"
    passed = _SUMMARY.search(output)
    assert passed is not None and int(passed.group(1)) > 0, output
    lines = [line for line in done.stdout.splitlines() if " passed" in line]
    return lines[-1] if lines else output
