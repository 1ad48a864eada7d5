"""Corpus figures printed in pytest's terminal summary, one section per corpus, so they show
without ``-s``."""

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


def section_lines(request: pytest.FixtureRequest, title: str) -> list[str]:
    """The lines printed under ``title`` at the end of the run (one section per title)."""
    name = f"fastedit-figures: {title}"
    plugin = request.config.pluginmanager.get_plugin(name)
    if plugin is None:
        plugin = _Section(title)
        request.config.pluginmanager.register(plugin, name)
    lines: list[str] = plugin.lines
    return lines
