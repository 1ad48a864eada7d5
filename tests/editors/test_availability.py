"""The rule every real-editor test follows: skip locally when the editor is missing, fail in CI."""

from __future__ import annotations

import sys

import pytest

from tests.support.editors.availability import require_editor


def test_a_present_editor_is_returned() -> None:
    assert require_editor("Python", sys.executable, "install it") == sys.executable


def test_a_missing_editor_skips_locally_with_the_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-such-editor is not available: get it"):
        require_editor("no-such-editor", None, "get it")


def test_a_missing_editor_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_editor("no-such-editor", "/nonexistent/editor", "get it")
