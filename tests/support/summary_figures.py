"""Corpus figures printed in pytest's terminal summary, one section per corpus, so they show
without ``-s``, also under pytest-xdist (each worker hands its sections to the controller)."""

from __future__ import annotations

from typing import Any

import pytest


class _Section:
    def __init__(self, title: str) -> None:
        self.title = title
        self.lines: list[str] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.section(self.title)
        for line in self.lines:
            terminalreporter.write_line(line)


_PREFIX = "fastedit-figures: "
#: Where a worker leaves its sections for the controller (pytest-xdist's ``workeroutput``).
_WORKER_KEY = "fastedit_figures"


def _section(config: pytest.Config, title: str) -> _Section:
    name = _PREFIX + title
    plugin = config.pluginmanager.get_plugin(name)
    if plugin is None:
        plugin = _Section(title)
        config.pluginmanager.register(plugin, name)
    assert isinstance(plugin, _Section)
    return plugin


def section_lines(request: pytest.FixtureRequest, title: str) -> list[str]:
    """The lines printed under ``title`` at the end of the run (one section per title)."""
    return _section(request.config, title).lines


class WorkerFigures:
    """Under pytest-xdist a worker's terminal summary is never shown: at its end each worker
    hands its sections to the controller, which prints them (registered by tests/conftest.py)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)  # set in a worker only
        if output is not None:
            sections = [
                (plugin.title, plugin.lines)
                for name, plugin in session.config.pluginmanager.list_name_plugin()
                if str(name).startswith(_PREFIX) and isinstance(plugin, _Section)
            ]
            output[_WORKER_KEY] = sections

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, in the controller
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        for title, lines in getattr(node, "workeroutput", {}).get(_WORKER_KEY, []):
            _section(self.config, title).lines.extend(lines)
