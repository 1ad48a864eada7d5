"""Edit selection: the model rewrites the selected code following the user's instruction.

Pure: builds the chat request and the filters of its answer. The selection is replaced by the
streamed rewrite; the original stays with the job for revert.
"""

from __future__ import annotations

from ..backends.base import ChatMessage, ChatRequest
from ..core.document import Document
from ..core.jobs import InstructionInputs
from ..prompting import prompts
from ..prompting.context import CursorContext
from ..prompting.filters import Pipeline
from ..prompting.reconcile import reconciler
from . import parse_check
from .base import ActionInput, CommandInput, Draft, Start, no_offers

#: No code action: it needs an instruction, which only the command carries.
offers = no_offers


def start(document: Document, command: CommandInput) -> Start:
    """The selection, with the instruction."""
    inputs = InstructionInputs(
        diagnostics=command.diagnostics, instruction=command.instruction, plan=command.plan
    )
    return Start(command.start, command.end, inputs)


def user_message(ctx: CursorContext, instruction: str, reply: str) -> str:
    """The file excerpt, the selection and the instruction, then what to reply with."""
    language = ctx.language_id or "text"
    return (
        f"File: {ctx.path} (language: {language})\n"
        f"Code before the selection:\n```{language}\n{ctx.prefix}\n```\n"
        f"Selection:\n```{language}\n{ctx.selection}\n```\n"
        f"Code after the selection:\n```{language}\n{ctx.suffix}\n```\n"
        f"Instruction: {instruction}\n"
        f"{reply}"
    )


def request(
    ctx: CursorContext, instruction: str, *, max_tokens: int, temperature: float
) -> ChatRequest:
    """The chat request for rewriting the selection."""
    user = user_message(ctx, instruction, "Reply with the replacement for the selection only.")
    # A rewrite is about as long as the selection; leave room for growth, stay tight.
    budget = min(max_tokens, max(64, len(ctx.selection) // 2 + 256))
    return ChatRequest(
        messages=(ChatMessage("system", prompts.EDIT_SELECTION), ChatMessage("user", user)),
        max_tokens=budget,
        temperature=temperature,
    )


def filters(data: ActionInput) -> Pipeline:
    """The rewrite reconciled with the text around the selection (docs/answers.md)."""
    replace = data.start != data.end  # a user action at the cursor inserts there
    return Pipeline(reconciler(data.document, data.start, data.end, replace=replace))


def prepare(data: ActionInput) -> Draft:
    """Only a model can follow an instruction: no offline answer."""
    inputs = data.inputs
    instruction = inputs.instruction if isinstance(inputs, InstructionInputs) else ""
    chat = request(data.ctx, instruction, max_tokens=data.max_tokens, temperature=data.temperature)
    verify = parse_check.verifier(data)
    return Draft(
        request=chat,
        pipeline=filters(data),
        verify=verify,
        correct=parse_check.correction(chat) if verify is not None else None,
        shadow=parse_check.shadower(data),
    )
