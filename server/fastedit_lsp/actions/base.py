"""What an action is: where a job starts, the code actions it offers, and how it is answered.

Pure: no pygls, no httpx. An action module implements :class:`Action`. ``start`` places a new
job when its command runs (the region, the typed inputs); ``offers`` says which code actions
apply at a range (instantly: no model call); ``prepare`` makes the :class:`Draft` once the job
runs and its region is known: the pipeline then routes it to a model (``request`` +
``pipeline``) or to the offline engine (``offline``), streams the text into the region, and
checks the result with ``verify``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..backends.base import ChatRequest
from ..core.document import Document, Point
from ..core.jobs import Inputs, TestModule
from ..core.outline import Outline
from ..prompting.context import CursorContext
from ..prompting.filters import Pipeline

if TYPE_CHECKING:
    from ..engines.checkers import Shadow
    from ..engines.names.findings import PackageNames
    from ..engines.parse_trees import ParseTrees
    from ..engines.test_stubs import Recording, RecordPlan

#: ``{ok: true|false|null, details}`` as in the job record.
Verification = dict[str, Any]


@dataclass(frozen=True)
class Start:
    """Where a new job edits (the command's range, or the place the action found) and its
    inputs."""

    start: Point
    end: Point
    inputs: Inputs


@dataclass(frozen=True)
class CommandInput:
    """A command's arguments beyond the document, validated and in server coordinates."""

    start: Point
    end: Point
    #: Error diagnostics the editor reported in range (routing).
    diagnostics: int = 0
    instruction: str = ""
    #: Edit selection's ``plan`` argument (auto, on, off); None: the setting decides.
    plan: str | None = None


@dataclass(frozen=True)
class OfferView:
    """What a code action rule may look at (no model call, no I/O)."""

    uri: str
    document: Document
    start: Point
    end: Point
    #: The request's range as the client sent it: ``{start: {line, character}, end: {...}}``.
    wire_range: dict[str, dict[str, int]]
    #: Error diagnostics the client passed with the request.
    errors: int
    #: The document's outline (Python), parsed off the request path.
    outline: Callable[[], Outline]


@dataclass(frozen=True)
class Offer:
    """One code action: its title ("... (fastedit)"), kind, and its command's argument."""

    title: str
    kind: Literal["refactor.rewrite", "quickfix"]
    argument: dict[str, object]


class Action(Protocol):
    """What an action module provides (each function pure)."""

    def start(self, document: Document, command: CommandInput) -> Start:
        """Place a new job; ActionError when the action cannot run there."""
        ...

    def offers(self, view: OfferView) -> Sequence[Offer]:
        """The code actions that apply at the view's range."""
        ...

    def prepare(self, data: ActionInput) -> Draft:
        """How to answer the job; ActionError when it cannot run here."""
        ...


@dataclass(frozen=True)
class ActionInput:
    """Everything an action may read to prepare itself (no I/O, no server)."""

    document: Document
    #: The job's target region (the runner may have moved it with :class:`Retarget`).
    start: Point
    end: Point
    ctx: CursorContext
    path: str
    inputs: Inputs
    max_tokens: int
    temperature: float
    #: Text of the other open documents (for offline lookup), computed when asked for.
    others: Callable[[], Sequence[str]] = lambda: ()
    #: Where a test-writing job writes (the document is then the test module).
    destination: TestModule | None = None
    #: The region's text before the job, when the region may hold the job's own text already
    #: (escalation, retry); None: the region's text in ``document``.
    original: str | None = None
    #: The documents' last parses, for the parse check to start from (None: parse anew).
    trees: ParseTrees | None = None
    #: What the other files of the document's package declare (Go: names; Java: its
    #: surroundings on disk; read when asked for), None when unknown: the names check then
    #: flags no unknown package-level name.
    package: Callable[[], PackageNames] = lambda: None
    #: With ``tests.run`` on (the user opted in to running their code): runs the function a
    #: test-writing job is for on a plan of calls, through the host's recorder; None: off.
    record: Callable[[RecordPlan], Awaitable[Recording]] | None = None


@dataclass(frozen=True)
class OfflineAnswer:
    """The offline engine's text, and the region it replaces when that is not the job's."""

    text: str
    start: Point | None = None
    end: Point | None = None
    #: What the job record should say of how the answer was made ("3 recorded tests...").
    note: str = ""


@dataclass
class Draft:
    """How to answer one job."""

    #: The chat request for a model; None when the action cannot use one.
    request: ChatRequest | None
    #: Filters for a model's stream.
    pipeline: Pipeline = field(default_factory=Pipeline)
    #: Turns a model's whole answer into the region's text (the answer is then not streamed
    #: as it arrives but once complete); None: the filtered stream is the text.
    transform: Callable[[str], str] | None = None
    #: The offline engine's answer (None: no suggestion); None when it needs a model.
    offline: Callable[[], Awaitable[OfflineAnswer | None]] | None = None
    #: Checks the final text of the region; None when there is nothing to verify with.
    verify: Callable[[str], Verification] | None = None
    #: Why the offline engine found nothing, for the job's reason.
    no_suggestion: str = "no suggestion"
    #: The region the action edits when it is not the command's (decided before any edit).
    region: tuple[Point, Point] | None = None
    #: Verify a model's (transformed) answer before it touches the buffer, and ask again with
    #: what failed: the follow-up request, or None to stop. Up to ``rounds`` answers per model.
    refine: Callable[[str, Verification], ChatRequest | None] | None = None
    rounds: int = 1
    #: For a streamed answer that failed ``verify``: the request asking the same model once more,
    #: with its answer and what failed (the parse check's message); None: no second try.
    correct: Callable[[str, Verification], ChatRequest | None] | None = None
    #: One insertion outside the region, at the start of a line (``import re``), sent once the
    #: region's edits are all reported back.
    extra: tuple[int, str] | None = None
    #: With ``tests.run``: what a model's whole (transformed) answer becomes before its tests
    #: run (the recorder's tests added to a model's), and what the job's reason says of it.
    supplement: Callable[[str], Awaitable[tuple[str, str]]] | None = None
    #: The document before the job and with a final text in the region, for the project's own
    #: checkers (ruff, mypy); None: none applies to the document.
    shadow: Callable[[str], Shadow] | None = None


class ActionError(ValueError):
    """The action cannot run here (no examples, no function at the cursor): says why."""


async def no_answer() -> OfflineAnswer | None:
    """An offline engine that has nothing to propose (the job ends with "no suggestion")."""
    return None


def no_offers(view: OfferView) -> Sequence[Offer]:
    """An action offered by no code action (it needs what only a command carries)."""
    return ()
