"""textDocument/codeAction: offer fastedit's actions instantly (no model call here)."""

from __future__ import annotations

import time

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ...actions.registry import Registry
from ...core.jobs import JobRegistry
from ...core.timings import Timings
from .. import user_actions
from ..config import Config
from ..documents import DocumentStore
from ..review import Review


def register(
    server: LanguageServer,
    *,
    documents: DocumentStore,
    jobs: JobRegistry,
    review: Review,
    config: Config,
    actions: Registry,
    timings: Timings,
) -> None:
    """``review``: the per-hunk review's actions (``JobReporter.review``); ``actions``: the
    registry, whose run-time entries follow the settings (``config``)."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.RefactorRewrite, types.CodeActionKind.QuickFix],
            resolve_provider=False,
        ),
    )
    def code_action(
        ls: LanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        """textDocument/codeAction: Commands carrying everything their job needs."""
        started = time.perf_counter()
        try:
            return _actions(params, documents, jobs, review, config, actions)
        finally:
            timings.record("codeAction", time.perf_counter() - started)


def _actions(
    params: types.CodeActionParams,
    documents: DocumentStore,
    jobs: JobRegistry,
    review: Review,
    config: Config,
    registry: Registry,
) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    document = documents.get(uri)
    if document is None:
        return None
    from ...actions.base import OfferView

    only = [_kind(kind) for kind in params.context.only or []]
    rng = params.range
    view = OfferView(
        uri=uri,
        document=document,
        start=document.to_point(rng.start.line, rng.start.character),
        end=document.to_point(rng.end.line, rng.end.character),
        wire_range={
            "start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character},
        },
        errors=sum(
            1
            for d in params.context.diagnostics
            if d.severity in (None, types.DiagnosticSeverity.Error)
        ),
        outline=lambda: documents.outline(uri),
    )
    actions = _retry_actions(params, documents, jobs)
    actions += review.code_actions(params)
    user_actions.sync(config, registry)
    for spec in registry:
        for offer in spec.load().offers(view):
            kind = _KINDS[offer.kind]
            actions.append(
                types.CodeAction(
                    title=offer.title,
                    kind=kind,
                    command=types.Command(
                        title=offer.title.removesuffix(" (fastedit)"),
                        command=spec.command,
                        arguments=[offer.argument],
                    ),
                )
            )
    # The client may ask for some kinds only (e.g. quick fixes for a diagnostic).
    return [a for a in actions if not only or any(_kind(a.kind).startswith(k) for k in only)]


_KINDS = {
    "refactor.rewrite": types.CodeActionKind.RefactorRewrite,
    "quickfix": types.CodeActionKind.QuickFix,
}


def _kind(kind: object) -> str:
    """A code action kind as its wire string (lsprotocol gives enum members)."""
    return str(getattr(kind, "value", kind) or "")


def _retry_actions(
    params: types.CodeActionParams, documents: DocumentStore, jobs: JobRegistry
) -> list[types.CodeAction]:
    """Offer "Retry with the standard model" on the intact region of the last finished job."""
    uri = params.text_document.uri
    document = documents.get(uri)
    job = jobs.last_finished(uri)
    if document is None:
        return []
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
