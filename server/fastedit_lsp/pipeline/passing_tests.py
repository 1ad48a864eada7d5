"""With ``tests.run`` on, generated tests that fail on the current code never land (invariant 9).

Before a test-writing job's text reaches the test module, the module it would make is run with
pytest through the host (on a copy, in a subprocess: the user opted in to running their code).
The generated tests that fail are dropped (``write_tests.without_tests``) and the rest run again,
until what remains passes; the job says which tests were dropped. When pytest cannot run the
module at all (it does not import), every test fails and none lands; when pytest does not finish
(it takes too long), no generated test is known to fail: they land flagged (``ok: false``), so
that a function with tests never ends without a test module.

The offline generator's text already holds its recorded tests by then: with ``tests.run`` on,
the write-tests action asks the host's recorder (``TestModuleHost.record``, through
``ActionInput.record``) what the function does before it generates, and the job's reason says
how many recorded tests were added. They are run here like the others, so one that fails in
pytest (an outcome that depends on the process it runs in) is dropped and named too.

Pure asyncio: pytest is reached only through the
:class:`~fastedit_lsp.pipeline.ports.TestModuleHost`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from ..actions.base import Verification
from ..actions.write_tests import test_names, without_tests
from ..core.jobs import TestModule
from .offline import pieces
from .ports import TestModuleHost

#: What the job says of tests pytest could not run.
UNRUN = "the generated tests were not run by pytest: they are written unverified"

#: Runs at most: dropping a test rarely makes another fail, but it can (shared state).
ROUNDS = 3


async def keep_passing(
    host: TestModuleHost, destination: TestModule, text: str
) -> tuple[str, Verification]:
    """``text`` without its tests that fail on the current code, and what pytest said."""
    existing = destination.existing
    dropped: list[str] = []
    summary = "pytest did not run"
    for _ in range(ROUNDS):
        generated = test_names(text)
        if not generated:
            break
        summary, outcomes = await host.run_tests(destination, existing + text)
        if not outcomes and not summary.startswith("pytest: "):
            # pytest did not finish (it took too long): no test is known to fail, so none is
            # dropped; the module lands flagged.
            return text, {"ok": False, "details": f"{summary}; {UNRUN}"}
        if not outcomes:  # pytest could not collect the module: every test fails
            dropped += generated
            text = ""
            break
        failed = [name for name in generated if outcomes.get(name, "failed") == "failed"]
        if not failed:
            break
        dropped += failed
        text = without_tests(text, failed)
    else:
        # The last round dropped tests: what is left was not run without them.
        if text:
            summary, outcomes = await host.run_tests(destination, existing + text)
            failed = [n for n in test_names(text) if outcomes.get(n, "failed") == "failed"]
            dropped += failed
            text = without_tests(text, failed) if failed else text
    details = summary
    if dropped:
        more = f" and {len(dropped) - 8} more" if len(dropped) > 8 else ""
        shown = ", ".join(dropped[:8]) + more
        details += (
            f"; dropped {len(dropped)} generated test{'s' if len(dropped) > 1 else ''} that "
            f"failed on the current code: {shown}"
        )
    return text, {"ok": bool(text) or None, "details": details}


async def passing_only(
    host: TestModuleHost,
    destination: TestModule,
    source: AsyncIterator[str],
    into: Verification,
    supplement: Callable[[str], Awaitable[tuple[str, str]]] | None = None,
    notes: list[str] | None = None,
) -> AsyncIterator[str]:
    """``source``'s text, once complete, with what ``supplement`` adds to it (the recorder's
    tests; what it says goes into ``notes``), without the generated tests that fail; what
    pytest said goes ``into`` the given dict."""
    text = "".join([piece async for piece in source])
    if supplement is not None and text:
        text, note = await supplement(text)
        if note and notes is not None:
            notes.append(note)
    kept, verification = await keep_passing(host, destination, text)
    into.update(verification)
    async for piece in pieces(kept):
        yield piece
