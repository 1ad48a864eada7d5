"""Write tests through the real server: a job that writes no test says what is missing, and
with ``tests.run`` a function the static generator has tests for never ends without a module."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path

from tests.support.harness import Editor

from .conftest import MakeEditor

CLAMP = '''def clamp(value: int, low: int, high: int) -> int:
    """Clamp value into [low, high].

    >>> clamp(5, 0, 3)
    3
    """
    return max(low, min(value, high))
'''

# Its docstring example reads the module's ``math``: the test module imports it too.
AREA = '''import math


def area(r: float) -> float:
    """Area of a circle.

    >>> area(1) == math.pi
    True
    """
    return math.pi * r * r
'''


def _uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


async def _tests_job(editor: Editor, module: Path, source: str, line: int) -> dict[str, Any]:
    await asyncio.to_thread(module.write_text, source)
    editor.open(_uri(module), source)
    return await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": line, "character": 4}}
    )


async def test_a_job_that_writes_no_test_says_what_is_missing(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False)
    first = await _tests_job(editor, tmp_path / "clamp.py", CLAMP, 0)
    assert first["state"] == "done" and first["metrics"]["edits"] >= 1, first
    # The module has every test the generator writes: the rerun writes none, and says why.
    again = await editor.run(
        "fastedit.generateTests",
        {"uri": _uri(tmp_path / "clamp.py"), "position": {"line": 0, "character": 4}},
    )
    assert again["state"] == "done", again
    assert again["metrics"]["edits"] == 0
    details = again["verification"]["details"]
    assert details.startswith("no tests written: "), again
    assert "nothing to verify" not in details and "nothing to verify" not in again["reason"]


async def test_with_tests_run_the_static_tests_land_and_an_examples_module_is_imported(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False, init_options={"tests": {"run": True}})
    record = await _tests_job(editor, tmp_path / "circle.py", AREA, 3)
    assert record["state"] == "done", record
    assert record["metrics"]["edits"] >= 1, record
    written = editor.text(_uri(tmp_path / "test_circle.py"))
    assert "\nimport math\n" in written
    assert "def test_area_example_1()" in written
    assert record["verification"]["ok"] is True, record
