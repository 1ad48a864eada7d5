"""Regex synthesis: pattern trees.

The nodes a pattern is made of (literals, runs of a class, alternations, optional and repeated
groups, sequences), each rendering itself and weighing its generality in bits (see below). The
field node, ``_Leaf``, whose ways to write it are built on demand, lives in
:mod:`fastedit_lsp.engines.regex.build`. Part of :mod:`fastedit_lsp.engines.regex.synth`. Pure:
stdlib only.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from .classes import _Class, _escape_text


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
