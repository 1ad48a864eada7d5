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
            code_action_kinds=[types.CodeActionKind.RefactorRewrite, types.CodeActionKind.QuickFix],
            resolve_provider=False,
        ),
    )
    def code_action(
        ls: FasteditServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        """textDocument/codeAction: Commands carrying everything their job needs."""
        if params.text_document.uri not in ls.documents:
            return None
        only = [_kind(kind) for kind in params.context.only or []]
        position = params.range.end
        actions = [
            *_retry_actions(ls, params),
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
            ),
        ]
        # The client may ask for some kinds only (e.g. quick fixes for a diagnostic).
        return [a for a in actions if not only or any(_kind(a.kind).startswith(k) for k in only)]


def _kind(kind: object) -> str:
    """A code action kind as its wire string (lsprotocol gives enum members)."""
    return str(getattr(kind, "value", kind) or "")


def _retry_actions(ls: FasteditServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Offer "Retry with the standard model" on the intact region of the last finished job."""
    uri = params.text_document.uri
    document = ls.documents[uri]
    job = ls.jobs.last_finished(uri)
    if job is None or job.state == "reverted" or job.route == "standard":
        return []
    tracker = job.tracker
    if tracker.pending or tracker.verify(document) is not None:
        return []
    start = document.to_point(params.range.start.line, params.range.start.character)
    end = document.to_point(params.range.end.line, params.range.end.character)
    if end < tracker.start or start > tracker.end:
        return []
    failed = job.state == "failed" or job.verification.get("ok") is False
    title = "Retry with the standard model (fastedit)" + (
        f" — {job.verification.get('details')}" if job.verification.get("ok") is False else ""
    )
    return [
        types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix if failed else types.CodeActionKind.RefactorRewrite,
            is_preferred=failed,
            command=types.Command(
                title="Retry with the standard model",
                command="fastedit.retry",
                arguments=[{"jobId": job.id, "profile": "standard"}],
            ),
        )
    ]
