"""Where a generated test module goes, in the user's project (file system only, no LSP).

``tests/test_<module>.py`` beside the nearest ``tests/`` folder at or above the module (within
the workspace), else ``test_<module>.py`` beside the module; the module's dotted import path
follows its packages. A new test module written on disk is created with an exclusive create:
never an overwrite.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ..engines.test_stubs import module_name, test_path

_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "tox.ini")


@dataclass(frozen=True)
class Placement:
    """Where the tests of one module go."""

    #: The test module's path.
    path: str
    #: The dotted import path of the module under test.
    module: str
    #: The root the imports are relative to.
    root: str


def place(module_path: str, workspace_root: str | None) -> Placement:
    """The test module for ``module_path`` (blocking: reads the file system)."""
    root = workspace_root or project_root(module_path)
    tests_dirs, package_dirs = layout(module_path, root)
    return Placement(
        test_path(module_path, root, tests_dirs),
        module_name(module_path, root, package_dirs),
        root or os.path.dirname(module_path),
    )


def project_root(module_path: str) -> str:
    """Without a workspace folder: the nearest folder with a project marker, else the module's."""
    directory = os.path.dirname(module_path)
    probe = directory
    while True:
        if any(os.path.exists(os.path.join(probe, m)) for m in _PROJECT_MARKERS):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return directory
        probe = parent


def layout(module_path: str, root: str | None) -> tuple[list[str], list[str]]:
    """Existing ``tests`` folders at or above the module (within the root), and package dirs."""
    tests: list[str] = []
    packages: list[str] = []
    directory = os.path.dirname(module_path)
    while True:
        candidate = os.path.join(directory, "tests")
        if os.path.isdir(candidate):
            tests.append(candidate)
        if os.path.isfile(os.path.join(directory, "__init__.py")):
            packages.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory or (root is not None and not _within(directory, root)):
            break
        if root is not None and os.path.normpath(directory) == os.path.normpath(root):
            break
        directory = parent
    return tests, packages


def _within(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return os.path.commonpath([path, root]) == root


def remove_if_empty(path: str) -> bool:
    """Remove a test module created for a job that wrote nothing into it, if it is still empty
    (a file someone wrote meanwhile is kept); return whether it was removed."""
    try:
        if os.path.getsize(path) != 0:
            return False
        os.remove(path)
    except OSError:
        return False
    return True


def module_reader(root: str) -> Callable[[str], str | None]:
    """The source of a workspace module by dotted name, or None when it is not one."""

    def read(dotted: str) -> str | None:
        base = os.path.join(root, *dotted.split("."))
        for path in (base + ".py", os.path.join(base, "__init__.py")):
            try:
                with open(path, encoding="utf-8") as f:
                    return f.read()
            except (OSError, UnicodeDecodeError):
                continue
        return None

    return read


def read_text(path: str) -> str:
    """A file's text; empty when it does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def write_tests(path: str, text: str) -> None:
    """A new test module in one exclusive create (FileExistsError if one appeared meanwhile), or
    ``text`` appended to an existing one: never an overwrite."""
    with open(path, "a" if os.path.exists(path) else "x", encoding="utf-8") as f:
        f.write(text)
