"""The crates a Rust file can name (for the names check): its package's dependencies, read from
the nearest ``Cargo.toml`` above the file (``tomllib``; nothing of Cargo runs).

From the 2018 edition on, a path's first segment is a name in scope or a crate the package
depends on; with this answer the check flags a lowercase first segment that is neither
(``ast::Ast`` with no ``use crate::ast;``). Answers None (the check then leaves such segments
alone) when no manifest is found, it cannot be read, or its edition is 2015 (paths were
relative to the crate's root). Each manifest's answer is kept by its size and modification
time.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Directories climbed at most to find ``Cargo.toml``.
MAX_DEPTH = 12
_SECTIONS = ("dependencies", "dev-dependencies", "build-dependencies")
#: Crates every package may name.
BUILTIN = frozenset({"std", "core", "alloc", "proc_macro", "test"})


@dataclass
class RustCrates:
    """Reads manifests, keeping each one's last answer."""

    _kept: dict[str, tuple[tuple[int, int], frozenset[str] | None]] = field(default_factory=dict)

    def crates(self, path: str) -> frozenset[str] | None:
        """The crate names a ``.rs`` file at ``path`` may use as a path's first segment."""
        if not path.endswith(".rs"):
            return None
        folder = Path(path).parent
        for _ in range(MAX_DEPTH):
            manifest = folder / "Cargo.toml"
            if manifest.is_file():
                return self._read(manifest)
            if folder.parent == folder:
                return None
            folder = folder.parent
        return None

    def _read(self, manifest: Path) -> frozenset[str] | None:
        try:
            stat = manifest.stat()
            key = (stat.st_size, stat.st_mtime_ns)
            kept = self._kept.get(str(manifest))
            if kept is not None and kept[0] == key:
                return kept[1]
            data = tomllib.loads(manifest.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        answer = _names(data)
        self._kept[str(manifest)] = (key, answer)
        return answer


def _names(data: dict[str, Any]) -> frozenset[str] | None:
    package = data.get("package")
    if not isinstance(package, dict):
        return None  # a workspace's manifest: its members have their own
    edition = package.get("edition", "2015")
    if not isinstance(edition, str) or edition == "2015":
        return None  # 2015, or inherited from a workspace (``edition.workspace = true``)
    names = set(BUILTIN)
    tables = [data]
    targets = data.get("target")
    if isinstance(targets, dict):
        tables += [t for t in targets.values() if isinstance(t, dict)]
    for table in tables:
        for section in _SECTIONS:
            deps = table.get(section)
            if isinstance(deps, dict):
                names.update(str(k).replace("-", "_") for k in deps)
    if isinstance(package.get("name"), str):
        names.add(package["name"].replace("-", "_"))
    lib = data.get("lib")
    if isinstance(lib, dict) and isinstance(lib.get("name"), str):
        names.add(lib["name"].replace("-", "_"))
    return frozenset(names)
