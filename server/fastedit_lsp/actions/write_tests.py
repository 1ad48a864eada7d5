"""Write tests: a pytest module for the function or method at the cursor.

Pure. The host finds where the test module goes (``tests/test_<module>.py`` beside the nearest
``tests/`` folder, else ``test_<module>.py`` beside the module: ``project.tests_layout``) and
opens or creates it; the job moves there. This module prepares the text appended to it: offline,
from the code alone (``test_stubs``: doctests become assertions, reachable ``raise`` statements
``pytest.raises`` cases, type hints hypothesis stubs, the rest marked TODO); with a model, from
the function, its docstring and its imports. The user's code is never imported or run for this.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..backends.base import ChatMessage, ChatRequest
from ..core.document import Document, Point, advance
from ..core.jobs import Inputs
from ..prompting import prompts
from ..prompting.filters import Pipeline
from ..prompting.reconcile import Unwrap
from .base import (
    ActionError,
    ActionInput,
    CommandInput,
    Draft,
    Offer,
    OfferView,
    OfflineAnswer,
    Start,
    Verification,
)

# The generator loads with the first job, not with the first code action.
if TYPE_CHECKING:
    from ..engines.test_stubs import Recording, RecordPlan, Target


@dataclass(frozen=True)
class TestInputs(Inputs):
    """The function or method the tests are for."""

    # Not a pytest class (its name starts with "Test").
    __test__ = False

    target: Target | None = None


def start(document: Document, command: CommandInput) -> Start:
    """The function at the cursor (the job moves to the test module when it runs)."""
    from ..engines.test_stubs import NoTargetError, find_target, parsable

    try:
        # From the function's own text: a syntax error elsewhere does not stop the tests.
        found = find_target(parsable(document.text)[0], command.start.line)
    except NoTargetError as exc:
        raise ActionError(str(exc)) from None
    return Start(command.start, command.start, TestInputs(target=found))


def offers(view: OfferView) -> Sequence[Offer]:
    """Offered (Python) on an importable function or method, when the file parses."""
    if (view.document.language_id or "python") != "python":
        return ()
    outline = view.outline()
    if outline.error is not None:
        # The function's own text may parse (the error is elsewhere): offered on it then.
        from ..engines.test_stubs import NoTargetError, find_target, parsable

        try:
            qualname = find_target(parsable(view.document.text)[0], view.start.line).qualname
        except NoTargetError:
            return ()
    else:
        function = outline.function_at(view.start.line)
        if function is None:
            return ()
        qualname = function.qualname
    start = view.wire_range["start"]
    position = {"line": start["line"], "character": start["character"]}
    return [
        Offer(
            f"Write tests for {qualname} (fastedit)",
            "refactor.rewrite",
            {"uri": view.uri, "position": position},
        )
    ]


def appended(existing: str, generated: str) -> str:
    """What to append to ``existing`` so that it holds the generated tests (imports included)."""
    if not existing.strip():
        return generated
    from ..engines.test_stubs import merge

    # Append only (the edit stays one insertion at the end): missing imports go just before
    # the new tests; clashing names are renamed.
    merged = merge(existing, generated, append_only=True)
    return merged[len(existing) :]


def placed(existing: str, text: str) -> tuple[int, str]:
    """Where ``text`` (appended to ``existing``) goes in the module, and what is inserted there.

    Never after the module's last line break: Neovim keeps a line break at the end of every
    buffer (an empty file is one empty line, reported as "\n"), so it applies an insertion
    there as a line of its own. The module then began with a blank line, and Neovim reported the
    edit as a change above the job's text: the job stopped ("an edit before the generated
    text..."). The same text goes in before that line break instead, and so needs none at its
    end; into an empty module (only line breaks) it goes at the top.
    """
    newline = "\r\n" if existing.endswith("\r\n") else "\n" if existing.endswith("\n") else ""
    if not newline:
        return len(existing), text
    empty = not existing.strip("\r\n")
    offset = 0 if empty else len(existing) - len(newline)
    if not text:  # nothing to add (the module has these tests already)
        return offset, ""
    body = text.removesuffix(newline)
    return offset, body if empty else newline + body


def check(
    existing: str,
    text: str,
    module: str = "",
    source: str = "",
    workspace_module: Callable[[str], str | None] | None = None,
) -> Verification:
    """The test module must parse, and what it imports from the workspace must exist.

    Static only: collecting the tests would import the user's code (opt-in, ``tests.*``).
    ``workspace_module`` returns the source of a workspace module by dotted name (None when the
    name is not a workspace module: the standard library and installed packages are not
    checked, since the server does not run in the project's environment).
    """
    try:
        tree = ast.parse(existing + text)
    except SyntaxError as exc:
        return {
            "ok": False,
            "details": f"the test module does not parse: line {exc.lineno}: {exc.msg}",
        }
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        if node.module == module and source:
            found: str | None = source
        elif workspace_module is not None:
            found = workspace_module(node.module)
        else:
            found = None
        if found is None:
            continue
        defined = _top_level_names(found)
        missing = sorted(a.name for a in node.names if a.name != "*" and a.name not in defined)
        if missing:
            return {
                "ok": False,
                "details": f"imports names {node.module} does not define: {', '.join(missing)}",
            }
    tests = len(_collected_after(tree, existing))
    if not tests:
        # An answer that only imports, or only defines helpers, tests nothing: not a module of
        # tests, however well it parses.
        return {"ok": False, "details": "defines no test functions (def test_...)"}
    return {"ok": True, "details": f"parses; imports resolve; {tests} test functions"}


def _collected_after(tree: ast.Module, existing: str) -> list[str]:
    """The tests pytest would collect (``test*`` functions at the top level and in ``Test*``
    classes) that start after ``existing``: the ones the answer adds."""
    # The answer begins on a line of its own (``placed`` puts a line break before it).
    first_new = len(existing.splitlines())

    def added(node: ast.stmt) -> bool:
        return node.lineno - 1 >= first_new

    found: list[str] = []
    for node in tree.body:
        functions: list[ast.stmt] = [node]
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            functions = node.body
        found += [
            f.name
            for f in functions
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
            and f.name.startswith("test")
            and added(f)
        ]
    return found


def test_names(text: str) -> list[str]:
    """The test functions ``text`` defines at its top level, in order."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]


def without_tests(text: str, names: Collection[str]) -> str:
    """``text`` (tests inserted into a module) without the top-level test functions ``names``,
    and without the import lines only they used; "" when no test is left. Its leading line
    breaks and whether it ends with one are kept (see :func:`placed`)."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    lead = len(lines) - len(list(itertools.dropwhile(lambda line: not line.strip(), lines)))
    drop: set[int] = set()  # 0-based lines
    kept_tests = 0
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if node.name not in names:
            kept_tests += node.name.startswith("test")
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        last = node.end_lineno or node.lineno
        # The blank lines that separated it from what came before go with it.
        while first > lead and not lines[first - 1].strip():
            first -= 1
        if first == lead:
            # The first definition: the blank lines after it go instead (the leading ones place
            # the text).
            while last < len(lines) and not lines[last].strip():
                last += 1
        drop.update(range(first, last))
    if not kept_tests:
        return ""
    kept = "".join(line for i, line in enumerate(lines) if i not in drop)
    used = {n.id for n in ast.walk(ast.parse(kept)) if isinstance(n, ast.Name)}
    unused: set[int] = set()
    for node in ast.parse(kept).body:
        if isinstance(node, ast.Import | ast.ImportFrom) and not any(
            (a.asname or a.name.split(".")[0]) in used for a in node.names
        ):
            unused.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    kept_lines = kept.splitlines(keepends=True)
    result = "".join(line for i, line in enumerate(kept_lines) if i not in unused)
    ending = text[len(text.rstrip("\r\n")) :]
    return result.rstrip("\r\n") + ending


def _top_level_names(source: str) -> set[str]:
    """Names a module defines at its top level (statically)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def prepare(data: ActionInput) -> Draft:
    """Tests for the inputs' target in the destination's source module, appended to this
    document (the test module)."""
    destination = data.destination
    target = data.inputs.target if isinstance(data.inputs, TestInputs) else None
    if destination is None or target is None:
        raise ActionError("tests need the function at the cursor and a test module")
    from ..engines.test_stubs import parsable

    # Written from the function's own text when the file does not parse elsewhere; the recorder
    # cannot import such a module, so it does not run (the job ends flagged: unparsed_source).
    source, broken = parsable(destination.source)
    record = data.record if broken is None else None
    module = destination.module
    existing = data.document.text
    read_module = destination.read_module
    hypothesis = destination.hypothesis
    offset, _ = placed(existing, "")
    at = advance(Point(0, 0), existing[:offset])
    before, after = existing[:offset], existing[offset:]

    def insertion(generated: str) -> str:
        return placed(existing, appended(existing, generated))[1]

    async def tests() -> tuple[RecordPlan | None, Recording | None, str]:
        """The generator's tests of the target, with what the recorder (``tests.run``) saw it
        do: the plan, the recording and the tests. A recording that yields nothing keeps the
        static tests as they are. The other modules' trees read meanwhile are not kept past it."""
        from ..engines.test_stubs import forget_parsed, generate, record_plan

        try:
            plan = record_plan(source, target, module, read_module) if record else None
            recording = await record(plan) if record is not None and plan is not None else None
            observed = recording if recording is not None and recording.observations else None
            generated = generate(
                source, target, module, read_module, observed, hypothesis=hypothesis
            )
        finally:
            forget_parsed()
        return plan, recording, generated

    async def offline() -> OfflineAnswer | None:
        plan, recording, generated = await tests()
        return OfflineAnswer(
            insertion(generated), note=_recorded_note(generated, recording, plan, record)
        )

    async def supplement(text: str) -> tuple[str, str]:
        """A model's tests (``text``, placed as :func:`insertion` places them) with the
        recorder's added: what the function really did, chosen to catch slips."""
        from ..engines.test_stubs import merge

        if record is None:
            return text, ""
        plan, recording, generated = await tests()
        others = [name for name in test_names(generated) if "_recorded_" not in name]
        recorded = without_tests(generated, others) if others else generated
        note = _recorded_note(recorded, recording, plan, record)
        if not recorded or not _is_valid(before + text):
            return text, note
        merged = merge(before + text, recorded.lstrip("\n"), append_only=True)
        added = merged[len(before) :]
        if not text.endswith(("\n", "\r")):
            added = added.rstrip("\r\n")  # placed: the module's last line break follows
        return added, note

    lines = source.splitlines()
    imports = "\n".join(line for line in lines if line.startswith(("import ", "from ")))
    tree = ast.parse(source)
    node = _find(tree, target.qualname)
    code = ast.get_source_segment(source, node) if node is not None else ""
    callers = _callers(tree, target.qualname.rsplit(".", 1)[-1])
    user = (
        f"Module import path: {module}\nIts imports:\n{imports}\n\n"
        f"Write tests for {target.qualname}:\n{code}\n"
    )
    if callers:
        user += "\nCalled by:\n" + "\n".join(callers) + "\n"
    if not hypothesis:
        user += "\nThe project does not have hypothesis: write plain pytest tests, no @given.\n"
    if existing.strip():
        user += f"\nThe test module already contains:\n{existing[-3000:]}\nAdd new tests only."

    def ask(extra: str = "") -> ChatRequest:
        return ChatRequest(
            messages=(
                ChatMessage("system", prompts.WRITE_TESTS),
                ChatMessage("user", user + extra),
            ),
            max_tokens=data.max_tokens,
            temperature=data.temperature,
        )

    return Draft(
        request=ask(),
        pipeline=Pipeline(Unwrap()),
        transform=insertion,
        offline=offline,
        verify=lambda text: check(before, text + after, module, source, read_module),
        # A module that does not parse never lands: the model is asked once more, then the
        # offline generator answers.
        refine=lambda _text, result: ask(
            f"\nYour previous answer was rejected: {result.get('details')}. Reply with a "
            "complete, valid pytest module."
        ),
        rounds=2,
        no_suggestion=f"no tests written: {_missing(source, target.qualname)}",
        region=(at, at),
        supplement=supplement,
    )


def unparsed_source(source: str) -> str | None:
    """What a test job says when the tested module does not parse (its tests were written from
    the function's own text, but cannot be run yet); None when it parses."""
    from ..engines.test_stubs import parsable

    line = parsable(source)[1]
    if line is None:
        return None
    return f"line {line} does not parse; the tests will run once it does"


def _missing(source: str, qualname: str) -> str:
    """What the function lacks for a test: the reason a job that writes none ends with."""
    try:
        node = _find(ast.parse(source), qualname)
    except SyntaxError:
        node = None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return "no public function at the position"
    body = [s for s in node.body if not isinstance(s, ast.Expr | ast.Pass)]
    if body and all(isinstance(s, ast.Raise) for s in body):
        return "the function only raises"
    return "the test module has every test the generator writes for it"


def _is_valid(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def _recorded_note(
    generated: str, recording: Recording | None, plan: RecordPlan | None, record: object
) -> str:
    """What the job record says of the recorded tests (nothing when ``tests.run`` is off)."""
    if record is None:
        return ""
    if plan is None:
        return "no recorded tests: the generator cannot write a call to this function"
    if recording is None or recording.error:
        why = recording.error if recording is not None else "nothing was recorded"
        return f"no recorded tests: {why}"
    from ..engines.test_stubs import amended_tests

    added = sum("_recorded_" in name for name in test_names(generated))
    note = (
        f"{added} recorded test{'s' if added != 1 else ''} added (the function ran on "
        f"{len(recording.observations)} of {len(plan.calls)} planned calls and "
        f"{recording.variants} variants)"
    )
    repaired = amended_tests(generated)
    if repaired:
        note += (
            f"; docstring example{'s' if len(repaired) > 1 else ''} the function does otherwise "
            f"written as it ran: {', '.join(repaired)}"
        )
    return note


def _callers(tree: ast.Module, name: str, limit: int = 5) -> list[str]:
    """Signatures of the functions in the module that call ``name`` (how it is used)."""
    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name == name:
            continue
        calls = any(
            isinstance(c, ast.Call)
            and (
                (isinstance(c.func, ast.Name) and c.func.id == name)
                or (isinstance(c.func, ast.Attribute) and c.func.attr == name)
            )
            for c in ast.walk(node)
        )
        if calls:
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            out.append(f"def {node.name}({ast.unparse(node.args)}){returns}")
        if len(out) >= limit:
            break
    return out


def _find(tree: ast.Module, qualname: str) -> ast.AST | None:
    parts = qualname.split(".")
    body: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in parts:
        found = next(
            (
                n
                for n in body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name == part
            ),
            None,
        )
        if found is None:
            return None
        body = getattr(found, "body", [])
    return found
