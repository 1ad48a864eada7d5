"""The bench's figures of what the user waits for: the answer's first line, and its end.

For complete-the-rest and edit selection at 1,000 and 5,000 tok/s (:data:`LINE_RATES`), a
600-token answer (:data:`ANSWER_TOKENS`) of plain code, each run in a fresh document:

- **first model line in the buffer**: ``executeCommand`` → the applied edit after which the
  buffer holds the answer's whole first line (the editor keeps a copy of the buffer and checks
  it after every edit: independent of how the server cuts its edits);
- **the model's first line**: ``executeCommand`` → the stub's write that carried the first
  line's last byte, its line break (the stub records when each write of tokens went out:
  ``RecordedRequest.token_writes``); the first figure's yardstick;
- **first model line in the buffer − the model's first line**: the same two, per run;
- **last edit after the model's last byte**: the stub's last write (the stream's end) → the
  job's last ``workspace/applyEdit``.

Complete the rest continues a function at an empty last line; edit selection renames a variable
in every line of a selection (the stub answers the selection's intended replacement), so that
its first line differs from the original's. Both answers are exactly the text to insert, so the
buffer must end as the document with the answer in place (checked: a run that lands anything
else fails the bench).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .bench_core import Editor, Figures
from .lsp_client import LspClient
from .stub import Answer, RecordedRequest, StubModelServer

#: The rates of these figures (tokens per second).
LINE_RATES = (1_000, 5_000)
#: Tokens of every answer (the issue's side-by-side: an edit selection's 600-token answer).
ANSWER_TOKENS = 600
#: The actions measured, by the name their figures carry.
ACTIONS = ("complete the rest", "edit selection")
FIRST_LINE = "first model line in the buffer"
MODEL_LINE = "the model's first line"
LINE_GAP = "first model line in the buffer − the model's first line"
LAST_EDIT = "last edit after the model's last byte"
#: Every figure's name (keys are ``"{name}, {action}, {rate:,} tok/s"``).
NAMES = (FIRST_LINE, MODEL_LINE, LINE_GAP, LAST_EDIT)


def key(name: str, action: str, rate: int) -> str:
    return f"{name}, {action}, {rate:,} tok/s"


@dataclass(frozen=True)
class Case:
    """One run's document, command and answer, and the buffer it must end as."""

    text: str
    command: str
    argument: dict[str, Any]
    tokens: list[str]
    expected: str

    @property
    def first_line(self) -> str:
        return "".join(self.tokens).split("\n", 1)[0]

    @property
    def first_line_tokens(self) -> int:
        """How many tokens the stub sends up to the first line's line break, included."""
        seen = 0
        for index, token in enumerate(self.tokens):
            seen += token.count("\n")
            if seen:
                return index + 1
        return len(self.tokens)


def _line_tokens(index: int, name: str, value: str) -> list[str]:
    """One line of the answers, as a model's tokens (about four characters each)."""
    return ["    ", name, " += ", value, f"[{index}]", f" * {index % 13}", "\n"]


def complete_rest_case(uri: str, count: int = ANSWER_TOKENS) -> Case:
    """A function to complete at its empty last line; the answer its body's statements."""
    head = "def scale(values, factor):\n    total = 0\n"
    tokens: list[str] = []
    index = 0
    while len(tokens) < count:
        tokens += _line_tokens(index, "total", "values")
        index += 1
    tokens = tokens[: count - count % 7] or tokens[:7]
    argument = {"uri": uri, "position": {"line": 2, "character": 0}}
    return Case(head, "fastedit.completeRest", argument, tokens, head + "".join(tokens))


