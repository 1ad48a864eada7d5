"""``fastedit-lsp bench --compare REF``: another checkout's server, measured in the same minute.

REF is a git revision of the checkout this package runs from (``main``, ``main~3``, a commit) or
the path of another checkout. A revision is checked out with ``git worktree add --detach`` in a
temporary directory (removed afterwards); either way its server runs with ``PYTHONPATH`` set to
its ``server/`` directory, on this interpreter and its installed dependencies, while the bench's
client, editor and stub stay this checkout's: only the server differs between the two sides.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .bench_core import Figures, Server


def _checkout_root() -> Path | None:
    """The git checkout this package runs from, if any (``server/fastedit_lsp/tools``)."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "server" / "fastedit_lsp").is_dir() else None


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def _server(name: str, checkout: Path) -> Server:
    command = (sys.executable, "-m", "fastedit_lsp", "serve", "--stdio")
    return Server(name, command, {"PYTHONPATH": str(checkout / "server")})


def this_server() -> Server:
    """Our own server, started like the compared one (its checkout's ``server/`` first)."""
    root = _checkout_root()
    if root is None:
        return Server("fastedit-lsp")
    return _server("fastedit-lsp", root)


@contextlib.contextmanager
def reference(ref: str) -> Iterator[Server]:
    """The server of ``ref`` (a revision or a checkout's path), for as long as the context."""
    path = Path(ref).expanduser()
    if path.is_dir() and (path / "server" / "fastedit_lsp").is_dir():
        yield _server(f"ref {ref}", path.resolve())
        return
    root = _checkout_root()
    if root is None or not (root / ".git").exists():
        raise RuntimeError(
            f"--compare {ref}: this fastedit-lsp does not run from a git checkout; "
            "give the path of another checkout instead"
        )
    commit = _git(root, "rev-parse", "--verify", f"{ref}^{{commit}}")
    with tempfile.TemporaryDirectory(prefix="fastedit-bench-") as tmp:
        tree = Path(tmp) / "ref"
        _git(root, "worktree", "add", "--detach", str(tree), commit)
        try:
            yield _server(f"ref {ref} ({commit[:9]})", tree)
        finally:
            _git(root, "worktree", "remove", "--force", str(tree))
            with contextlib.suppress(RuntimeError):
                _git(root, "worktree", "prune")


def describe_this() -> str:
    root = _checkout_root()
    if root is None or not (root / ".git").exists():
        return "installed package"
    try:
        head = _git(root, "rev-parse", "--short=9", "HEAD")
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    except RuntimeError:
        return os.fspath(root)
    return f"{head}{' + uncommitted changes' if dirty else ''}"


class Pairs:
    """``--paired``: each round's figures of the two sides, side by side.

    The sides run one after the other in every round (the order alternating), so a round's two
    medians saw the same minute's load; the median of the per-round ratios and the number of
    rounds this side was lower stay steady where the pooled ratios of ``--compare`` swing with the
    load (0.4–1.9 × for the same code at load 9–14). Cold starts pair one by one.
    """

    def __init__(self) -> None:
        #: Per key, one (this, reference) pair of medians per round.
        self.rounds: dict[str, list[tuple[float, float]]] = {}
        self._before: tuple[dict[str, int], dict[str, int]] = ({}, {})

    def start_round(self, this: Figures, ref: Figures) -> None:
        self._before = (this.counts(), ref.counts())

    def end_round(self, this: Figures, ref: Figures) -> None:
        """The medians of what each side measured since :meth:`start_round`."""
        for key in this.counts().keys() & ref.counts().keys():
            a = this.since(key, self._before[0].get(key, 0))
            b = ref.since(key, self._before[1].get(key, 0))
            if a and b:
                self.add(key, statistics.median(a), statistics.median(b))

    def add(self, key: str, this: float, ref: float) -> None:
        self.rounds.setdefault(key, []).append((this, ref))

    def summary(self, key: str) -> dict[str, float]:
        """The median and the 10th and 90th percentile of the per-round ratios, the rounds this
        side was lower in and the rounds counted (a round whose reference is 0 has no ratio)."""
        pairs = [(a, b) for a, b in self.rounds.get(key, []) if b]
        ratios = sorted(a / b for a, b in pairs)
        if not ratios:
            return {"median": float("nan"), "p10": float("nan"), "p90": float("nan")} | {
                "lower": 0,
                "rounds": 0,
            }

        def pct(p: int) -> float:
            return ratios[max(0, -(-p * len(ratios) // 100) - 1)]

        return {
            "median": round(statistics.median(ratios), 4),
            "p10": round(pct(10), 4),
            "p90": round(pct(90), 4),
            "lower": sum(1 for a, b in pairs if a < b),
            "rounds": len(ratios),
        }
