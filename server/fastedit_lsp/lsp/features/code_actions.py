"""textDocument/codeAction: offer fastedit's actions instantly (no model call here)."""

from __future__ import annotations

import time

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
        started = time.perf_counter()
        try:
            return _actions(ls, params)
        finally:
            ls.timings.record("codeAction", time.perf_counter() - started)


def _actions(ls: FasteditServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    if params.text_document.uri not in ls.documents:
        return None
    only = [_kind(kind) for kind in params.context.only or []]
    position = params.range.end
    actions = [
        *_retry_actions(ls, params),
        *_context_actions(ls, params),
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


def _command_action(
    title: str, kind: types.CodeActionKind, command: str, argument: dict[str, object]
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=kind,
        command=types.Command(
            title=title.removesuffix(" (fastedit)"), command=command, arguments=[argument]
        ),
    )


def _context_actions(ls: FasteditServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Generate regex, Write tests, Fix syntax error: offered only where they apply."""
    uri = params.text_document.uri
    document = ls.documents[uri]
    rng = params.range
    start = document.to_point(rng.start.line, rng.start.character)
    end = document.to_point(rng.end.line, rng.end.character)
    wire_range = {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }
    actions: list[types.CodeAction] = []
    from ...actions import regex
    from ...actions.base import ActionError

    try:
        found = regex.target(document, start, end)
    except ActionError:
        found = None
    if found is not None:
        what = found.examples.description or f"{len(found.examples.positives)} examples"
        actions.append(
            _command_action(
                f"Generate regex: {what} (fastedit)",
                types.CodeActionKind.RefactorRewrite,
                "fastedit.generateRegex",
                {"uri": uri, "range": wire_range},
            )
        )
    if (document.language_id or "python") != "python":
        return actions
    outline = ls.outline(uri)
    if outline.error is not None:
        line, message = outline.error
        if start.line - 2 <= line <= end.line + 2:
            errors = sum(
                1
                for d in params.context.diagnostics
                if d.severity in (None, types.DiagnosticSeverity.Error)
            )
            actions.append(
                _command_action(
                    f"Fix syntax error: {message} (fastedit)",
                    types.CodeActionKind.QuickFix,
                    "fastedit.fixSyntax",
                    {"uri": uri, "range": wire_range, "diagnostics": errors},
                )
            )
    elif (function := outline.function_at(start.line)) is not None:
        actions.append(
            _command_action(
                f"Write tests for {function.qualname} (fastedit)",
                types.CodeActionKind.RefactorRewrite,
                "fastedit.generateTests",
                {
                    "uri": uri,
                    "position": {"line": rng.start.line, "character": rng.start.character},
                },
            )
        )
    return actions


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
