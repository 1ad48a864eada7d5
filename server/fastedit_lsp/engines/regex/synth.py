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

The steps live in the modules beside this one: :mod:`~fastedit_lsp.engines.regex.examples`
(reading the examples, checking a pattern), :mod:`~fastedit_lsp.engines.regex.classes`,
:mod:`~fastedit_lsp.engines.regex.tree` (pattern trees), :mod:`~fastedit_lsp.engines.regex.build`
(1 and 2) and :mod:`~fastedit_lsp.engines.regex.search` (3); this module holds the entry point and
the fallbacks (4), and re-exports what callers import from it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence

from .build import _active_leaves, _build, _hexlike
from .classes import _LOWER, _escape_text
from .examples import RegexExamples, _listing, name_for, parse_examples, string_literals, verify
from .search import (
    _bound_small_numbers,
    _forced_widths,
    _render_root,
    _Search,
    _specialise,
    _width_evidence,
)
from .tree import _group

__all__ = [
    "MAX_EXAMPLES",
    "MAX_EXAMPLE_CHARS",
    "RegexExamples",
    "SynthesisError",
    "check_bounds",
    "grex_to_python",
    "name_for",
    "parse_examples",
    "string_literals",
    "synthesize",
    "verify",
]

#: At most this many examples (positives and negatives together) per synthesis.
MAX_EXAMPLES = 200
#: At most this many characters per example.
MAX_EXAMPLE_CHARS = 500
#: Seconds of pattern search per synthesis, the same last resort; every input in the corpus needs
#: well under a tenth of it. Counted in this thread's CPU time, not the wall clock: on a busy
#: machine the search gets the same work done and finds the same pattern, only later. (The
#: worker's hard wall-clock limit is separate and longer.)
_SEARCH_SECONDS = 1.5
#: Fields in the positives' structure above which they share too little to generalise.
_MAX_FIELDS = 48
#: Total characters of positives above which grex is not tried (it holds the GIL for seconds).
_MAX_GREX_CHARS = 4_000
#: At most this many implied negatives (lowercase forms of words in capitals): each costs time.
_MAX_IMPLIED = 50


class SynthesisError(ValueError):
    """No pattern can be synthesised from these examples (the message says why)."""


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
    deadline = time.thread_time() + _SEARCH_SECONDS
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
