"""LSP surfaces, one module each; each registers its handlers with ``register(server, ...)``.

A feature is handed the owners it uses (``lifecycle``, ``next_edit``, ``review``,
``debug_timings``, ``sync``); the others still take the whole server (the layer test lists them
until each is handed its owners).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server import FasteditServer


def register_all(server: FasteditServer) -> None:
    """Register every feature on ``server`` (order does not matter)."""
    from . import code_actions, commands, completions, lifecycle, next_edit, review, run
    from . import debug_stats as debug
    from . import debug_timings as timings

    lifecycle.register(
        server,
        config=server.config,
        client=server.client,
        reporter=server.reporter,
        internals=server.internals,
        spawn=server.spawn,
        warm_up_owners=server.warm_up_owners,
        close=server.close,
    )
    code_actions.register(server)
    commands.register(server)
    debug.register(server)
    completions.register(server)
    timings.register(server, timings=server.timings)
    review.register(server, jobs=server.jobs, reporter=server.reporter)
    run.register(server)

    def use_model() -> bool:
        return server.config.resolved.settings.next_edit.use_model

    next_edit.register(
        server,
        documents=server.documents,
        next_edits=lambda: server.next_edits,
        use_model=use_model,
        spawn=server.spawn,
    )
