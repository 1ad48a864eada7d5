"""Carry a line rewrite: the user rewrote part of a line; the next line the same rewrite fits gets
it too.

Two ways to learn the rewrite from the one edit:
- a known rewrite that turns the old line into exactly the new one (``%`` formatting or
  ``str.format`` into an f-string);
- a token template: the changed tokens with the token on each side as context, where a name or
  literal that the old and the new text share is a hole matching any one token (so
  ``d.has_key(k)`` -> ``k in d`` fits ``e.has_key(j)``). A template must name something (a name or
  an operator) to look for: a changed number or string alone is not a rewrite to repeat.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ...core.document import Point
from .lines import LineDiff, Lines, Prediction, line_edit, window_order
from .scope import in_code
from .tokens import KEYWORDS, Token, tokens

Rule = Callable[[str], str | None]

_CONVERSION = re.compile(r"%(?:%|([-+ 0#]*\d*(?:\.\d+)?)([sdirfgeExX]))")


def _split_top(text: str) -> list[str] | None:
    """Top-level comma-separated parts of ``text`` (None if brackets do not balance)."""
    parts, depth, start = [], 0, 0
    for tok in tokens(text):
        if tok.text in ("(", "[", "{"):
            depth += 1
        elif tok.text in (")", "]", "}"):
            depth -= 1
            if depth < 0:
                return None
        elif tok.text == "," and depth == 0:
            parts.append(text[start : tok.col].strip())
            start = tok.end
        elif tok.kind == "string" and tok.text[-1:] not in ("'", '"'):
            return None
    if depth:
        return None
    last = text[start:].strip()
    if last:
        parts.append(last)
    return parts


def _fstring(
    literal: str, values: list[str], fields: Callable[[str], list[str] | None]
) -> str | None:
    quote = literal[-1]
    if literal[0] != quote or len(literal) < 2 or literal[:3] in ('"""', "'''"):
        return None  # a prefixed (b, r, f, u) or triple-quoted literal is left alone
    if any(quote in v or "\\" in v or "#" in v for v in values):
        return None
    body = literal[1:-1].replace("{", "{{").replace("}", "}}")
    pieces = fields(body)
    if pieces is None or len(pieces) != 2 * len(values) + 1:
        return None
    out = [pieces[0]]
    for index, value in enumerate(values):
        spec = pieces[2 * index + 1]
        out.append("{" + value + spec + "}")
        out.append(pieces[2 * index + 2])
    return "f" + quote + "".join(out) + quote


def _percent_fields(body: str) -> list[str] | None:
    pieces: list[str] = []
    last = 0
    text: list[str] = []
    for match in _CONVERSION.finditer(body):
        text.append(body[last : match.start()])
        last = match.end()
        if match.group() == "%%":
            text.append("%")
            continue
        flags, kind = match.group(1) or "", match.group(2)
        if kind == "r":
            if flags:
                return None
            spec = "!r"
        elif kind in "si":
            spec = f":{flags}" if flags else ""
            if kind == "i":
                spec = f":{flags}d" if flags else ""
        else:
            spec = f":{flags}{kind}" if flags or kind != "d" else ""
        pieces.append("".join(text))
        pieces.append(spec)
        text = []
    if "%" in body[last:]:
        return None
    text.append(body[last:])
    pieces.append("".join(text))
    return pieces


_PERCENT = re.compile(r"""(?P<lit>(?<![\w'"])(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"))\s*%\s*""")


def percent_to_fstring(line: str) -> str | None:
    """``"a %s b" % (x, y)`` (or ``% x``) as an f-string, on one line."""
    if "%" not in line:
        return None
    for match in _PERCENT.finditer(line):
        rest = line[match.end() :]
        if rest.startswith("("):
            close = _closing(rest)
            if close is None:
                continue
            values = _split_top(rest[1:close])
            end = match.end() + close + 1
        else:
            operand = re.match(r"[\w.]+(?:\([^()]*\))?", rest)
            if operand is None or not operand.group():
                continue
            values = [operand.group()]
            end = match.end() + operand.end()
            if line[end:].lstrip().startswith(("[", "(", ".", "*", "**")):
                continue
        if not values or any(v.startswith("*") for v in values):
            continue
        converted = _fstring(match.group("lit"), values, _percent_fields)
        if converted is not None:
            return line[: match.start()] + converted + line[end:]
    return None


def _format_fields(body: str) -> list[str] | None:
    # body has braces doubled already: a field is now "{{}}" or "{{:spec}}".
    pieces = re.split(r"\{\{(:[^{}]*)?\}\}", body)
    if any(p is not None and ("{{" in p or "}}" in p) for p in pieces[0::2]):
        return None
    return [piece or "" for piece in pieces]


_FORMAT = re.compile(
    r"""(?P<lit>(?<![\w'"])(?:'(?:[^'\\{}]|\\.|\{[^{}]*\})*'|"(?:[^"\\{}]|\\.|\{[^{}]*\})*"))\.format\("""
)


