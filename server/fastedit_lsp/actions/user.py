"""User-defined actions: an instruction on a target (selection, cursor, function, file), run by
``fastedit.run {action, uri, range|position}`` and offered as a code action where the target
fits. Built-in presets: add a docstring, add type hints.

Pure. Each action becomes a run-time entry of the registry (``implementation`` set, job kind
``run:<id>``, recorded as ``kind: "run", action: <id>``); its job is a rewrite of the target,
streamed as the minimal diff, through the model only (``route``: fast, standard or auto), and
verified by a parse check when ``verify: parse`` (Python).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal

from ..core.document import Document, Point
from ..core.jobs import RunInputs
from ..core.outline import Function, Outline, outline
from . import edit_selection
from .base import (
    ActionError,
    ActionInput,
    CommandInput,
    Draft,
    Offer,
    OfferView,
    Start,
    Verification,
)
from .registry import ActionSpec

Target = Literal["selection", "cursor", "function", "file"]
#: The job kind prefix of user actions (the record shows ``kind: "run"``).
KIND_PREFIX = "run:"


@dataclass(frozen=True)
class UserAction:
    """One action as the ``actions`` setting defines it."""

    id: str
    title: str
    instruction: str
    target: Target = "selection"
    route: Literal["fast", "standard", "auto"] = "auto"
    verify: Literal["parse", "none"] = "parse"


PRESETS: tuple[UserAction, ...] = (
    UserAction(
        "docstring",
        "Add a docstring",
        "Add a concise docstring to this function (what it does, its arguments, what it "
        "returns). Change nothing else.",
        target="function",
        route="fast",
    ),
    UserAction(
        "typeHints",
        "Add type hints",
        "Add type hints to this function's parameters and return value. Change nothing else.",
        target="function",
        route="fast",
    ),
)


def spec(action: UserAction) -> ActionSpec:
    """The registry entry of a user action."""
    return ActionSpec(
        kind=KIND_PREFIX + action.id,
        title=action.title,
        label=f"action {action.id}",
        command="fastedit.run",
        args="position" if action.target in ("cursor", "function") else "range",
        implementation=lambda: UserActionImpl(action),
        rewrite=True,
    )


def _function_at(
    text: str, version: int, line: int, parsed: Outline | None = None
) -> Function | None:
    """The innermost Python function around ``line``, also while a line elsewhere does not
    parse (the next function half written): then found in the blocks that parse."""
    parsed = parsed if parsed is not None else outline(text, version)
    if parsed.error is None:
        return parsed.function_at(line)
    from ..engines.test_stubs import parsable

    return outline(parsable(text)[0], version).function_at(line)


def _function_lines(document: Document, line: int) -> tuple[Point, Point] | None:
    """The whole lines of the innermost Python function around ``line``."""
    found = _function_at(document.text, document.version, line)
    if found is None:
        return None
    end = (
        Point(found.last_line + 1, 0) if found.last_line + 1 < document.line_count else document.end
    )
    return Point(found.first_line, 0), end


class UserActionImpl:
    """The :class:`~fastedit_lsp.actions.base.Action` of one user action."""

    def __init__(self, action: UserAction) -> None:
        self.action = action

    def start(self, document: Document, command: CommandInput) -> Start:
        """The target: the selection, the cursor, the function around it, or the file."""
        action = self.action
        start, end = command.start, command.end
        if action.target == "file":
            start, end = Point(0, 0), document.end
        elif action.target == "cursor":
            end = start
        elif action.target == "function":
            lines = _function_lines(document, start.line)
            if lines is None:
                raise ActionError(f"{action.title}: no function at the cursor")
            start, end = lines
        elif start == end:
            raise ActionError(f"{action.title}: select the code first")
        inputs = RunInputs(
            diagnostics=command.diagnostics,
            instruction=action.instruction,
            profile=None if action.route == "auto" else action.route,
            action=action.id,
        )
        return Start(start, end, inputs)

    def offers(self, view: OfferView) -> Sequence[Offer]:
        """Offered where the target fits: a selection, a function (Python), anywhere."""
        action = self.action
        argument: dict[str, object] = {"action": action.id, "uri": view.uri}
        if action.target == "selection":
            if view.start == view.end:
                return ()
            argument["range"] = view.wire_range
        elif action.target == "function":
            if (view.document.language_id or "python") != "python":
                return ()
            found = _function_at(
                view.document.text, view.document.version, view.start.line, view.outline()
            )
            if found is None:
                return ()
            argument["position"] = view.wire_range["start"]
        elif action.target == "cursor":
            argument["position"] = view.wire_range["start"]
        else:
            argument["range"] = view.wire_range
        return [Offer(f"{action.title} (fastedit)", "refactor.rewrite", argument)]

    def prepare(self, data: ActionInput) -> Draft:
        """The instruction as an edit of the target; a parse check of the result if asked."""
        request = edit_selection.request(
            data.ctx, self.action.instruction, max_tokens=data.max_tokens, temperature=0.0
        )
        draft = Draft(request=request, pipeline=edit_selection.filters(data))
        if self.action.verify == "parse" and (data.document.language_id or "python") == "python":
            before, after, elsewhere = _around(data)

            def verify(text: str) -> Verification:
                try:
                    compile(before + text + after, "<fastedit>", "exec", dont_inherit=True)
                except (SyntaxError, ValueError) as exc:
                    return {"ok": False, "details": f"the file does not parse: {exc}"}
                if elsewhere is not None:
                    return {"ok": True, "details": f"the rewrite parses ({elsewhere})"}
                return {"ok": True, "details": "the file parses"}

            draft.verify = verify
        return draft


def _around(data: ActionInput) -> tuple[str, str, str | None]:
    """The file's text before and after the target, to parse a rewrite in, and what is left out.

    When the file does not parse outside the target (the next function half written), the
    top-level blocks that do not parse are left out (as blank lines: positions stay) and the
    third item names the line; when the target's own lines are among them, the file as it is
    (the check then fails, as it should).
    """
    document = data.document
    before = document.get_text(Point(0, 0), data.start)
    after = document.get_text(data.end, document.end)
    original = document.get_text(data.start, data.end) if data.original is None else data.original
    from ..engines.test_stubs import parsable

    whole = before + original + after
    kept, error = parsable(whole)
    if error is None:
        return before, after, None
    lines, kept_lines = whole.splitlines(keepends=True), kept.splitlines(keepends=True)
    kept_lines += [""] * (len(lines) - len(kept_lines))  # a last line left out has no "\n"
    starts = list(accumulate(map(len, lines), initial=0))
    kept_starts = list(accumulate(map(len, kept_lines), initial=0))

    def line_of(at: int) -> int:
        return bisect_right(starts, at) - 1

    region = range(line_of(len(before)), line_of(len(before) + max(len(original) - 1, 0)) + 1)
    if any(i < len(lines) and kept_lines[i] != lines[i] for i in region):
        return before, after, None  # the target itself does not parse

    def offset(at: int) -> int:
        """``whole``'s offset ``at`` in ``kept`` (in the target's lines, or a line's start)."""
        line = line_of(at)
        return kept_starts[line] + at - starts[line]

    start, end = offset(len(before)), offset(len(before) + len(original))
    return kept[:start], kept[end:], f"line {error} does not parse, as before"


def by_id(actions: Sequence[UserAction], action_id: str) -> UserAction | None:
    """The configured action (or preset) with this id; a configured one shadows a preset."""
    return next((a for a in (*actions, *PRESETS) if a.id == action_id), None)
