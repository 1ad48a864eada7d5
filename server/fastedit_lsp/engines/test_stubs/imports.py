"""Imports of the generated module: ``_Imports`` collects the imports a generated module needs
and renders them in isort/ruff order, so the output passes ruff's import sorting.
"""

from __future__ import annotations

import sys

from .bindings import _Binding


class _Imports:
    """The imports a generated module needs, rendered in isort/ruff order."""

    def __init__(self, first_party_root: str) -> None:
        self._root = first_party_root
        self._plain: set[tuple[str, str | None]] = set()  # import x [as y]
        self._from: set[tuple[str, str, str | None]] = set()  # from m import n [as a]

    def add(self, binding: _Binding) -> None:
        if binding.module:
            self._from.add((binding.module, binding.name, binding.alias))
        else:
            self._plain.add((binding.name, binding.alias))

    def plain(self, name: str) -> None:
        self._plain.add((name, None))

    def from_(self, module: str, name: str, alias: str | None = None) -> None:
        self._from.add((module, name, alias))

    def prune(self, used: set[str]) -> None:
        """Drop the imports whose bound name nothing uses (pytest, if only imported)."""
        self._plain = {(n, a) for n, a in self._plain if (a or n.split(".")[0]) in used}
        self._from = {(m, n, a) for m, n, a in self._from if (a or n) in used}

    def _section(self, module: str) -> int:
        top = module.split(".")[0]
        if top == self._root:
            return 2
        if top in sys.stdlib_module_names:
            return 0
        return 1

    def render(self) -> str:
        sections: list[list[str]] = [[], [], []]
        for name, alias in sorted(self._plain, key=lambda p: (p[0].lower(), p[0], p[1] or "")):
            line = f"import {name}" + (f" as {alias}" if alias else "")
            sections[self._section(name)].append(line)
        modules = sorted({m for m, _, _ in self._from}, key=lambda m: (m.lower(), m))
        for module in modules:
            section = sections[self._section(module)]
            members = sorted(
                (n for m, n, a in self._from if m == module and a is None), key=_member_key
            )
            if members:
                section.append(_from_line(module, members))
            for name, alias in sorted(
                ((n, a) for m, n, a in self._from if m == module and a is not None),
                key=lambda p: (_member_key(p[0]), p[1]),
            ):
                section.append(f"from {module} import {name} as {alias}")
        return "\n\n".join("\n".join(lines) for lines in sections if lines)


def _member_key(name: str) -> tuple[int, str, str]:
    # ruff's isort `order-by-type`: CONSTANTS, then Classes, then everything else.
    if len(name) > 1 and name.isupper():
        kind = 0
    elif name[:1].isupper():
        kind = 1
    else:
        kind = 2
    return kind, name.lower(), name


def _from_line(module: str, members: list[str]) -> str:
    line = f"from {module} import {', '.join(members)}"
    if len(line) <= 88:
        return line
    body = "".join(f"    {m},\n" for m in members)
    return f"from {module} import (\n{body})"
