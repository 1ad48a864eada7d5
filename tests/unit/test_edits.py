"""The edit session without a client: coalescing, holding split pairs, cancel and refusals."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from fastedit_lsp.core.document import Change, Document, Point
from fastedit_lsp.core.rewrite_tracking import RewriteTracker
from fastedit_lsp.core.tracking import RegionTracker, SentEdit, apply_change
from fastedit_lsp.pipeline.edits import (
    ConflictError,
    EditRejectedError,
    EditSession,
    coalescing_gap,
)
from fastedit_lsp.pipeline.rewrite import RewriteSession
from tests.support.harness import HANG_GUARD


class FakeEditor:
    """Applies edits to the document at once and reports them back, like a prompt editor."""

    def __init__(self, document: Document, tracker: RegionTracker) -> None:
        self.document = document
        self.tracker = tracker
        self.edits: list[str] = []
        self.refuse = False
        self.gate: asyncio.Event | None = None
        self.arrived = asyncio.Event()
        self.applied = asyncio.Event()

    async def apply(self, edit: SentEdit) -> bool:
        self.arrived.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.refuse:
            return False
        self.edits.append(edit.text)
        apply_change(self.document, [(self.tracker, True)], Change(edit.start, edit.end, edit.text))
        self.applied.set()
        return True


def _session(text: str, at: int, **kw: object) -> tuple[EditSession, FakeEditor, Document]:
    document = Document("file:///t.py", text, encoding="utf-16")
    point = Point(0, at)
    tracker = RegionTracker(point, point, "")
    editor = FakeEditor(document, tracker)
    return EditSession(document, tracker, editor.apply, **kw), editor, document  # type: ignore[arg-type]


async def _tokens(items: list[str]) -> AsyncIterator[str]:
    for item in items:
        yield item


async def test_the_first_token_goes_out_alone_and_a_burst_is_coalesced() -> None:
    session, editor, document = _session("x = \n", 4, max_edits_per_second=60)

    async def first_then_burst() -> AsyncIterator[str]:
        yield "1"
        await editor.applied.wait()
        for _ in range(500):
            yield " + 1"

    await session.run(first_then_burst())
    assert document.text == "x = 1" + " + 1" * 500 + "\n"
    assert editor.edits[0] == "1"
    # The rest arrived within one interval: one more edit carries all of it.
    assert len(editor.edits) == 2
    assert session.edits == 2 and session.sent_text == "1" + " + 1" * 500


async def test_final_streaming_sends_one_edit() -> None:
    session, editor, document = _session("x = \n", 4, streaming="final")
    await session.run(_tokens(["a", "b", "c"]))
    assert editor.edits == ["abc"] and document.text == "x = abc\n"


@pytest.mark.parametrize(
    "tokens",
    [
        pytest.param(["a\r", "\nb"], id="crlf-split"),
        pytest.param(["😀"[0], "b"], id="whole-code-point"),
        pytest.param(["a", "\ud83d", "\ude00", "b"], id="surrogate-pair-split"),
        # A first piece that is only the held half: nothing can go out yet, and the session
        # must wait for the rest (it spun without yielding, starving the stream: a hang).
        pytest.param(["\r", "\nb"], id="crlf-split-first"),
        pytest.param(["\ud83d", "\ude00b"], id="surrogate-pair-split-first"),
    ],
)
@pytest.mark.timeout(120)
async def test_a_pair_split_across_tokens_is_never_split_across_edits(tokens: list[str]) -> None:
    session, editor, document = _session("", 0)

    async def slow() -> AsyncIterator[str]:
        for token in tokens:
            yield token
            await asyncio.sleep(0)

    await session.run(slow())
    joined = "".join(tokens)
    assert document.text == joined
    for edit in editor.edits:
        assert not edit.endswith("\r") or edit == editor.edits[-1]
        assert not ("\ud800" <= edit[-1] <= "\udbff")


async def test_cancelling_waits_for_the_edit_on_the_wire_and_counts_it() -> None:
    session, editor, document = _session("x = \n", 4)
    editor.gate = asyncio.Event()

    async def endless() -> AsyncIterator[str]:
        while True:
            yield "1"
            await asyncio.sleep(0)

    task = asyncio.create_task(session.run(endless()))
    await editor.arrived.wait()  # the first edit is on the wire, its reply held
    task.cancel()
    editor.gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The edit that was on the wire when the cancel landed is acknowledged and accounted for.
    assert session.edits == len(editor.edits) == 1
    assert document.text == "x = " + session.sent_text + "\n"


async def test_a_refused_edit_stops_the_session() -> None:
    session, editor, _ = _session("x = \n", 4)
    editor.refuse = True
    with pytest.raises(EditRejectedError):
        await session.run(_tokens(["1", "2"]))
    assert session.edits == 0 and not editor.tracker.pending


async def test_a_conflict_stops_the_session_before_the_next_edit() -> None:
    session, editor, document = _session("x = \n", 4)

    async def typing_meanwhile() -> AsyncIterator[str]:
        yield "1"
        await editor.applied.wait()
        # The user edits the generated text; the editor reports it.
        apply_change(document, [(editor.tracker, True)], Change(Point(0, 4), Point(0, 5), "9"))
        yield "2"

    with pytest.raises(ConflictError):
        await session.run(typing_meanwhile())
    assert document.text == "x = 9\n"


def _finishes_without_waiting(session: EditSession) -> bool:
    """Whether ``pace()`` returns without suspending (no sleep, no wait on an edit)."""
    coroutine = session.pace()
    try:
        coroutine.send(None)
    except StopIteration:
        return True
    coroutine.close()
    return False


async def test_pace_holds_the_source_while_an_edit_is_on_the_wire_and_releases_it_after() -> None:
    session, editor, document = _session("x = \n", 4, max_edits_per_second=60)
    editor.gate = asyncio.Event()
    paced: list[str] = []

    async def paced_source() -> AsyncIterator[str]:
        # What the model backend does before each read once text has arrived.
        for item in ["a\n", "b", "c"]:
            if paced:
                await asyncio.sleep(0)  # the next read waits for the socket
                await session.pace()
            paced.append(item)
            yield item

    run = asyncio.ensure_future(session.run(paced_source()))
    await editor.arrived.wait()
    # The first line ("a\n") is on the wire: the source is held, not read token by token.
    assert paced == ["a\n"] and not _finishes_without_waiting(session)
    editor.gate.set()
    await asyncio.wait_for(run, 5)
    assert "".join(editor.edits) == "a\nbc" and document.text == "x = a\nbc\n"


async def _edits_reach(editor: FakeEditor, count: int) -> None:
    while len(editor.edits) < count:
        await editor.applied.wait()
        editor.applied.clear()


async def test_the_end_of_the_first_line_goes_out_as_it_arrives_the_rest_coalesced() -> None:
    accounted = asyncio.Event()
    session, editor, document = _session(
        "x = \n", 4, max_edits_per_second=60, on_edit=lambda count: accounted.set()
    )
    session._interval = 3600.0  # a coalesced edit would wait an hour

    async def source() -> AsyncIterator[str]:
        yield "a"
        await accounted.wait()  # the session is done with "a"
        yield "b"  # coalesced...
        await asyncio.sleep(0)  # one turn of the loop: the session takes "b", waits to coalesce
        assert session._line_break is not None
        yield "c\nd"  # ...until the first line's end arrives: then at once, not an hour later
        await _edits_reach(editor, 2)
        yield "e"  # coalesced until the stream ends, then at once
        yield "f"

    await asyncio.wait_for(session.run(source()), HANG_GUARD)
    assert editor.edits == ["a", "bc\nd", "ef"]
    assert document.text == "x = abc\ndef\n"


async def test_before_the_first_line_is_whole_reads_are_never_paced() -> None:
    session, editor, _ = _session("x = \n", 4, max_edits_per_second=60)
    editor.gate = asyncio.Event()
    run = asyncio.ensure_future(session.run(_tokens(["a", "b"])))
    await editor.arrived.wait()
    # An edit is on the wire, but the answer's first line is not in the buffer yet.
    assert _finishes_without_waiting(session)
    editor.gate.set()
    await asyncio.wait_for(run, HANG_GUARD)


async def test_a_paced_read_watches_for_the_streams_end_and_stops_watching_after() -> None:
    session, _, _ = _session("x = \n", 4, max_edits_per_second=60)
    session._interval = 3600.0
    await session.run(_tokens(["a\n"]))
    calls: list[str] = []

    def watch(wake: Callable[[], None]) -> Callable[[], None]:
        calls.append("watch")
        wake()  # the end of the answer has arrived: the wait ends at once
        return lambda: calls.append("stop")

    await asyncio.wait_for(session.pace(watch), HANG_GUARD)
    assert calls == ["watch", "stop"]


async def test_pace_never_holds_final_streaming_or_a_stream_that_fills_every_read() -> None:
    final, _, _ = _session("x = \n", 4, streaming="final")
    assert _finishes_without_waiting(final)
    session, editor, _ = _session("x = \n", 4, max_edits_per_second=60)
    # 20,000 pieces in the first second: hundreds per edit interval, reads fill by themselves.
    await session.run(_tokens(["t"] * 20_000))
    editor.gate = asyncio.Event()  # an edit would now wait: pacing alone must not
    assert _finishes_without_waiting(session)


def test_the_gap_between_edits_follows_a_slow_editor_but_never_beats_the_rate_limit() -> None:
    interval = 1 / 60
    assert coalescing_gap(interval, 0.001) == interval  # a prompt editor: the rate limit
    assert coalescing_gap(interval, 0.05) == 0.05  # a slow one: half its time for the job
    assert coalescing_gap(interval, 0.0) == interval


async def test_the_session_measures_the_editors_acknowledgement_time() -> None:
    session, editor, _ = _session("x = \n", 4, max_edits_per_second=1000)
    editor.gate = asyncio.Event()

    async def tokens() -> AsyncIterator[str]:
        yield "1"
        await editor.arrived.wait()
        await asyncio.sleep(0.02)  # the editor takes its time before it answers
        editor.gate.set()  # type: ignore[union-attr]
        yield "2"

    await session.run(tokens())
    assert editor.edits[0] == "1"
    assert session.ack_seconds >= 0.02 * 0.3  # the average moved towards the slow answer


async def test_a_rewrites_last_text_and_the_original_lines_it_left_out_go_in_one_edit() -> None:
    original = "a = 1\nb = 2\nc = 3\nd = 4\n"
    document = Document("file:///t.py", original, encoding="utf-16")
    tracker = RewriteTracker(Point(0, 0), Point(4, 0), original)
    editor = FakeEditor(document, tracker)

    async def reported(tracker: RegionTracker, seconds: float) -> bool:
        return True

    session = RewriteSession(document, tracker, editor.apply, wait_reported=reported)

    async def source() -> AsyncIterator[str]:
        yield "a = 10\n"
        await _edits_reach(editor, 1)
        yield "b = 20\n"  # the stream ends: "c = 3" and "d = 4" are left out

    await asyncio.wait_for(session.run(source()), HANG_GUARD)
    assert document.text == "a = 10\nb = 20\n"
    # One edit after the stream's end, not the text's and then the deletion's.
    assert len(editor.edits) == 2 and editor.edits[-1].startswith("b = 20")
