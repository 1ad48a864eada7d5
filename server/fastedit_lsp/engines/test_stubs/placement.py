"""Module names and placement: the dotted import path of the module (:func:`module_name`,
walking up through the directories the caller knows to contain ``__init__.py``) and where its
tests go (:func:`test_path`: ``tests/test_<module>.py`` in the nearest ``tests`` folder, else
beside the module). Pure: the caller passes what it knows of the file system.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import PurePath


def _norm(path: str, base: PurePath | None = None) -> PurePath:
    pure = PurePath(path)
    if base is not None and not pure.is_absolute():
        pure = base / pure
    return PurePath(os.path.normpath(str(pure)))


def _inside(path: PurePath, root: PurePath) -> bool:
    return path == root or root in path.parents


def module_name(
    module_path: str, workspace_root: str | None, package_dirs: Collection[str] = ()
) -> str:
    """The dotted import path of the module, e.g. ``"pkg.sub.mod"``.

    ``package_dirs`` are the directories the caller knows to contain ``__init__.py``; the name
    walks up through them, without leaving the workspace. Just the stem when there is no package.
    """
    root = _norm(workspace_root) if workspace_root else None
    path = _norm(module_path, root)
    packages = {_norm(d, root) for d in package_dirs}
    parts: list[str] = []
    directory = path.parent
    if path.stem == "__init__":
        packages.add(directory)
    else:
        parts.append(path.stem)
    while directory in packages and (
        root is None or (directory != root and _inside(directory, root))
    ):
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts) if parts else path.stem


def test_path(module_path: str, workspace_root: str | None, tests_dirs: Collection[str]) -> str:
    """Where the tests for the module go.

    ``tests/test_<module>.py`` in the nearest ``tests`` folder at or above the module within the
    workspace (``tests_dirs``: the ones that exist), else ``test_<module>.py`` beside the module.
    """
    root = _norm(workspace_root) if workspace_root else None
    path = _norm(module_path, root)
    stem = path.parent.name if path.stem == "__init__" else path.stem
    filename = f"test_{stem}.py"
    beside = str(path.parent / filename)
    if root is None or not _inside(path.parent, root):
        return beside
    known = {_norm(d, root) for d in tests_dirs}
    directory = path.parent
    while True:
        if directory in known and directory.name == "tests":
            return str(directory / filename)
        if directory / "tests" in known:
            return str(directory / "tests" / filename)
        if directory == root:
            return beside
        directory = directory.parent
