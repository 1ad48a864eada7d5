"""The opt-in pytest check of a generated test module (``tests.verifyCollect``, ``tests.run``).

Collecting imports the user's code (and their ``conftest.py``), so it runs only when the user
opted in: on a copy of the module in a temporary folder, in a subprocess with a time limit,
without the ``*_API_KEY`` variables.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

#: How long an opted-in pytest run on generated tests may take.
PYTEST_SECONDS = 60


async def pytest_check(
    test_path: str, source_path: str, root: str, module_text: str, *, run: bool
) -> tuple[bool, str]:
    """Collect (or run) ``module_text`` as ``test_path``; whether it passed, and pytest's
    summary line."""
    with tempfile.TemporaryDirectory(prefix="fastedit-tests-") as tmp:
        copy = os.path.join(tmp, os.path.basename(test_path))
        await asyncio.to_thread(Path(copy).write_text, module_text, encoding="utf-8")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += ["--rootdir", tmp, copy] if run else ["--collect-only", "--rootdir", tmp, copy]
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["PYTHONPATH"] = os.pathsep.join(
            [root, os.path.dirname(source_path), env.get("PYTHONPATH", "")]
        )
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=root,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(proc.communicate(), PYTEST_SECONDS)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return False, f"pytest took longer than {PYTEST_SECONDS} s"
    text = output.decode("utf-8", "replace")
    summary = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    if proc.returncode == 0:
        return True, f"pytest: {summary.strip('= ')}"
    verb = "run" if run else "collection"
    return False, f"pytest {verb} failed: {summary.strip('= ')}"
