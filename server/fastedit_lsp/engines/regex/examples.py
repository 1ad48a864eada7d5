"""Regex synthesis: reading the examples, naming the pattern, and checking a pattern against them.

The examples come from a comment block in the regex syntax of docs/actions.md
(:func:`parse_examples`) or from the string literals of a selection (:func:`string_literals`);
:func:`verify` checks a pattern with ``re.fullmatch``. Part of
:mod:`fastedit_lsp.engines.regex.synth`, which re-exports the public names. Pure: stdlib only,
no I/O.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RegexExamples:
    """What a comment block or a selection asks for."""

    description: str | None
    positives: tuple[str, ...]
    negatives: tuple[str, ...]


_KEYWORD = re.compile(r"(regex|match|reject):", re.IGNORECASE)


def parse_examples(lines: Sequence[str], comment: str = "#") -> RegexExamples | None:
    """The examples in a comment block in the regex syntax of docs/actions.md, or None if none.

    Each line may be indented; its comment marker (``comment``, possibly repeated: ``##``,
    ``;;``, ``///``) may be followed by spaces, then ``regex: <description>``, ``match:
    <example>`` or ``reject: <example>``. An example is taken verbatim after the one space that
    follows the colon: it may be empty or start with spaces. Other lines are ignored.
    """
    if not comment:
        raise ValueError("comment marker must not be empty")
    description: str | None = None
    positives: list[str] = []
    negatives: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        body = line.lstrip()
        if not body.startswith(comment):
            continue
        body = body[len(comment) :]
        if not any(c.isalnum() for c in comment):
            body = body.lstrip(comment)  # "##", ";;", "///", "---"
        body = body.lstrip(" \t")
        found = _KEYWORD.match(body)
        if found is None:
            continue
        rest = body[found.end() :]
        if rest[:1] in (" ", "\t"):
            rest = rest[1:]
        kind = found.group(1).lower()
        if kind == "regex":
            if description is None and rest.strip():
                description = rest.strip()
        elif kind == "match":
            positives.append(rest)
        else:
            negatives.append(rest)
    if not positives and not negatives:
        return None
    return RegexExamples(description, tuple(positives), tuple(negatives))


def string_literals(source: str) -> tuple[str, ...]:
    """The ``str`` literals in a Python selection, in order, without duplicates.

    Read with :mod:`ast` (or, for a selection that does not parse, :mod:`tokenize`) and
    :func:`ast.literal_eval`: nothing is evaluated. Adjacent literals are joined as Python joins
    them; bytes and f-strings are skipped.
    """
    found = _literals_by_ast(source)
    if found is None:
        found = _literals_by_tokens(source)
    return tuple(dict.fromkeys(found))


def _literals_by_ast(source: str) -> list[str] | None:
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return None
    inside_fstrings = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in ast.walk(node)
    }
    literals = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in inside_fstrings
    ]
    literals.sort(key=lambda node: (node.lineno, node.col_offset))
    return [str(node.value) for node in literals]


def _literals_by_tokens(source: str) -> list[str]:
    found: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            try:
                value = ast.literal_eval(" ".join(pending))
            except (SyntaxError, ValueError):
                value = None
            if isinstance(value, str):
                found.append(value)
            pending.clear()

    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.STRING:
                pending.append(token.string)
            elif token.type not in skip:
                flush()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    flush()
    return found


_ARTICLES = {"a", "an", "the"}


def name_for(description: str | None) -> str:
    """A constant name for the pattern: ``"ISO date"`` -> ``"ISO_DATE"``; else ``"PATTERN"``."""
    if not description:
        return "PATTERN"
    ascii_text = unicodedata.normalize("NFKD", description).encode("ascii", "ignore").decode()
    words = re.findall(r"[A-Za-z0-9]+", ascii_text)
    while words and words[0].lower() in _ARTICLES and len(words) > 1:
        words = words[1:]
    name = ""
    for word in words:
        candidate = f"{name}_{word.upper()}" if name else word.upper()
        if len(candidate) > 40 and name:
            break
        name = candidate
    if not name:
        return "PATTERN"
    if name[0].isdigit():
        name = "RE_" + name
    if not name.isidentifier() or keyword.iskeyword(name):
        return "PATTERN"
    return name


def verify(pattern: str, positives: Sequence[str], negatives: Sequence[str]) -> tuple[bool, str]:
    """Check ``pattern`` with ``re.fullmatch``: (all right, a sentence naming first failures)."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return False, f"the pattern does not compile: {exc}"
    missed = [p for p in positives if compiled.fullmatch(p) is None]
    accepted = [n for n in negatives if compiled.fullmatch(n) is not None]
    parts = [f"{len(positives) - len(missed)}/{len(positives)} positives match"]
    if missed:
        parts[-1] += f" (not: {_listing(missed)})"
    parts.append(f"{len(negatives) - len(accepted)}/{len(negatives)} negatives rejected")
    if accepted:
        parts[-1] += f" (matched: {_listing(accepted)})"
    return not missed and not accepted, ", ".join(parts)


def _listing(examples: list[str]) -> str:
    shown = ", ".join(repr(e) for e in examples[:3])
    return shown + (f" and {len(examples) - 3} more" if len(examples) > 3 else "")
