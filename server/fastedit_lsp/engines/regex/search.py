"""Regex synthesis: specialising against the negatives.

The greedy search that narrows a pattern tree, one change of a field at a time, until no negative
matches; the widths the positives establish, bounds for small numbers, and the widths kept once a
negative forced one. Part of :mod:`fastedit_lsp.engines.regex.synth`. Pure: stdlib only.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from .build import _active_leaves, _char_kind, _hexlike, _Leaf
from .classes import _DIGIT_CLASS, _DIGITS
from .tree import _LengthSet, _Lit, _Node, _part, _Rep, _Run, _Seq

#: Patterns tried per synthesis before giving up on generalising (then: grex, or the examples).
_MAX_EVALUATIONS = 3_000
#: Cost of one more pattern character, in bits of generality: a literal list hidden in one branch
#: of an alternation loses little generality but is what over-fitting looks like.
_BITS_PER_CHAR = 0.1


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
            if search.evaluations > _MAX_EVALUATIONS or time.thread_time() > search.deadline:
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
