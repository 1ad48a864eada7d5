"""Fixtures for real-editor tests: the loopback stub model, shared by a module's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fastedit_lsp.stub import StubModelServer


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
