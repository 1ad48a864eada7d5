"""Regex synthesis: building the structure of the positives.

The positives cut into runs, the text they share kept literally, separators, repetitions, optional
edges and alignments of their runs; and a field (``_Leaf``) with the ways to write it, the default
first. The field node lives here, not in :mod:`fastedit_lsp.engines.regex.tree`: its options are
built on demand by ``_leaf_options``, which builds structure in turn. Part of
:mod:`fastedit_lsp.engines.regex.synth`. Pure: stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .classes import (
    _DIGITS,
    _HEX_LOWER,
    _HEX_UPPER,
    _LOWER,
    _UPPER,
    _Class,
    _escape_in_class,
    _hex_union,
    _is_punct,
    _ladder,
    _natural,
    _rich,
    _unique_classes,
)
from .tree import _Alt, _Choice, _HeadTail, _LengthSet, _Lit, _Node, _Opt, _Rep, _Run, _Seq

#: Letters after a number up to this long are a unit or marker (``m``, ``px``, ``am``), not a word.
_UNIT_CHARS = 3
#: At most this many distinct units make a closed set (``ms s m h d w``, ``B KB MB GB TB PB``).
_MAX_UNITS = 8
#: Prior against telling a repetition's first piece from the others (``[A-Z]+(?:_\w+)*``).
_DISTINCT_PIECES_BITS = 8.0


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