def edit_selection_case(uri: str, count: int = ANSWER_TOKENS) -> Case:
    """A selection of statements; the answer renames ``total`` to ``acc`` in every one."""
    lines = max(1, count // 7)
    old = "".join("".join(_line_tokens(i, "total", "values")) for i in range(lines))
    tokens = [t for i in range(lines) for t in _line_tokens(i, "acc", "values")]
    head = "def scale(values, factor):\n    total = acc = 0\n"
    tail = "    return total, acc\n"
    argument = {
        "uri": uri,
        "range": {
            "start": {"line": 2, "character": 0},
            "end": {"line": 2 + lines, "character": 0},
        },
        "instruction": "rename total to acc",
    }
    expected = head + "".join(tokens) + tail
    return Case(head + old + tail, "fastedit.editSelection", argument, tokens, expected)


def _written_at(record: RecordedRequest, tokens: int) -> float:
    """When the stub's write that carried the ``tokens``-th token went out."""
    for sent, at in record.token_writes:
        if sent >= tokens:
            return at
    raise RuntimeError(f"the stub never sent {tokens} tokens ({record.tokens_sent} sent)")


async def one_run(
    client: LspClient,
    editor: Editor,
    stub: StubModelServer,
    action: str,
    rate: int,
    run: int,
    count: int = ANSWER_TOKENS,
) -> dict[str, float]:
    """One job: its figures in ms, by name (:data:`NAMES`)."""
    uri = f"file:///bench/lines_{action.replace(' ', '_')}_{rate}_{run}.py"
    case = (complete_rest_case if action == ACTIONS[0] else edit_selection_case)(uri, count)
    stub.default = Answer(
        tokens=case.tokens,
        tps=rate,
        role_chunk=False,
        chunk_per_event=editor.model.chunk_per_event,
    )
    editor.open(uri, case.text, keep_text=True)
    editor.watch_line(uri, case.first_line)
    seen = len(stub.requests)
    sent = time.monotonic()
    started = await client.command(case.command, case.argument)
    record = (await stub.wait_for_requests(seen + 1, timeout=30))[-1]
    job = await client.command("fastedit.wait", {"jobId": started["jobId"], "timeoutMs": 60_000})
    await stub.wait_closed(record)
    landed, (_, shown) = editor.texts[uri], editor.line_seen[uri]
    arrivals = [at for at, _ in editor.edits[uri]]
    editor.close(uri)
    # The answer's last line break is left out at the end of a document (the reconciler).
    ok = landed.rstrip("\n") == case.expected.rstrip("\n")
    if len(stub.requests) - seen != 1:  # a draft the checks refused: the job asked again
        raise RuntimeError(
            f"{action} at {rate:,} tok/s: {len(stub.requests) - seen} requests, verification "
            f"{job.get('verification')}: the bench's draft must pass the checks"
        )
    if job["state"] != "done" or not ok or shown is None or record.last_byte_at is None:
        raise RuntimeError(
            f"{action} at {rate:,} tok/s: job {job['state']} ({job.get('error')}), "
            f"{record.tokens_sent}/{len(case.tokens)} tokens sent, {len(arrivals)} edits, "
            f"the buffer {'as expected' if ok else 'not as expected'}: {landed[:300]!r}"
        )
    model_line = _written_at(record, case.first_line_tokens)
    return {
        FIRST_LINE: (shown - sent) * 1000,
        MODEL_LINE: (model_line - sent) * 1000,
        LINE_GAP: (shown - model_line) * 1000,
        LAST_EDIT: (arrivals[-1] - record.last_byte_at) * 1000,
    }


async def first_lines(
    client: LspClient,
    editor: Editor,
    stub: StubModelServer,
    runs: int,
    figures: Figures,
    rates: Sequence[int] = LINE_RATES,
    count: int = ANSWER_TOKENS,
) -> None:
    """The figures of every action at every rate (one run of each first, not counted)."""
    for rate in rates:
        for action in ACTIONS:
            figures.note_load()
            await one_run(client, editor, stub, action, rate, -1, count)
            samples = [
                await one_run(client, editor, stub, action, rate, run, count) for run in range(runs)
            ]
            for name in NAMES:
                figures.add(key(name, action, rate), [s[name] for s in samples])
