"""What the disk says around a Java file (for the names check): its package's other types, and
the sources of the types it names.

The package is the file's directory: the top-level types its other ``.java`` files declare
(found with a pattern on each line that starts a declaration at column 0, plus the files'
names). The source root is the directory less the package's path (``src/main/java`` for
``src/main/java/a/b/C.java`` in ``package a.b``); a type ``a.b.D`` is read from
``<root>/a/b/D.java`` (or the file of its package declaring it) with tree-sitter, when the
check needs its members. Answers None when the file's package cannot be read. Each file's
answer is kept by its size and modification time.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engines.names.findings import JavaPackage, JavaType

if TYPE_CHECKING:
    from tree_sitter import Tree

#: A directory with more Java files than this is not read (the check stays fast).
MAX_FILES = 1_000
#: Files bigger than this (bytes) are not read.
MAX_BYTES = 2_000_000
_PACKAGE = re.compile(rb"^\s*package\s+([\w.]+)\s*;", re.M)
_TOP_TYPE = re.compile(
    rb"^(?:(?:public|protected|private|abstract|final|sealed|non-sealed|static|strictfp)\s+)*"
    rb"(?:class|interface|enum|record|@interface)\s+([A-Za-z_$][\w$]*)",
    re.M,
)

_Key = tuple[int, int]


@dataclass
class JavaPackages:
    """Reads Java packages on disk, keeping each file's and directory's last answer."""

    _dirs: dict[str, tuple[tuple[_Key, ...], dict[str, str]]] = field(default_factory=dict)
    _types: dict[str, tuple[_Key, dict[str, JavaType]]] = field(default_factory=dict)

    def package(self, path: str) -> JavaPackage | None:
        """The surroundings of the Java file at ``path``; None: its package cannot be read."""
        if not path.endswith(".java"):
            return None
        file = Path(path)
        name = _package_of(file)
        if name is None:
            return None
        folder = file.parent
        types = self._dir_types(str(folder))
        if types is None:
            return None
        others = frozenset(t for t, owner in types.items() if owner != file.name)
        parts = name.split(".") if name else []
        root: Path | None = folder
        for part in reversed(parts):
            if root is None or root.name != part:
                root = None
                break
            root = root.parent
        return JavaPackage(
            name,
            others,
            lambda qualified: self.lookup(root, name, folder, qualified),
            lambda package: self.types_of(root, package),
        )

    def types_of(self, root: Path | None, package: str) -> frozenset[str] | None:
        """The top-level types of a package under ``root``."""
        if root is None:
            return None
        found = self._dir_types(str(root.joinpath(*package.split("."))))
        return None if not found else frozenset(found)

    def lookup(self, root: Path | None, own: str, folder: Path, qualified: str) -> JavaType | None:
        """A type's members and supertypes, read from its source under ``root`` (or the
        file's own folder for its package)."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, -1, -1):
            package = ".".join(parts[:cut])
            if package == own:
                directory: Path | None = folder
            elif root is not None:
                directory = root.joinpath(*parts[:cut])
            else:
                directory = None
            if directory is None:
                continue
            types = self._dir_types(str(directory))
            if not types or parts[cut] not in types:
                continue
            read = self._read(directory / types[parts[cut]], package, root, folder, own)
            return None if read is None else read.get(qualified)
        return None

    def _dir_types(self, directory: str) -> dict[str, str] | None:
        """Each top-level type of a directory's ``.java`` files → its file's name."""
        try:
            entries = [e for e in os.scandir(directory) if e.name.endswith(".java")]
        except OSError:
            return None
        if len(entries) > MAX_FILES:
            return None
        try:
            key = tuple(sorted((e.stat().st_size, e.stat().st_mtime_ns) for e in entries))
        except OSError:
            return None
        kept = self._dirs.get(directory)
        if kept is not None and kept[0] == key:
            return kept[1]
        out: dict[str, str] = {}
        for entry in entries:
            out.setdefault(entry.name[: -len(".java")], entry.name)
            try:
                if entry.stat().st_size > MAX_BYTES:
                    continue
                data = Path(entry.path).read_bytes()
            except OSError:
                continue
            for match in _TOP_TYPE.finditer(data):
                out.setdefault(match.group(1).decode("utf-8", "replace"), entry.name)
        self._dirs[directory] = (key, out)
        return out

    def _read(
        self, file: Path, package: str, root: Path | None, folder: Path, own: str
    ) -> dict[str, JavaType] | None:
        """Every type a source declares (qualified) → its members and resolved supertypes."""
        from ..engines.names.java import Facts, members_declared, resolve
        from ..engines.parse_tree import parse

        try:
            stat = file.stat()
            if stat.st_size > MAX_BYTES:
                return None
            key = (stat.st_size, stat.st_mtime_ns)
            kept = self._types.get(str(file))
            if kept is not None and kept[0] == key:
                return kept[1]
            text = file.read_text("utf-8", "replace")
        except OSError:
            return None
        tree: Tree = parse("java", text).tree
        if tree.root_node.has_error:
            return None
        facts = Facts(tree)

        def exists(qualified: str) -> bool:
            from ..engines.names.java import stdlib

            if qualified in stdlib() or qualified in facts.types:
                return True
            head, _, name = qualified.rpartition(".")
            if head == own:
                types = self._dir_types(str(folder))
            elif root is not None:
                types = self._dir_types(str(root.joinpath(*head.split("."))))
            else:
                types = None
            return types is not None and name in types

        out = {
            qualified: JavaType(
                members_declared(node),
                tuple(resolve(w, facts, exists) or "?" for w in written),
            )
            for qualified, (node, written) in facts.types.items()
        }
        del package
        self._types[str(file)] = (key, out)
        return out


def _package_of(file: Path) -> str | None:
    """The ``package`` of the file on disk, else of a ``.java`` file beside it ("" for the
    default package); None when none can be read."""
    candidates = [file] if file.is_file() else []
    with contextlib.suppress(OSError):
        candidates += sorted(
            Path(e.path) for e in os.scandir(file.parent) if e.name.endswith(".java")
        )[:3]
    for candidate in candidates:
        try:
            with candidate.open("rb") as handle:
                head = handle.read(65_536)
        except OSError:
            continue
        match = _PACKAGE.search(head)
        return match.group(1).decode() if match else ""
    return None