def format_to_fstring(line: str) -> str | None:
    """``"a {} b {:.2f}".format(x, y)`` as an f-string, on one line (positional fields only)."""
    if ".format(" not in line:
        return None
    for match in _FORMAT.finditer(line):
        rest = line[match.end() - 1 :]
        close = _closing(rest)
        if close is None:
            continue
        values = _split_top(rest[1:close])
        if not values or any("=" in v or v.startswith("*") for v in values):
            continue
        converted = _fstring(match.group("lit"), values, _format_fields)
        if converted is not None:
            return line[: match.start()] + converted + line[match.end() - 1 + close + 1 :]
    return None


def _closing(text: str) -> int | None:
    """Index of the ")" closing the "(" that ``text`` starts with."""
    depth = 0
    for tok in tokens(text):
        if tok.text in ("(", "[", "{"):
            depth += 1
        elif tok.text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return tok.col if tok.text == ")" else None
    return None


RULES: tuple[Rule, ...] = (percent_to_fstring, format_to_fstring)


def known_rule(diff: LineDiff) -> Rule | None:
    """A known rewrite that turns the old line into exactly the new one."""
    for rule in RULES:
        if rule(diff.old) == diff.new:
            return rule
    return None


def carry_rule(
    lines: Lines, diff: LineDiff, rule: Rule, cursor: Point, python: bool
) -> Prediction | None:
    for row in window_order(lines, diff.line, cursor.line):
        text = lines.line(row)
        rewritten = rule(text)
        if rewritten is not None and rewritten != text:
            found = line_edit(row, text, rewritten, "rewrite")
            if found is not None and (not python or in_code(lines, found.start)):
                return found
    return None


# -- token templates -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """Tokens to find (``old``, holes by name) and what they become (text with holes)."""

    old: tuple[Token, ...]
    holes: dict[int, str]  # index in old -> hole name
    new: str
    new_holes: tuple[tuple[int, int, str], ...]  # (start, end) in new -> hole name
    left: Token | None
    right: Token | None
    anchor: int  # index in old of a literal token to look for


def learn_template(diff: LineDiff) -> Template | None:
    old_mid, new_mid = diff.old_mid, diff.new_mid
    if not old_mid:
        return None
    shared = {t.text for t in new_mid if t.kind in ("name", "number", "string")}
    holes = {
        i: t.text
        for i, t in enumerate(old_mid)
        if t.text in shared and (t.kind != "name" or t.text not in KEYWORDS)
    }
    anchor = next(
        (i for i, t in enumerate(old_mid) if i not in holes and t.kind in ("name", "op")), None
    )
    if anchor is None:
        return None
    base = new_mid[0].col if new_mid else 0
    new_text = diff.new[base : new_mid[-1].end] if new_mid else ""
    new_holes = tuple(
        (t.col - base, t.end - base, t.text)
        for t in new_mid
        if t.text in set(holes.values()) and t.kind != "op"
    )
    left = diff.old_tokens[diff.prefix - 1] if diff.prefix else None
    right_index = len(diff.old_tokens) - diff.suffix
    right = diff.old_tokens[right_index] if diff.suffix else None
    if not new_mid and left is None:
        return None
    return Template(tuple(old_mid), holes, new_text, new_holes, left, right, anchor)


def _context_fits(want: Token | None, got: Token | None) -> bool:
    if want is None:
        return True
    if got is None:
        return False
    if want.kind == "name" and want.text not in KEYWORDS:
        return got.kind == "name" and got.text not in KEYWORDS
    if want.kind in ("number", "string"):
        return got.kind == want.kind
    return got.text == want.text


def _match(template: Template, toks: list[Token], start: int) -> dict[str, str] | None:
    if start < 0 or start + len(template.old) > len(toks):
        return None
    bound: dict[str, str] = {}
    for offset, want in enumerate(template.old):
        got = toks[start + offset]
        hole = template.holes.get(offset)
        if hole is None:
            if got.text != want.text:
                return None
        elif (
            got.kind not in ("name", "number", "string")
            or bound.setdefault(hole, got.text) != got.text
        ):
            return None
    left = toks[start - 1] if start else None
    end = start + len(template.old)
    right = toks[end] if end < len(toks) else None
    if not (_context_fits(template.left, left) and _context_fits(template.right, right)):
        return None
    return bound


def _render(template: Template, bound: dict[str, str]) -> str:
    out, last = [], 0
    for start, end, name in template.new_holes:
        out.append(template.new[last:start])
        out.append(bound.get(name, name))
        last = end
    out.append(template.new[last:])
    return "".join(out)


def carry_template(
    lines: Lines, diff: LineDiff, template: Template, cursor: Point, python: bool
) -> Prediction | None:
    anchor = template.old[template.anchor].text
    for row in window_order(lines, diff.line, cursor.line):
        text = lines.line(row)
        if anchor not in text:
            continue
        toks = tokens(text)
        for index, tok in enumerate(toks):
            if tok.text != anchor:
                continue
            start = index - template.anchor
            bound = _match(template, toks, start)
            if bound is None:
                continue
            first, last = toks[start], toks[start + len(template.old) - 1]
            replacement = _render(template, bound)
            if text[first.col : last.end] == replacement:
                continue
            if python and not in_code(lines, Point(row, first.col)):
                continue
            return Prediction(Point(row, first.col), Point(row, last.end), replacement, "rewrite")
    return None
