"""Write tests: a pytest module for the function or method at the cursor.

Pure. The runner finds where the test module goes (``tests/test_<module>.py`` beside the nearest
``tests/`` folder, else ``test_<module>.py`` beside the module) and opens or creates it; this
module prepares the text appended to it: offline, from the code alone (``test_stubs``: doctests
become assertions, reachable ``raise`` statements ``pytest.raises`` cases, type hints hypothesis
stubs, the rest marked TODO); with a model, from the function, its docstring and its imports.
The user's code is never imported or run for this.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..backends.base import ChatMessage, ChatRequest
from ..engines.test_stubs import Target, generate, merge
from ..prompting import prompts
from ..prompting.filters import FenceFilter, Pipeline
from .base import ActionInput, Draft, OfflineAnswer, Verification


def appended(existing: str, generated: str) -> str:
    """What to append to ``existing`` so that it holds the generated tests (imports included)."""
    if not existing.strip():
        return generated
    # Append only (the edit stays one insertion at the end): missing imports go just before
    # the new tests; clashing names are renamed.
    merged = merge(existing, generated, append_only=True)
    return merged[len(existing) :]


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
    tests = sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    )
    return {"ok": True, "details": f"parses; imports resolve; {tests} test functions"}


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
    """Tests for ``inputs['target']`` of ``inputs['source']``, appended to this document."""
    source = str(data.inputs["source"])
    target: Target = data.inputs["target"]
    module = str(data.inputs["module"])
    existing = data.document.text

    async def offline() -> OfflineAnswer | None:
        return OfflineAnswer(appended(existing, generate(source, target, module)))

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
        pipeline=Pipeline(FenceFilter()),
        transform=lambda answer: appended(existing, answer),
        offline=offline,
        verify=lambda text: check(
            existing, text, module, source, data.inputs.get("workspaceModule")
        ),
        # A module that does not parse never lands: the model is asked once more, then the
        # offline generator answers.
        refine=lambda _text, result: ask(
            f"\nYour previous answer was rejected: {result.get('details')}. Reply with a "
            "complete, valid pytest module."
        ),
        rounds=2,
        no_suggestion="no suggestion",
    )


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
