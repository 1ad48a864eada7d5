"""Line diffs of an original text against a rewrite, also while the rewrite is still streaming.

Pure and stdlib only: rewrites (edit selection, syntax fixes, retries, user actions) and the
next-edit engine use it to touch only what changed. Three views of one diff:

- :func:`diff_lines`: the final line diff of two whole texts as :class:`Hunk` s (difflib);
- :class:`StreamingDiff`: fed the rewrite piece by piece, it emits :data:`Op` s (keep an
  original line, insert new text, delete original lines) as soon as each is known, so a caller
  can apply them to a buffer while the model is still writing. Replaying the ops over the
  original always gives exactly the rewrite (:func:`replay`); its closed hunks are in
  :attr:`StreamingDiff.hunks`;
- :func:`char_edits`: a final diff as minimal character-level edits (offsets in the original).

Lines keep their terminator and split after ``"\\n"`` only, so ``"\\r\\n"`` stays in its line.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = [
    "CharEdit",
    "Delete",
    "Hunk",
    "Insert",
    "Keep",
    "Op",
    "StreamingDiff",
    "apply_char_edits",
    "apply_hunks",
    "char_edits",
    "diff_lines",
    "replay",
    "split_lines",
]


def split_lines(text: str) -> list[str]:
    """``text`` as lines, each keeping its ``"\\n"``; the last may lack one. ``""`` is ``[]``."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


@dataclass(frozen=True)
class Hunk:
    """Original lines ``[orig_start, orig_end)`` replaced by rewrite lines ``[new_start, new_end)``.

    ``original`` and ``replacement`` are those lines' text. An insertion has an empty original
    range, a deletion an empty new range.
    """

    orig_start: int
    orig_end: int
    new_start: int
    new_end: int
    original: str
    replacement: str


