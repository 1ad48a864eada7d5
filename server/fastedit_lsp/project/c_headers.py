"""The headers a C or C++ file includes, read from disk (for the names check).

``#include "x.h"`` is looked for next to the including file, then where ``<x.h>`` would be:
the system's include directories (``/usr/local/include``, ``/usr/include`` and its
multiarch directory, GCC's and libstdc++'s, the server's Python's for ``Python.h``). A header
found is read as text: every word of it outside comments counts (a superset of what it
declares; nothing is preprocessed or run), with the words of the headers it includes in turn;
a system header the shipped table knows is only named (the names check adds what the table
knows of it: names a macro pastes together).

A header found neither there nor next to the file is looked for where a build's include path
(``-I``) would point, as a rule: the folders above the file (up to the project's root, four at
most), themselves or their ``include/`` or ``src/``, and node-addon-api's and nan's packages.

A header that cannot be found or read, or that includes one that cannot (unless under an
``#if``, or inside a header included under one: another platform's, as a rule), makes the
answer None: the check then does not flag
a name it does not know. A source file that another one next to it includes (a unity build) is
marked so. Each file's words are kept by its size and modification time, and what an include
brings (the closure of the headers it reads) is kept until one of those files or a folder a
quoted include was looked for in changes: a draft's check of a file with a dozen includes then
stats a few files instead of searching every include path again.
"""

from __future__ import annotations

import os
import re
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..engines.names import CHeader, CIncludes
from ..engines.names.c import in_table, words

#: Headers bigger than this (bytes) are not read (the answer is then None).
MAX_BYTES = 4_000_000
#: Headers read at most for one include (its closure).
MAX_FILES = 1_000
_COMMENTS = re.compile(rb"/\*.*?\*/|//[^\n]*", re.S)


def system_dirs() -> tuple[Path, ...]:
    """The system's include directories that exist, searched in the compiler's order."""
    candidates = [Path("/usr/local/include")]
    candidates += sorted(Path("/usr/include/c++").glob("*"), reverse=True)[:1]
    candidates += sorted(Path("/usr/include").glob("*-linux-gnu*"))
    candidates += sorted(Path("/usr/lib/gcc").glob("*/*/include"), reverse=True)[:1]
    candidates.append(Path("/usr/include"))
    # Node's headers (``node.h``, ``node_api.h``, ``uv.h``, ``v8.h``: what node-gyp gives an addon).
    candidates.append(Path("/usr/include/node"))
    # The server's Python's headers (``Python.h``: an extension module's include path).
    candidates.append(Path(sysconfig.get_paths()["include"]))
    return tuple(d for d in candidates if d.is_dir())


