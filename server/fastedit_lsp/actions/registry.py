"""The one list of actions: what each is called, its command, its arguments, how it runs.

Stdlib only, and cheap to import: the server registers every action's command before it answers
``initialize``, while the action modules themselves (prompts, engines, verifiers) load on first
use. Everything else follows from an entry: the ``workspace/executeCommand`` handler, the code
actions offered, the routing setting ``fastKinds``, the job record's ``kind``, the progress
title. A new action is one module of this package (``start``, ``offers``, ``prepare``: see
:class:`~fastedit_lsp.actions.base.Action`) plus one entry here; entries built at run time (from
settings) are added to a :class:`Registry` with ``implementation`` set.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    from .base import Action

#: The argument object a command takes: ``{uri, position}``, ``{uri, range}`` or
#: ``{uri, range, instruction}`` (each may carry ``diagnostics``).
ArgShape = Literal["position", "range", "selection"]
#: How the job pipeline runs an action (:attr:`ActionSpec.strategy`).
Strategy = Literal["direct", "plan_apply", "test_module"]


@dataclass(frozen=True)
class ActionSpec:
    """One action, as the editor contract names it."""

    #: The job record's ``kind``.
    kind: str
    #: Where the user sees it (progress, errors): "Complete the rest".
    title: str
    #: How routing reasons name it: "complete rest".
    label: str
    #: The ``workspace/executeCommand`` command.
    command: str
    args: ArgShape
    #: The module of this package that implements it (loaded on first use).
    module: str = ""
    #: How the job pipeline runs it: ``direct`` (route → attempt → verify → escalate, into the
    #: document it was asked on), ``plan_apply`` (a standard model's plan merged by the apply
    #: model first, when ``editSelection.plan`` says so) or ``test_module`` (the job moves to
    #: the test module the host finds or creates, and appends there).
    strategy: Strategy = "direct"
    #: For entries built at run time: makes the implementation (instead of ``module``).
    implementation: Callable[[], Action] | None = None
    #: The job rewrites its region: streamed as the minimal diff against the region's text.
    rewrite: bool = False

    def load(self) -> Action:
        """The implementation (importing its module the first time)."""
        return self._implementation

    # Kept once loaded: code actions ask every entry on each request, and importlib's
    # cached lookup alone cost 2 µs an entry, a tenth of the handler's time.
    @cached_property
    def _implementation(self) -> Action:
        if self.implementation is not None:
            return self.implementation()
        module = importlib.import_module(f"{__package__}.{self.module}")
        return cast("Action", module)


#: The built-in actions, in the order their code actions are offered.
BUILTIN: tuple[ActionSpec, ...] = (
    ActionSpec(
        "generateRegex", "Generate regex", "regex", "fastedit.generateRegex", "range", "regex"
    ),
    ActionSpec(
        "fixSyntax",
        "Fix syntax",
        "syntax fix",
        "fastedit.fixSyntax",
        "range",
        "syntax",
        rewrite=True,
    ),
    ActionSpec(
        "generateTests",
        "Write tests",
        "test stub",
        "fastedit.generateTests",
        "position",
        "write_tests",
        strategy="test_module",
    ),
    ActionSpec(
        "completeRest",
        "Complete the rest",
        "complete rest",
        "fastedit.completeRest",
        "position",
        "complete_rest",
    ),
    ActionSpec(
        "editSelection",
        "Edit selection",
        "edit",
        "fastedit.editSelection",
        "selection",
        "edit_selection",
        rewrite=True,
        strategy="plan_apply",
    ),
)
#: The built-in kinds (what ``routing.fastKinds`` may list).
BUILTIN_KINDS: tuple[str, ...] = tuple(spec.kind for spec in BUILTIN)


class Registry:
    """The actions of one server: the built-in ones, then any added at run time."""

    def __init__(self, specs: Iterable[ActionSpec] = BUILTIN) -> None:
        self._by_kind: dict[str, ActionSpec] = {}
        self._by_command: dict[str, ActionSpec] = {}
        self._runtime_source: object = None
        for spec in specs:
            self.add(spec)

    def add(self, spec: ActionSpec) -> None:
        """Add an entry; a kind or command already taken is refused (ValueError).

        Run-time entries (``implementation`` set) share one command (``fastedit.run`` names
        the action in its argument), so only built-in entries are found by command.
        """
        runtime = spec.implementation is not None
        if spec.kind in self._by_kind or (not runtime and spec.command in self._by_command):
            raise ValueError(f"action {spec.kind} ({spec.command}) is already registered")
        self._by_kind[spec.kind] = spec
        if not runtime:
            self._by_command[spec.command] = spec

    def set_runtime(self, specs: Iterable[ActionSpec], source: object = None) -> None:
        """Replace every run-time entry with ``specs`` (the settings changed); nothing to do
        when ``source`` (what they were made from) is the one of the current entries."""
        if source is not None and source == self._runtime_source:
            return
        self._runtime_source = source
        for kind in [k for k, s in self._by_kind.items() if s.implementation is not None]:
            del self._by_kind[kind]
        for spec in specs:
            self.add(spec)

    def runtime(self) -> list[ActionSpec]:
        """The entries added at run time."""
        return [s for s in self._by_kind.values() if s.implementation is not None]

    def get(self, kind: str) -> ActionSpec | None:
        return self._by_kind.get(kind)

    def by_command(self, command: str) -> ActionSpec | None:
        return self._by_command.get(command)

    def title(self, kind: str) -> str:
        spec = self._by_kind.get(kind)
        return spec.title if spec is not None else kind

    def __iter__(self) -> Iterator[ActionSpec]:
        return iter(self._by_kind.values())
