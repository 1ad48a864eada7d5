"""The completion engine's latency rules, against a scripted in-memory model stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from fastedit_lsp.completion.engine import CompletionEngine, CompletionQuery, Suggestion

DOC = "file:///w/a.py"
PREFIX = "import os\n\ndef main():\n    path = os.path."


def first_line(text: str, query: CompletionQuery) -> str:
    return text.split("\n", 1)[0]


def has_line(text: str, query: CompletionQuery) -> bool:
    return "\n" in text


class Model:
    """Streams scripted answers token by token when told to; records opens and closes."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.opened: list[CompletionQuery] = []
        self.closed: list[int] = []
        self.finished: list[int] = []
        self.release: dict[int, asyncio.Queue[int]] = {}

    def open(self, query: CompletionQuery) -> AsyncIterator[str]:
        index = len(self.opened)
        self.opened.append(query)
        self.release[index] = asyncio.Queue()
        return self._stream(index, self.answers[min(index, len(self.answers) - 1)])

    async def _stream(self, index: int, text: str) -> AsyncIterator[str]:
        tokens = [text[i : i + 2] for i in range(0, len(text), 2)]
        yielded = 0
        try:
            while yielded < len(tokens):
                count = await self.release[index].get()
                for token in tokens[yielded : yielded + count]:
                    yielded += 1
                    yield token
        finally:
            # Closed by the consumer before the whole answer went out.
            (self.finished if yielded == len(tokens) else self.closed).append(index)

    def send(self, index: int, tokens: int = 1000) -> None:
        self.release[index].put_nowait(tokens)


def engine(**kwargs: float) -> CompletionEngine:
    return CompletionEngine(finish=first_line, has_enough=has_line, **kwargs)  # type: ignore[arg-type]


def query(prefix: str = PREFIX, suffix: str = "\n", *, automatic: bool = True) -> CompletionQuery:
    return CompletionQuery(DOC, prefix, suffix, "python", automatic)


async def until(condition: object, *, limit: float = 5.0) -> None:
    async def poll() -> None:
        # Yields to the loop until the engine reaches the state: no fixed delay.
        while not condition():  # type: ignore[operator]  # noqa: ASYNC110
            await asyncio.sleep(0)

    await asyncio.wait_for(poll(), limit)


async def test_a_burst_of_automatic_triggers_makes_one_model_call() -> None:
    model, e = Model("join(root, name)\n"), engine()
    tasks = []
    for n in range(10):
        typed = query(PREFIX + "join(root)"[:n])
        tasks.append(asyncio.create_task(e.complete(typed, model.open, debounce=0.05, deadline=5)))
        await asyncio.sleep(0)
    await until(lambda: model.opened)
    model.send(0)
    answers = await asyncio.gather(*tasks)
    assert answers[:-1] == [None] * 9
    assert len(model.opened) == 1
    assert e.stats.superseded == 9
    assert answers[-1] is not None


async def test_invoked_requests_are_not_debounced() -> None:
    model, e = Model("join(a, b)\n"), engine()
    task = asyncio.create_task(
        e.complete(query(automatic=False), model.open, debounce=60, deadline=5)
    )
    await until(lambda: model.opened)
    model.send(0)
    answer = await task
    assert answer == Suggestion("join(a, b)", "model")


async def test_a_repeated_request_is_answered_from_the_cache() -> None:
    model, e = Model("join(a, b)\n"), engine()
    first = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=5))
    await until(lambda: model.opened)
    model.send(0)
    await first
    again = await e.complete(query(), model.open, debounce=0, deadline=5)
    assert again == Suggestion("join(a, b)", "cache")
    assert len(model.opened) == 1


async def test_typing_what_the_stream_produced_reuses_it() -> None:
    model, e = Model("join(root, name)\nmore"), engine()
    first = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=5))
    await until(lambda: model.opened)
    model.send(0, 3)  # "join(r"
    await until(lambda: e.running_streams() == 1)
    second = asyncio.create_task(
        e.complete(query(PREFIX + "join("), model.open, debounce=0, deadline=5)
    )
    await asyncio.sleep(0)
    model.send(0)
    assert await first is None  # superseded by the typed-ahead request
    assert await second == Suggestion("root, name)", "reuse")
    assert len(model.opened) == 1
    assert e.stats.early_closes == 1  # closed at its cut point, not by the second request


