"""The arguments of fastedit's commands: one pydantic model each, and their validation.

Separate from ``commands`` so that pydantic is imported on the first command, not at start-up
(bench: cold start). Malformed arguments get -32602 with a message naming the field.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pygls.exceptions import JsonRpcInvalidParams

from ...actions.registry import ArgShape
from ...settings import Mode


class Args(BaseModel):
    # Unknown fields are tolerated so that newer editors can send more.
    model_config = ConfigDict(extra="ignore", frozen=True)


class PositionArg(Args):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class RangeArg(Args):
    start: PositionArg
    end: PositionArg


class PositionTargetArgs(Args):
    """``{uri, position}``: an action at the cursor."""

    uri: str = Field(min_length=1)
    position: PositionArg
    #: Error diagnostics in range, as the editor reported them with the code action (routing).
    diagnostics: int = Field(0, ge=0)

    @property
    def range(self) -> RangeArg | None:
        return None

    @property
    def instruction(self) -> str:
        return ""

    @property
    def plan(self) -> str | None:
        return None


class RangeTargetArgs(Args):
    """``{uri, range}``: an action on a range."""

    uri: str = Field(min_length=1)
    range: RangeArg
    diagnostics: int = Field(0, ge=0)

    @property
    def position(self) -> PositionArg | None:
        return None

    @property
    def instruction(self) -> str:
        return ""

    @property
    def plan(self) -> str | None:
        return None


class EditSelectionArgs(Args):
    """``{uri, range, instruction}``: an action following the user's instruction."""

    uri: str = Field(min_length=1)
    range: RangeArg
    instruction: str = Field(min_length=1, max_length=20000)
    diagnostics: int = Field(0, ge=0)
    #: Plan and apply for this edit (auto, on, off); unset: ``editSelection.plan``.
    plan: Literal["auto", "on", "off"] | None = None

    @property
    def position(self) -> PositionArg | None:
        return None


ActionArgs = PositionTargetArgs | RangeTargetArgs | EditSelectionArgs


def arguments(shape: ArgShape) -> type[ActionArgs]:
    """The argument model of an action's command (the registry's ``args``)."""
    models: dict[ArgShape, type[ActionArgs]] = {
        "position": PositionTargetArgs,
        "range": RangeTargetArgs,
        "selection": EditSelectionArgs,
    }
    return models[shape]


class JobIdArgs(Args):
    jobId: str = Field(min_length=1)  # noqa: N815 - the wire name


class RunArgs(Args):
    """``{action, uri, range|position}``: a user-defined action."""

    action: str = Field(min_length=1)
    uri: str = Field(min_length=1)
    range: RangeArg | None = None
    position: PositionArg | None = None
    diagnostics: int = Field(0, ge=0)


class RevertHunkArgs(JobIdArgs):
    hunk: int = Field(ge=0)


class WaitArgs(JobIdArgs):
    timeoutMs: int = Field(5000, ge=0, le=3_600_000)  # noqa: N815


class TargetArgs(Args):
    jobId: str | None = None  # noqa: N815
    uri: str | None = None


class SetModeArgs(Args):
    mode: Mode


class RetryArgs(JobIdArgs):
    profile: Literal["fast", "standard"] = "standard"


A = TypeVar("A", bound=Args)


def parse(command: str, model: type[A], args: tuple[Any, ...]) -> A:
    """Validate a command's single object argument, or raise -32602 naming the field."""
    if len(args) > 1:
        raise JsonRpcInvalidParams(f"{command}: expected one object argument, got {len(args)}")
    value = args[0] if args else {}
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise JsonRpcInvalidParams(
            f"{command}: the argument must be an object, got {type(value).__name__}"
        )
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "argument"
        raise JsonRpcInvalidParams(f"{command}: {field}: {error['msg']}") from None


class NextEditArgs(Args):
    """``fastedit.nextEdit {uri, position, version?}``."""

    uri: str = Field(min_length=1)
    position: PositionArg
    version: int | None = None
