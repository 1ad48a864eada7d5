"""The soak: the README's test command, run again and again while both cores are kept busy.

A test that passes on a quiet machine and fails on a busy one depends on timing, which is a bug of
the test (CONTRIBUTING.md, "Soak"). This runs the suite from a clean clone of a commit, each run
under a chosen load, and prints one line per run: the commit, the load average seen during the run,
pytest's summary and the wall time.

    python tests/tools/soak.py                      # 5 runs of the README's `pytest -n 3 --dist
                                                    # loadgroup` under busy loops, HEAD
    python tests/tools/soak.py --runs 3 --load none  # quiet runs
    python tests/tools/soak.py --load suite          # under a second copy of the suite
    python tests/tools/soak.py -- -m "not slow" -x   # pytest arguments after -- (in place of
                                                    # the README's -n 3 --dist loadgroup)

The clone is installed nowhere: its ``server/`` goes first on ``PYTHONPATH``, so the commit under
test is what runs (the end-to-end tests start ``python -m fastedit_lsp`` with that environment).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: pytest's arguments in the README's test command (three workers; a module's shared fixtures
#: in one).
README_ARGS = ("-n", "3", "--dist", "loadgroup")
SUMMARY = re.compile(r"^=+ (.*) in [\d.]+s.*=+$", re.M)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` processes that each keep a core busy until killed."""
    loop = "while True:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(count)]


@contextlib.contextmanager
def _load(kind: str, clone: Path, env: dict[str, str]) -> Iterator[None]:
    """Keep the machine busy for the duration of the block."""
    procs: list[subprocess.Popen[bytes]] = []
    if kind == "busy":
        procs = _busy_loops(os.cpu_count() or 2)
    elif kind == "suite":
        # A second copy of the suite, restarted whenever it ends, in a basetemp of its own.
        second = tempfile.mkdtemp(prefix="fastedit-soak-load-")
        loop = (
            "import subprocess, sys\n"
            "while True:\n"
            f"    subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',"
            f" '--basetemp', {second!r}], cwd={str(clone)!r},"
            " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        )
        procs = [subprocess.Popen([sys.executable, "-c", loop], env=env, start_new_session=True)]
    try:
        yield
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                if kind == "suite":
                    os.killpg(proc.pid, 9)
                else:
                    proc.kill()
            proc.wait()


def _clone(commit: str) -> Path:
    """A clean clone of ``commit`` in a new temporary folder."""
    target = Path(tempfile.mkdtemp(prefix="fastedit-soak-")) / "x"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "checkout", "-q", commit], check=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="how many runs (default 5)")
    parser.add_argument(
        "--load",
        choices=("busy", "suite", "none"),
        default="busy",
        help="busy loops on every core (default), a second copy of the suite, or none",
    )
    parser.add_argument("--commit", default="HEAD", help="what to test (default HEAD)")
    parser.add_argument(
        "pytest_args",
        nargs="*",
        help=f"after --: arguments for pytest (default: the README's, {' '.join(README_ARGS)})",
    )
    args = parser.parse_args(argv)

    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", args.commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    clone = _clone(commit)
    env = {**os.environ, "PYTHONPATH": str(clone / "server")}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += args.pytest_args or list(README_ARGS)
    _say(f"soak: {commit} in {clone}, load {args.load}: {' '.join(command[2:])}")
    failures = 0
    for run in range(1, args.runs + 1):
        with _load(args.load, clone, env):
            started = time.monotonic()
            done = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True)
            load = os.getloadavg()[1]  # the 5-minute average: most of the run
        took = time.monotonic() - started
        found = SUMMARY.findall(done.stdout)
        summary = found[-1] if found else f"exit {done.returncode}"
        _say(
            f"run {run}/{args.runs}: {commit} load {load:.1f} ({args.load}): {summary}"
            f" in {took:.0f} s"
        )
        if done.returncode != 0:
            failures += 1
            log = clone.parent / f"run-{run}.log"
            log.write_text(done.stdout + done.stderr, encoding="utf-8")
            _say(f"  the output is in {log}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
