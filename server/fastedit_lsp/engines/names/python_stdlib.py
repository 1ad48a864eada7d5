"""The members of Python's standard library modules, read from typeshed's stubs, never imported.

Pure, offline. The stubs come with ``typeshed_client`` (a well-kept package that bundles
typeshed's ``stdlib``); they are parsed with :mod:`ast` (reading a ``.pyi`` runs nothing). Every
name a stub defines in any branch counts (``if sys.version_info >= (3, 12):`` or not, any
platform): a member of another Python version or platform is not flagged. A module whose stub
has a module ``__getattr__`` or a star import of a module not in the stubs, or which has no
stub, has unknown members (None). Results are cached per module (the stubs do not change while
the server runs).
"""

from __future__ import annotations

import ast
import builtins as _builtins
import functools
import re
import sys
from pathlib import Path


def is_stdlib(module: str) -> bool:
    """Whether ``module``'s top-level package is in the standard library (by name: Python's own
    list, read without importing anything)."""
    return module.split(".", 1)[0] in sys.stdlib_module_names


@functools.cache
def _typeshed() -> Path | None:
    """typeshed's ``stdlib`` folder as ``typeshed_client`` ships it (found, not imported)."""
    from importlib.util import find_spec

    spec = find_spec("typeshed_client")
    if spec is None or not spec.submodule_search_locations:
        return None  # without it, no member is flagged
    folder = Path(next(iter(spec.submodule_search_locations))) / "typeshed"
    return folder if folder.is_dir() else None


@functools.cache
def _stub(module: str) -> Path | None:
    """The stub of ``module`` (any Python version's: typeshed's VERSIONS is not consulted)."""
    root = _typeshed()
    if root is None or not all(part.isidentifier() for part in module.split(".")):
        return None
    base = root.joinpath(*module.split("."))
    for path in (base / "__init__.pyi", base.with_suffix(".pyi")):
        if path.is_file():
            return path
    return None


def _submodules(path: Path) -> set[str]:
    """A package stub's submodules (``json/__init__.pyi`` → decoder, encoder, tool)."""
    if path.name != "__init__.pyi":
        return set()
    return {p.stem if p.suffix == ".pyi" else p.name for p in path.parent.iterdir()} - {"__init__"}


def _defined(body: list[ast.stmt], module: str, out: set[str]) -> bool:
    """Add the names ``body`` defines, in every branch; False when they cannot be known."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                return False
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                out.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            if isinstance(node.target, ast.Name):
                out.add(node.target.id)
        elif isinstance(getattr(node, "name", None), ast.Name):
            out.add(getattr(node, "name").id)  # noqa: B009 - type X = ... (3.12+)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.add(alias.asname or alias.name.split(".", 1)[0])
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    source = _absolute(module, node)
                    names = members(source) if source else None
                    if names is None:
                        return False
                    out.update(names)
                else:
                    out.add(alias.asname or alias.name)
        elif isinstance(node, ast.If):
            if not _defined(node.body, module, out) or not _defined(node.orelse, module, out):
                return False
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                if not _defined(part, module, out):
                    return False
    return True


def _absolute(module: str, node: ast.ImportFrom) -> str | None:
    """The module a star import names (``from .decoder import *`` in ``json`` → json.decoder)."""
    if not node.level:
        return node.module
    parts = module.split(".")
    if _stub(module) is not None and _stub(module).name != "__init__.pyi":  # type: ignore[union-attr]
        parts = parts[:-1]  # a plain module: level 1 is its package
    parts = parts[: len(parts) - node.level + 1]
    return ".".join([*parts, node.module] if node.module else parts) or None


@functools.cache
def _source(module: str) -> Path | None:
    """The running Python's own source of ``module`` (read, never imported), if it has one."""
    import sysconfig

    root = Path(sysconfig.get_path("stdlib"))
    if not all(part.isidentifier() for part in module.split(".")):
        return None
    base = root.joinpath(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _read(path: Path, module: str, out: set[str]) -> bool:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return False
    if _DYNAMIC.search(path.read_bytes()):
        return False
    return _defined(tree.body, module, out)


#: Source that writes its module's namespace in ways no reading shows.
_DYNAMIC = re.compile(rb"\bglobals\s*\(|\b_convert_\b|sys\.modules\[__name__\]|\bexec\s*\(")


@functools.cache
def members(module: str) -> frozenset[str] | None:
    """Every name the stdlib module ``module`` has (its stub's definitions in any branch, the
    running Python's source of it where there is one, and its submodules), or None when they
    cannot be known."""
    stub, source = _stub(module), _source(module)
    if stub is None:
        return None
    out: set[str] = set()
    if not _read(stub, module, out):
        return None
    if source is not None and not _read(source, module, out):
        return None
    out.update(_submodules(stub))
    # Every module has these at run time, stub or not.
    out.update(("__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__"))
    out.update(("__path__", "__all__", "__dict__", "__builtins__", "__cached__"))
    return frozenset(out)


@functools.cache
def builtins() -> frozenset[str]:
    """The builtins of every Python 3 version (typeshed's ``builtins.pyi``, all branches)."""
    return (members("builtins") or frozenset()) | _RUNNING


def is_builtin(name: str) -> bool:
    """Whether ``name`` is a builtin of some Python 3 version: the running one's first, the
    stub (:func:`builtins`: ~45 ms to read, once) only for a name it does not have, which
    most drafts never read."""
    return name in _RUNNING or name in builtins()


#: The running Python's builtins (loaded in every interpreter: reading them runs nothing).
_RUNNING = frozenset(dir(_builtins))
