"""Hypothesis profiles: the README's test command is deterministic, exploration is opt-in.

``deterministic`` is loaded for every run: each property test sees the same examples every time
(derandomized, no example database replaying earlier failures, no wall-clock deadline or
too-slow check to trip on a loaded machine), and a failure prints its reproduction blob. It is
Hypothesis' own ``ci`` profile, which ``CI=true`` would load, for local runs too.

``random`` explores: ``pytest --hypothesis-profile=random`` (Hypothesis' pytest plugin loads it
after this module registers it). Fresh examples each run, more of them for the tests that do not
set their own ``max_examples``, and the example database in ``.hypothesis/`` replays what failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import fastedit_lsp
from fastedit_lsp.tools.bytecode import byte_compile
from tests.support.summary_figures import WorkerFigures

#: Variables that change the trusted certificates (SSL_CERT_FILE, SSL_CERT_DIR).
CERT_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")

_DEFAULTS = settings.get_profile("default")  # Hypothesis' own, whatever CI=true loaded

settings.register_profile(
    "deterministic",
    _DEFAULTS,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "random", _DEFAULTS, derandomize=False, max_examples=1000, deadline=None, print_blob=True
)
settings.load_profile("deterministic")


@pytest.fixture(autouse=True, scope="session")
def _no_machine_network_variables() -> Iterator[None]:
    """Every server the tests start (and the tests' own clients) reach the loopback stubs
    directly and trust the default CAs, whatever the machine's environment holds (a company
    proxy, SSL_CERT_FILE): the network tests set these variables themselves."""
    patch = pytest.MonkeyPatch()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", *CERT_VARIABLES):
        patch.delenv(name, raising=False)
        patch.delenv(name.lower(), raising=False)
    yield
    patch.undo()


# The tiers (CONTRIBUTING.md): each test gets its tier's markers from where it lives, so a new test
# file is tiered by the folder it is put in. ``pytest -m "not slow"`` is the quick inner loop (the
# unit tier); the README's command and CI run every tier.
_TESTS = Path(__file__).resolve().parent
_FOLDER_MARKS = {"e2e": ("e2e", "slow"), "editors": ("editors", "slow")}
# Unit-level files that measure quality on corpora (figures with floors, held-out parts):
# ``*_corpus.py`` and ``*_corpus_<language>.py``, and these two.
_QUALITY = ("test_test_stubs_mutation.py", "test_test_stubs_recorded.py")


def tier_marks(path: Path) -> tuple[str, ...]:
    """The tier markers of the test file at ``path``."""
    parts = path.resolve().relative_to(_TESTS).parts
    if parts[0] in _FOLDER_MARKS:
        return _FOLDER_MARKS[parts[0]]
    if "_corpus" in path.stem or path.name in _QUALITY:
        return ("quality", "slow")
    return ()


# Under pytest-xdist (``-n 3 --dist loadgroup``, the README's command) tests are spread one by one,
# except where they share something costly: the tests that use one module's costly fixture (a
# shared server and stub, tests/support/shared_server.py; a venv with the package installed; the
# mutation corpora's measure, one group per parameter) run in one worker, so the fixture starts
# once; the VS Code modules share one worker, since the session's ``vsix`` fixture builds the
# extension in editors/vscode. Module fixtures that cost nothing (a stub model in a thread, a
# path) are started again in each worker that needs them: their tests spread. So a module's
# tests that start servers of their own (``make_editor``, which points them at the module's stub)
# spread too, and only those using the module's server stay together (test_offline's ``tests.run``
# tests, recorder subprocesses in fresh servers, had made its group the suite's longest).
_VSCODE_GROUP = "vscode"
#: Fixtures of a wider scope than the test that are cheap to start once per worker.
_CHEAP_SHARED = frozenset({"stub_model", "module_stub", "nvim_path", "terminal_tools", "chromium"})


def xdist_group(item: pytest.Item) -> str | None:
    """The pytest-xdist group of ``item`` (None: spread test by test)."""
    path = Path(item.path)
    if path.name.startswith("test_vscode"):
        return _VSCODE_GROUP
    # pytest has no public lookup of a fixture's scope by name.
    definitions = item._fixtureinfo.name2fixturedefs  # type: ignore[attr-defined]
    shared: list[str] = []
    for name in getattr(item, "fixturenames", ()):
        defs = definitions.get(name)
        if not defs or defs[-1].scope == "function" or name in _CHEAP_SHARED:
            continue
        module = defs[-1].func.__module__
        if not module.startswith("tests."):
            continue  # a plugin's (pytest's temporary folders, pytest-asyncio's loop policy)
        if defs[-1].scope == "session" and module.endswith("conftest"):
            continue  # a conftest's session fixture: once per worker wherever its tests run
        callspec = getattr(item, "callspec", None)
        index = None if callspec is None else callspec.indices.get(name)
        # No brackets: pytest-xdist reads a group only after the last "]" of the test's id.
        shared.append("" if index is None else f"{name}={index}")
    if not shared:
        return None
    # One group per module (and per parameter of a parametrized shared fixture).
    params = ",".join(sorted(p for p in shared if p))
    return "/".join(path.resolve().relative_to(_TESTS).parts) + (f"::{params}" if params else "")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(WorkerFigures(config), "fastedit-figures-from-workers")
    if not hasattr(config, "workerinput"):  # once, in the controller, before any worker starts
        _byte_compile_the_package()


def _byte_compile_the_package() -> None:
    """Write the package's bytecode once (:mod:`fastedit_lsp.tools.bytecode`). The tests start
    ~500 server processes (``python -m fastedit_lsp``) from the editable install; where
    ``PYTHONDONTWRITEBYTECODE`` is set (this project's machines set it) nothing wrote that
    bytecode until test_cli's ``fastedit-lsp bench`` byte-compiled the package, some minutes
    into a run: each server started before then compiled every module it imported again
    (~0.13 s of CPU per server, 8 %, measured alternating with and without at load ~5)."""
    byte_compile(Path(fastedit_lsp.__file__).parent)


# First, so pytest-xdist's own hook (which reads the groups) sees them.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for mark in tier_marks(Path(item.path)):
            item.add_marker(mark)
        if (group := xdist_group(item)) is not None:
            item.add_marker(pytest.mark.xdist_group(group))