@dataclass
class CHeaders:
    """Reads headers, keeping each file's words and includes."""

    _files: dict[str, tuple[tuple[int, int], _Read]] = field(default_factory=dict)
    _system: tuple[Path, ...] | None = None
    #: What ``header(name, quoted, folder)`` answered, with the stamps it holds while.
    _closures: dict[tuple[str, bool, str], tuple[CHeader | None, _Stamps]] = field(
        default_factory=dict
    )

    def includes(self, path: str) -> CIncludes | None:
        """What the headers a C or C++ file at ``path`` includes bring."""
        if not path.endswith((".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".cu")):
            return None
        folder = Path(path).parent

        def header(name: str, quoted: bool) -> CHeader | None:
            return self.header(name, quoted, folder)

        # A part of another file (a unity build): names may come from the other's includes,
        # which are read as a header's.
        includers = _includers(Path(path))

        def including() -> CHeader | None:
            words: set[str] = set()
            system: list[str] = []
            for includer in includers or ():
                found = self.header(includer.name, True, folder)
                if found is None:
                    return None
                words |= found.words
                system += found.system
            return CHeader(frozenset(words), tuple(system))

        if includers == []:
            return CIncludes(header)
        return CIncludes(header, part=True, including=including if includers else None)

    def header(self, name: str, quoted: bool, folder: Path) -> CHeader | None:
        """What ``#include "name"`` (``quoted``) or ``<name>`` in a file of ``folder`` brings;
        None when it cannot be found or read."""
        key = (name, quoted, str(folder))
        kept = self._closures.get(key)
        if kept is not None and all(_stamp(path) == stamp for path, stamp in kept[1]):
            return kept[0]
        stamps: dict[str, tuple[int, int] | None] = {}
        answer = self._closure(name, quoted, folder, stamps)
        # An mtime comes from a coarse clock: a change in the same tick as the one seen leaves
        # it as it was. So nothing changed in the last second is trusted to stay as seen.
        settled = time.time_ns() - SETTLED_NS
        if all(stamp is None or stamp[1] < settled for stamp in stamps.values()):
            if len(self._closures) >= MAX_CLOSURES:
                self._closures.clear()
            self._closures[key] = (answer, tuple(stamps.items()))
        return answer

    def _closure(
        self, name: str, quoted: bool, folder: Path, stamps: dict[str, tuple[int, int] | None]
    ) -> CHeader | None:
        # A folder a quoted include is looked for in: a header created there changes the
        # answer (its mtime changes with its entries).
        stamps[str(folder)] = _stamp(str(folder))
        first = self._find(name, quoted, folder)
        if first is None:
            return None
        found: set[str] = set()
        system: list[str] = [] if quoted else [name]
        seen = {str(first)}
        # (a file, whether it is included under an #if somewhere on the way)
        todo = [(first, False)]
        while todo:
            file, optional = todo.pop()
            stamps[str(file)] = _stamp(str(file))
            stamps.setdefault(str(file.parent), _stamp(str(file.parent)))
            read = self._read(file)
            if read is None:
                if optional:
                    continue
                return None
            found |= read[0]
            for nested, nested_quoted in read[1]:
                if not nested_quoted and nested not in system:
                    system.append(nested)
                if not nested_quoted and in_table(nested):
                    continue  # the table knows it (and what it includes) better than its text
                at = self._find(nested, nested_quoted, file.parent)
                conditional = optional or (nested, nested_quoted) in read[2]
                if at is None and conditional:
                    continue  # under an #if: another platform's, as a rule
                if at is None:
                    return None  # its names are not known: nor are the includer's
                if str(at) not in seen:
                    if len(seen) >= MAX_FILES:
                        return None
                    seen.add(str(at))
                    todo.append((at, conditional))
        return CHeader(frozenset(found), tuple(system))

    def _find(self, name: str, quoted: bool, folder: Path) -> Path | None:
        if Path(name).is_absolute() or (".." in Path(name).parts and not quoted):
            return None
        if quoted and (folder / name).is_file():
            return folder / name
        if self._system is None:
            self._system = system_dirs()
        for directory in self._system:
            if (directory / name).is_file():
                return directory / name
        return _in_project(name, folder)

    def _read(self, file: Path) -> _Read | None:
        try:
            stat = file.stat()
            if stat.st_size > MAX_BYTES:
                return None
            key = (stat.st_size, stat.st_mtime_ns)
            kept = self._files.get(str(file))
            if kept is not None and kept[0] == key:
                return kept[1]
            data = file.read_bytes()
        except OSError:
            return None
        text = _COMMENTS.sub(b" ", data)
        nested: list[tuple[str, bool]] = []
        conditional: set[tuple[str, bool]] = set()
        depth, guard = 0, _guarded(text)
        for match in _DIRECTIVE.finditer(text):
            word = match.group(1)
            if word in (b"if", b"ifdef", b"ifndef"):
                depth += 1
            elif word == b"endif":
                depth = max(0, depth - 1)
            elif word == b"include" and match.group(3):
                header = (match.group(3).decode("utf-8", "replace").strip(), match.group(2) == b'"')
                nested.append(header)
                if depth > guard:
                    conditional.add(header)
        answer = (words(text), tuple(nested), frozenset(conditional))
        if key[1] < time.time_ns() - SETTLED_NS:  # as for closures (header)
            self._files[str(file)] = (key, answer)
        return answer


#: How old (ns) a file's or folder's mtime must be for a closure holding it to be kept.
SETTLED_NS = 1_000_000_000
#: Closures kept at most (a folder's includes each: far more than one project's).
MAX_CLOSURES = 4096
#: Files and folders with their (size, mtime) when a closure was made; None: not there.
_Stamps = tuple[tuple[str, tuple[int, int] | None], ...]


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        seen = os.stat(path)
    except OSError:
        return None
    return seen.st_size, seen.st_mtime_ns


#: Folders climbed at most to find a header where a build's include path would (``-I``).
MAX_UP = 4
#: Files that mark a project's root: the climb stops there.
_ROOTS = (".git", "binding.gyp", "CMakeLists.txt", "meson.build", "configure", "setup.py")
#: Where a build's include path usually points, under a folder of the project.
_UNDER = ("", "include", "src")
#: Packages of node_modules a native addon's include path names (``napi.h``, ``nan.h``).
_ADDON_PACKAGES = ("node-addon-api", "nan")


def _in_project(name: str, folder: Path) -> Path | None:
    """Where a header the include path of a build would find is, as a rule: in a folder above
    the including file's (up to its project's root, :data:`MAX_UP` at most), itself or under its
    ``include/`` or ``src/`` (``"cpprest/json.h"`` → ``<root>/include/cpprest/json.h``), or in
    node-addon-api's or nan's package (``napi.h``, ``nan.h``)."""
    current = folder
    for _ in range(MAX_UP):
        parent = current.parent
        if parent == current:
            break
        current = parent
        for under in _UNDER:
            candidate = current / under / name if under else current / name
            if candidate.is_file():
                return candidate
        if any((current / marker).exists() for marker in _ROOTS):
            break
    # Node's resolution: the node_modules folders above (and next to) the file's package.
    for above in (folder, *folder.parents):
        modules = above if above.name == "node_modules" else above / "node_modules"
        for package in _ADDON_PACKAGES:
            if (modules / package / name).is_file():
                return modules / package / name
    return None


#: Source files next to a document read at most to find one that includes it.
MAX_SIBLINGS = 200
_SOURCES = (".c", ".cc", ".cpp", ".cxx")


def _includers(path: Path) -> list[Path] | None:
    """The source files next to ``path`` (itself a source file) that ``#include`` it; None when
    the folder cannot be read."""
    if path.suffix not in _SOURCES or not path.parent.is_dir():
        return []
    needle = f'"{path.name}"'.encode()
    out: list[Path] = []
    try:
        siblings = [p for p in path.parent.iterdir() if p.suffix in _SOURCES and p != path]
        for sibling in sorted(siblings)[:MAX_SIBLINGS]:
            data = sibling.read_bytes()
            if needle in data and re.search(rb"#[ \t]*include[ \t]*" + re.escape(needle), data):
                out.append(sibling)
    except OSError:
        return None
    return out


#: A header read: its words, the headers it includes (name, quoted), those under an ``#if``.
_Read = tuple[frozenset[str], tuple[tuple[str, bool], ...], frozenset[tuple[str, bool]]]
_DIRECTIVE = re.compile(
    rb'^[ \t]*#[ \t]*(if|ifdef|ifndef|endif|include)\b(?:[ \t]*([<"])([^>"\n]+)[>"])?', re.M
)
_GUARD = re.compile(
    rb"\A\s*#[ \t]*(?:ifndef[ \t]+(\w+)\s*#[ \t]*define[ \t]+(\w+)|if\s+!\s*defined)"
)


def _guarded(text: bytes) -> int:
    """1 when the header's first directive is its include guard (``#ifndef X_H`` then
    ``#define X_H``): that ``#if`` does not make what it holds conditional; else 0."""
    match = _GUARD.match(text)
    if match is None:
        return 0
    return 1 if match.group(1) is None or match.group(1) == match.group(2) else 0
