"""One module per action: where it edits, its prompt, its filters, its offline answer, its check."""

from __future__ import annotations

from .base import ActionError, ActionInput, Draft


def prepare(kind: str, data: ActionInput) -> Draft:
    """The draft of an action of ``kind`` (ActionError when it cannot run here)."""
    if kind == "completeRest":
        from . import complete_rest

        return complete_rest.prepare(data)
    if kind == "editSelection":
        from . import edit_selection

        return edit_selection.prepare(data)
    if kind == "generateRegex":
        import dataclasses

        from . import regex

        found = data.inputs.get("regexTarget")
        if isinstance(found, regex.RegexTarget):
            # Found when the command ran; the region has been tracked since.
            found = dataclasses.replace(found, start=data.start, end=data.end)
        else:
            found = regex.target(data.document, data.start, data.end)
        return regex.prepare(found, data)
    if kind == "generateTests":
        from . import write_tests as tests

        return tests.prepare(data)
    if kind == "fixSyntax":
        from . import syntax

        return syntax.prepare(data)
    raise ActionError(f"{kind} is not available yet")
