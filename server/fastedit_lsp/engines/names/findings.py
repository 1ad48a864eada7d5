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


#: A language's rules: (tree, the text's bytes, region start, region end) → the findings, or a
#: reason the region cannot be checked (a string).
Rules = Callable[["Tree", bytes, int, int], "list[Finding] | str"]
