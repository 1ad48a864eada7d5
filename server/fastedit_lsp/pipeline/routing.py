"""Which profile answers a job, and why.

Pure. Fast mode and standard mode are the user's choice. Auto mode routes each job from signals the
server has without calling a model, through rules checked in a fixed order; every job goes to fast
unless a rule sends it to standard, and the first rule that fires names its signal, the value and
the threshold in the reason ("standard: 4 definitions in the selection (> 1)"), which is recorded
in the job and shown to the user. Each threshold is a setting (``routing.*``):

1. ``fastKinds``: an action not listed always goes to standard.
2. ``fastMaxLines``: lines in the target region.
3. ``fastMaxDefinitions``: def/class statements the selection spans (:func:`count_definitions`).
4. ``fastMaxPromptTokens``: the prompt's estimated size.
5. ``fastMaxDiagnostics``: error diagnostics in the target region.
6. ``fastMaxInstructionWords``: the length of an ``editSelection`` instruction.
7. ``hardWords``: words in an ``editSelection`` instruction that ask for more than a local edit.
8. ``maxFastFailureRate``: the fast route's recent verification failure rate (session-wide,
   so it comes after every signal of the job itself).

Otherwise the job goes to fast, with the action and its size as the reason ("fast: regex, 3 lines").
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from ..actions.registry import BUILTIN
from ..core.jobs import Kind
from ..settings import Mode, ProfileName, RoutingSettings


@dataclass(frozen=True)
class Signals:
    """What the server knows about a job before any model call."""

    #: The action.
    kind: Kind
    #: Lines in the target region (the selection).
    lines: int
    #: The prompt's estimated size in tokens (characters / 4).
    prompt_tokens: int = 0
    #: Top-level and class-level def/class statements the selection spans.
    definitions: int = 0
    #: Error diagnostics in the target region.
    diagnostics: int = 0
    #: ``editSelection``'s instruction (ignored for the other actions).
    instruction: str = ""
    #: How the reason names the action (None: the registry's label for the kind).
    label: str | None = None


@dataclass(frozen=True)
class Decision:
    profile: ProfileName
    #: Short and user-facing: the deciding signal, its value and threshold.
    reason: str


def choose(
    mode: Mode,
    signals: Signals,
    *,
    routing: RoutingSettings,
    failure_rates: Mapping[str, float] | None = None,
) -> Decision:
    """Pick the profile for a job: the user's mode, or in auto mode the first rule that fires.

    ``failure_rates`` maps a route to the share (0..1) of its recent jobs whose result failed
    verification; only ``"fast"`` is read. Pass a rate only once it rests on enough jobs.
    """
    if mode == "fast":
        return Decision("fast", "fast mode")
    if mode == "standard":
        return Decision("standard", "standard mode")
    for rule in RULES:
        reason = rule(signals, routing, failure_rates or {})
        if reason is not None:
            return Decision("standard", f"standard: {reason}")
    label = signals.label or _builtin_label(signals.kind)
    return Decision("fast", f"fast: {label}, {_count(signals.lines, 'line')}")


#: How a reason names each built-in action.
_LABELS = {spec.kind: spec.label for spec in BUILTIN}


def _builtin_label(kind: str) -> str:
    return _LABELS.get(kind, kind)


# -- the rules, in order: each returns why the job goes to standard, or None ---------------------

Rule = Callable[[Signals, RoutingSettings, Mapping[str, float]], str | None]


def _kind(s: Signals, r: RoutingSettings, _: Mapping[str, float]) -> str | None:
    if s.kind not in r.fast_kinds:
        return f"{s.kind} is not in fastKinds"
    return None


def _lines(s: Signals, r: RoutingSettings, _: Mapping[str, float]) -> str | None:
    if s.lines > r.fast_max_lines:
        return f"{_count(s.lines, 'line')} in the selection (> {r.fast_max_lines})"
    return None


def _definitions(s: Signals, r: RoutingSettings, _: Mapping[str, float]) -> str | None:
    limit = r.fast_max_definitions
    if s.definitions > limit:
        return f"{_count(s.definitions, 'definition')} in the selection (> {limit})"
    return None


def _prompt(s: Signals, r: RoutingSettings, _: Mapping[str, float]) -> str | None:
    if s.prompt_tokens > r.fast_max_prompt_tokens:
        return f"prompt of ~{s.prompt_tokens} tokens (> {r.fast_max_prompt_tokens})"
    return None


def _diagnostics(s: Signals, r: RoutingSettings, _: Mapping[str, float]) -> str | None:
    if s.diagnostics > r.fast_max_diagnostics:
        return f"{_count(s.diagnostics, 'diagnostic')} in range (> {r.fast_max_diagnostics})"
    return None


def _instruction_words(s: Signals, r: RoutingSettings, _: Mapping[str, float]) -> str | None:
    words = len(s.instruction.split())
    if s.kind == "editSelection" and words > r.fast_max_instruction_words:
        return f"instruction of {_count(words, 'word')} (> {r.fast_max_instruction_words})"
    return None


def _hard_words(s: Signals, r: RoutingSettings, _: Mapping[str, float]) -> str | None:
    if s.kind != "editSelection":
        return None
    found = find_hard_word(s.instruction, r.hard_words)
    if found is not None:
        return f'instruction says "{found}" (in hardWords)'
    return None


def _failure_rate(s: Signals, r: RoutingSettings, rates: Mapping[str, float]) -> str | None:
    rate = rates.get("fast")
    if rate is not None and rate > r.max_fast_failure_rate:
        return (
            f"fast route failed verification in {rate:.0%} of recent jobs "
            f"(> {r.max_fast_failure_rate:.0%})"
        )
    return None


RULES: tuple[Rule, ...] = (
    _kind,
    _lines,
    _definitions,
    _prompt,
    _diagnostics,
    _instruction_words,
    _hard_words,
    _failure_rate,
)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# -- signal helpers ------------------------------------------------------------------------------


def find_hard_word(instruction: str, hard_words: tuple[str, ...]) -> str | None:
    """The first word of ``instruction`` that one of ``hard_words`` matches, as written there.

    A hard word matches at the start of a word in any case, so ``refactor`` matches
    ``Refactoring``; a final ``e`` is optional (``optimize`` matches ``optimizing``); a space or
    hyphen in it matches any run of spaces and hyphens, or none (``thread-safe`` matches
    ``thread safe`` and ``threadsafe``).
    """
    best: re.Match[str] | None = None
    for word in hard_words:
        pattern = _hard_word_pattern(word)
        if pattern is None:
            continue
        match = pattern.search(instruction)
        if match is not None and (best is None or match.start() < best.start()):
            best = match
    if best is None:
        return None
    # Report the whole word the user wrote ("refactoring"), not just the matched stem.
    end = best.end()
    while end < len(instruction) and (instruction[end].isalnum() or instruction[end] in "_-"):
        end += 1
    return instruction[best.start() : end]


def _hard_word_pattern(word: str) -> re.Pattern[str] | None:
    parts = [p for p in re.split(r"[\s-]+", word.strip().lower()) if p]
    if not parts:
        return None
    if parts[-1].endswith("e") and len(parts[-1]) > 1:
        parts[-1] = re.escape(parts[-1][:-1]) + "e?"
        body = r"[\s-]*".join([*map(re.escape, parts[:-1]), parts[-1]])
    else:
        body = r"[\s-]*".join(map(re.escape, parts))
    return re.compile(rf"(?<![\w-]){body}", re.IGNORECASE)


_DEF_LINE = re.compile(r"(?:async\s+def|def|class)\s+\w")


def count_definitions(source: str) -> int:
    """Top-level and class-level def/class statements in a Python fragment (not nested functions).

    Parsed with :mod:`ast` when the fragment parses (after removing common indentation), else
    counted from lines starting with ``def``, ``class`` or ``async def``, tracking scopes by
    indentation. Pass whole lines (a selection extended to the start of its first line), so that
    indentation means what it says.
    """
    try:
        with warnings.catch_warnings():
            # Invalid escapes in the user's strings are not ours to report.
            warnings.simplefilter("ignore")
            tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _count_definition_lines(source)
    return sum(1 for _ in _definitions_outside_functions(tree))


def _definitions_outside_functions(tree: ast.AST) -> Iterator[ast.stmt]:
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield child  # what a function defines inside itself is part of it
            elif isinstance(child, ast.ClassDef):
                yield child
                todo.append(child)
            elif isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                todo.append(child)  # if / try / with / for blocks at module or class level


def _count_definition_lines(source: str) -> int:
    count = 0
    # Enclosing def/class lines as (indentation, is a function).
    scopes: list[tuple[int, bool]] = []
    for line in source.splitlines():
        stripped = line.lstrip()
        # A closing bracket at the def's own indentation ends a signature, not the def.
        if not stripped or stripped[0] in "#)]}":
            continue
        indent = len(line) - len(stripped)
        while scopes and scopes[-1][0] >= indent:
            scopes.pop()
        if _DEF_LINE.match(stripped):
            if not any(is_function for _, is_function in scopes):
                count += 1
            scopes.append((indent, not stripped.startswith("class")))
    return count
