"""Offline syntax repair beyond Python: insert what tree-sitter says is missing, verified by a
reparse.

Pure and offline (Python has its own repairs: :mod:`.python`). For the languages with a grammar
(``engines.parse``: JavaScript, TypeScript, Go, Rust, Java, C, C++, C#) a deleted closer,
semicolon, closing quote or comma leaves tree-sitter reporting a MISSING token or an ERROR node.
The repair tries small insertions confined to a region of the document (the error's lines, as
the caller chose them): first the tokens tree-sitter reports MISSING where it reports them, then
a closer, ``;``, ``,`` or a quote at the token boundaries and line ends around each error. Each
candidate is reparsed incrementally; the one leaving the fewest (then the narrowest) errors wins,
up to :data:`ROUNDS` insertions. The result is kept only when the errors in the region are fewer
than before and none is new (``parse.check_edit``): otherwise there is no offline repair.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..parse import Parsed, SyntaxProblem, around, check_edit, parse, reparse

#: Insertions at most (a deleted ``)`` and ``;`` together is two).
ROUNDS = 3
#: What may be inserted where tree-sitter reports an ERROR (MISSING nodes name their own token).
TOKENS = (";", ",", ")", "]", "}", '"', "'", "`")
#: The longest MISSING token inserted as it is named (``}``, ``;``, ``=>``; not ``identifier``).
MAX_TOKEN = 3
#: Candidate positions tried per round, at most (the nearest to the errors first).
MAX_POSITIONS = 48
#: Characters before which a closer, separator or quote may go.
_BEFORE = set(" \t\r\n,;)]}")
_BLANK = set(" \t\r\n")
_CLOSE = set(",;)]}")


@dataclass(frozen=True)
class Repaired:
    """The region's new text and what was inserted (for the job's message)."""

    text: str
    inserted: tuple[str, ...]


def repair(language: str, text: str, start: int, end: int) -> Repaired | None:
    """The repaired text of code points ``[start, end)`` of ``text``, or None when no insertion
    inside that region leaves fewer syntax errors there and none new."""
    before = parse(language, text)
    window = around(before, start, end)
    count = len(before.problems(*window))
    if count == 0:
        return None
    current, current_end = before, end
    inserted: list[str] = []
    score = _score(before)
    for _ in range(ROUNDS):
        best: tuple[tuple[int, int], Parsed, int, str] | None = None
        for position, token in _candidates(current, start, current_end):
            after = reparse(current, position, position, token)
            candidate = _score(after)
            if candidate < score and (best is None or candidate < best[0]):
                best = (candidate, after, position, token)
                if candidate[0] == 0:
                    break
        if best is None:
            break
        score, current, _, token = best
        current_end += len(token)
        inserted.append(token)
        if not current.problems(*around(current, start, current_end)):
            break
    if not inserted:
        return None
    new_text = current.text[start:current_end]
    verdict = check_edit(before, start, end, new_text)
    left = current.problems(*around(current, start, current_end))
    if not verdict.ok or len(left) >= count:
        return None
    return Repaired(new_text, tuple(inserted))


def _score(parsed: Parsed) -> tuple[int, int]:
    """Fewer errors, then fewer bytes under ERROR nodes."""
    problems = parsed.problems()
    return len(problems), sum(p.end - p.start for p in problems)


def _candidates(parsed: Parsed, start: int, end: int) -> list[tuple[int, str]]:
    """(code point offset, token) insertions inside ``[start, end]``: MISSING tokens first, then
    the tokens of :data:`TOKENS` at the boundaries nearest to the errors."""
    s, e = parsed.byte_of(start), parsed.byte_of(end)
    problems = parsed.problems(s, e)
    out: list[tuple[int, str]] = []
    seen: set[tuple[int, str]] = set()

    def add(byte: int, token: str) -> None:
        if not s <= byte <= e:
            return
        key = (_code_point(parsed, byte), token)
        if key not in seen:
            seen.add(key)
            out.append(key)

    lines = parsed.text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    last_line = parsed.text.count("\n", 0, end)
    for body, following, indent in _unclosed(lines, last_line):
        # The closer the indentation says is missing, on a line of its own, first: where
        # tree-sitter reports it (the end of the enclosing block) parses too, but is wrong.
        code = lines[following].lstrip()
        if code.startswith((")", "]")):
            at = starts[following] + len(lines[following]) - len(code)
            add(parsed.byte_of(at), "}")
        for blank in range(body + 1, following):
            # The closer's own line, left blank by its deletion: the closer goes back there.
            space = lines[blank].rstrip("\r")
            if not space.strip():
                token = indent[len(space) :] + "}" if indent.startswith(space) else "}"
                add(parsed.byte_of(starts[blank] + len(space)), token)
                break
        add(parsed.byte_of(starts[body] + len(lines[body].rstrip("\r"))), "\n" + indent + "}")
    first_line = parsed.text.count("\n", 0, start)
    for i in range(first_line, min(last_line, len(lines) - 1) + 1):
        # A line with an odd number of one quote: closed at the first boundary after the lone
        # quote that parses (``"default, {...})`` → ``"default", {...})``).
        line = lines[i].replace("\\\\", "").replace('\\"', "").replace("\\'", "")
        for quote in "\"'`":
            if line.count(quote) % 2:
                at = starts[i] + lines[i].rfind(quote) + 1
                lo = parsed.byte_of(at)
                hi = parsed.byte_of(starts[i] + len(lines[i].rstrip("\r")))
                for byte in _boundaries(parsed, lo, hi):
                    add(byte, quote)
    for p in problems:
        named = any(c.isalnum() or c == "_" for c in p.token)
        if p.kind == "missing" and p.token and len(p.token) <= MAX_TOKEN and not named:
            add(p.start, p.token)
    # Every boundary of the region, the nearest to an error (clamped into the region) first.
    anchors = [min(max(b, s), e) for p in problems for b in (p.start, p.end)] or [s]
    positions = sorted(
        set(_boundaries(parsed, s, e)) | set(anchors),
        key=lambda b: (min(abs(b - a) for a in anchors), b),
    )
    data = parsed.data
    for byte in positions[:MAX_POSITIONS]:
        # tree-sitter's ERROR starts at the next token; a separator or closer belongs right
        # after the code before it (``a,\n  b``, not ``a\n  ,b``): tried there first.
        code_end = len(data[:byte].rstrip(b" \t\r\n"))
        for token in TOKENS:
            if code_end != byte and token in ";,)]}":
                add(code_end, token)
            add(byte, token)
        if parsed.data[byte : byte + 1] in (b"\n", b"\r", b""):
            # A block's closer on a line of its own (Go wants one before the next ``func``).
            add(byte, "\n}")
    return out


def _boundaries(parsed: Parsed, first: int, last: int) -> list[int]:
    """Byte offsets in ``[first, last]`` right after code and before a blank, a closer or a
    separator (the end of a line's code among them)."""
    data = parsed.data
    out: list[int] = []
    for i in range(max(1, first), last + 1):
        here = data[i : i + 1].decode("latin-1") if i < len(data) else "\n"
        after_code = chr(data[i - 1]) not in _BLANK
        if here in _CLOSE or (here in _BEFORE and after_code):
            out.append(i)
    return out


#: Lines looked back at for a block left open.
LOOKBACK = 200


def _unclosed(lines: list[str], upto: int) -> list[tuple[int, int, str]]:
    """Where the indentation says a block was left open, up to line ``upto``: (the last line of
    its body, the line that should have followed its closer, the opener's indentation).

    A block opens on a line ending with ``{`` and holds the more indented lines after it; a line
    as little indented as its opener that is not its ``}`` shows it left open. Blocks whose body
    is not indented (C++ namespaces) are not followed, nor labels and ``case`` lines.
    """
    stack: list[tuple[str, bool]] = []
    out: list[tuple[int, int, str]] = []
    previous: int | None = None
    for i in range(max(0, upto - LOOKBACK), min(upto, len(lines) - 1) + 1):
        line = lines[i].rstrip("\r")
        code = line.strip()
        if not code or code.startswith(("#", "//", "/*", "*")):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if code.startswith(("case ", "default")) or (code.endswith(":") and "::" not in code):
            previous = i
            continue
        if stack and not stack[-1][1]:
            if len(indent) > len(stack[-1][0]):
                stack[-1] = (stack[-1][0], True)
            elif not code.startswith("}"):
                stack.pop()
        closes = code.startswith("}")
        while stack and len(stack[-1][0]) >= len(indent):
            if closes and len(stack[-1][0]) == len(indent):
                break
            if previous is not None:
                out.append((previous, i, stack[-1][0]))
            stack.pop()
        if closes and stack and len(stack[-1][0]) == len(indent):
            stack.pop()
        if code.endswith("{"):
            stack.append((indent, False))
        previous = i
    return out


def _code_point(parsed: Parsed, byte: int) -> int:
    """The code-point offset of a UTF-8 byte offset."""
    return len(parsed.data[:byte].decode("utf-8", "ignore"))


#: The region around an error: its lines ± ``AROUND``, at most ``MAX_LINES`` (the model's and the
#: offline repair's, see ``actions.syntax_tree``).
AROUND = 2
MAX_LINES = 12
#: Leaf types that hold a string's text (a string left open swallows the lines after it).
_STRINGY = ("string", "fragment", "content", '"', "'", "`")


def error_region(
    parsed: Parsed, first: int = 0, last: int | None = None
) -> tuple[SyntaxProblem, int, int] | None:
    """The first syntax error within two lines of lines ``first``-``last`` (else the file's
    first), and the 0-based first and last line of the region around it; None when the text
    parses.

    An ERROR node longer than the region (tree-sitter gave up on a whole class after a string
    was left open) is placed at the first string inside it that runs over a line end (the
    unterminated one) or the first ERROR inside it, whichever comes first.
    """
    problems = parsed.problems()
    if not problems:
        return None
    top = first if last is None else last
    near = [p for p in problems if first - AROUND <= p.line <= top + AROUND]
    problem = (near or problems)[0]
    data = parsed.data
    lines = data.count(b"\n")
    end_line = data.count(b"\n", 0, problem.end)
    anchor = problem.line
    if problem.kind == "error" and end_line - problem.line >= MAX_LINES:
        inner = [
            a
            for type_, a, b, _first in parsed.nodes()
            if problem.start <= a < b <= problem.end
            and any(part in type_ for part in _STRINGY)
            and b"\n" in data[a:b].rstrip(b"\r\n")
        ][:1]
        inner += [
            a
            for _type, a, b, _first in parsed.nodes(frozenset({"ERROR"}))
            if problem.start < a and b <= problem.end
        ][:1]
        if inner:
            anchor = end_line = data.count(b"\n", 0, min(inner))
    first_line = max(0, anchor - AROUND)
    # A block left open above the error (tree-sitter reports its closer missing where the
    # enclosing block ends): the region reaches up to it when it can.
    spots = _unclosed(parsed.text.split("\n"), anchor)
    reach = [body for body, _next, _indent in spots if anchor - body < MAX_LINES - 2 * AROUND]
    if reach:
        first_line = max(0, min(first_line, reach[-1] - AROUND))
    last_line = min(end_line + AROUND, first_line + MAX_LINES - 1, lines)
    return problem, first_line, max(last_line, min(anchor, lines))
