"""workspace/executeCommand: ``fastedit.revertHunk`` and ``fastedit.keepAll`` (``lsp.review``,
through the job reporter)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ...core.jobs import JobRegistry
from ..reporter import JobReporter


def register(server: LanguageServer, *, jobs: JobRegistry, reporter: JobReporter) -> None:
    @server.command("fastedit.revertHunk")
    async def revert_hunk_command(ls: LanguageServer, *args: Any) -> dict[str, Any]:
        """fastedit.revertHunk {jobId, hunk}: restore one hunk of a rewrite."""
        from .command_args import RevertHunkArgs, parse

        a = parse("fastedit.revertHunk", RevertHunkArgs, args)
        job = jobs.get(a.jobId)
        if job is None:
            raise JsonRpcInvalidParams(f"fastedit.revertHunk: jobId: no job {a.jobId}")
        result = await reporter.review.revert_hunk(job, a.hunk)
        if result["reverted"]:
            reporter.hunk_reverted(job)
        return result

    @server.command("fastedit.keepAll")
    async def keep_all(ls: LanguageServer, *args: Any) -> dict[str, Any]:
        """fastedit.keepAll {jobId}: end the review of a rewrite, keeping its changes."""
        from .command_args import JobIdArgs, parse

        a = parse("fastedit.keepAll", JobIdArgs, args)
        job = jobs.get(a.jobId)
        if job is None:
            raise JsonRpcInvalidParams(f"fastedit.keepAll: jobId: no job {a.jobId}")
        return {"kept": reporter.kept(job)}
