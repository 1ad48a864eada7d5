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
    code_actions.register(
        server,
        documents=server.documents,
        jobs=server.jobs,
        review=server.reporter.review,
        config=server.config,
        actions=server.actions,
        timings=server.timings,
    )
    commands.register(
        server,
        actions=server.actions,
        jobs=server.jobs,
        documents=server.documents,
        config=server.config,
        client=server.client,
        reporter=server.reporter,
        timings=server.timings,
        cancellable=server.hooks.cancellable,
        start_job=server.start_job,
        status=server.status,
    )
    debug.register(
        server,
        held=debug.Holdings(
            documents=server.documents,
            jobs=server.jobs,
            client=server.client,
            imports=server.imports,
            tasks=server.tasks,
            cancellable=server.hooks.cancellable,
            backends=lambda: server.backends,
            parse_refresher=lambda: server.parse_refresher,
        ),
    )
    completions.register(
        server,
        completions=lambda: server.completions,
        next_edits=lambda: server.next_edits,
        documents=server.documents,
        jobs=server.jobs,
        config=server.config,
        client=server.client,
        backends=lambda: server.backends,
    )
    timings.register(server, timings=server.timings)
    review.register(server, jobs=server.jobs, reporter=server.reporter)
    run.register(
        server,
        config=server.config,
        actions=server.actions,
        documents=server.documents,
        jobs=server.jobs,
        start_job=server.start_job,
    )

    def use_model() -> bool:
        return server.config.resolved.settings.next_edit.use_model

    next_edit.register(
        server,
        documents=server.documents,
        next_edits=lambda: server.next_edits,
        use_model=use_model,
        spawn=server.spawn,
    )
