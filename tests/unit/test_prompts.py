"""Golden prompts: exactly what each action sends a model, pinned.

Fast models lose the thread on long prompts, so what is sent is kept short and reviewed as text.
Regenerate after an intended change with
``FASTEDIT_UPDATE_GOLDEN=1 pytest tests/unit/test_prompts.py`` and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fastedit_lsp.actions import regex
from fastedit_lsp.actions.base import ActionInput, Draft
from fastedit_lsp.actions.registry import Registry
from fastedit_lsp.actions.write_tests import TestInputs
from fastedit_lsp.backends.base import ChatRequest
from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.core.jobs import Inputs, InstructionInputs, TestModule
from fastedit_lsp.engines.test_stubs import find_target
from fastedit_lsp.prompting.context import around

GOLDEN = Path(__file__).parent.parent / "data" / "prompts"

SOURCE = '''"""Shapes."""

import math

# regex: ISO date
#   match: 2024-01-31
#   reject: 2024-1-31


def total_area(radii: list[float]) -> float:
    return sum(area(r) for r in radii)


def area(radius: float) -> float:
    """Area of a circle.

    >>> area(0)
    0.0
    """
    if radius < 0:
        raise ValueError("negative")
    return math.pi * radius**
'''


def _input(start: Point, end: Point, inputs: Inputs | None = None) -> ActionInput:
    document = Document("file:///w/shapes.py", SOURCE, language_id="python")
    return ActionInput(
        document=document,
        start=start,
        end=end,
        ctx=around(document, start, end, budget_tokens=2048, path="/w/shapes.py"),
        path="/w/shapes.py",
        inputs=inputs or Inputs(),
        max_tokens=512,
        temperature=0.2,
    )


def prepare(kind: str, data: ActionInput) -> Draft:
    """The action's draft, as the pipeline makes it (through the registry)."""
    spec = Registry().get(kind)
    assert spec is not None, kind
    return spec.load().prepare(data)


def _render(request: ChatRequest) -> str:
    parts = [f"max_tokens={request.max_tokens} temperature={request.temperature}"]
    parts.extend(f"--- {m.role}\n{m.content}" for m in request.messages)
    return "\n".join(parts) + "\n"


def _cases() -> dict[str, ChatRequest]:
    lines = SOURCE.splitlines()
    cursor = Point(len(lines) - 1, len(lines[-1]))
    comment = Point(lines.index("# regex: ISO date"), 0)
    area_line = lines.index("def area(radius: float) -> float:")
    selection = (Point(area_line, 0), Point(len(lines) - 1, len(lines[-1])))
    document = Document("file:///w/shapes.py", SOURCE, language_id="python")
    target = regex.target(document, comment, comment)
    instruction = InstructionInputs(instruction="add a docstring test")
    requests = {
        "completeRest": prepare("completeRest", _input(cursor, cursor)).request,
        "editSelection": prepare("editSelection", _input(*selection, instruction)).request,
        "generateRegex": prepare(
            "generateRegex",
            _input(target.start, target.end, regex.RegexInputs(target=target)),
        ).request,
        "fixSyntax": prepare("fixSyntax", _input(cursor, cursor)).request,
    }
    fixed = SOURCE.replace("radius**", "radius**2")
    tests_input = _input(Point(0, 0), Point(0, 0), TestInputs(target=find_target(fixed, area_line)))
    destination = TestModule(
        path="/w/test_shapes.py",
        uri="file:///w/test_shapes.py",
        module="shapes",
        source=fixed,
        source_uri="file:///w/shapes.py",
        existing="",
        created=True,
    )
    tests_input = ActionInput(
        **{
            **tests_input.__dict__,
            "document": Document("file:///w/test_shapes.py", ""),
            "destination": destination,
        }
    )
    requests["generateTests"] = prepare("generateTests", tests_input).request
    out: dict[str, ChatRequest] = {}
    for kind, request in requests.items():
        assert request is not None, kind
        out[kind] = request
    return out


@pytest.mark.parametrize(
    "kind", ["completeRest", "editSelection", "generateRegex", "fixSyntax", "generateTests"]
)
def test_the_prompt_sent_for_each_action_is_pinned(kind: str) -> None:
    rendered = _render(_cases()[kind])
    golden = GOLDEN / f"{kind}.txt"
    if os.environ.get("FASTEDIT_UPDATE_GOLDEN") == "1":
        golden.write_text(rendered, encoding="utf-8")
    assert golden.exists(), f"no golden prompt for {kind}: run with FASTEDIT_UPDATE_GOLDEN=1"
    assert rendered == golden.read_text(encoding="utf-8")
    # Short: a fast model's whole prompt stays well under a couple of thousand tokens here.
    assert len(rendered) < 4000
