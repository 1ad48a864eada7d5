"""The opt-in pytest check of a generated test module (``tests.verifyCollect``, ``tests.run``).

Collecting imports the user's code (and their ``conftest.py``), so it runs only when the user
opted in: on a copy of the module in a temporary folder, in a subprocess with a time limit,
without the ``*_API_KEY`` variables. :func:`pytest_check` answers pass or fail with pytest's
summary; :func:`run_tests` also says how each test ended (from pytest's JUnit XML report), so
that the tests that fail on the current code can be dropped before they land.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from .processes import run_process, user_code_env

#: How long an opted-in pytest run on generated tests may take.
PYTEST_SECONDS = 60


async def _pytest(
    test_path: str, source_path: str, root: str, module_text: str, *, run: bool
) -> tuple[int | None, str, dict[str, str]]:
    """pytest's exit code (None: it took too long), its output, and each test's outcome."""
    with tempfile.TemporaryDirectory(prefix="fastedit-tests-") as tmp:
        copy = os.path.join(tmp, os.path.basename(test_path))
        junit = os.path.join(tmp, "fastedit-junit.xml")
        await asyncio.to_thread(Path(copy).write_text, module_text, encoding="utf-8")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        if run:
            command += ["--rootdir", tmp, f"--junitxml={junit}", copy]
        else:
            command += ["--collect-only", "--rootdir", tmp, copy]
        env = user_code_env([root, os.path.dirname(source_path)])
        # A cancelled job kills pytest (run_process).
        code, output = await run_process(
            command, cwd=root, env=env, seconds=PYTEST_SECONDS, capture=True
        )
        if code is None:
            return None, f"pytest took longer than {PYTEST_SECONDS} s", {}
        outcomes = await asyncio.to_thread(_junit_outcomes, junit) if run else {}
    return code, output.decode("utf-8", "replace"), outcomes


def _junit_outcomes(path: str) -> dict[str, str]:
    """Test function name -> passed | failed | skipped (a parametrized test: its worst case)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    outcomes: dict[str, str] = {}
    for case in root.iter("testcase"):
        name = (case.get("name") or "").split("[", 1)[0]
        kinds = {child.tag for child in case}
        if not case.get("classname"):
            continue  # a collection error: the module as a whole
        if kinds & {"failure", "error"}:
            outcome = "failed"
        elif "skipped" in kinds:
            outcome = "skipped"
        else:
            outcome = "passed"
        if rank[outcome] >= rank[outcomes.get(name, "passed")]:
            outcomes[name] = outcome
    return outcomes


def _summary(text: str) -> str:
    return next((line for line in reversed(text.splitlines()) if line.strip()), "").strip("= ")


async def pytest_check(
    test_path: str, source_path: str, root: str, module_text: str, *, run: bool
) -> tuple[bool, str]:
    """Collect (or run) ``module_text`` as ``test_path``; whether it passed, and pytest's
    summary line."""
    code, text, _ = await _pytest(test_path, source_path, root, module_text, run=run)
    if code is None:
        return False, text
    if code == 0:
        return True, f"pytest: {_summary(text)}"
    verb = "run" if run else "collection"
    return False, f"pytest {verb} failed: {_summary(text)}"


async def run_tests(
    test_path: str, source_path: str, root: str, module_text: str
) -> tuple[str, dict[str, str]]:
    """Run ``module_text`` as ``test_path``: pytest's summary line and each test function's
    outcome (``passed``, ``failed``, ``skipped``); no outcomes when pytest could not collect
    the module or took too long."""
    code, text, outcomes = await _pytest(test_path, source_path, root, module_text, run=True)
    if code is None:
        return text, {}
    return f"pytest: {_summary(text)}", outcomes
