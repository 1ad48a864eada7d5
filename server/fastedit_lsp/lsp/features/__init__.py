"""LSP surfaces, one module each; each registers its handlers with ``register(server)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server import FasteditServer


def register_all(server: FasteditServer) -> None:
    """Register every feature on ``server`` (order does not matter)."""
    from . import code_actions, commands, completions, lifecycle, next_edit, review, run
    from . import debug_stats as debug
    from . import debug_timings as timings

    lifecycle.register(server)
    code_actions.register(server)
    commands.register(server)
    debug.register(server)
    completions.register(server)
    timings.register(server)
    review.register(server)
    run.register(server)
    next_edit.register(server)
