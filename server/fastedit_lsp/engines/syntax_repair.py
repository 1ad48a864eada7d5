"""Offline syntax repair beyond Python: insert what tree-sitter says is missing, verified by a
reparse.

Pure. For the languages with a grammar (``engines.parse``): the first syntax error's lines ± 2
are the region; candidates are small insertions inside it — the token of a MISSING node
(a closer, a semicolon) where tree-sitter placed it, a closing quote at the end of a line with an
unterminated string, a comma before an unexpected token, a closer at the end of a line whose
brackets do not balance. A candidate is kept when the reparse leaves no error around the region
and none new elsewhere; up to :data:`ROUNDS` insertions chain (two things missing). Nothing
outside the region changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .parse import Parsed, SyntaxProblem, around, parse, reparse

#: Lines around the first error the repair may touch.
AROUND = 2
#: The most lines a region spans.
MAX_LINES = 8
#: Insertions chained at most.
ROUNDS = 3
#: Candidates tried per round at most.
MAX_CANDIDATES = 60
QUOTES = "\"'`"
CLOSER = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Repair:
    """The repaired text and the region it changed (0-based lines, inclusive)."""

    text: str
    start_line: int
    end_line: int
    #: What was inserted, for the job's reason: "inserted ')' on line 4".
    details: str


def _lines(text: str) -> list[int]:
    """Code-point offset of each line's start (``\\n`` ends a line)."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _offset(parsed: Parsed, byte: int) -> int:
    return len(parsed.data[:byte].decode("utf-8", "replace"))


def _candidates(parsed: Parsed, problem: SyntaxProblem, lo: int, hi: int) -> list[tuple[int, str]]:
    """(code-point offset, text) insertions inside ``[lo, hi]`` for ``problem``."""
    text = parsed.text
    out: list[tuple[int, str]] = []
    at = _offset(parsed, problem.start)
    if problem.kind == "missing" and problem.token:
        return [(at, problem.token)] if lo <= at <= hi else []
    starts = _lines(text)
    for line_start in starts:
        if line_start > hi:
            break
        line_end = text.find("\n", line_start)
        line_end = len(text) if line_end < 0 else line_end
        if line_end < lo:
            continue
        content = text[line_start:line_end]
        stripped = content.rstrip()
        end = line_start + len(stripped)
        tail = 1 if stripped.endswith((";", ",")) else 0
        # Before the closers and punctuation that end the line (``f("abc);``).
        inner = len(stripped)
        while inner > 0 and stripped[inner - 1] in ");,]}":
            inner -= 1
        for quote in QUOTES:
            if content.count(quote) % 2 == 1:
                out.append((line_start + inner, quote))
                out.append((end - tail, quote))
        # A comma between two operands with only a space between them (``f(a b)``).
        for i in range(1, len(content) - 1):
            if (
                content[i] == " "
                and (content[i - 1].isalnum() or content[i - 1] in "_)]\"'")
                and (content[i + 1].isalnum() or content[i + 1] in "_([\"'")
            ):
                out.append((line_start + i, ","))
        depth: list[str] = []
        for char in content:
            if char in CLOSER:
                depth.append(CLOSER[char])
            elif char in CLOSER.values() and depth and depth[-1] == char:
                depth.pop()
        if depth:
            closers = "".join(reversed(depth))
            out.append((end - tail, closers))
            out.append((end, closers))
            out.append((end - tail, depth[-1]))
        if stripped and not stripped.endswith((";", "{", "}", ",", "(", "[", ":")):
            out.append((end, ";"))
    # Brackets the region leaves open (a deleted ``}`` on a line of its own): their closer at
    # the end of each line, and on each blank line, of the region.
    stack: list[str] = []
    for char in text[lo:hi]:
        if char in CLOSER:
            stack.append(CLOSER[char])
        elif char in CLOSER.values() and stack and stack[-1] == char:
            stack.pop()
    if stack:
        for line_start in starts:
            if line_start > hi:
                break
            line_end = text.find("\n", line_start)
            line_end = len(text) if line_end < 0 else line_end
            if line_end < lo:
                continue
            content = text[line_start:line_end]
            if content.strip():
                out.append((line_start + len(content.rstrip()), stack[-1]))
            else:
                indent = len(content)
                out.append((line_start + indent, stack[-1]))
    if problem.kind == "error":
        before = at
        while before > lo and text[before - 1] in " \t":
            before -= 1
        out.append((before, ","))
        out.append((before, ";"))
    return [(o, t) for o, t in out if lo <= o <= hi][:MAX_CANDIDATES]


def repair(language: str, source: str, near_line: int | None = None) -> Repair | None:
    """The smallest chain of insertions inside the region after which the region parses and
    nothing new broke elsewhere, or None.

    The region: ``near_line`` ± 2 when given (where the user asked: tree-sitter may start an
    error far above the cause, at the top of the file for an unterminated Java string), else the
    first error's lines ± 2 (at most :data:`MAX_LINES`).
    """
    parsed = parse(language, source)
    problems = parsed.problems()
    if not problems:
        return None
    starts = _lines(source)
    if near_line is not None:
        first_line = max(0, near_line - AROUND)
        last_line = min(len(starts) - 1, near_line + AROUND)
        if not parsed.problems(*around(parsed, starts[first_line], starts[last_line])):
            return None
    else:
        first = problems[0]
        first_line = max(0, first.line - AROUND)
        last_error_line = parsed.data.count(b"\n", 0, first.end)
        last_line = min(len(starts) - 1, last_error_line + AROUND, first_line + MAX_LINES - 1)
    lo = starts[first_line]
    hi = base_hi = starts[last_line + 1] - 1 if last_line + 1 < len(starts) else len(source)
    elsewhere = len(problems) - len(parsed.problems(*around(parsed, lo, hi)))
    current = parsed
    inserted: list[str] = []
    for _ in range(ROUNDS):
        window = around(current, lo, hi)
        left = current.problems(*window)
        if not left:
            break
        best: tuple[int, Parsed, str] | None = None
        for offset, text in _candidates(current, left[0], lo, hi):
            candidate = reparse(current, offset, offset, text)
            remaining = len(candidate.problems(*around(candidate, lo, hi + len(text))))
            if len(candidate.problems()) - remaining > elsewhere:
                continue
            if remaining < len(left) and (best is None or remaining < best[0]):
                line = candidate.text.count("\n", 0, offset) + 1
                best = (remaining, candidate, f"inserted {text!r} on line {line}")
                if remaining == 0:
                    break
        if best is None:
            return None
        _, current, what = best
        inserted.append(what)
        hi = base_hi + len(current.text) - len(parsed.text)
    if current.problems(*around(current, lo, hi)):
        return None
    return Repair(current.text, first_line, last_line, "; ".join(inserted))
