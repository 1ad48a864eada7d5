"""Regex synthesis from examples: the offline engine behind ``fastedit.generateRegex``.

Pure: no pygls, no httpx, no asyncio, no I/O. :func:`synthesize` holds the GIL for as long as it
runs (grex, the fallback, is native code that never releases it), so the server runs it through
:mod:`fastedit_lsp.engines.regex.worker`, never on the event loop.

Patterns are meant for ``re.fullmatch`` (no anchors are emitted). How a pattern is found:

1. **Structure.** Each positive is cut into runs (digits, lowercase, uppercase, whitespace, one
   punctuation character repeated). Text every positive starts or ends with (``0x``, ``#``),
   separators that occur the same number of times in every positive (``-`` in dates), and constant
   letter runs (the ``T`` of a timestamp) are kept literally; the fields between them are aligned.
   A separator that only ever sits alone between two word characters, a varying number of times
   (``.`` in version numbers, ``-`` in slugs), becomes a repetition, ``\\d+(?:\\.\\d+)*``; a
   sign only some positives start with becomes optional (``-?``).
2. **Generalisation.** A field with letters starts as the word class ``\\w`` (less the separators
   around it), digits as ``\\d``, digits with hex letters as hex in both cases, a field with two or
   more kinds of punctuation as ``[^<separators>\\s]``; all with ``+``. Widths are kept only where
   the positives establish them: a format whose every field has one width, two or more of them
   numbers (dates, card numbers, MAC addresses, UUIDs), or a width of 2+ that 3+ positives share.
   What users mean by common formats, beyond what the examples spell out:

   - numbers joined by one separator whose widths vary up to three digits are bounded,
     ``\\d{1,n}``, when a number beside them has an established width (the hour of ``9:30``, the
     day of ``1/5/2024``) or three or more of them reach three digits (IPv4 octets);
   - the parts of dotted names (``mail.co.uk``, ``file.txt``) may hold ``-``;
   - the value after a final ``=`` is text, ``[^=\\s]+`` (``path=/usr/bin``);
   - letters right after a number are units from a closed set, the ones seen (``\\d+[hm]``);
   - when no example has a lowercase letter, the positives' lowercase forms count as negatives
     (``9:30 am`` against ``9:30 AM``), unless hex digits make case meaningless.
3. **Narrowing, only where a negative forces it.** While some negative still matches, the change
   that rejects negatives at the least loss of generality (a measure over the parts, see below) is
   made: a narrower class (``[A-Za-z0-9]``, ``[A-Za-z]``, the letter case seen), a first character
   unlike the rest when the positives show one (``[a-z][A-Za-z0-9]*``), a cap generous enough to
   read as a rule (``#{1,6}``), the widths seen, ``_`` as a separator (``[a-z]+(?:_[a-z]+)*``), an
   alignment of the runs (``-?\\d+(?:\\.\\d+)?``), and last the values seen. A negative with a
   kind of character no positive has (uppercase against snake_case) is explained by characters,
   not by a length that happens to exclude it. Once a width is forced, every field whose width
   never varies keeps it (``\\d{4}-\\d{2}-\\d{2}`` from the one negative ``2024-1-31``).
4. **Fallbacks.** grex's conversions that reject every negative (small inputs only: grex holds the
   GIL for seconds on large ones), then the exact alternation of the positives. Every result is
   checked with ``re.fullmatch`` against all examples.

Bounds: at most :data:`MAX_EXAMPLES` examples of :data:`MAX_EXAMPLE_CHARS` characters each (more
raises :class:`SynthesisError`). Typical inputs take 1-50 ms, a few hundred at most; the search
stops after ``_SEARCH_SECONDS`` and falls back, so adversarial input at the bounds takes ~2 s.
"""

from __future__ import annotations

import ast
import io
import keyword
import math
import re
import time
import tokenize
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

#: At most this many examples (positives and negatives together) per synthesis.
MAX_EXAMPLES = 200
#: At most this many characters per example.
MAX_EXAMPLE_CHARS = 500
#: Patterns tried per synthesis before giving up on generalising (then: grex, or the examples).
_MAX_EVALUATIONS = 3_000
#: Seconds of pattern search per synthesis, the same last resort; every input in the corpus needs
#: well under a tenth of it. (The worker's hard time limit is separate and longer.)
_SEARCH_SECONDS = 1.5
#: Fields in the positives' structure above which they share too little to generalise.
_MAX_FIELDS = 48
#: Total characters of positives above which grex is not tried (it holds the GIL for seconds).
_MAX_GREX_CHARS = 4_000
#: At most this many implied negatives (lowercase forms of words in capitals): each costs time.
_MAX_IMPLIED = 50
#: Letters after a number up to this long are a unit or marker (``m``, ``px``, ``am``), not a word.
_UNIT_CHARS = 3
#: At most this many distinct units make a closed set (``ms s m h d w``, ``B KB MB GB TB PB``).
_MAX_UNITS = 8
#: Prior against telling a repetition's first piece from the others (``[A-Z]+(?:_\w+)*``).
_DISTINCT_PIECES_BITS = 8.0
#: Cost of one more pattern character, in bits of generality: a literal list hidden in one branch
#: of an alternation loses little generality but is what over-fitting looks like.
_BITS_PER_CHAR = 0.1


class SynthesisError(ValueError):
    """No pattern can be synthesised from these examples (the message says why)."""


@dataclass(frozen=True)
class RegexExamples:
    """What a comment block or a selection asks for."""

    description: str | None
    positives: tuple[str, ...]
    negatives: tuple[str, ...]


# --------------------------------------------------------------------------------------------
# Reading the examples


_KEYWORD = re.compile(r"(regex|match|reject):", re.IGNORECASE)


