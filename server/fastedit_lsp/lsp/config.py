"""The server's settings and mode: every source merged, validated once, and the user's toggle.

Settings are validated on first use (``initialized`` does it and reports problems): validation
imports pydantic, which has no place before the ``initialize`` reply. A configuration push does
not reset a mode the user toggled unless ``mode`` itself changed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from ..settings import Mode, ProfileName, Resolved, ResolvedProfile

log = logging.getLogger(__name__)

#: How the config tells the user something: (message, kind).
Tell = Callable[[str, types.MessageType], None]


class Config:
    """Settings sources, the merged result, the mode, and one-time announcements."""

    def __init__(
        self,
        environ: Mapping[str, str],
        *,
        show: Tell,
        log_message: Tell,
        mode_changed: Callable[[], None],
    ) -> None:
        #: The process environment, read once (keys, FASTEDIT_* variables).
        self.environ: dict[str, str] = dict(environ)
        #: initializationOptions' ``fastedit`` section (or the whole object), kept for re-merges.
        self.init_options: Any = None
        #: The last section pulled or pushed through workspace/configuration.
        self.client_settings: Any = None
        self._show = show
        self._log = log_message
        self._mode_changed = mode_changed
        self._resolved: Resolved | None = None
        self._mode: Mode | None = None
        self._last_non_fast: Mode | None = None
        #: Profiles whose fallback to the offline engine was already announced, and what else
        #: was told once (:meth:`tell_once`).
        self._announced: set[str] = set()

    @property
    def resolved(self) -> Resolved:
        """The merged settings, validated on first use."""
        if self._resolved is None:
            from ..settings import load

            self._resolved = load(self.environ, self.init_options, self.client_settings)
        return self._resolved

    @property
    def mode(self) -> Mode:
        """The current mode (the ``mode`` setting starts it; the toggle and setMode change it)."""
        if self._mode is None:
            self._mode = self.resolved.settings.mode
        return self._mode

    @property
    def last_non_fast(self) -> Mode:
        """The mode the fast-mode toggle returns to."""
        if self._last_non_fast is None:
            self._last_non_fast = "standard" if self.mode == "fast" else self.mode
        return self._last_non_fast

    def reload(self, *, notify: bool = True) -> None:
        """Merge every settings source again; report problems; keep a toggled mode."""
        from ..settings import load

        old = self._resolved.settings if self._resolved is not None else None
        resolved = self._resolved = load(self.environ, self.init_options, self.client_settings)
        for problem in resolved.problems:
            log.warning("settings: %s", problem)
            self._show(f"fastedit: {problem}", types.MessageType.Warning)
        for warning in resolved.warnings:
            log.warning("settings: %s", warning)
            self._log(warning, types.MessageType.Warning)
        if old is not None and resolved.settings.mode != old.mode:
            self.set_mode(resolved.settings.mode, notify=notify)

    def set_mode(self, mode: Mode, *, notify: bool = True) -> None:
        previous = self.mode
        self._last_non_fast = mode if mode != "fast" else self.last_non_fast
        if mode != previous:
            self._mode = mode
            if notify:
                self._mode_changed()

    def toggle_fast(self) -> None:
        """Fast mode, or back to the last non-fast mode."""
        self.set_mode(self.last_non_fast if self.mode == "fast" else "fast")

    def tell_once(self, key: str, message: str) -> None:
        """Show ``message`` the first time ``key`` is told in this session."""
        if key not in self._announced:
            self._announced.add(key)
            self._show(message, types.MessageType.Info)

    def profile(self, name: str, *, announce: bool = True) -> ResolvedProfile:
        """A profile resolved against the current settings and the environment."""
        from ..settings import resolve_profile

        profile: ProfileName = (
            "fast" if name == "fast" else "apply" if name == "apply" else "standard"
        )
        resolved = resolve_profile(profile, self.resolved.settings, self.environ)
        if announce and resolved.fallback_reason and name not in self._announced:
            self._announced.add(name)
            self._show(
                f"fastedit: {resolved.fallback_reason}; using the offline engine.",
                types.MessageType.Info,
            )
        return resolved
