"""What the names check finds (shared by the languages' rules)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tree_sitter import Tree

#: What a finding is: a name defined nowhere, a member the module does not have, a name
#: imported from a module that does not define it.
Kind = Literal["undefined", "member", "import"]


@dataclass(frozen=True)
class Finding:
    """One name that does not resolve: where it is (UTF-8 bytes of the text, its 0-based line
    and byte column) and what is wrong."""

    kind: Kind
    name: str
    start: int
    end: int
    line: int
    column: int
    #: For ``member`` and ``import``: the module.
    module: str = ""

    @property
    def message(self) -> str:
        """What the user is told: "line 12: 'load_config' is not defined"."""
        where = f"line {self.line + 1}"
        if self.kind == "member":
            return f"{where}: '{self.module}' has no member '{self.name}'"
        if self.kind == "import":
            return f"{where}: cannot import '{self.name}' from '{self.module}'"
        return f"{where}: '{self.name}' is not defined"


@dataclass(frozen=True)
class NamesVerdict:
    """The check's answer: ``ok`` (None: not checked), what the user is told, the findings."""

    ok: bool | None
    message: str
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class JavaType:
    """A Java type read from a source or the JDK table: the names it declares (fields,
    methods, member types) and its direct supertypes, qualified ("?": one that cannot be
    resolved)."""

    members: frozenset[str]
    supertypes: tuple[str, ...]


@dataclass(frozen=True)
class JavaPackage:
    """What the disk says around a Java file (read in ``project/``): its package's name, the
    top-level types of the package's other files, and lookups of the sources on disk."""

    name: str
    types: frozenset[str]
    #: A qualified type (``a.b.C``, ``a.b.C.Inner``) → what its source declares, or None.
    lookup: Callable[[str], JavaType | None]
    #: A package (``a.b``) → its top-level types on disk, or None.
    package_types: Callable[[str], frozenset[str] | None]


@dataclass(frozen=True)
class CHeader:
    """A header read from disk (in ``project/``): every word of it and of the headers it
    includes that could be read (a superset of what it declares), and the system headers
    (``<...>``) among them, whose token-pasted names only the table knows."""

    words: frozenset[str]
    system: tuple[str, ...] = ()


@dataclass(frozen=True)
class CIncludes:
    """What the disk says around a C or C++ file (read in ``project/``)."""

    #: (the header as written, whether quoted) → what it brings, or None (cannot be read).
    header: Callable[[str, bool], CHeader | None]
    #: Whether another file next to it includes the file (its names may come from there).
    part: bool = False
    #: What the files that include it bring (their words and what they include, this file and
    #: its sibling parts among them), or None (cannot all be read); None when not a part.
    including: Callable[[], CHeader | None] | None = None


#: What the caller knows of the file's package on disk: the names a Go package's other files
#: declare, a Java file's surroundings, a C or C++ file's headers, or None (unknown).
PackageNames = frozenset[str] | JavaPackage | CIncludes | None

#: A language's rules: (tree, the text's bytes, region start, region end) → the findings, or a
#: reason the region cannot be checked (a string).
Rules = Callable[["Tree", bytes, int, int], "list[Finding] | str"]
