"""The project's own checkers (ruff, mypy, pyright, go vet, tsc) as a draft's check: their
output read, and only the errors the draft introduced kept.

Pure: the checkers are run elsewhere (``project.checkers``, reached through the pipeline's
port) on the document before the job and after it, both as shadow copies; here each run's
findings are parsed and compared. An error counts when no error of the text before matches it:
the same rule or code and message, on the same line once the lines after the region are moved
by the region's line delta (errors inside the region match anywhere inside it).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

#: The checkers this package can run, per grammar (``engines.parse`` names).
FOR_LANGUAGE: dict[str, tuple[str, ...]] = {
    "python": ("ruff", "mypy", "pyright"),
    "go": ("go vet",),
    "typescript": ("tsc",),
    "tsx": ("tsc",),
}
#: The program each checker is (looked for on PATH).
PROGRAM = {"ruff": "ruff", "mypy": "mypy", "pyright": "pyright", "go vet": "go", "tsc": "tsc"}


#: The code of a checker's syntax error (ruff's): the parse check judges syntax, and a text
#: that does not parse is not compared (its other errors shift as the parser recovers).
SYNTAX = "invalid-syntax"


@dataclass(frozen=True)
class Finding:
    """One error a checker reported: its rule or code, message and line (0-based)."""

    code: str
    message: str
    line: int

    def describe(self) -> str:
        return f"line {self.line + 1}: {self.code} {self.message}".replace("  ", " ")


@dataclass(frozen=True)
class Shadow:
    """A draft as the checkers see it: the document's path, its text before the job and after,
    and where the region is (0-based lines: its first, its last before and after)."""

    path: str
    language: str
    before: str
    after: str
    first_line: int
    old_last: int
    new_last: int


def shadow(path: str, language: str, before: str, start: int, end: int, text: str) -> Shadow:
    """The shadow of a draft ``text`` replacing ``before[start:end]``."""
    first = before.count("\n", 0, start)
    return Shadow(
        path,
        language,
        before,
        before[:start] + text + before[end:],
        first,
        first + before.count("\n", start, end),
        first + text.count("\n"),
    )


@dataclass
class CheckerRun:
    """What one checker said of both texts; ``skipped``: why it did not run (then no
    findings)."""

    name: str
    before: list[Finding] = field(default_factory=list)
    after: list[Finding] = field(default_factory=list)
    skipped: str | None = None
    ms: float = 0.0


def parse_ruff(output: str) -> list[Finding]:
    """``ruff check --output-format json``'s findings (syntax errors: :data:`SYNTAX`; older
    ruffs give them no code)."""
    try:
        items = json.loads(output or "[]")
    except json.JSONDecodeError as exc:
        raise ValueError(f"ruff's output is not JSON: {output[:200]!r}") from exc
    found = []
    for item in items:
        location = item.get("location") or {}
        code = item.get("code") or SYNTAX
        found.append(Finding(str(code), str(item.get("message", "")), int(location["row"]) - 1))
    return found


_MYPY = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):(?:\d+:)? error: (?P<message>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)


def parse_mypy(output: str, path: str) -> list[Finding]:
    """mypy's errors in ``path`` (``file:line: error: message  [code]``); notes and other
    files' errors are left out."""
    found = []
    for line in output.splitlines():
        match = _MYPY.match(line.rstrip())
        if match is None or not _same_file(match["file"], path):
            continue
        code = match["code"] or "error"
        found.append(Finding(code, match["message"], int(match["line"]) - 1))
    return found


_VET = re.compile(r"^(?:vet: )?(?P<file>[^\s:]+\.go):(?P<line>\d+):(?:\d+:)? (?P<message>.+)$")


def parse_vet(output: str, path: str) -> list[Finding]:
    """``go vet``'s findings in ``path`` (``./file.go:12:2: message``; a type error is
    prefixed ``vet:``)."""
    found = []
    for line in output.splitlines():
        match = _VET.match(line.strip())
        if match is None or not _same_file(match["file"].removeprefix("./"), path):
            continue
        found.append(Finding("vet", match["message"], int(match["line"]) - 1))
    return found


def parse_pyright(output: str, path: str) -> list[Finding]:
    """``pyright --outputjson``'s errors in ``path`` (warnings and notes left out); a message's
    first line (the lines below it explain, and name types by their position)."""
    try:
        data = json.loads(output or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"pyright's output is not JSON: {output[:200]!r}") from exc
    found = []
    for item in data.get("generalDiagnostics", ()):
        if item.get("severity") != "error" or not _same_file(str(item.get("file", "")), path):
            continue
        message = str(item.get("message", "")).splitlines()
        line = int(item["range"]["start"]["line"])
        found.append(Finding(str(item.get("rule") or "error"), message[0] if message else "", line))
    return found


_TSC = re.compile(r"^(?P<file>.+?)\((?P<line>\d+),\d+\): error (?P<code>TS\d+): (?P<message>.*)$")


def parse_tsc(output: str, relative: str) -> list[Finding]:
    """``tsc --noEmit --pretty false``'s errors in the file ``relative`` (as tsc names it: the
    path from its working directory): ``src/a.ts(3,7): error TS2322: message``; the indented
    lines that continue a message are left out."""
    want = relative.replace("\\", "/")
    found = []
    for line in output.splitlines():
        match = _TSC.match(line.rstrip())
        if match is None or match["file"].replace("\\", "/").removeprefix("./") != want:
            continue
        found.append(Finding(match["code"], match["message"], int(match["line"]) - 1))
    return found


def _same_file(reported: str, path: str) -> bool:
    reported = reported.replace("\\", "/")
    path = path.replace("\\", "/")
    return path.endswith("/" + reported) or reported == path or reported.endswith("/" + path)


def _key(finding: Finding, region: tuple[int, int], delta: int) -> tuple[str, str, int | None]:
    """The finding's key for matching: lines after the region moved by ``delta``; None for a
    line inside the region."""
    first, last = region
    if finding.line < first:
        line: int | None = finding.line
    elif finding.line > last:
        line = finding.line + delta
    else:
        line = None
    return finding.code, finding.message, line


def introduced(shadow: Shadow, before: list[Finding], after: list[Finding]) -> list[Finding]:
    """The findings of the text after that no finding of the text before matches (same code
    and message, same line through the edit; inside the region, anywhere inside it)."""
    delta = shadow.new_last - shadow.old_last
    old = Counter(_key(f, (shadow.first_line, shadow.old_last), delta) for f in before)
    new: list[Finding] = []
    for finding in after:
        key = _key(finding, (shadow.first_line, shadow.new_last), 0)
        if old[key] > 0:
            old[key] -= 1
        else:
            new.append(finding)
    return new


def verdict(shadow: Shadow, run: CheckerRun) -> dict[str, object]:
    """The check's entry in ``verification.checks``: ``ok`` false with the first introduced
    error, true when none, null when the checker did not run."""
    entry: dict[str, object] = {"name": run.name, "ms": round(run.ms, 1)}
    if run.skipped is not None:
        return {**entry, "ok": None, "details": f"not run: {run.skipped}"}
    if any(f.code == SYNTAX for f in (*run.before, *run.after)):
        return {**entry, "ok": None, "details": "not checked: the text does not parse"}
    new = introduced(shadow, run.before, run.after)
    if not new:
        old = len(run.before)
        said = f"no new errors ({old} before the edit)" if old else "no errors"
        return {**entry, "ok": True, "details": said}
    findings = [f.describe() for f in new[:5]]
    return {**entry, "ok": False, "details": findings[0], "findings": findings}
