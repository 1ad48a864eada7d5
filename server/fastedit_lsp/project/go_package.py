"""The names a Go file's package declares in its other files (for the names check).

Reads the ``.go`` files of the file's directory (not the file itself), keeps those of the same
package (and its external test package ``p_test``, leniently) and collects their package-level
declarations with tree-sitter. Answers None when the directory cannot be read or a file of it
cannot be parsed cleanly: the check then does not flag unknown package-level names. A cache
keyed by each file's size and modification time makes repeated checks cheap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

#: A directory with more Go files than this is not read (the check stays fast).
MAX_FILES = 400
#: Files bigger than this (bytes) make the package unknown.
MAX_BYTES = 2_000_000


@dataclass
class GoPackages:
    """Reads packages' declarations, keeping each file's last answer."""

    _files: dict[str, tuple[tuple[int, int], frozenset[str], str | None]] = field(
        default_factory=dict
    )

    def names(self, path: str) -> frozenset[str] | None:
        """Package-level names declared by the other ``.go`` files next to ``path``; None:
        they cannot all be read."""
        if not path.endswith(".go"):
            return None
        file = Path(path)
        try:
            own = file.read_bytes() if file.is_file() else b""
            entries = [e for e in os.scandir(file.parent) if e.name.endswith(".go")]
        except OSError:
            return None
        if len(entries) > MAX_FILES:
            return None
        package = _package(own)
        out: set[str] = set()
        for entry in entries:
            if entry.name == file.name:
                continue
            read = self._read(entry)
            if read is None:
                return None
            declared, name = read
            if (
                package is None
                or name is None
                or name.removesuffix("_test") == package.removesuffix("_test")
            ):
                out.update(declared)
        return frozenset(out)

    def _read(self, entry: os.DirEntry[str]) -> tuple[frozenset[str], str | None] | None:
        from ..engines.names.go import declared, package_name
        from ..engines.parse_tree import parse

        try:
            stat = entry.stat()
            if stat.st_size > MAX_BYTES:
                return None
            key = (stat.st_size, stat.st_mtime_ns)
            kept = self._files.get(entry.path)
            if kept is not None and kept[0] == key:
                return kept[1], kept[2]
            text = Path(entry.path).read_text("utf-8", "replace")
        except OSError:
            return None
        parsed = parse("go", text)
        if parsed.tree.root_node.has_error:
            return None
        names, package = declared(parsed.tree), package_name(parsed.tree)
        self._files[entry.path] = (key, names, package)
        return names, package


def _package(data: bytes) -> str | None:
    for line in data.decode("utf-8", "replace").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "package":
            return words[1]
    return None
