"""Where the lines of an answer's code go: overlap with the text around the target, indentation.

Pure and streaming. :class:`Place` takes the code (line breaks as ``\\n``, wrappers already
stripped) as it arrives and returns the text to insert, line breaks as the document's.

- **Before the target.** A first line that repeats the target line's text (``return a + b`` at a
  cursor after ``    return ``) gives only what follows that text. A first line equal to a line
  above is held (the only line ever held for this): it starts a repeat when it is a definition
  (``def``, ``func``, a method) or when the next line repeats the next line above too; the
  repeated lines are dropped up to the target, and the answer goes on from there. A single line
  equal to the line right above the target is new code (a statement written twice).
- **Indentation.** The answer is re-based on the target's indentation from its first line (or,
  when that line comes bare and the target is indented, from the next line: bare-then-absolute
  and dedented answers differ there); its relative structure is kept; tabs or spaces as the file
  uses them.
- **After the target.** A line equal (indentation included) to the next line after the target is
  held: with the line after it also repeated, the answer has run into the code that follows and
  ends there; at the answer's end it is dropped (a closer that is already there); otherwise it
  goes out. On the target's own line, a tail that the rest of that line starts with is dropped.
- The first line break after the last line goes out only where the target ends at a line start.

Never adds text of its own; everything dropped repeats the document.
"""

from __future__ import annotations

from .target import (
    Target,
    expects_deeper,
    indent_text,
    is_closers,
    is_continuation,
    is_definition,
    is_opener,
    is_trivial,
)

_SPACE = " \t"
_OPENERS = "([{"
_CLOSERS = ")]}"


def _same(lines: tuple[str, ...], line: str) -> bool:
    """Whether ``lines`` is that one line, trailing whitespace aside."""
    return len(lines) == 1 and lines[0].rstrip(_SPACE) == line.rstrip(_SPACE)


