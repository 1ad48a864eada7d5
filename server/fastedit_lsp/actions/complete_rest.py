"""Complete the rest: the model writes the missing code at the cursor.

Pure: builds the chat request from the cursor context and the filters its answer goes through.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.base import ChatMessage, ChatRequest
from ..core.document import Document, Point
from ..core.jobs import Inputs
from ..prompting import prompts
from ..prompting.context import CursorContext
from ..prompting.filters import Pipeline
from ..prompting.reconcile import reconciler
from . import parse_check
from .base import ActionInput, CommandInput, Draft, Offer, OfferView, OfflineAnswer, Start

CURSOR = prompts.CURSOR


def request(ctx: CursorContext, *, max_tokens: int, temperature: float) -> ChatRequest:
    """The chat request for a completion at the cursor."""
    language = ctx.language_id or "text"
    user = (
        f"File: {ctx.path} (language: {language})\n"
        f"```{language}\n{ctx.prefix}{CURSOR}{ctx.suffix}\n```\n"
        f"Write the code that goes at {CURSOR}."
    )
    return ChatRequest(
        messages=(ChatMessage("system", prompts.COMPLETE_REST), ChatMessage("user", user)),
        max_tokens=max_tokens,
        temperature=temperature,
    )


def filters(data: ActionInput) -> Pipeline:
    """The answer reconciled with the text around the cursor (docs/answers.md)."""
    return Pipeline(reconciler(data.document, data.start, data.end, replace=False))


def start(document: Document, command: CommandInput) -> Start:
    """At the cursor."""
    return Start(command.start, command.start, Inputs())


def offers(view: OfferView) -> Sequence[Offer]:
    """Offered everywhere, at the end of the range."""
    end = view.wire_range["end"]
    position = {"line": end["line"], "character": end["character"]}
    return [
        Offer(
            "Complete the rest (fastedit)",
            "refactor.rewrite",
            {"uri": view.uri, "position": position},
        )
    ]


def prepare(data: ActionInput) -> Draft:
    """A model completes from the budgeted context; offline, prompt lookup over open documents."""

    async def offline() -> OfflineAnswer | None:
        from ..engines.lookup import complete

        document = data.document
        prefix = document.get_text(Point(0, 0), data.start)
        suffix = document.get_text(data.end, document.end)
        text = complete(prefix, suffix, data.others())
        return OfflineAnswer(text) if text else None

    chat = request(data.ctx, max_tokens=data.max_tokens, temperature=data.temperature)
    verify = parse_check.verifier(data)
    return Draft(
        request=chat,
        pipeline=filters(data),
        offline=offline,
        verify=verify,
        correct=parse_check.correction(chat) if verify is not None else None,
        shadow=parse_check.shadower(data),
        no_suggestion="no suggestion: nothing earlier in the open documents continues this text",
    )