def diff_lines(original: str, rewrite: str) -> list[Hunk]:
    """The changed hunks between two whole texts, in order (a minimal line diff via difflib)."""
    a, b = split_lines(original), split_lines(rewrite)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        Hunk(i1, i2, j1, j2, "".join(a[i1:i2]), "".join(b[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def apply_hunks(original: str, hunks: list[Hunk]) -> str:
    """``original`` with each hunk's original lines replaced by its replacement (hunks in order)."""
    lines = split_lines(original)
    out: list[str] = []
    at = 0
    for hunk in hunks:
        out.extend(lines[at : hunk.orig_start])
        out.append(hunk.replacement)
        at = hunk.orig_end
    out.extend(lines[at:])
    return "".join(out)


# -- streaming ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Keep:
    """Original line ``line`` is kept as it is (the next original line not yet consumed)."""

    line: int


@dataclass(frozen=True)
class Insert:
    """New text goes here, before the next original line not yet consumed."""

    text: str


@dataclass(frozen=True)
class Delete:
    """Original lines ``[start, end)`` (``start`` is the next one not yet consumed) are removed."""

    start: int
    end: int


Op = Keep | Insert | Delete


def replay(original: str, ops: list[Op]) -> str:
    """The text the ops describe over ``original``; raises ``ValueError`` on an inconsistent op."""
    lines = split_lines(original)
    out: list[str] = []
    at = 0
    for op in ops:
        if isinstance(op, Keep):
            if op.line != at:
                raise ValueError(f"keep of line {op.line} at line {at}")
            out.append(lines[at])
            at += 1
        elif isinstance(op, Insert):
            out.append(op.text)
        else:
            if op.start != at or op.end <= op.start or op.end > len(lines):
                raise ValueError(f"delete of lines {op.start}-{op.end} at line {at}")
            at = op.end
    if at != len(lines):
        raise ValueError(f"original lines from {at} on were neither kept nor deleted")
    return "".join(out)


def _distinctive(line: str) -> bool:
    """A line worth matching across a deletion at once (not a blank or a lone bracket)."""
    return sum(ch.isalnum() for ch in line) >= 4


class StreamingDiff:
    """Diff a rewrite that arrives in pieces against ``original``, emitting ops as they are known.

    Greedy, one pass: a rewrite line equal to the next original line keeps it; one equal to a
    later original line deletes the lines between, once that is likely (the line is distinctive
    and unique in what remains, or the next rewrite line matches too); any other line is new
    text. A partial line is sent as soon as it is no prefix of any remaining original line, so a
    changed line streams while the model writes it. The ops always replay to the rewrite; the
    diff is minimal for the usual edit (lines changed, inserted or removed in place) and merely
    longer when lines move.
    """

    def __init__(self, original: str) -> None:
        self._orig = split_lines(original)
        self._at = 0
        #: The current incomplete rewrite line.
        self._partial = ""
        #: How much of the partial line was already sent as an Insert (known to be new).
        self._sent_partial = 0
        #: A complete line matching original line ``k`` > ``_at``, waiting for the next line.
        self._held: tuple[str, int] | None = None
        self._out_lines = 0
        self._open: tuple[int, int, list[str]] | None = None  # orig_start, new_start, new text
        self._finished = False
        #: The hunks closed so far, in order (final: later text never changes them).
        self.hunks: list[Hunk] = []

    @property
    def consumed(self) -> int:
        """Original lines kept or deleted so far."""
        return self._at

    def feed(self, text: str) -> list[Op]:
        """Take the next piece of the rewrite; return the ops it made known."""
        if self._finished:
            raise RuntimeError("feed after finish")
        ops: list[Op] = []
        self._partial += text
        while (cut := self._partial.find("\n")) >= 0:
            line, self._partial = self._partial[: cut + 1], self._partial[cut + 1 :]
            sent, self._sent_partial = self._sent_partial, 0
            if sent:
                self._insert(ops, line[sent:])
            else:
                self._line(ops, line)
        if self._partial and self._held is None and self._known_new(self._partial):
            self._insert(ops, self._partial[self._sent_partial :])
            self._sent_partial = len(self._partial)
        return ops

    def finish(self) -> list[Op]:
        """The rewrite ended: return the last ops (deleting the original lines left over)."""
        if self._finished:
            return []
        self._finished = True
        ops: list[Op] = []
        tail, self._partial = self._partial, ""
        if self._sent_partial:
            self._insert(ops, tail[self._sent_partial :])
        elif tail:
            self._line(ops, tail)
        if self._held is not None:
            _, k = self._held
            self._held = None
            self._match(ops, k)
        if self._at < len(self._orig):
            self._delete(ops, len(self._orig))
        self._close()
        return ops

    # -- the alignment ----------------------------------------------------------------------

    def _known_new(self, partial: str) -> bool:
        return not any(line.startswith(partial) for line in self._orig[self._at :])

    def _line(self, ops: list[Op], line: str) -> None:
        if self._held is not None:
            held, k = self._held
            self._held = None
            if k + 1 < len(self._orig) and self._orig[k + 1] == line:
                self._match(ops, k)
                self._match(ops, k + 1)
                return
            self._insert(ops, held)
        rest = self._orig[self._at :]
        if rest and rest[0] == line:
            self._match(ops, self._at)
            return
        if line not in rest:
            self._insert(ops, line)
            return
        k = self._at + rest.index(line)
        if _distinctive(line) and rest.count(line) == 1:
            self._match(ops, k)
        else:
            self._held = (line, k)

    def _match(self, ops: list[Op], k: int) -> None:
        if k > self._at:
            self._delete(ops, k)
        self._close()
        ops.append(Keep(k))
        self._at = k + 1
        self._out_lines += 1

    def _insert(self, ops: list[Op], text: str) -> None:
        if not text:
            return
        self._opened().append(text)
        self._out_lines += text.count("\n")
        ops.append(Insert(text))

    def _delete(self, ops: list[Op], end: int) -> None:
        self._opened()
        ops.append(Delete(self._at, end))
        self._at = end

    def _opened(self) -> list[str]:
        if self._open is None:
            self._open = (self._at, self._out_lines, [])
        return self._open[2]

    def _close(self) -> None:
        if self._open is None:
            return
        orig_start, new_start, parts = self._open
        self._open = None
        replacement = "".join(parts)
        self.hunks.append(
            Hunk(
                orig_start,
                self._at,
                new_start,
                new_start + len(split_lines(replacement)),
                "".join(self._orig[orig_start : self._at]),
                replacement,
            )
        )


# -- character-level edits --------------------------------------------------------------------


@dataclass(frozen=True)
class CharEdit:
    """Replace ``original[start:end]`` with ``text`` (offsets in the original, code points)."""

    start: int
    end: int
    text: str


def _trimmed(old: str, new: str, base: int) -> CharEdit | None:
    """``old`` -> ``new`` at offset ``base`` as one edit without their common prefix and suffix."""
    if old == new:
        return None
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return CharEdit(base + head, base + len(old) - tail, new[head : len(new) - tail])


def char_edits(original: str, rewrite: str) -> list[CharEdit]:
    """Minimal character-level edits turning ``original`` into ``rewrite``, in order.

    Each changed hunk becomes one edit without its common prefix and suffix; a hunk that
    replaces as many lines as it removes becomes one such edit per changed line.
    """
    lines = split_lines(original)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits: list[CharEdit] = []
    for hunk in diff_lines(original, rewrite):
        new_lines = split_lines(hunk.replacement)
        if hunk.orig_end - hunk.orig_start == len(new_lines) > 1:
            pairs = zip(range(hunk.orig_start, hunk.orig_end), new_lines, strict=True)
            for index, new in pairs:
                if (edit := _trimmed(lines[index], new, starts[index])) is not None:
                    edits.append(edit)
            continue
        edit = _trimmed(hunk.original, hunk.replacement, starts[hunk.orig_start])
        if edit is not None:
            edits.append(edit)
    return edits


def apply_char_edits(text: str, edits: list[CharEdit]) -> str:
    """``text`` with the edits (in order, not overlapping) applied."""
    out: list[str] = []
    at = 0
    for edit in edits:
        if edit.start < at or edit.end < edit.start or edit.end > len(text):
            raise ValueError(f"edit {edit} overlaps or is out of range")
        out.append(text[at : edit.start])
        out.append(edit.text)
        at = edit.end
    out.append(text[at:])
    return "".join(out)
