"""Drive real Emacs in batch: eglot, fastedit.el, rassumfrassum, jedi-language-server and the real
fastedit-lsp server, against the loopback stub model.

A test writes a scenario in Emacs Lisp (what a user does: open a file, press keys, undo) on top of
``emacs_driver.el``'s helpers; the scenario records what it saw with ``fe-observe`` and the test
asserts on those observations. Keys go through ``execute-kbd-macro``, minibuffer answers included.
Emacs reads stdin from /dev/null, so a confirmation prompt cannot block: it fails at once, and
``emacs_driver.el`` records every prompt shown.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.editors.availability import in_ci
from tests.support.harness import TEST_CHECKERS
from tests.support.network_servers import without_network_variables

REPO = Path(__file__).resolve().parents[3]
ELISP = REPO / "editors" / "emacs"
PRELUDE = Path(__file__).with_name("emacs_driver.el")
#: The user's own language server and rassumfrassum, installed by the test extras.
BIN = Path(sys.executable).parent
RASS = BIN / "rass"
JEDI = BIN / "jedi-language-server"
#: A whole session (start three servers, stream, undo) takes a few seconds; this is a hang.
SESSION_TIMEOUT = 150
#: A JSON-RPC error code (-32xxx) on its own, as eglot shows one: not a part of a word or path
#: (pytest's temporary folders are numbered: ``/tmp/pytest-of-root/pytest-32/``).
JSONRPC_CODE = re.compile(r"(?<![\w/.-])-32\d{3}(?!\d)")
#: A buffer and a model's answer with text beyond ASCII: accents, CJK and an emoji (two UTF-16
#: code units, one code point), which each Emacs client must count as it does positions.
#: ``café`` defined: the answer's name resolves (the names check).
BEYOND_ASCII = (
    'def café(text):\n    return text\n\n\nlabel = "Grüße, 世界 😀"\nvalue = ',
    'café("naïve ☕ — 😀")',
)


def skip_or_fail(reason: str) -> None:
    """Skip locally; fail in CI (``CI=true``), where the editor must be installed."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: editor tests must run, not skip)", pytrace=False)
    pytest.skip(reason)


@functools.cache
def _emacs_problem() -> str | None:
    """Why the Emacs tests cannot run here, or None."""
    emacs = shutil.which("emacs")
    if emacs is None:
        return (
            "emacs is not installed (apt-get install --no-install-recommends emacs-nox elpa-eglot)"
        )
    probe = subprocess.run(
        [emacs, "--batch", "--eval", '(progn (require \'eglot) (princ "eglot-ok"))'],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    if "eglot-ok" not in probe.stdout:
        return f"eglot does not load in emacs (apt-get install elpa-eglot): {probe.stderr[-300:]}"
    for tool in (RASS, JEDI):
        if not tool.exists():
            return f"{tool.name} is not installed in this venv (pip install -e '.[test]')"
    return None


def emacs() -> str:
    """The emacs executable, after skipping (or failing in CI) when it cannot run the tests."""
    if (problem := _emacs_problem()) is not None:
        skip_or_fail(problem)
    path = shutil.which("emacs")
    assert path is not None
    return path


def hermetic_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The test's environment without real keys or FASTEDIT_* settings, with its own HOME."""
    env = {
        k: v
        for k, v in without_network_variables(dict(os.environ)).items()
        if not k.startswith("FASTEDIT_") and not k.endswith("_API_KEY")
    }
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    env.update(extra)
    return env


def scenario_env(env: dict[str, str], out: Path) -> dict[str, str]:
    """``env`` with what a scenario's Lisp reads: this venv's python, where its observations go,
    and the harness's ``verify.checkers`` (JSON), which the client's initializationOptions
    carry unless the scenario's settings name theirs."""
    return {
        **env,
        "FASTEDIT_TEST_PY": sys.executable,
        "FASTEDIT_TEST_OUT": str(out),
        "FASTEDIT_TEST_CHECKERS": json.dumps(list(TEST_CHECKERS)),
    }


def run_scenario(tmp_path: Path, scenario: str, env: dict[str, str]) -> dict[str, Any]:
    """Run ``scenario`` (Emacs Lisp) in ``emacs --batch`` in ``tmp_path``; its observations.

    The scenario ends with ``(fe-finish)``, which writes the observations; any Lisp error fails
    the test with Emacs' output.
    """
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    script = tmp_path / "scenario.el"
    script.write_text(f";; -*- coding: utf-8 -*-\n{scenario}", encoding="utf-8")
    out = tmp_path / "observations.json"
    command = [emacs(), "--batch", "-L", str(ELISP), "-l", str(PRELUDE), "-l", str(script)]
    env = scenario_env(env, out)
    try:
        done = subprocess.run(
            command,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            # Emacs' batch messages may hold text beyond ASCII in its own encoding (an emoji
            # as two surrogates): they are only read when a session fails.
            encoding="utf-8",
            errors="replace",
            timeout=SESSION_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"emacs did not finish in {SESSION_TIMEOUT} s:\n{_tail(exc.stderr)}")
    if done.returncode != 0 or not out.exists():
        pytest.fail(f"emacs exited with {done.returncode}:\n{_tail(done.stderr)}")
    observations: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return observations


def _tail(text: str | bytes | None, lines: int = 120) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return "\n".join((text or "").splitlines()[-lines:])
