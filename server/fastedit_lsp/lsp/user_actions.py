"""The user-defined actions of the current settings, kept in the action registry.

Settings change at run time (``workspace/didChangeConfiguration``), so the registry's run-time
entries are rebuilt from them (a few small objects) before code actions are offered and before
``fastedit.run`` runs one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..actions.registry import Registry
    from ..actions.user import UserAction
    from .config import Config


def configured(config: Config) -> tuple[UserAction, ...]:
    """The actions of the settings, as the actions layer sees them."""
    # Imported on first use: start-up imports only what the initialize reply needs.
    from ..actions import user

    return tuple(
        user.UserAction(a.id, a.title, a.instruction, a.target, a.route, a.verify)
        for a in config.resolved.settings.actions
    )


def sync(config: Config, registry: Registry) -> tuple[UserAction, ...]:
    """Make the registry's run-time entries those of the settings (and the presets)."""
    from ..actions import user

    actions = configured(config)
    ids = {a.id for a in actions}
    wanted = [*actions, *(p for p in user.PRESETS if p.id not in ids)]
    # Code actions call this on every request: the entries are rebuilt only when they change.
    registry.set_runtime((user.spec(a) for a in wanted), source=tuple(wanted))
    return actions