class Place:
    """The line-by-line placement of an answer's code at a :class:`Target`."""

    def __init__(self, target: Target) -> None:
        self._t = target
        self._hs = target.head.strip(_SPACE)  # the target line's text before the target
        self._count = len(target.prefix)  # the target line's index among the prefix lines
        self._partial = ""  # the current line, not yet decided
        self._open = False  # part of the current line went out: its rest streams
        self._phase = "first"  # first, maybe, repeat, body, stop
        self._k = -1  # maybe/repeat: the next prefix line expected
        self._held: str | None = None  # maybe: the held first line
        self._delta: int | None = None  # columns added to the answer's indentation
        self._base = 0  # the first line's indentation in the answer (for a bare first line)
        self._first_opener = False
        self._first_text: str | None = None  # the first line while it streams out open
        self._emitted = False  # a line went out
        self._newlines = 0  # line breaks owed before the next text that goes out
        self._s_held: tuple[int, str] | None = None  # (line breaks before, line) held at the suffix
        self._rest_held = ""  # a tail of the current line the rest of the target line repeats
        self._line_out = ""  # what went out on the current output line
        self._broke = False  # a line break went out (the target's head is no longer on the line)
        self._ended = False  # the last line that went out ended (its line break is owed)
        # Where the answer's last line break is kept anyway, a line's break goes out with its
        # end (:meth:`_end_line`): the line is whole in the buffer when the model ends it.
        self._eager = target.keeps_final_newline
        self._break_out = False  # the ended line's break went out at its end
        self._finishing = False
        self._sel_first = target.selection.strip("\r\n").split("\n")[0].strip(_SPACE + "\r")
        self._out: list[str] = []

    # -- streaming ------------------------------------------------------------------------------

    def feed(self, code: str) -> str:
        self._out = []
        for piece in code.split("\n")[:-1] if "\n" in code else []:
            self._partial += piece
            self._complete()
        tail = code.rsplit("\n", 1)[-1] if "\n" in code else code
        if tail:
            if self._open:
                if self._first_text is not None:
                    self._first_text += tail
                self._write(tail)
            else:
                self._partial += tail
                self._try_release()
        return "".join(self._out)

    def finish(self) -> str:
        self._out = []
        self._finishing = True
        unterminated = bool(self._partial)
        if self._partial or self._open:
            self._complete(last=True)
        if self._phase == "maybe" and self._held is not None:
            held, self._held = self._held, None
            self._phase = "first"
            self._start_body(held)
        if unterminated:
            self._ended = False
        self._s_held = None  # a last line that is the next line already: dropped
        rest = self._t.rest.strip(_SPACE)
        if self._rest_held and (
            not rest.startswith(self._rest_held.strip(_SPACE)) or self._closes_the_line()
        ):
            self._out.append(self._rest_held)
        self._rest_held = ""
        if self._ended and self._emitted and self._t.keeps_final_newline and not self._break_out:
            self._out.append(self._t.newline)
        self._newlines = 0
        return "".join(self._out)

    @property
    def holding(self) -> str:
        """What is held now (for the tests: never more than one line)."""
        held = [self._held or "", self._s_held[1] if self._s_held else "", self._partial]
        return "\n".join(part for part in held if part)

    # -- a whole line ---------------------------------------------------------------------------

    def _complete(self, *, last: bool = False) -> None:
        line, self._partial = self._partial.removesuffix("\r"), ""
        if self._open:
            self._open = False
            self._end_open_line(line, last=last)
            return
        self._line(line)

    def _end_open_line(self, rest: str, *, last: bool) -> None:
        if rest:
            self._write(rest)
        if self._first_text is not None:
            self._first_opener = expects_deeper((self._first_text + rest).strip(_SPACE))
            self._first_text = None
        self._end_line()

    def _end_line(self) -> None:
        """A line that went out is complete: its line break is owed to what comes next.

        Where the answer's last line break is kept (``Target.keeps_final_newline``), nothing
        that follows can take the break back (an answer that runs into the code after the
        target, or a last line that is that code, still ends with one), so it goes out now:
        the line is whole in the buffer as soon as the model ends it, not when the next line's
        first word arrives. Blank lines after it stay owed (dropped at the end), and so does a
        break after a tail the rest of the target line may repeat (decided at the end).
        """
        self._newlines += 1
        self._ended = True
        if self._eager and self._newlines == 1 and not self._rest_held and not self._finishing:
            self._out.append(self._t.newline)
            self._newlines = 0
            self._line_out, self._broke = "", True
            self._break_out = True

    def _line(self, line: str) -> None:
        """Decide a whole line of code."""
        phase = self._phase
        if phase == "stop":
            return
        stripped = line.strip(_SPACE)
        if phase == "first":
            if not stripped:
                if not self._t.head_blank and not self._emitted:
                    # The answer starts on a new line after the target line's text.
                    self._emitted = True
                    self._end_line()
                    self._phase = "body"
                    self._delta = 0
                return
            self._first(line, stripped)
        elif phase == "maybe":
            if stripped:
                self._maybe(line, stripped)
        elif phase == "repeat":
            if stripped:
                self._repeat(line, stripped)
        else:
            self._body(line, stripped)

    def _first(self, line: str, stripped: str) -> None:
        if self._hs and stripped.startswith(self._hs) and not self._t.replace:
            self._repeat_of_head(line, stripped)
            return
        if self._t.replace and stripped == self._sel_first:
            self._start_body(line)
            return
        k = self._match_above(stripped)
        if k is None:
            self._start_body(line)
        elif self._encloses(k) and is_definition(stripped):
            self._begin_repeat(line, k)
        elif self._encloses(k) or (self._near(k) and k < self._next_above(k + 1) < self._count):
            self._phase, self._k, self._held = "maybe", k, line
        else:
            self._start_body(line)  # a statement written again, or like one further up

    def _maybe(self, line: str, stripped: str) -> None:
        held = self._held or ""
        expected = self._next_above(self._k + 1)
        if expected < self._count and self._t.prefix[expected].stripped == stripped:
            self._begin_repeat(held, self._k)
            self._held = None
            self._repeat(line, stripped)
            return
        if expected >= self._count and self._confirms_at_target(held, line, stripped):
            self._begin_repeat(held, self._k)
            self._held = None
            self._repeat(line, stripped)
            return
        self._held = None
        self._phase = "first"
        self._start_body(held)
        self._line(line)

    def _confirms_at_target(self, held: str, line: str, stripped: str) -> bool:
        if self._hs:
            return stripped.startswith(self._hs)
        # A block re-sent from its opener right above the target: the next line is inside it.
        above = self._t.prefix[self._k]
        delta = above.columns - self._columns(indent_text(held))
        return is_opener(held.strip(_SPACE)) and self._columns(indent_text(line)) + delta > (
            above.columns
        )

    def _begin_repeat(self, line: str, k: int) -> None:
        self._phase = "repeat"
        self._k = self._next_above(k + 1)
        self._delta = self._t.prefix[k].columns - self._columns(indent_text(line))

    def _repeat(self, line: str, stripped: str) -> None:
        if self._k < self._count:
            if self._t.prefix[self._k].stripped == stripped:
                self._k = self._next_above(self._k + 1)
                return
            self._phase = "body"  # the answer changed a line above: what follows is new
            self._first_line(line)
            return
        if self._hs and stripped.startswith(self._hs) and not self._t.replace:
            self._phase = "body"
            self._emit_first(self._after_head(stripped), complete=True)
            return
        self._phase = "body"
        self._first_line(line)

    def _repeat_of_head(self, line: str, stripped: str, *, complete: bool = True) -> None:
        lead = indent_text(line)
        if lead:
            self._delta = self._t.indent - self._columns(lead)
        else:
            self._base = 0
        self._first_opener = expects_deeper(stripped)
        self._phase = "body"
        self._emit_first(self._after_head(stripped), complete=complete)

    def _after_head(self, stripped: str) -> str:
        rest = stripped[len(self._hs) :]
        return rest.lstrip(_SPACE) if self._t.head[-1:] in (" ", "\t") else rest

    def _start_body(self, line: str) -> None:
        self._phase = "body"
        self._first_line(line)

    def _first_line(self, line: str, *, complete: bool = True) -> None:
        """The answer's first line that goes out: it starts at the target."""
        lead = indent_text(line)
        content = line[len(lead) :]
        self._first_opener = expects_deeper(content.rstrip(_SPACE))
        target = self._t
        if not target.head_blank:
            if self._delta is None:
                self._delta = 0
            text = line.lstrip(_SPACE) if target.head[-1:] in (" ", "\t") else line
            self._emit_first(text, complete=complete)
            return
        columns = self._columns(lead)
        if self._delta is None:
            if not target.head and not target.replace:
                self._delta = 0  # at a line's very start: the answer says where it goes
            elif columns == 0 and target.indent > 0:
                self._base = 0  # bare: decided by the next line
            else:
                self._delta = target.indent - columns
        placed = target.indent if self._delta is None else columns + self._delta
        where = placed - max(target.column, 0)
        if self._delta == 0 and not target.head and not target.replace:
            text = line
        else:
            text = target.style.render(where) + content
        if complete and not target.replace and _same(target.suffix[:1], target.head + text):
            # The line that already follows the target: held like any line (see _body).
            self._s_held = (0, text)
            self._emitted = True
            return
        self._emit_first(text, complete=complete)

    def _emit_first(self, text: str, *, complete: bool) -> None:
        self._write(text)
        self._emitted = True
        if complete:
            self._end_line()

    def _body(self, line: str, stripped: str) -> None:
        if not stripped:
            if self._emitted:
                self._newlines += 1
            return
        if not self._emitted:
            self._first_line(line)
            return
        full = self._rebased(line)
        if self._is_target_line(full):
            self._phase = "stop"  # the answer ran into the line the target starts
            self._s_held = None
            return
        if self._s_held is not None:
            if _same(self._t.suffix[1:2], full):
                self._phase = "stop"  # the answer ran into the code that follows
                self._s_held = None
                self._newlines = 0
                return
            self._release_suffix_hold()
        if _same(self._t.suffix[:1], full):
            self._s_held = (self._newlines, full)
            self._newlines = 0
            return
        self._write(full)
        self._end_line()

    def _release_suffix_hold(self) -> None:
        if self._s_held is None:
            return
        breaks, held = self._s_held
        self._s_held = None
        pending, self._newlines = self._newlines, breaks
        self._write(held)
        self._end_line()
        self._newlines += pending

    def _rebased(self, line: str) -> str:
        lead = indent_text(line)
        content = line[len(lead) :]
        columns = self._columns(lead)
        if self._delta is None:
            self._delta = self._decide_bare(columns, content)
        style = self._t.style
        if self._delta == 0 and style.native(lead):
            return line
        return style.render(columns + self._delta) + content

    def _decide_bare(self, columns: int, content: str) -> int:
        """A bare first line at an indented target: was the answer dedented, or only its first
        line written without indentation (the rest in place)?"""
        indent = self._t.indent
        if is_closers(content.strip(_SPACE)):
            return 0
        if self._first_opener or is_continuation(content):
            return 0 if columns > indent else indent - self._base
        return 0 if columns > 0 else indent - self._base

    # -- partial lines --------------------------------------------------------------------------

    def _try_release(self) -> None:
        """Let the current line go out before its end when nothing it could become is held."""
        partial = self._partial.removesuffix("\r")
        stripped = partial.lstrip(_SPACE)
        if not stripped or self._phase in ("stop", "maybe"):
            return
        if self._phase == "body":
            self._release_body_partial(partial)
            return
        if self._phase == "repeat":
            self._release_repeat_partial(partial, stripped)
            return
        if self._hs and not self._t.replace:
            if self._hs.startswith(stripped):
                return
            if stripped.startswith(self._hs) and len(stripped) > len(self._hs):
                if self._could_repeat_above(stripped):
                    return
                self._repeat_of_head(partial, stripped, complete=False)
                self._first_text = partial
                self._partial = ""
                self._open = True
                return
        if self._could_repeat_above(stripped) and not (
            self._t.replace and self._sel_first.startswith(stripped)
        ):
            return
        if self._could_be_next_line(stripped):
            return
        self._phase = "body"
        self._first_line(partial, complete=False)
        self._first_text = partial
        self._partial = ""
        self._open = True

    def _release_repeat_partial(self, partial: str, stripped: str) -> None:
        """Past a repeat: the line at the target goes out once it can no longer repeat."""
        if self._k < self._count:
            return  # still repeating the lines above: decided at the line's end
        if self._hs and not self._t.replace:
            if self._hs.startswith(stripped) or not stripped.startswith(self._hs):
                return
            self._phase = "body"
            self._emit_first(self._after_head(stripped), complete=False)
        else:
            self._phase = "body"
            self._first_line(partial, complete=False)
        self._first_text = partial
        self._partial = ""
        self._open = True

    def _release_body_partial(self, partial: str) -> None:
        if not self._emitted or self._delta is None:
            return  # a bare first line's next line is decided at its end (it may be closers)
        full = self._rebased(partial)
        if self._could_be_target_line(full):
            return
        if self._s_held is not None:
            if self._t.suffix[1:2] and self._t.suffix[1].startswith(full):
                return
            self._release_suffix_hold()
        if self._t.suffix[:1] and self._t.suffix[0].startswith(full):
            return
        self._write(full)
        self._partial = ""
        self._open = True

    # -- helpers --------------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        """Send text out, after the line breaks owed, holding a tail the rest of line repeats."""
        if not text:
            return
        self._ended = False
        self._break_out = False
        if self._newlines:
            self._flush_rest()
            self._out.append(self._t.newline * self._newlines)
            self._newlines = 0
            self._line_out, self._broke = "", True
        rest = self._t.rest.strip(_SPACE)
        if not rest:
            self._out.append(text)
            self._line_out += text
            return
        text = self._rest_held + text
        self._rest_held = ""
        for start in range(len(text)):
            # Spaces before the repeat stay: `2 * ` + `x + 1`, not `2 *x + 1`.
            if text[start] not in _SPACE and rest.startswith(text[start:]):
                self._out.append(text[:start])
                self._line_out += text[:start]
                self._rest_held = text[start:]
                return
        self._out.append(text)
        self._line_out += text

    def _flush_rest(self) -> None:
        if self._rest_held:
            self._out.append(self._rest_held)
            self._rest_held = ""

    def _closes_the_line(self) -> bool:
        """Whether the held tail is closers the line needs although the rest of the target line
        starts with them: ``print(f(`` + ``x)``, rest ``)``, keeps its ``)``."""
        held = self._rest_held.strip(_SPACE)
        if not held or any(char not in _CLOSERS for char in held):
            return False
        line = self._line_out if self._broke else self._t.head + self._line_out
        opened = sum(line.count(c) for c in _OPENERS) - sum(line.count(c) for c in _CLOSERS)
        supplied = len(self._t.rest.strip(_SPACE)) - len(
            self._t.rest.strip(_SPACE).lstrip(_CLOSERS)
        )
        return abs(opened - len(held) - supplied) < abs(opened - supplied)

    def _could_be_target_line(self, full: str) -> bool:
        """At a target at a line's start (nothing before it on its line), whether an answer line
        could still become that whole line: its indentation is the line's own, so it must not go
        out before the line is decided."""
        target = self._t
        return (
            not target.replace
            and not target.head
            and bool(target.rest.strip(_SPACE))
            and target.rest.startswith(full)
        )

    def _is_target_line(self, full: str) -> bool:
        """An answer line that is the whole line the target starts: the code that follows."""
        return self._could_be_target_line(full) and full == self._t.rest

    def _columns(self, lead: str) -> int:
        return self._t.style.columns(lead)

    def _match_above(self, stripped: str) -> int | None:
        """The nearest line above the target the line repeats, if telling enough."""
        if is_trivial(stripped):
            return None
        for index in range(self._count - 1, -1, -1):
            if self._t.prefix[index].stripped == stripped:
                return index
        return None

    def _could_be_next_line(self, stripped: str) -> bool:
        """Whether the first line, at a blank target line, could be the line after the target."""
        target = self._t
        if target.replace or not target.head_blank or not target.suffix:
            return False
        return target.suffix[0].startswith(target.head + stripped)

    def _encloses(self, k: int) -> bool:
        """Whether the line above at ``k`` opens a block the target is in (by indentation)."""
        columns = self._t.prefix[k].columns
        if columns >= self._t.indent:
            return False
        return all(line.columns > columns for line in self._t.prefix[k + 1 :] if line.stripped)

    def _near(self, k: int) -> bool:
        """Whether the line above at ``k`` is one of the last three (non-blank) above."""
        return sum(1 for line in self._t.prefix[k:] if line.stripped) <= 3

    def _could_repeat_above(self, partial: str) -> bool:
        return any(line.stripped.startswith(partial) for line in self._t.prefix if line.stripped)

    def _next_above(self, index: int) -> int:
        """The next non-blank prefix line from ``index`` (the target's index when none)."""
        while index < self._count and not self._t.prefix[index].stripped:
            index += 1
        return index
