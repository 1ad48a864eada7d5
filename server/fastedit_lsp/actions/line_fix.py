"""The model's side of a syntax fix: a request to rewrite numbered lines, and its draft.

Pure. Python's fix (``syntax``) and the tree-sitter languages' (``syntax_tree``) differ in how
they find the error, check an answer and repair offline; what they ask a model and how its
answer lands are the same, here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..backends.base import ChatMessage, ChatRequest
from ..core.document import Point
from ..prompting import prompts
from ..prompting.filters import Pipeline
from ..prompting.reconcile import Unwrap
from .base import ActionInput, Draft, OfflineAnswer, Verification


def draft(
    data: ActionInput,
    *,
    user: str,
    lines: tuple[int, int],
    region: tuple[Point, Point],
    budget: int,
    offline: Callable[[], Awaitable[OfflineAnswer | None]],
    verify: Callable[[str], Verification],
    no_suggestion: str,
) -> Draft:
    """Ask for lines ``lines`` (0-based, inclusive) again; one refinement with what failed."""
    first, last = lines

    def ask(extra: str = "") -> ChatRequest:
        return ChatRequest(
            messages=(ChatMessage("system", prompts.FIX_SYNTAX), ChatMessage("user", user + extra)),
            max_tokens=budget,
            temperature=data.temperature,
        )

    def refine(_text: str, result: Verification) -> ChatRequest:
        return ask(
            f"\nYour previous answer was rejected: {result.get('details')}. "
            f"Reply with lines {first + 1} to {last + 1} only, corrected."
        )

    return Draft(
        request=ask(),
        # Only the wrappers go: a fix that repeats or changes the lines around its region must
        # reach the region check (and be rejected there), not be trimmed to fit, which placed a
        # changed line after the region beside the original one.
        pipeline=Pipeline(Unwrap()),
        # The region ends before its last line break, which the document keeps.
        transform=lambda answer: answer.removesuffix("\n").removesuffix("\r"),
        offline=offline,
        verify=verify,
        refine=refine,
        rounds=2,
        region=region,
        no_suggestion=no_suggestion,
    )
