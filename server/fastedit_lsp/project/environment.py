"""The project's Python environment, found by reading files (no LSP, never its interpreter).

What a generated test may use depends on what the project has: ``hypothesis`` properties only
where the project has ``hypothesis``. Running the project's interpreter to ask would run code the
repository controls (a ``sitecustomize.py``, a ``.pth`` file: invariant 7), so the answer is read
from files only:

- its virtual environment's ``site-packages`` (a folder holding ``pyvenv.cfg`` in a folder from
  the module's up to the project's root: ``.venv``, ``venv``, ``env``, any name): an installed
  distribution's ``*.dist-info`` (or ``*.egg-info``) folder;
- its declared dependencies: ``pyproject.toml`` (``[project]`` dependencies and optional
  dependencies, ``[dependency-groups]``, Poetry's, PDM's and uv's development dependencies) and
  ``requirements*.txt`` files (also in a ``requirements/`` folder, following ``-r`` includes).

Requirement strings are parsed with ``packaging`` (PyPA's own parser), names compared
normalised (PEP 503).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Iterator
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

#: Lines of requirement files that are options, not requirements.
_OPTION = re.compile(r"^\s*-")
#: ``-r other.txt`` / ``--requirement other.txt`` / ``-c constraints.txt``.
_INCLUDE = re.compile(r"^\s*(?:-r|--requirement)[\s=]+(\S+)")
#: How many requirement files one question reads at most (``-r`` chains may loop).
_MAX_FILES = 32


def has_package(module_path: str, root: str | None, name: str) -> bool:
    """Whether the project of ``module_path`` (within ``root``) has the distribution ``name``:
    installed in its virtual environment, or declared in its ``pyproject.toml`` or requirement
    files (blocking: reads the file system)."""
    wanted = canonicalize_name(name)
    folders = list(_folders(module_path, root))
    for folder in folders:
        for site in _site_packages(folder):
            if wanted in _installed(site):
                return True
    return any(wanted in _declared(folder) for folder in folders)


def _folders(module_path: str, root: str | None) -> Iterator[str]:
    """The module's folder and its parents up to ``root`` (only the module's without one)."""
    directory = os.path.dirname(os.path.abspath(module_path))
    stop = os.path.normpath(os.path.abspath(root)) if root else directory
    while True:
        yield directory
        parent = os.path.dirname(directory)
        if os.path.normpath(directory) == stop or parent == directory:
            return
        if os.path.commonpath([parent, stop]) != stop:
            return  # outside the project
        directory = parent


def _site_packages(folder: str) -> Iterator[str]:
    """The ``site-packages`` folders of the virtual environments directly in ``folder``."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not entry.is_dir() or not os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
            continue
        windows = os.path.join(entry.path, "Lib", "site-packages")
        if os.path.isdir(windows):
            yield windows
        lib = os.path.join(entry.path, "lib")
        try:
            versions = sorted(os.listdir(lib))
        except OSError:
            continue
        for version in versions:
            site = os.path.join(lib, version, "site-packages")
            if version.startswith(("python", "pypy")) and os.path.isdir(site):
                yield site


def _installed(site: str) -> set[str]:
    """The normalised names of the distributions installed in ``site``."""
    try:
        names = os.listdir(site)
    except OSError:
        return set()
    found: set[str] = set()
    for entry in names:
        for suffix in (".dist-info", ".egg-info"):
            if entry.endswith(suffix):
                # ``name-version.dist-info``: the name has no "-" (wheel names escape it).
                found.add(canonicalize_name(entry[: -len(suffix)].split("-")[0]))
    return found


def _declared(folder: str) -> set[str]:
    """The normalised names ``folder``'s ``pyproject.toml`` and requirement files declare."""
    found = {_name(r) for r in _pyproject_requirements(os.path.join(folder, "pyproject.toml"))}
    files: list[str] = []
    for directory in (folder, os.path.join(folder, "requirements")):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        files += [
            os.path.join(directory, n)
            for n in names
            if n.endswith(".txt") and ("requirements" in n or directory != folder)
        ]
    found |= {_name(r) for r in _requirement_lines(files)}
    found.discard("")
    return found


def _name(requirement: str) -> str:
    """The normalised name of a requirement string ("" when it is not one)."""
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""


def _pyproject_requirements(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    out: list[str] = []
    project = _table(data.get("project"))
    out += _strings(project.get("dependencies"))
    for extra in _table(project.get("optional-dependencies")).values():
        out += _strings(extra)
    for group in _table(data.get("dependency-groups")).values():
        out += _strings(group)  # PEP 735 (an include-group table is not a string)
    tool = _table(data.get("tool"))
    poetry = _table(tool.get("poetry"))
    tables = [_table(poetry.get("dependencies")), _table(poetry.get("dev-dependencies"))]
    tables += [_table(_table(g).get("dependencies")) for g in _table(poetry.get("group")).values()]
    out += [name for table in tables for name in table]  # Poetry: names are keys
    for group in _table(_table(tool.get("pdm")).get("dev-dependencies")).values():
        out += _strings(group)
    out += _strings(_table(tool.get("uv")).get("dev-dependencies"))
    return out


def _requirement_lines(files: Iterable[str]) -> Iterator[str]:
    """The requirement strings of requirement files, following ``-r`` includes."""
    queue = list(files)
    seen: set[str] = set()
    while queue and len(seen) < _MAX_FILES:
        path = os.path.normpath(queue.pop(0))
        if path in seen:
            continue
        seen.add(path)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            line = line.split(" #", 1)[0].strip()
            include = _INCLUDE.match(line)
            if include:
                queue.append(os.path.join(os.path.dirname(path), include.group(1)))
            elif line and not line.startswith("#") and not _OPTION.match(line):
                yield line


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
