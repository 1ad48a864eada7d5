"""What every action hands the runner: the model prompt, filters, the offline answer, a verifier.

Pure: no pygls, no httpx. An action is prepared once the job exists and its region is known;
the runner then routes it to a model (``request`` + ``pipeline``) or to the offline engine
(``offline``), streams the text into the region, and checks the result with ``verify``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..backends.base import ChatRequest
from ..core.document import Document, Point
from ..prompting.context import CursorContext
from ..prompting.filters import Pipeline

#: ``{ok: true|false|null, details}`` as in the job record.
Verification = dict[str, Any]


@dataclass(frozen=True)
class ActionInput:
    """Everything an action may read to prepare itself (no I/O, no server)."""

    document: Document
    #: The job's target region (the runner may have moved it with :class:`Retarget`).
    start: Point
    end: Point
    ctx: CursorContext
    path: str
    inputs: dict[str, Any]
    max_tokens: int
    temperature: float
    #: Text of the other open documents (for offline lookup), computed when asked for.
    others: Callable[[], Sequence[str]] = lambda: ()


@dataclass(frozen=True)
class OfflineAnswer:
    """The offline engine's text, and the region it replaces when that is not the job's."""

    text: str
    start: Point | None = None
    end: Point | None = None


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
    #: One insertion outside the region, at the start of a line (``import re``), sent once the
    #: region's edits are all reported back.
    extra: tuple[int, str] | None = None


class ActionError(ValueError):
    """The action cannot run here (no examples, no function at the cursor): says why."""


async def no_answer() -> OfflineAnswer | None:
    """An offline engine that has nothing to propose (the job ends with "no suggestion")."""
    return None
