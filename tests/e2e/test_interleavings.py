"""Random interleavings of typing, late and batched reports, and stream chunks, on the real server.

Whatever the schedule, every character the user typed is still in the buffer, the job's text is
exactly what the editor acknowledged, and a job that could not continue says why.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

#: The star import: the stub's ``QQQ…`` is a name the names check cannot rule out.
TEXT = "from fixtures import *\nvalue = \nprint(value)\n"
CURSOR = TEXT.index("value = ") + len("value = ")

STEP = st.one_of(
    st.tuples(st.just("wait"), st.none()),
    st.tuples(st.just("flush"), st.none()),
    st.tuples(
        st.sampled_from(["doc-start", "line-above-end", "doc-end", "inside", "stream-end"]),
        st.text(st.sampled_from(["x", "y", " ", "\n", "é", "😀"]), min_size=1, max_size=3),
    ),
)

counter = iter(range(1_000_000))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    schedule=st.lists(STEP, min_size=1, max_size=8),
    batched=st.booleans(),
    tps=st.sampled_from([200.0, 1000.0]),
)
async def test_random_interleavings_never_lose_typing(
    editor: Editor,
    stub: StubModelServer,
    schedule: list[tuple[str, str | None]],
    batched: bool,
    tps: float,
) -> None:
    # One server for every example; each example edits a document of its own.
    editor.sync = "batched" if batched else "prompt"
    editor.batch_delay = 0.05
    uri = f"file:///tmp/fastedit-e2e/interleave-{next(counter)}.py"
    editor.open(uri, TEXT)
    editor.flush()
    stub.script(Answer(text="Q" * 150, tps=tps))
    started = await editor.command(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, CURSOR)}
    )
    expected = TEXT  # the buffer without the job's text: the user's edits only
    for kind, typed in schedule:
        if kind == "wait":
            await editor.next_event(seconds=2)
            continue
        if kind == "flush":
            editor.flush()
            continue
        assert typed is not None
        text = editor.text(uri)
        first_q, last_q = text.find("Q"), text.rfind("Q")
        offset = {
            "doc-start": 0,
            "line-above-end": text.index("\n"),
            "doc-end": len(text),
            "inside": first_q + 1 if first_q >= 0 else CURSOR,
            "stream-end": last_q + 1 if last_q >= 0 else CURSOR,
        }[kind]
        before = text[:offset].replace("Q", "")
        expected = before + typed + expected[len(before) :]
        editor.type(uri, offset, typed)
    record = await editor.wait_job(started["jobId"])
    editor.flush()
    await editor.command("fastedit.status")
    final = editor.text(uri)
    acknowledged = "".join(t for u, _, _, t in editor.applied if u == uri)
    assert final.replace("Q", "") == expected
    assert final.count("Q") == len(acknowledged)
    assert record["state"] in ("done", "cancelled"), record
    if record["state"] == "cancelled":
        assert record["error"].startswith("Stopped:")
    else:
        # The whole answer went in; typing after the job ended may since have split it.
        assert acknowledged == "Q" * 150
