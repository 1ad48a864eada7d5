"""The names check: does every name a draft reads resolve? (tree-sitter, no external tool)

Pure and offline. A draft replaces one region of a document; the check looks at the names read
inside the region of the document after the edit (its tree, from ``engines.parse``) and finds
each one's definition: a local, a parameter, an enclosing scope's name, a module-level
definition (wherever in the file), an import, a builtin or standard global of the language.
A member of a module whose members are known without running anything (Python's standard
library from typeshed's stubs; JavaScript's standard globals from a list shipped here) is
checked too.

What cannot be resolved with certainty is not flagged: a false alarm costs more than a miss
(a star import, ``globals()`` writes, a global of another environment, a name another file of
the package may define). Where a language has no names check, the answer is ``ok: None``
("not checked"), never ``ok: True``.

The API: :func:`check_names` (a parsed text and the region's bytes → :class:`NamesVerdict`),
:func:`supported` (the languages checked).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..languages import DISPLAY
from .findings import CHeader as CHeader
from .findings import CIncludes as CIncludes
from .findings import Finding as Finding
from .findings import JavaPackage as JavaPackage
from .findings import JavaType as JavaType
from .findings import NamesVerdict as NamesVerdict
from .findings import PackageNames as PackageNames
from .findings import Rules

if TYPE_CHECKING:
    from tree_sitter import Tree

_JAVASCRIPT = frozenset({"javascript", "typescript", "tsx"})


def _rules(language: str, package: PackageNames) -> Rules | None:
    if language == "go":
        from . import go

        return go.rules(package if isinstance(package, frozenset) else None)
    if language == "java":
        from . import java

        return java.rules(package if isinstance(package, JavaPackage) else None)
    if language == "c_sharp":
        from . import c_sharp

        return c_sharp.findings
    if language == "rust":
        from . import rust

        return rust.rules(package if isinstance(package, frozenset) else None)
    if language in ("c", "cpp"):
        from . import c

        return c.rules(language, package if isinstance(package, CIncludes) else None)
    if language == "python":
        from . import python

        return python.findings
    if language in _JAVASCRIPT:
        from . import javascript

        return javascript.rules(language)
    return None


def supported(language: str) -> bool:
    """Whether drafts in ``language`` (a grammar name) get a names check."""
    return (
        language in ("python", "go", "java", "rust", "c_sharp", "c", "cpp")
        or language in _JAVASCRIPT
    )


def check_names(
    language: str,
    tree: Tree,
    data: bytes,
    start: int,
    end: int,
    package: PackageNames = None,
) -> NamesVerdict:
    """The names read in bytes ``[start, end)`` of ``data`` (parsed as ``tree``), resolved.
    ``package``: what the package's other files declare (Go: names; Java: a
    :class:`JavaPackage`; C, C++: a :class:`CIncludes`), None when unknown.

    A text that does not parse is not checked (its definitions cannot be read with
    certainty): the parse check speaks for it.
    """
    name = DISPLAY.get(language, language)
    rules = _rules(language, package)
    if rules is None:
        return NamesVerdict(None, f"{name} names are not checked")
    if tree.root_node.has_error and language not in ("c", "cpp"):
        # (C and C++: errors are common where macros are; the rules look at those near)
        return NamesVerdict(None, f"{name} names not checked: the text does not parse")
    found = rules(tree, data, start, end)
    if isinstance(found, str):
        return NamesVerdict(None, f"{name} names not checked: {found}")
    if found:
        found.sort(key=lambda f: f.start)
        return NamesVerdict(False, found[0].message, tuple(found))
    return NamesVerdict(True, "every name read resolves")


def draft_resolves(language: str | None, prefix: str, draft: str, suffix: str) -> bool:
    """Whether the names ``draft`` reads, between ``prefix`` and ``suffix``, resolve: False only
    when a names check finds one that does not (a completion is then not offered); True where
    there is no check, or the text does not parse."""
    if language is None or not supported(language) or not draft.strip():
        return True
    from ..parse_tree import parse

    parsed = parse(language, prefix + draft + suffix)
    start = len(prefix.encode("utf-8", "surrogatepass"))
    end = start + len(draft.encode("utf-8", "surrogatepass"))
    return check_names(language, parsed.tree, parsed.data, start, end).ok is not False