def parse_examples(lines: Sequence[str], comment: str = "#") -> RegexExamples | None:
    """The examples in a comment block written in DESIGN.md's syntax, or None if it has none.

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


# --------------------------------------------------------------------------------------------
# Character classes


_DIGITS = frozenset("0123456789")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_HEX_LOWER = frozenset("abcdef")
_HEX_UPPER = frozenset("ABCDEF")
_ALNUM = _DIGITS | _LOWER | _UPPER
# Ranges in the order they are written inside brackets.
_RANGES: dict[str, frozenset[str]] = {
    "A-Z": _UPPER,
    "a-z": _LOWER,
    "0-9": _DIGITS,
    "a-f": _HEX_LOWER,
    "A-F": _HEX_UPPER,
}
_HEX_ORDER = ("0-9", "a-f", "A-F")
_PLAIN_ORDER = ("A-Z", "a-z", "0-9")
_PRINTABLE = 95  # ASCII printable characters, space included


@dataclass(frozen=True)
class _Class:
    """A character class: named ranges plus single characters, or everything but some."""

    ranges: frozenset[str] = frozenset()
    chars: frozenset[str] = frozenset()
    negated: bool = False
    space: bool = False  # negated classes: whether whitespace is allowed

    @property
    def size(self) -> int:
        if self.negated:
            return max(1, _PRINTABLE - len(self.chars) - (0 if self.space else 1))
        return sum(len(_RANGES[r]) for r in self.ranges) + len(self.chars)

    def contains(self, char: str) -> bool:
        if self.negated:
            return char not in self.chars and (self.space or not char.isspace())
        return char in self.chars or any(char in _RANGES[r] for r in self.ranges)

    def render(self) -> str:
        if self.negated:
            if not self.chars:
                return "." if self.space else r"\S"
            inner = "".join(_escape_in_class(c) for c in sorted(self.chars))
            return f"[^{inner}]" if self.space else f"[^{inner}\\s]"
        if not self.ranges and len(self.chars) == 1:
            return _escape(next(iter(self.chars)))
        if self.ranges == {"0-9"} and not self.chars:
            return r"\d"
        if self.ranges == {"A-Z", "a-z", "0-9"} and self.chars == {"_"}:
            return r"\w"
        order = _HEX_ORDER if self.ranges & {"a-f", "A-F"} else _PLAIN_ORDER
        inner = "".join(r for r in order if r in self.ranges)
        inner += "".join(_escape_in_class(c) for c in sorted(self.chars, key=_char_order))
        return f"[{inner}]"


_DIGIT_CLASS = _Class(frozenset({"0-9"}))


def _char_order(char: str) -> tuple[int, str]:
    # Word-ish punctuation first, whitespace last: [A-Za-z0-9_.-] reads better than [ -.0-9_].
    return (2 if char.isspace() else 1 if char != "_" else 0, char)


def _escape(char: str) -> str:
    if char == "\t":
        return r"\t"
    if char in ".^$*+?{}[]\\|()":
        return "\\" + char
    return char


def _escape_in_class(char: str) -> str:
    if char == "\t":
        return r"\t"
    if char in "\\]^-[":
        return "\\" + char
    return char


def _escape_text(text: str) -> str:
    return "".join(_escape(c) for c in text)


def _natural(chars: set[str] | frozenset[str]) -> _Class:
    """The narrowest readable class covering ``chars``."""
    digits = bool(chars & _DIGITS)
    lower = chars & _LOWER
    upper = chars & _UPPER
    ranges: set[str] = set()
    if digits:
        ranges.add("0-9")
    hexlike = digits and lower <= _HEX_LOWER and upper <= _HEX_UPPER
    if lower:
        ranges.add("a-f" if hexlike else "a-z")
    if upper:
        ranges.add("A-F" if hexlike else "A-Z")
    others = {c for c in chars if c not in _ALNUM}
    if any(c.isspace() and c != " " for c in others):
        others = {c for c in others if not c.isspace()} | {"\t", " "}
    return _Class(frozenset(ranges), frozenset(others))


def _ladder(chars: set[str], natural: _Class, context: frozenset[str]) -> list[_Class]:
    """Classes covering ``chars``, most general first: the word class (without the separators
    around the field, which never reach it), then without ``_``, without digits, and last the
    letter case seen. Digits stay ``\\d``; hex stays hex, in both cases first."""
    letters = chars & (_LOWER | _UPPER)
    if natural.ranges & {"a-f", "A-F"}:
        both = _Class(natural.ranges | {"a-f", "A-F"}, natural.chars)
        return _unique_classes([both, natural])
    if not letters or natural.negated:
        return [natural]
    extra = natural.chars - {"_"}
    digits = frozenset({"0-9"})
    steps = [
        _Class(frozenset({"A-Z", "a-z"}) | digits, extra | ({"_"} - context)),
        _Class(frozenset({"A-Z", "a-z"}) | digits, extra | (natural.chars & {"_"})),
    ]
    if not chars & _DIGITS:
        steps.append(_Class(frozenset({"A-Z", "a-z"}), natural.chars))
    steps.append(natural)
    return _unique_classes(steps)


def _unique_classes(classes: list[_Class]) -> list[_Class]:
    return list(dict.fromkeys(classes))


def _is_punct(char: str) -> bool:
    return char not in _ALNUM and not char.isspace()


def _rich(chars: set[str], context: frozenset[str]) -> _Class | None:
    """``[^<separators>\\s]`` for a field holding two or more kinds of punctuation (not as
    separators between words): free text, where listing the punctuation seen would over-fit."""
    punct = {c for c in chars if _is_punct(c) and c != "_"}
    if len(punct) < 2:
        return None
    has_space = any(c.isspace() for c in chars)
    return _Class(
        chars=frozenset(c for c in context if c not in chars), negated=True, space=has_space
    )


def _hex_union(classes: list[_Class]) -> _Class | None:
    """One hex class for sibling fields that are all digits or hex (MAC addresses, UUIDs)."""
    ranges: set[str] = set()
    for cls in classes:
        if cls.negated or cls.chars or not cls.ranges <= {"0-9", "a-f", "A-F"}:
            return None
        ranges |= cls.ranges
    if not ranges & {"a-f", "A-F"}:
        return None
    return _Class(frozenset(ranges | {"0-9"}))


# --------------------------------------------------------------------------------------------
# Pattern trees


def _quantifier(lo: int, hi: int | None) -> str:
    if (lo, hi) == (1, 1):
        return ""
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
    return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"


def _group(text: str) -> str:
    return f"(?:{text})"


# Generality, in bits, is a sum over the parts of a pattern. A part weighs how many strings it
# accepts at the lengths the positives have there (log2 |class| per character: narrowing a class
# or listing values costs that much) plus the log of the prior mass of the lengths it allows, on a
# geometric prior whose mean is the mean length seen there (fixing a width costs a few bits,
# capping it far above what was seen almost nothing, raising its minimum a lot). Summing parts
# makes every extra part of an alignment cost something, and a part inside an optional group cost
# as much to narrow as anywhere else.


def _log2(value: float) -> float:
    return math.log2(value) if value > 0 else -1000.0


def _ratio(values: list[str]) -> float:
    mean = sum(map(len, values)) / len(values)
    return max(mean, 0.5) / (max(mean, 0.5) + 1)


def _length_mass(values: list[str], lo: int, hi: int | None) -> float:
    """log2 of the prior mass of lengths lo..hi: q**lo - q**(hi+1)."""
    q = _ratio(values)
    return _log2(q**lo - (0.0 if hi is None else q ** (hi + 1)))


def _lengths_mass(values: list[str], lengths: Iterator[int] | list[int]) -> float:
    q = _ratio(values)
    return _log2(sum((1 - q) * q**k for k in set(lengths)))


def _mean(numbers: list[float]) -> float:
    return sum(numbers) / len(numbers)


class _Node:
    """A piece of pattern. ``bits`` estimates how much it accepts: more bits, more general."""

    def render(self) -> str:
        raise NotImplementedError

    def own_bits(self) -> float:
        """This node's weight, without its children's."""
        raise NotImplementedError

    def bits(self) -> float:
        """The weight of the whole subtree (the parts currently chosen)."""
        return self.own_bits() + sum(child.bits() for child in self.children())

    def atomic(self) -> bool:
        """Whether a quantifier may follow the rendering without a group."""
        return False

    def children(self) -> Iterator[_Node]:
        return iter(())

    def is_alternation(self) -> bool:
        """Whether the rendering has a top-level ``|`` (then it needs a group inside others)."""
        return False


def _part(node: _Node) -> str:
    """``node`` rendered for use inside a sequence."""
    text = node.render()
    return _group(text) if node.is_alternation() else text


@dataclass(eq=False)
class _Lit(_Node):
    text: str

    def render(self) -> str:
        return _escape_text(self.text)

    def own_bits(self) -> float:
        return 0.0

    def atomic(self) -> bool:
        return len(self.text) == 1


@dataclass(eq=False)
class _Run(_Node):
    """``cls{lo,hi}``."""

    cls: _Class
    lo: int
    hi: int | None
    values: list[str]
    length_changed: bool = False  # narrower than the default quantifier

    def render(self) -> str:
        return self.cls.render() + _quantifier(self.lo, self.hi)

    def own_bits(self) -> float:
        per_char = math.log2(self.cls.size)
        return _mean([len(v) * per_char for v in self.values]) + _length_mass(
            self.values, self.lo, self.hi
        )


@dataclass(eq=False)
class _HeadTail(_Node):
    """``head tail*``: a first character narrower than the rest (``[a-z][A-Za-z]*``)."""

    head: _Class
    tail: _Class
    values: list[str]

    def render(self) -> str:
        return self.head.render() + self.tail.render() + "*"

    def own_bits(self) -> float:
        head, tail = math.log2(self.head.size), math.log2(self.tail.size)
        return _mean([head + (len(v) - 1) * tail for v in self.values]) + _length_mass(
            self.values, 1, None
        )


@dataclass(eq=False)
class _LengthSet(_Node):
    """``(?:cls{3}|cls{6})``: only the widths seen, when a width between them is rejected."""

    cls: _Class
    lengths: list[int]
    values: list[str]
    length_changed: bool = True

    def render(self) -> str:
        one = self.cls.render()
        return _group("|".join(one + _quantifier(n, n) for n in self.lengths))

    def atomic(self) -> bool:
        return True

    def own_bits(self) -> float:
        per_char = math.log2(self.cls.size)
        return _mean([len(v) * per_char for v in self.values]) + _lengths_mass(
            self.values, self.lengths
        )


@dataclass(eq=False)
class _Choice(_Node):
    """The values seen, as an alternation: the last resort for a field."""

    values: list[str]

    def render(self) -> str:
        distinct = sorted(set(self.values), key=lambda v: (-len(v), v))
        if len(distinct) == 1:
            return _escape_text(distinct[0])
        return _group("|".join(_escape_text(v) for v in distinct))

    def atomic(self) -> bool:
        distinct = set(self.values)
        return len(distinct) > 1 or len(next(iter(distinct))) == 1

    def own_bits(self) -> float:
        # Counted once: the search weighs alternations of hundreds of values many times.
        per_length = Counter(len(d) for d in set(self.values))
        same_length = [per_length[len(v)] for v in self.values]
        return _mean([math.log2(n) for n in same_length]) + _lengths_mass(
            self.values, [len(v) for v in self.values]
        )


@dataclass(eq=False)
class _Seq(_Node):
    items: list[_Node]
    cost: float = 0.0  # bits a structure costs beyond its parts (a prior against it)

    def render(self) -> str:
        rendered = [item for item in self.items if item.render()]
        if len(rendered) == 1:
            return rendered[0].render()
        return _fold_repeats([_part(item) for item in rendered])

    def is_alternation(self) -> bool:
        rendered = [item for item in self.items if item.render()]
        return len(rendered) == 1 and rendered[0].is_alternation()

    def own_bits(self) -> float:
        return -self.cost

    def atomic(self) -> bool:
        rendered = [item for item in self.items if item.render()]
        return len(rendered) == 1 and rendered[0].atomic()

    def children(self) -> Iterator[_Node]:
        return iter(self.items)


def _fold_repeats(parts: list[str]) -> str:
    """``A s A s A`` as ``(?:A s){2}A`` where that is shorter (MAC addresses, IPv4)."""
    out: list[str] = []
    i = 0
    while i < len(parts):
        unit = parts[i : i + 2]
        count = 0
        while len(unit) == 2 and parts[i + 2 * count : i + 2 * count + 2] == unit:
            count += 1
        if count >= 2 and i + 2 * count < len(parts) and parts[i + 2 * count] == unit[0]:
            folded = f"(?:{unit[0]}{unit[1]}){{{count}}}{unit[0]}"
            if len(folded) < len("".join(unit) * count + unit[0]):
                out.append(folded)
                i += 2 * count + 1
                continue
        out.append(parts[i])
        i += 1
    return "".join(out)


@dataclass(eq=False)
class _Alt(_Node):
    branches: list[_Node]
    weights: list[int]  # how many positives each branch covers

    def render(self) -> str:
        return "|".join(branch.render() for branch in self.branches)

    def is_alternation(self) -> bool:
        return len(self.branches) > 1

    def own_bits(self) -> float:
        return 0.0

    def bits(self) -> float:
        total = sum(self.weights)
        weighted = sum(w * b.bits() for w, b in zip(self.weights, self.branches, strict=True))
        return weighted / total

    def children(self) -> Iterator[_Node]:
        return iter(self.branches)


@dataclass(eq=False)
class _Opt(_Node):
    item: _Node
    share: float  # the fraction of positives that have it

    def render(self) -> str:
        text = self.item.render()
        return (text if self.item.atomic() else _group(text)) + "?"

    def own_bits(self) -> float:
        # Zero or one more, on the halving prior _Rep uses: "x(?: x)?" weighs as "x(?: x){0,1}".
        return math.log2(0.75)

    def bits(self) -> float:
        return self.own_bits() + self.share * self.item.bits()

    def children(self) -> Iterator[_Node]:
        return iter((self.item,))


@dataclass(eq=False)
class _Rep(_Node):
    """``(?:sep item){lo,hi}``: a separator-led unit repeated as often as the positives show."""

    sep: _Class
    item: _Node
    lo: int
    hi: int | None
    counts: list[int]
    length_changed: bool = False

    def render(self) -> str:
        return _group(self.sep.render() + _part(self.item)) + _quantifier(self.lo, self.hi)

    def own_bits(self) -> float:
        # How many times, on a halving prior (mass 2 for "*").
        top = 0.0 if self.hi is None else 0.5 ** (self.hi + 1)
        return math.log2(self.sep.size) + _log2(2 * (0.5**self.lo - top))

    def bits(self) -> float:
        return self.own_bits() + _mean([float(c) for c in self.counts]) * self.item.bits()

    def children(self) -> Iterator[_Node]:
        return iter((self.item,))


@dataclass(eq=False)
class _Leaf(_Node):
    """A field: the values the positives hold there, and the ways to write it (first = default)."""

    values: list[str]
    context: frozenset[str]
    split: bool = True  # may be cut further (runs, repetitions)
    natural: _Class | None = None
    text: bool = False  # a value (after "="): any characters but the separators, by default
    units: frozenset[str] = frozenset()  # letters after a number (45m, 9am): a closed set
    hyphens: bool = False  # a part of a dotted name: its words may be joined by "-"
    choice: int = 0
    _options: list[_Node] | None = field(default=None, repr=False)

    @property
    def options(self) -> list[_Node]:
        if self._options is None:
            self._options = _leaf_options(self)
        return self._options

    @property
    def chosen(self) -> _Node:
        return self.options[self.choice]

    def render(self) -> str:
        return self.chosen.render()

    def own_bits(self) -> float:
        return 0.0

    def atomic(self) -> bool:
        return self.chosen.atomic()

    def is_alternation(self) -> bool:
        return self.chosen.is_alternation()

    def children(self) -> Iterator[_Node]:
        return iter((self.chosen,))


def _active_leaves(node: _Node) -> Iterator[_Leaf]:
    if isinstance(node, _Leaf):
        yield node
    for child in node.children():
        yield from _active_leaves(child)


# --------------------------------------------------------------------------------------------
# Building the structure


def _char_kind(char: str) -> str:
    if char in _DIGITS:
        return "d"
    if char in _LOWER:
        return "l"
    if char in _UPPER:
        return "u"
    if char.isspace():
        return "s"
    return char


def _runs(text: str, merge_letters: bool = False) -> list[tuple[str, str]]:
    """(kind, text) runs: digits, lowercase, uppercase (or letters), whitespace, one punctuation."""
    runs: list[tuple[str, str]] = []
    for char in text:
        kind = _char_kind(char)
        if merge_letters and kind in ("l", "u"):
            kind = "A"
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1] + char)
        else:
            runs.append((kind, char))
    return runs


def _boundary(text: str, index: int) -> bool:
    """Whether ``index`` falls between two runs of ``text`` (or at an end)."""
    if index <= 0 or index >= len(text):
        return True
    return _char_kind(text[index - 1]) != _char_kind(text[index])


def _common_prefix(values: list[str]) -> str:
    """The text all values start with, kept literally: ``0x``, ``#``, ``rgb`` (ending at a run
    boundary, never past a separator after a field: in ``978-3-16`` the ``978`` is a field)."""
    prefix = values[0]
    for value in values[1:]:
        while not value.startswith(prefix):
            prefix = prefix[:-1]
    for index in range(1, len(prefix)):
        if _is_punct(prefix[index]) and prefix[index - 1].isalnum():
            prefix = prefix[:index]
            break
    while prefix and not all(_boundary(v, len(prefix)) for v in values):
        prefix = prefix[:-1]
    return prefix if any(not c.isdigit() for c in prefix) else ""


def _common_suffix(values: list[str]) -> str:
    reversed_prefix = _common_prefix([v[::-1] for v in values])
    return reversed_prefix[::-1]


def _build(values: list[str], context: frozenset[str], split: bool = True) -> _Node:
    """The default structure for ``values`` (what the positives hold at one place)."""
    if all(v == "" for v in values):
        return _Lit("")
    distinct = set(values)
    # Text every positive shares is structure (digits are data); one positive's word is not.
    shared = len(values) > 1 or not any(c.isalnum() for c in values[0])
    if len(distinct) == 1 and shared and not any(c.isdigit() for c in values[0]):
        return _Lit(values[0])
    if not split:
        return _Leaf(values, context, split=False)
    prefix = "" if _hexlike(values) else _common_prefix(values)
    if prefix:
        rest = [v[len(prefix) :] for v in values]
        return _Seq([_Lit(prefix), _build(rest, context)])
    suffix = "" if _hexlike(values) else _common_suffix(values)
    if suffix:
        rest = [v[: len(v) - len(suffix)] for v in values]
        return _Seq([_build(rest, context), _Lit(suffix)])
    core = _core_split(values, context)
    if core is not None:
        return core
    edge = _optional_edges(values, context)
    if edge is not None:
        return edge
    return _Leaf(values, context)


def _hexlike(values: list[str]) -> bool:
    """Digits and hex letters only: letters are data, not structure (the "e" of two UUIDs)."""
    alnum = {c for v in values for c in v if c.isalnum()}
    letters = alnum - _DIGITS
    return bool(alnum & _DIGITS) and bool(letters) and letters <= _HEX_LOWER | _HEX_UPPER


def _tokens(value: str) -> list[tuple[str, str]]:
    """Runs keyed for the core split: punctuation by character, letter runs by their text."""
    keyed: list[tuple[str, str]] = []
    for kind, text in _runs(value):
        if kind in ("l", "u"):
            keyed.append(("w:" + text, text))
        elif kind in ("d",):
            keyed.append(("d", text))
        else:
            keyed.append(("p:" + kind, text))
    return keyed


def _core_split(values: list[str], context: frozenset[str]) -> _Node | None:
    """Split on the separators (and constant letter runs) every value has equally often."""
    tokenised = [_tokens(v) for v in values]
    counts = [
        {key: sum(1 for k, _ in tokens if k == key) for key, _ in tokens} for tokens in tokenised
    ]
    keys = set(counts[0])
    hexlike = _hexlike(values)
    core = {
        key
        for key in keys
        if key != "d"
        and not (hexlike and key.startswith("w:"))
        and all(c.get(key, 0) == counts[0][key] for c in counts)
    }
    if not core:
        return None
    groups: dict[tuple[str, ...], list[list[tuple[str, str]]]] = {}
    for tokens in tokenised:
        sequence = tuple(k for k, _ in tokens if k in core)
        groups.setdefault(sequence, []).append(tokens)
    if len(groups) > 1:
        return _Alt(
            [_core_group(seq, members, context) for seq, members in groups.items()],
            [len(members) for members in groups.values()],
        )
    ((sequence, members),) = groups.items()
    return _core_group(sequence, members, context)


def _core_group(
    sequence: tuple[str, ...], members: list[list[tuple[str, str]]], context: frozenset[str]
) -> _Node:
    separators = frozenset(key[2:] for key in sequence if key.startswith("p:"))
    inner = context | separators
    fields: list[list[str]] = [[] for _ in range(len(sequence) + 1)]
    seps: list[list[str]] = [[] for _ in sequence]
    for tokens in members:
        index = 0
        current = ""
        for key, text in tokens:
            if index < len(sequence) and key == sequence[index]:
                fields[index].append(current)
                seps[index].append(text)
                current = ""
                index += 1
            else:
                current += text
        fields[index].append(current)
    items: list[_Node] = []
    for index, field_values in enumerate(fields):
        last = index == len(fields) - 1
        if last and index > 0 and sequence[index - 1] == "p:=" and all(field_values):
            # What is assigned (name=alice, path=/usr/bin, url=https://...) is a value: text,
            # not a word, whatever the positives happen to show.
            items.append(_Leaf(field_values, inner, text=True))
        else:
            node = _build(field_values, inner)
            before_dot = index < len(sequence) and sequence[index] == "p:."
            if before_dot and isinstance(node, _Leaf) and _dotted_name(field_values, {"."}, inner):
                node.hyphens = True  # a host label or a file stem: "my-host.example.com"
            items.append(node)
        if index < len(seps):
            items.append(_separator(seps[index]))
    leaves = [item for item in items if isinstance(item, _Leaf)]
    if len(leaves) >= 2:
        union = _hex_union([_natural(set("".join(leaf.values))) for leaf in leaves])
        if union is not None:
            for leaf in leaves:
                leaf.natural = union
    return _Seq(items)


def _separator(runs: list[str]) -> _Node:
    if len(set(runs)) == 1:
        return _Lit(runs[0])
    # The same character repeated a varying number of times: "#", "##", "###".
    return _Leaf(runs, frozenset(), split=False)


def _optional_edges(values: list[str], context: frozenset[str]) -> _Node | None:
    """A sign or mark only some values start (or end) with, seen nowhere else (``-?\\d+``), or
    one of several that every value starts with (``[+\\-]\\d{2}``)."""
    for at_start in (True, False):
        edge = {v[0] if at_start else v[-1] for v in values if v}
        marks = {
            c
            for c in edge
            if _is_punct(c)
            and c != "_"
            and all(
                (v.count(c) == 0) or (v.count(c) == 1 and (v[0] == c if at_start else v[-1] == c))
                for v in values
            )
        }
        with_mark = [v for v in values if v and (v[0] if at_start else v[-1]) in marks]
        if not marks or (len(with_mark) == len(values) and len(marks) == 1):
            continue
        rest = [
            (v[1:] if at_start else v[:-1]) if v and (v[0] if at_start else v[-1]) in marks else v
            for v in values
        ]
        if not any(rest):
            continue
        mark = _Lit(next(iter(marks))) if len(marks) == 1 else _Run(_natural(marks), 1, 1, ["x"])
        # Every value has one of the marks ("+05:30", "-08:00"): a class, not an option.
        every = len(with_mark) == len(values)
        mark_node = mark if every else _Opt(mark, len(with_mark) / len(values))
        body = _build(rest, context)
        return _Seq([mark_node, body] if at_start else [body, mark_node])
    return None


def _flanked_separators(values: list[str], underscore: bool) -> set[str] | None:
    """Punctuation that only ever sits alone between two word characters (``.`` in versions).

    ``_`` is a word character (``\\w`` has it): it separates only when ``underscore`` is asked for,
    an option a negative can force (``foo__bar`` against snake_case), never the default.
    """
    chars = {c for v in values for c in v if not c.isalnum()}
    if "_" in chars and not underscore:
        return None
    if not chars or len(chars) > 2:
        return None
    for value in values:
        for index, char in enumerate(value):
            if char in chars and (
                index == 0
                or index == len(value) - 1
                or not value[index - 1].isalnum()
                or not value[index + 1].isalnum()
            ):
                return None
    return chars


def _dotted_name(values: list[str], seps: set[str], context: frozenset[str]) -> bool:
    """Whether ``values`` are (parts of) names of words joined by ``.`` (``mail.co.uk``,
    ``file.txt``), in whose parts ``-`` is as common as the ``.`` itself (``test-server.com``,
    ``my-notes.txt``); numbers joined by ``.`` (``3.11``) are not."""
    return (
        "." in seps
        and "-" not in seps | context
        and any(c in _LOWER or c in _UPPER for v in values for c in v)
    )


def _repetition(
    values: list[str], seps: set[str], context: frozenset[str], positional: int, shared: bool
) -> _Node:
    """``first (?:sep piece){m,}``, the first ``positional`` pieces each a field of their own
    (``shared``: the first piece and the repeated ones are one field)."""
    pattern = re.compile("[" + "".join(_escape_in_class(c) for c in sorted(seps)) + "]")
    split = [pattern.split(v) for v in values]
    heads: list[list[str]] = [[] for _ in range(positional)]
    seen_seps: list[list[str]] = [[] for _ in range(max(0, positional - 1))]
    pooled: list[str] = []
    counts: list[int] = []
    for value, pieces in zip(values, split, strict=True):
        separators = pattern.findall(value)
        for index in range(positional):
            heads[index].append(pieces[index])
        for index in range(positional - 1):
            seen_seps[index].append(separators[index])
        pooled.extend(pieces[positional:])
        counts.append(len(pieces) - positional)
    inner = context | frozenset(seps)
    items: list[_Node] = []
    if shared:
        # The pieces of snake_case are one kind of thing: one field, narrowed as one.
        unit = _Leaf(heads[0] + pooled, inner)
        items.append(unit)
    else:
        for index, head in enumerate(heads):
            items.append(_build(head, inner))
            if index < len(seen_seps):
                items.append(_separator(seen_seps[index]))
        unit = _Leaf(pooled, inner)
    if pooled:
        fewest, most = min(counts), max(counts)
        sep = _natural(seps)
        variants: list[_Node] = [_Rep(sep, unit, min(fewest, 1), None, counts)]
        for lo, hi in ((fewest, None), (min(fewest, 1), most), (fewest, most)):
            if ((lo, hi) != (min(fewest, 1), None) and most < 10) or (hi is None and lo > 1):
                variants.append(_Rep(sep, unit, lo, hi, counts, True))
        items.append(_Leaf(pooled, inner, split=False, _options=_unique(variants)))
    # Pieces are presumed one kind of thing; telling the first apart needs a negative's reason.
    return _Seq(items, cost=_DISTINCT_PIECES_BITS if positional == 1 and not shared else 0.0)


def _unique(options: list[_Node]) -> list[_Node]:
    seen: set[str] = set()
    kept: list[_Node] = []
    for option in options:
        if option.render() not in seen:
            seen.add(option.render())
            kept.append(option)
    return kept


def _run_alignment(values: list[str], context: frozenset[str], merge_letters: bool) -> list[_Node]:
    """Align values by their runs: an alternation per run structure, and a merge of them where
    the structures differ only by an optional beginning or end (``-?\\d+(?:\\.\\d+)?``)."""
    runs = [_runs(v, merge_letters) for v in values]
    groups: dict[tuple[str, ...], list[list[str]]] = {}
    for value_runs in runs:
        kinds = tuple(kind for kind, _ in value_runs)
        groups.setdefault(kinds, []).append([text for _, text in value_runs])
    if len(groups) == 1 and len(next(iter(groups))) == 1:
        return []
    options: list[_Node] = []
    ordered = sorted(groups.items(), key=lambda item: -len(item[0]))
    units = _units(runs)
    branches: list[_Node] = [
        _Seq([_cell(kinds, i, [m[i] for m in members], context, units) for i in range(len(kinds))])
        for kinds, members in ordered
    ]
    weights = [len(members) for _, members in ordered]
    options.append(branches[0] if len(branches) == 1 else _Alt(branches, weights))
    merged = _merge_alignment(runs, context, units)
    if merged is not None:
        options.insert(0, merged)
    return options


def _is_unit(kinds: Sequence[str], index: int, text: str) -> bool:
    """Whether run ``index`` is letters right after a number: a unit or a marker (``45m``,
    ``2h``, ``9am``, ``12px``), short enough not to be a word."""
    return (
        index > 0
        and kinds[index] in ("l", "u", "A")
        and kinds[index - 1] == "d"
        and len(text) <= _UNIT_CHARS
    )


def _units(runs: list[list[tuple[str, str]]]) -> frozenset[str]:
    """Every unit the positives show, wherever they show it; none if there are more than a
    system of units has (``h m s``, ``px em rem``, ``KB MB GB``): then they are words."""
    units = frozenset(
        text
        for value in runs
        for index, (_, text) in enumerate(value)
        if _is_unit([kind for kind, _ in value], index, text)
    )
    return units if len(units) <= _MAX_UNITS else frozenset()


def _cell(
    kinds: tuple[str, ...],
    index: int,
    values: list[str],
    context: frozenset[str],
    units: frozenset[str],
) -> _Node:
    """Run ``index`` of an alignment. Units are a closed set: the units seen anywhere in the
    positives (``30s`` is not a duration for someone who showed hours and minutes; ``16rem``
    is a length for someone who showed ``12px`` and ``0.75rem``)."""
    node = _build(values, context, split=False)
    if isinstance(node, _Leaf) and all(_is_unit(kinds, index, v) for v in values):
        node.units = units
    return node


def _merge_alignment(
    runs: list[list[tuple[str, str]]], context: frozenset[str], units: frozenset[str]
) -> _Node | None:
    """One sequence for run structures that are a longer one without its beginning or end."""
    master = max((tuple(kind for kind, _ in value) for value in runs), key=len)
    model = next(value for value in runs if len(value) == len(master))
    spans: list[tuple[int, int]] = []
    for value in runs:
        kinds = tuple(kind for kind, _ in value)
        where = [
            i for i in range(len(master) - len(kinds) + 1) if master[i : i + len(kinds)] == kinds
        ]
        if not where:
            return None
        # Where the shorter structure's letters and marks agree with the longer one: "45m" is
        # the end of "1h30m", "2h" its beginning.
        best = max(
            where,
            key=lambda at: sum(
                1
                for offset, (kind, text) in enumerate(value)
                if kind != "d" and text == model[at + offset][1]
            ),
        )
        spans.append((best, best + len(kinds)))
    starts = {s for s, _ in spans}
    ends = {e for _, e in spans}
    if len(set(spans)) < 2 or len(starts) > 2 or len(ends) > 2:
        return None
    start, end = max(starts), min(ends)
    if start > end:
        return None
    pooled: list[list[str]] = [[] for _ in master]
    for value, (at, _) in zip(runs, spans, strict=True):
        for offset, (_, text) in enumerate(value):
            pooled[at + offset].append(text)
    cells = [_cell(master, i, p, context, units) for i, p in enumerate(pooled)]
    items: list[_Node] = []
    if start > 0:
        items.append(_Opt(_Seq(cells[:start]), len(pooled[0]) / len(runs)))
    items.extend(cells[start:end])
    if end < len(master):
        items.append(_Opt(_Seq(cells[end:]), len(pooled[-1]) / len(runs)))
    return _Seq(items)


def _leaf_options(leaf: _Leaf) -> list[_Node]:
    """Ways to write a field, the default first; the rest are tried when negatives force it."""
    values = leaf.values
    chars = set("".join(values))
    natural = leaf.natural or _natural(chars)
    # A cell of a run alignment keeps its kind: "\\d+[a-z]+", never "\\w+\\w+" (which backtracks).
    ladder = _ladder(chars, natural, leaf.context) if leaf.split else [natural]
    lengths = sorted({len(v) for v in values})
    lo = lengths[0]
    default_lo = 0 if lo == 0 else 1
    options: list[_Node] = []
    if leaf.units:
        # The units seen anywhere, not only in this cell's values: "[hm]", "(?:rem|em|px)".
        if all(len(unit) == 1 for unit in leaf.units):
            options.append(_Run(_Class(chars=leaf.units), 1, 1, values))
        else:
            options.append(_Choice(sorted(leaf.units)))
    if leaf.text:
        space = any(c.isspace() for c in chars)
        anything = _Class(chars=leaf.context, negated=True, space=space)
        options.append(_Run(anything, default_lo, None, values))
    if leaf.hyphens and leaf.split and "-" not in chars:
        word = _Leaf(values, leaf.context | {"-"})
        joined = _Rep(_Class(chars=frozenset("-")), word, 0, None, [0] * len(values))
        options.append(_Seq([word, joined]))
    seps = _flanked_separators(values, underscore=False) if leaf.split else None
    if seps is not None and _dotted_name(values, seps, leaf.context):
        # Host, package and file names: "-" joins the words of their parts (test-server.com).
        hyphenated = seps | {"-"}
        options.append(_repetition(values, hyphenated, leaf.context, 1, shared=True))
        options.append(_repetition(values, hyphenated, leaf.context, 1, shared=False))
    if seps is not None:
        options.append(_repetition(values, seps, leaf.context, 1, shared=True))
        options.append(_repetition(values, seps, leaf.context, 1, shared=False))
    else:
        # Separators are structure, never content: no "[0-9-]{5}" for ZIP codes.
        rich = _rich(chars, leaf.context)
        if rich is not None:
            options.append(_Run(rich, default_lo, None, values))
        options.extend(_Run(cls, default_lo, None, values) for cls in ladder)
        tail_chars = {c for v in values for c in v[1:]}
        if all(values) and tail_chars:
            # Only when the positives show a first character unlike the rest ([a-z][A-Za-z]*).
            head = _natural({v[0] for v in values})
            tail_natural = _natural(tail_chars)
            # Letters and digits tell; a "_" inside a field says nothing about its first character.
            if head.ranges != tail_natural.ranges:
                tails = [*_ladder(tail_chars, tail_natural, leaf.context), tail_natural]
                for tail in _unique_classes(tails):
                    options.append(_HeadTail(head, tail, values))
        options.extend(_length_options(ladder[0], values, default_lo))
        if natural != ladder[0]:
            options.extend(_length_options(natural, values, default_lo))
    if leaf.split and seps is not None:
        pieces = [
            len(re.findall("[" + "".join(map(_escape_in_class, seps)) + "]", v)) for v in values
        ]
        fewest = min(pieces)
        if fewest >= 2:
            options.append(_repetition(values, seps, leaf.context, fewest, shared=False))
    underscored = _flanked_separators(values, underscore=True) if leaf.split else None
    if underscored is not None and underscored != seps:
        options.append(_repetition(values, underscored, leaf.context, 1, shared=True))
        options.append(_repetition(values, underscored, leaf.context, 1, shared=False))
    if leaf.split and len(values) > 1 and not _hexlike(values):
        for merge_letters in (True, False):
            options.extend(_run_alignment(values, leaf.context, merge_letters))
    options.append(_Choice(values))
    return options


def _length_options(cls: _Class, values: list[str], default_lo: int) -> list[_Node]:
    """Widths narrower than ``+``: a generous cap, a minimum, the widths seen, only those widths.

    A cap is only inferred with a margin, at twice the longest value seen or more (``#{1,6}`` when
    ``#######`` is rejected): a cap at the longest value seen would read the examples' lengths as
    a rule. The widths seen themselves remain an option, at their higher cost.
    """
    lengths = sorted({len(v) for v in values})
    lo, hi = lengths[0], lengths[-1]
    bounds = {(lo, None), (lo, hi)}
    for width in range(max(2 * hi, hi + 1), 2 * hi + 9):
        bounds.add((default_lo, width))
    bounds.discard((default_lo, None))
    options: list[_Node] = [
        _Run(cls, low, high, values, length_changed=True)
        for low, high in sorted(bounds, key=lambda b: (b[0], -(b[1] or 10**9)))
    ]
    if 1 < len(lengths) <= 4:
        options.append(_LengthSet(cls, lengths, values))
    return options


# --------------------------------------------------------------------------------------------
# Specialising against the negatives


@dataclass
class _Search:
    root: _Node
    negatives: list[str]
    deadline: float
    evaluations: int = 0
    _cache: dict[str, re.Pattern[str] | None] = field(default_factory=dict)
    _matched: dict[str, frozenset[str]] = field(default_factory=dict)

    def compiled(self, pattern: str) -> re.Pattern[str] | None:
        if pattern not in self._cache:
            try:
                self._cache[pattern] = re.compile(pattern)
            except re.error:
                self._cache[pattern] = None
        return self._cache[pattern]

    def accepted(self) -> int:
        return len(self.accepted_set())

    def accepted_set(self) -> frozenset[str]:
        """The negatives the tree's current pattern matches (all of them if it does not compile)."""
        pattern = _render_root(self.root)
        if pattern not in self._matched:
            self.evaluations += 1
            compiled = self.compiled(pattern)
            self._matched[pattern] = (
                frozenset(self.negatives)
                if compiled is None
                else frozenset(n for n in self.negatives if compiled.fullmatch(n) is not None)
            )
        return self._matched[pattern]


def _render_root(root: _Node) -> str:
    return _part(root)


def _moves(root: _Node) -> Iterator[list[tuple[_Leaf, int]]]:
    """Single changes of one field, and changes of a field together with one of its new parts."""
    for leaf in list({id(leaf): leaf for leaf in _active_leaves(root)}.values()):
        for index, option in enumerate(leaf.options):
            if index == leaf.choice:
                continue
            yield [(leaf, index)]
            for inner in _active_leaves(option):
                if inner is leaf:
                    continue
                for inner_index in range(len(inner.options)):
                    if inner_index != inner.choice:
                        yield [(leaf, index), (inner, inner_index)]


def _specialise(search: _Search, positives: list[str]) -> bool:
    """Greedily narrow the tree until no negative matches; False if that cannot be done.

    Each step takes the change with the least loss of generality per negative it rejects. A
    negative holding a kind of character no positive has (uppercase in snake_case, a space) is
    explained by characters when some change does that, not by a length limit that happens to
    reject it too. (A beam search was tried: it finds narrowings the generality measure rates
    cheaper but a reader would not, such as a list of widths.)
    """
    kinds = {_char_kind(c) for p in positives for c in p}
    foreign = {n for n in search.negatives if any(_char_kind(c) not in kinds for c in n)}
    root = search.root
    while search.accepted():
        before = root.bits()
        size = len(_render_root(root))
        was = search.accepted_set()
        best: tuple[bool, float, int, list[tuple[_Leaf, int]]] | None = None
        first_step: dict[tuple[int, int], int] = {}
        for move in _moves(root):
            if search.evaluations > _MAX_EVALUATIONS or time.monotonic() > search.deadline:
                return False
            undo = [(leaf, leaf.choice) for leaf, _ in move]
            for leaf, index in move:
                leaf.choice = index
            now = search.accepted_set()
            step = (id(move[0][0]), move[0][1])
            if len(move) == 1:
                first_step[step] = len(now)
            # A second change only counts if the first alone does not do as well.
            needed = len(move) == 1 or len(now) < first_step.get(step, len(was) + 1)
            if len(now) < len(was) and needed:
                grown = len(_render_root(root)) - size
                loss = max(0.0, before - root.bits()) + _BITS_PER_CHAR * max(0, grown)
                by_length = any(
                    _changes_width(leaf.options[old], leaf.options[new])
                    for (leaf, old), (_, new) in zip(undo, move, strict=True)
                )
                explains = not by_length and bool((was - now) & foreign)
                key = (not explains, loss / (len(was) - len(now)), len(now), move)
                if best is None or key[:3] < best[:3]:
                    best = key
            for leaf, index in reversed(undo):
                leaf.choice = index
        if best is None:
            return False
        for leaf, index in best[3]:
            leaf.choice = index
    return True


def _changes_width(old: _Node, new: _Node) -> bool:
    """Whether ``new`` narrows a field by its width (``\\w{2}`` to ``[A-Z]{2}`` does not)."""

    def width(node: _Node) -> tuple[int | None, ...] | None:
        if isinstance(node, _Run):
            return (node.lo, node.hi)
        if isinstance(node, _LengthSet):
            return tuple(node.lengths)
        return None

    narrowed = getattr(new, "length_changed", False)
    return bool(narrowed) and width(new) is not None and width(new) != width(old)


def _width_evidence(root: _Node) -> list[_Leaf]:
    """Fields whose width the positives establish, set to that width.

    A format whose every field has one width in every positive, two or more of them numbers
    (dates, card numbers, MAC addresses, UUIDs), keeps all its widths. Otherwise a field keeps a
    width of two or more that three or more positives share (the minutes of ``9:30 AM``, country
    codes); below that, one width is as likely a coincidence as a rule (``east``, ``west``).
    """
    leaves = list({id(leaf): leaf for leaf in _active_leaves(root)}.values())
    if not leaves:
        return []
    fixed: list[tuple[_Leaf, int]] = []
    for leaf in leaves:
        chosen = leaf.chosen
        widths = {len(v) for v in leaf.values}
        index = _width_option(leaf, min(widths)) if len(widths) == 1 else None
        if isinstance(chosen, _Run) and not chosen.length_changed and index is not None:
            fixed.append((leaf, index))
    every = len(fixed) == len(leaves) and not any(isinstance(n, _Rep) for n in _walk(root))
    numbers = sum(1 for leaf in leaves if _numeric(leaf.values))
    if not (every and numbers >= 2):
        repeated = {
            id(leaf) for n in _walk(root) if isinstance(n, _Rep) for leaf in _active_leaves(n)
        }
        fixed = [
            (leaf, index)
            for leaf, index in fixed
            if id(leaf) not in repeated and len(leaf.values) >= 3 and len(leaf.values[0]) >= 2
        ]
    for leaf, index in fixed:
        leaf.choice = index
    return [leaf for leaf, _ in fixed]


def _bound_small_numbers(root: _Node) -> None:
    """Numbers of one, two or three digits, bounded where the format shows the bound.

    Numbers joined by one separator (the octets of ``192.168.1.1``, the day and month of
    ``1/5/2024``) are pooled. Where their widths vary (no zero padding) and never exceed three,
    they get ``\\d{1,n}``, ``n`` the widest seen, when either a number beside them has a width
    the positives established (the minutes of ``9:30``, the year of ``1/5/2024``: a format that
    pads one number bounds the others) or three or more of them go up to three digits (octets,
    bytes). Otherwise numbers stay ``\\d+``: ``10.20.30`` is as good a version as ``1.2.3``,
    and ``100h`` as good a duration as ``10h``.
    """
    for seq in (node for node in _walk(root) if isinstance(node, _Seq)):
        for chain in _number_chains(seq.items):
            fixed = [leaf for leaf in chain if _fixed_width(leaf.chosen)]
            free = [leaf for leaf in chain if leaf not in fixed]
            widths = {len(v) for leaf in free for v in leaf.values}
            if len(widths) < 2 or max(widths) > 3:
                continue
            if not fixed and (max(widths) < 3 or len(chain) < 3):
                continue
            for leaf in free:
                # Not marked as narrowed: a bound the positives show forces no other width.
                leaf.options.append(_Run(_DIGIT_CLASS, 1, max(widths), leaf.values))
                leaf.choice = len(leaf.options) - 1


def _number_chains(items: list[_Node]) -> list[list[_Leaf]]:
    """Number fields of a sequence joined by one and the same literal separator, left to right:
    ``192.168.0.1:8080`` has the chains of the four octets and of the port; the separator may
    take several literals (``, `` in ``rgb(1, 2, 3)``)."""
    chains: list[tuple[str, list[_Leaf]]] = []
    last = -1  # index of the last number field seen
    for index, item in enumerate(items):
        if not isinstance(item, _Leaf) or not _number_field(item):
            continue
        between = items[last + 1 : index] if last >= 0 else []
        joint = "".join(n.text for n in between if isinstance(n, _Lit))
        literal = bool(between) and all(isinstance(n, _Lit) for n in between) and bool(joint)
        if chains and literal and chains[-1][0] in ("", joint):
            chains[-1] = (joint, [*chains[-1][1], item])
        else:
            chains.append(("", [item]))
        last = index
    return [chain for _, chain in chains]


def _number_field(leaf: _Leaf) -> bool:
    """A field of digits only, written ``\\d+`` or with a fixed width."""
    if not all(v.isascii() and v.isdigit() for v in leaf.values):
        return False
    chosen = leaf.chosen
    return (
        isinstance(chosen, _Run)
        and chosen.cls == _DIGIT_CLASS
        and ((chosen.lo, chosen.hi) == (1, None) or _fixed_width(chosen))
    )


def _fixed_width(node: _Node) -> bool:
    """``\\d{n}``, n >= 2: a width the positives established."""
    return (
        isinstance(node, _Run) and node.cls == _DIGIT_CLASS and node.lo == node.hi and node.lo >= 2
    )


def _numeric(values: list[str]) -> bool:
    chars = set("".join(values))
    return bool(chars) and (chars <= _DIGITS or _hexlike(values))


def _forced_widths(root: _Node, evidence: list[_Leaf]) -> None:
    """Keep the widths the positives established, and once a negative forced a width, every width
    that never varies (``\\d{4}-\\d{2}-\\d{2}``)."""
    leaves = list(_active_leaves(root))
    if any(getattr(leaf.chosen, "length_changed", False) for leaf in leaves):
        evidence = evidence + leaves
    for leaf in evidence:
        chosen = leaf.chosen
        widths = {len(v) for v in leaf.values}
        if isinstance(chosen, _Run) and len(widths) == 1 and len(leaf.values) > 1:
            index = _width_option(leaf, widths.pop())
            if index is not None:
                leaf.choice = index


def _width_option(leaf: _Leaf, width: int) -> int | None:
    current = leaf.chosen
    for index, option in enumerate(leaf.options):
        if (
            isinstance(option, _Run)
            and isinstance(current, _Run)
            and option.cls == current.cls
            and option.lo == option.hi == width
        ):
            return index
    return None


def _walk(node: _Node) -> Iterator[_Node]:
    yield node
    for child in node.children():
        yield from _walk(child)


# --------------------------------------------------------------------------------------------
# Entry point


def check_bounds(positives: Sequence[str], negatives: Sequence[str]) -> None:
    """Raise :class:`SynthesisError` if the examples exceed the bounds (cheap: sizes only)."""
    count = len(positives) + len(negatives)
    if count > MAX_EXAMPLES:
        raise SynthesisError(f"too many examples: {count} (at most {MAX_EXAMPLES} in all)")
    for example in (*positives, *negatives):
        if not isinstance(example, str):
            raise SynthesisError(f"an example is not a string: {example!r}")
        if len(example) > MAX_EXAMPLE_CHARS:
            raise SynthesisError(
                f"example too long: {len(example)} characters (at most {MAX_EXAMPLE_CHARS}): "
                f"{example[:40]!r}..."
            )


def _check_input(positives: Sequence[str], negatives: Sequence[str]) -> tuple[list[str], list[str]]:
    check_bounds(positives, negatives)
    pos = list(dict.fromkeys(positives))
    neg = list(dict.fromkeys(negatives))
    if not pos:
        raise SynthesisError("no positive example: add at least one 'match:' line")
    rejected = set(neg)
    both = [p for p in pos if p in rejected]
    if both:
        raise SynthesisError(
            f"no pattern can match and reject the same string: {_listing(both)} "
            "is both a 'match:' and a 'reject:' example"
        )
    return pos, neg


def synthesize(positives: Sequence[str], negatives: Sequence[str] = ()) -> str:
    """A Python ``re`` pattern for ``re.fullmatch`` matching every positive and no negative.

    As general as the negatives allow (see the module docstring). Raises :class:`SynthesisError`
    when no pattern can exist (a string is both positive and negative), when there is no positive,
    or when the input exceeds :data:`MAX_EXAMPLES` examples or :data:`MAX_EXAMPLE_CHARS`
    characters per example.
    """
    pos, neg = _check_input(positives, negatives)
    deadline = time.monotonic() + _SEARCH_SECONDS
    implied = _lowercase_forms(pos, neg)
    for rejected in [neg + implied, neg] if implied else [neg]:
        pattern = _search(pos, rejected, deadline)
        if pattern is not None and verify(pattern, pos, rejected)[0]:
            return pattern
    if sum(map(len, pos)) <= _MAX_GREX_CHARS:
        for pattern in _grex_candidates(pos):
            if verify(pattern, pos, neg)[0]:
                return pattern
    return _group("|".join(_escape_text(p) for p in sorted(pos, key=lambda p: (-len(p), p))))


def _search(positives: list[str], negatives: list[str], deadline: float) -> str | None:
    """The structure of the positives, generalised, then narrowed until no negative matches."""
    root = _build(positives, frozenset())
    evidence = _width_evidence(root)
    _bound_small_numbers(root)
    search = _Search(root, negatives, deadline)
    fields = len({id(leaf) for leaf in _active_leaves(root)})
    if fields <= _MAX_FIELDS and _specialise(search, positives):
        _forced_widths(root, evidence)
        return _render_root(root)
    return None


def _lowercase_forms(positives: list[str], negatives: list[str]) -> list[str]:
    """Implied negatives when no example has a lowercase letter: each positive with one of its
    words in lowercase (``9:30 am`` for ``9:30 AM``; ``aa:BB`` and ``AA:bb`` for ``AA:BB``, so
    that every field in capitals keeps them, not just one).

    Capitals throughout (``9:30 AM``, ``EUR``, ``MAX_SIZE``) are a convention someone chose, and
    a user who shows only capitals expects ``9:30 am`` to be rejected; the search then narrows
    case exactly as it does for a lowercase negative given explicitly. Nothing is implied when a
    negative already has lowercase letters (the user has said what case means), when examples
    are lowercase (it is how examples are typed, and says nothing) or mix cases, or for hex
    digits, whose letters are data in either case (``[0-9a-fA-F]``). If no pattern can reject
    these forms, the search runs again without them.
    """
    examples = [*positives, *negatives]
    if any(c in _LOWER for e in examples for c in e) or _hexlike(positives):
        return []
    taken = set(examples)
    forms: dict[str, None] = {}
    for positive in positives:
        for word in re.finditer("[A-Z]+", positive):
            start, end = word.span()
            form = positive[:start] + word.group().lower() + positive[end:]
            if form not in taken:
                forms[form] = None
            if len(forms) >= _MAX_IMPLIED:
                return list(forms)
    return list(forms)


def _grex_candidates(positives: list[str]) -> Iterator[str]:
    """grex's patterns, most general conversion first (anchors dropped: ours are for fullmatch)."""
    try:
        from grex import RegExpBuilder
    except ImportError:  # pragma: no cover - grex is a dependency; degrade, don't fail
        return
    conversions: tuple[tuple[str, ...], ...] = (
        ("words", "repetitions"),
        ("digits", "repetitions"),
        ("words",),
        ("digits",),
        ("repetitions",),
        (),
    )
    for conversion in conversions:
        builder = RegExpBuilder.from_test_cases(positives)
        for name in conversion:
            builder = getattr(builder, f"with_conversion_of_{name}")()
        try:
            pattern = builder.build()
        except ValueError:
            continue
        yield grex_to_python(pattern)


def grex_to_python(pattern: str) -> str:
    """A grex pattern for ``re.fullmatch``: without its ``^``/``$`` anchors."""
    if pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern[1:-1]
    return pattern
