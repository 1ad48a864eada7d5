"""Whether a name is bound anywhere in a file, found lazily (the names check stays fast on a
long file: the language's binding query runs on the name's occurrences only, not the tree)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Query, Tree

#: The names a binding query's captures bind (a language's reading of its captures).
Bound = Callable[[dict[str, list["Node"]]], set[str]]


class Bindings:
    """``name in bindings``: whether the file binds ``name`` somewhere. Its occurrences are
    tried nearest ``near`` first (a local is bound in the function around its use), each with
    ``query`` restricted to the occurrence's bytes; answers are kept for the check."""

    def __init__(self, query: Query, tree: Tree, data: bytes, near: int, bound: Bound) -> None:
        self._query, self._tree, self._data, self._near = query, tree, data, near
        self._bound = bound
        self._known: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name not in self._known:
            self._known[name] = self._find(name)
        return self._known[name]

    def _find(self, name: str) -> bool:
        from tree_sitter import QueryCursor

        word = name.encode()
        for at in _places(self._data, word, self._near):
            cursor = QueryCursor(self._query)
            cursor.set_byte_range(at, at + len(word))
            if name in self._bound(cursor.captures(self._tree.root_node)):
                return True
        return False


def _is_word(data: bytes, at: int, size: int) -> bool:
    before = data[at - 1 : at] if at else b""
    after = data[at + size : at + size + 1]
    return not (before.isalnum() or before in (b"_", b"$")) and not (
        after.isalnum() or after in (b"_", b"$")
    )


def _places(data: bytes, word: bytes, near: int) -> Iterator[int]:
    """Where ``word`` occurs as a whole word: backwards from ``near``, then forwards."""
    at = near
    while True:
        at = data.rfind(word, 0, at)
        if at < 0:
            break
        if _is_word(data, at, len(word)):
            yield at
    at = near
    while True:
        at = data.find(word, at)
        if at < 0:
            return
        if _is_word(data, at, len(word)):
            yield at
        at += len(word)
