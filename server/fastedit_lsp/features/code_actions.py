"""textDocument/codeAction: offer fastedit's actions instantly (no model call here)."""

from __future__ import annotations

from lsprotocol import types

# Imported at run time: pygls reads the handlers' annotations.
from ..server import FasteditServer

COMPLETE_REST = "fastedit.completeRest"


def register(server: FasteditServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.RefactorRewrite], resolve_provider=False
        ),
    )
    def code_action(
        ls: FasteditServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        """textDocument/codeAction: Commands carrying everything their job needs."""
        if params.text_document.uri not in ls.documents:
            return None
        only = params.context.only
        if only and not any(
            types.CodeActionKind.RefactorRewrite.value.startswith(str(kind)) for kind in only
        ):
            return None
        position = params.range.end
        return [
            types.CodeAction(
                title="Complete the rest (fastedit)",
                kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(
                    title="Complete the rest",
                    command=COMPLETE_REST,
                    arguments=[
                        {
                            "uri": params.text_document.uri,
                            "position": {"line": position.line, "character": position.character},
                        }
                    ],
                ),
            )
        ]
