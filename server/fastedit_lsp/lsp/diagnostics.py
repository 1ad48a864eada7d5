"""textDocument/publishDiagnostics for fastedit's own diagnostics, from several owners.

A publish replaces all of a document's diagnostics from this server, so every owner (the
per-hunk review, a parse check...) sets its own list here and each publish carries the union.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


class DiagnosticSets:
    """fastedit's diagnostics per document and owner; publishes their union."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._sets: dict[str, dict[str, list[types.Diagnostic]]] = {}

    def set(self, uri: str, owner: str, diagnostics: Sequence[types.Diagnostic]) -> None:
        """Replace ``owner``'s diagnostics on ``uri`` and publish the document's union."""
        owners = self._sets.setdefault(uri, {})
        if not diagnostics and owner not in owners:
            return
        if diagnostics:
            owners[owner] = list(diagnostics)
        else:
            owners.pop(owner, None)
        union = [d for items in owners.values() for d in items]
        if not owners:
            self._sets.pop(uri, None)
        self._server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=union)
        )

    def get(self, uri: str, owner: str) -> list[types.Diagnostic]:
        return list(self._sets.get(uri, {}).get(owner, []))