async def test_typing_ahead_of_the_stream_waits_for_it_while_it_agrees() -> None:
    model, e = Model("join(root, name)\n"), engine()
    first = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=5))
    await until(lambda: model.opened)
    model.send(0, 1)  # "jo"
    second = asyncio.create_task(
        e.complete(query(PREFIX + "join(ro"), model.open, debounce=0, deadline=5)
    )
    await asyncio.sleep(0)
    model.send(0)
    assert await second == Suggestion("ot, name)", "reuse")
    assert await first is None
    assert len(model.opened) == 1


async def test_typing_something_else_closes_the_stream_and_starts_another() -> None:
    model, e = Model("join(root, name)\n", "exists(p)\n"), engine()
    first = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=5))
    await until(lambda: model.opened)
    model.send(0, 1)  # "jo"
    await until(lambda: e.running_streams() == 1)
    second = asyncio.create_task(
        e.complete(query(PREFIX + "ex"), model.open, debounce=0, deadline=5)
    )
    await until(lambda: len(model.opened) == 2)
    assert model.closed == [0]
    model.send(1)
    assert await first is None
    assert await second == Suggestion("exists(p)", "model")


async def test_the_deadline_answers_with_what_arrived_and_the_stream_goes_on() -> None:
    model, e = Model("join(root, name)\n"), engine()
    task = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=0.05))
    await until(lambda: model.opened)
    model.send(0, 2)  # "join"
    answer = await task
    assert answer == Suggestion("join", "model", partial=True)
    assert e.running_streams() == 1
    model.send(0)
    again = await e.complete(query(), model.open, debounce=0, deadline=5)
    assert again == Suggestion("join(root, name)", "reuse")
    assert len(model.opened) == 1


async def test_enough_text_closes_the_stream_early() -> None:
    model, e = Model("join(a, b)\n" + "x" * 200), engine()
    task = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=5))
    await until(lambda: model.opened)
    model.send(0)
    assert await task == Suggestion("join(a, b)", "model")
    await until(lambda: model.closed == [0])
    assert e.stats.early_closes == 1


async def test_a_cancelled_request_closes_its_stream_after_the_grace() -> None:
    model, e = Model("join(a, b)\n"), engine(grace=0.01)
    task = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=5))
    await until(lambda: model.opened)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(lambda: model.closed == [0])
    assert e.stats.cancelled == 1


async def test_a_cancelled_requests_stream_survives_when_the_next_request_adopts_it() -> None:
    model, e = Model("join(a, b)\n"), engine(grace=0.05)
    task = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=5))
    await until(lambda: model.opened)
    model.send(0, 1)
    await until(lambda: e.running_streams() == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    second = asyncio.create_task(
        e.complete(query(PREFIX + "j"), model.open, debounce=0, deadline=5)
    )
    await asyncio.sleep(0.1)  # longer than the grace: the stream must still be open
    model.send(0)
    assert await second == Suggestion("oin(a, b)", "reuse")
    assert model.closed == []


async def test_a_failed_stream_answers_what_arrived_with_its_error() -> None:
    e = engine()

    async def failing(query: CompletionQuery) -> AsyncIterator[str]:
        yield "jo"
        raise RuntimeError("model went away")

    answer = await e.complete(query(), failing, debounce=0, deadline=5)
    assert answer is not None and answer.text == "jo"
    assert isinstance(answer.error, RuntimeError)
    assert e.cached(query()) is None


async def test_closing_a_document_supersedes_and_closes() -> None:
    model, e = Model("join(a, b)\n"), engine()
    task = asyncio.create_task(e.complete(query(), model.open, debounce=0, deadline=5))
    await until(lambda: model.opened)
    e.forget(DOC)
    assert await task is None
    await until(lambda: model.closed == [0])
