"""Fixtures for real-editor tests: the loopback stub model, shared by a module's tests."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastedit_lsp.tools.stub import StubModelServer
from tests.support.editors.availability import require_editor


@pytest.fixture(scope="module")
def stub_model() -> Iterator[StubModelServer]:
    """The stub model in a daemon thread (editors are driven synchronously from the test)."""
    stub, stop = StubModelServer.start_in_thread()
    try:
        yield stub
    finally:
        stop()


@pytest.fixture
def stub(stub_model: StubModelServer) -> StubModelServer:
    """The module's stub model with an empty script and no recorded requests."""
    stub_model.reset()
    return stub_model


@pytest.fixture(scope="session")
def vsix() -> Path:
    """The VS Code extension, built and packaged by editors/vscode/scripts/build.sh."""
    npm = shutil.which("npm") if shutil.which("node") else None
    require_editor("node and npm (to build the VS Code extension)", npm, "install Node.js >= 20")
    extension = Path(__file__).resolve().parents[2] / "editors" / "vscode"
    build = subprocess.run(
        [str(extension / "scripts" / "build.sh")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, f"build.sh failed:\n{build.stdout}\n{build.stderr}"
    return extension / "fastedit.vsix"
