"""Golden prompts: exactly what each action sends a model, pinned.

Fast models lose the thread on long prompts, so what is sent is kept short and reviewed as text.
Regenerate after an intended change with
``FASTEDIT_UPDATE_GOLDEN=1 pytest tests/unit/test_prompts.py`` and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fastedit_lsp.actions import prepare, regex
from fastedit_lsp.actions.base import ActionInput
from fastedit_lsp.backends.base import ChatRequest
from fastedit_lsp.core.document import Document, Point
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


def _input(kind: str, start: Point, end: Point, **inputs: object) -> ActionInput:
    document = Document("file:///w/shapes.py", SOURCE, language_id="python")
    return ActionInput(
        document=document,
        start=start,
        end=end,
        ctx=around(document, start, end, budget_tokens=2048, path="/w/shapes.py"),
        path="/w/shapes.py",
        inputs=dict(inputs),
        max_tokens=512,
        temperature=0.2,
    )


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
    requests = {
        "completeRest": prepare("completeRest", _input("completeRest", cursor, cursor)).request,
        "editSelection": prepare(
            "editSelection", _input("editSelection", *selection, instruction="add a docstring test")
        ).request,
        "generateRegex": prepare(
            "generateRegex", _input("generateRegex", target.start, target.end, regexTarget=target)
        ).request,
        "fixSyntax": prepare("fixSyntax", _input("fixSyntax", cursor, cursor)).request,
    }
    tests_input = _input(
        "generateTests",
        Point(0, 0),
        Point(0, 0),
        source=SOURCE.replace("radius**", "radius**2"),
        target=find_target(SOURCE.replace("radius**", "radius**2"), area_line),
        module="shapes",
    )
    tests_input = ActionInput(
        **{**tests_input.__dict__, "document": Document("file:///w/test_shapes.py", "")}
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
