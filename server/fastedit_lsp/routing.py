"""Which profile answers a job, and why.

Pure. Fast mode and standard mode are the user's choice; auto mode routes each job from signals
the server has without calling a model (a fuller policy comes with the routing work; the reason is
always recorded in the job and shown to the user).
"""

from __future__ import annotations

from dataclasses import dataclass

from .jobs import Kind
from .settings import Mode, ProfileName, RoutingSettings


@dataclass(frozen=True)
class Decision:
    profile: ProfileName
    reason: str


def choose(
    mode: Mode,
    kind: Kind,
    *,
    lines: int,
    instruction: str = "",
    routing: RoutingSettings,
) -> Decision:
    """Pick the profile for a job."""
    if mode == "fast":
        return Decision("fast", "fast mode")
    if mode == "standard":
        return Decision("standard", "standard mode")
    words = len(instruction.split())
    if lines > routing.fast_max_lines:
        return Decision("standard", f"auto: {lines} lines > {routing.fast_max_lines}")
    if kind == "editSelection" and words > routing.fast_max_instruction_words:
        return Decision("standard", f"auto: instruction of {words} words")
    return Decision("fast", f"auto: {kind}, {lines} line{'s' if lines != 1 else ''}")
