"""lsp/parse_trees.ParseRefresher: didChange → the parse check's kept parses, refreshed once the
user pauses, in steps between which the event loop runs other work."""

from __future__ import annotations

import asyncio
from typing import Any

from fastedit_lsp.engines import parse as ts_parse
from fastedit_lsp.engines.parse_trees import ParseTrees
from fastedit_lsp.lsp.parse_trees import ParseRefresher

URI = "file:///big.py"
BIG = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y\n\n" for i in range(3_000))


class Doc:
    def __init__(self, text: str) -> None:
        self.text = text


class Docs:
    """The document store's one method the refresher reads."""

    def __init__(self) -> None:
        self.docs: dict[str, Doc] = {}

    def get(self, uri: str) -> Doc | None:
        return self.docs.get(uri)


def _refresher(trees: ParseTrees | None) -> tuple[ParseRefresher, Docs, list[asyncio.Task[Any]]]:
    docs = Docs()
    tasks: list[asyncio.Task[Any]] = []

    def spawn(coro: Any) -> asyncio.Task[Any]:
        tasks.append(asyncio.ensure_future(coro))
        return tasks[-1]

    return ParseRefresher(docs, lambda: trees, spawn), docs, tasks  # type: ignore[arg-type]


async def test_a_kept_parse_is_refreshed_in_steps_while_the_loop_runs_other_work() -> None:
    trees = ParseTrees()
    trees.parse(URI, "python", BIG)
    refresher, docs, tasks = _refresher(trees)
    edited = BIG.replace("def f1500(x):", "def f1500(x, z=1):")
    docs.docs[URI] = Doc(edited)
    refresher.changed(URI)
    assert refresher.waiting == 1 and not tasks  # waits for the user to pause
    refresher.now()
    ticks = 0

    async def other_work() -> None:
        nonlocal ticks
        while not tasks[0].done():
            ticks += 1
            await asyncio.sleep(0)

    await asyncio.gather(tasks[0], other_work())
    assert refresher.refreshed == 1 and refresher.waiting == 0
    assert refresher.steps > 1 and ticks >= refresher.steps - 1  # the loop ran between steps
    kept = trees.parse(URI, "python", edited)
    assert trees.hits == 1 and str(kept.tree.root_node) == str(
        ts_parse.parse("python", edited).tree.root_node
    )


async def test_typing_again_restarts_the_wait_and_closing_forgets_the_parse() -> None:
    trees = ParseTrees()
    trees.parse(URI, "python", BIG)
    refresher, docs, tasks = _refresher(trees)
    docs.docs[URI] = Doc(BIG + "x = 1\n")
    refresher.changed(URI)
    refresher.now()
    docs.docs[URI] = Doc(BIG + "x = 12\n")
    refresher.changed(URI)  # the refresh under way is dropped, a new wait begins
    await asyncio.gather(*tasks, return_exceptions=True)
    assert tasks[0].cancelled()
    assert refresher.waiting == 1 and refresher.refreshed == 0
    refresher.now()
    await asyncio.gather(*tasks[1:])
    assert refresher.refreshed == 1
    assert trees.parse(URI, "python", BIG + "x = 12\n").text == BIG + "x = 12\n"
    assert trees.hits == 1
    refresher.forget(URI)
    assert URI not in trees
    refresher.changed(URI)  # nothing kept: nothing to refresh
    assert refresher.waiting == 0


async def test_nothing_is_refreshed_before_a_job_kept_a_parse() -> None:
    refresher, docs, tasks = _refresher(None)
    docs.docs[URI] = Doc(BIG)
    refresher.changed(URI)
    assert refresher.waiting == 0 and not tasks
    assert refresher.stats() == {"refreshed": 0, "steps": 0, "waiting": 0, "hits": 0, "misses": 0}
