"""``fastedit-lsp demo [FOLDER]``: every action, live, on copies of sample files.

Starts the real server over stdio with a scripted client (``lsp_client``), on copies of the
packaged samples (or of FOLDER's Python files: the folder itself is never touched), runs each
action — generate regex, complete the rest, write tests, fix syntax — and prints the streamed
edits as they arrive, each job's route, model, time to first token, speed, edit count and
verification, then the diffs. Uses whatever profile is configured; the offline engine by default,
so it works with no key and no network. Exit code 1 when an action failed.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from pygls.uris import from_fs_path, to_fs_path

from ..core.document import Document
from ..core.jobs import LOCAL, figures_text
from .lsp_client import LspClient, LspError

#: Where the wheel carries the sample files: the repository's ``examples/python`` (pyproject.toml,
#: ``force-include``), so the demo runs from any directory after ``pip install .``.
PACKAGED_SAMPLES = "samples"


@dataclass
class Step:
    title: str
    command: str
    path: Path
    argument: dict[str, Any]
    #: The text of the step's line when planned: earlier steps may move it.
    anchor: str = ""


class Demo:
    """The scripted editor: buffers, live output, and the steps to run."""

    def __init__(self, out: TextIO, workdir: Path) -> None:
        self.out = out
        self.workdir = workdir
        self.buffers: dict[str, Document] = {}
        self.originals: dict[str, str] = {}
        self.color = out.isatty()
        self.client: LspClient | None = None

    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    # -- the editor side -------------------------------------------------------------------

    def open(self, path: Path) -> str:
        assert self.client is not None
        uri = from_fs_path(str(path)) or str(path)
        text = path.read_text(encoding="utf-8")
        self.buffers[uri] = Document(uri, text, version=1, language_id="python")
        self.originals.setdefault(uri, text)
        self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        return uri

    def apply_edit(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.client is not None
        edit = params["edit"]
        changes: dict[str, list[dict[str, Any]]] = dict(edit.get("changes") or {})
        for change in edit.get("documentChanges") or []:
            if "textDocument" in change:
                changes.setdefault(change["textDocument"]["uri"], []).extend(change["edits"])
        for uri, edits in changes.items():
            document = self.buffers.get(uri)
            if document is None:
                return {"applied": False, "failureReason": f"{uri} is not open"}
            reported = []
            for e in sorted(
                edits,
                key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                reverse=True,
            ):
                start = document.to_point(
                    e["range"]["start"]["line"], e["range"]["start"]["character"]
                )
                end = document.to_point(e["range"]["end"]["line"], e["range"]["end"]["character"])
                document.replace(start, end, e["newText"])
                reported.append({"range": e["range"], "text": e["newText"]})
                self.out.write(self._paint(e["newText"], "32"))
                self.out.flush()
            document.version += 1
            self.client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": document.version},
                    "contentChanges": reported,
                },
            )
        return {"applied": True}

    def show_document(self, params: dict[str, Any]) -> dict[str, Any]:
        path = to_fs_path(params["uri"])
        if path is None or not os.path.exists(path):
            return {"success": False}
        if params["uri"] not in self.buffers:
            self.open(Path(path))
        self.out.write(self._paint(f"  (opened {Path(path).name})\n", "2"))
        return {"success": True}

    def notification(self, method: str, params: Any) -> None:
        if method == "window/showMessage":
            self.out.write(self._paint(f"  message: {params.get('message')}\n", "33"))

    # -- the script ------------------------------------------------------------------------

    async def run(self, steps: list[Step]) -> int:
        env = {k: v for k, v in os.environ.items()}
        self.client = client = await LspClient.start(env)
        client.handlers["workspace/applyEdit"] = self.apply_edit
        client.handlers["window/showDocument"] = self.show_document
        client.handlers["workspace/configuration"] = lambda params: [None]
        client.on_notification = self.notification
        root = from_fs_path(str(self.workdir))
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root,
                "workspaceFolders": [{"uri": root, "name": self.workdir.name}],
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "workspace": {
                        "applyEdit": True,
                        "workspaceEdit": {"documentChanges": True},
                        "configuration": True,
                    },
                    "window": {"showDocument": {"support": True}},
                },
            },
        )
        client.notify("initialized", {})
        failed = 0
        for step in steps:
            failed += not await self._step(step)
        self._diffs()
        await client.shutdown()
        self.out.write(
            f"\n{len(steps) - failed} of {len(steps)} actions succeeded"
            f"{'' if not failed else f'; {failed} failed'}.\n"
        )
        return 1 if failed or not steps else 0

    async def _step(self, step: Step) -> bool:
        assert self.client is not None
        uri = from_fs_path(str(step.path)) or str(step.path)
        if uri not in self.buffers:
            self.open(step.path)
        self._follow(step, self.buffers[uri])
        line = step.argument.get("position", step.argument.get("range", {}).get("start", {}))
        self.out.write(
            self._paint(f"\n▶ {step.title}", "1")
            + f"  {step.path.name}:{line.get('line', 0) + 1}\n  "
        )
        try:
            started = await self.client.command(step.command, {"uri": uri, **step.argument})
            record = await self.client.command(
                "fastedit.wait", {"jobId": started["jobId"], "timeoutMs": 60000}, seconds=70
            )
        except LspError as exc:
            self.out.write(self._paint(f"\n  refused: {exc.message}\n", "31"))
            return False
        metrics = record["metrics"]
        verification = record["verification"]
        ok = record["state"] == "done" and verification.get("ok") is not False
        # A model's decode speed and time to first token; the offline engine's elapsed time.
        offline = record["route"] == LOCAL
        figures = figures_text(metrics, offline=offline) or "-"
        if not offline:
            figures = f"{record['model']} · {figures} · {metrics['elapsedMs']:,.0f} ms in all"
        self.out.write(
            "\n  "
            + self._paint(f"{record['state']}", "32" if ok else "31")
            + f" · {record['route']} · {figures} · {metrics['edits']} edits"
            + f"\n  why: {record['reason']}"
            + f"\n  verified: {verification.get('ok')} ({verification.get('details')})"
            + (f"\n  error: {record['error']}" if record.get("error") else "")
            + "\n"
        )
        return ok

    @staticmethod
    def _follow(step: Step, document: Document) -> None:
        """Move the step's line to where its text is now (earlier steps may insert lines)."""
        if not step.anchor:
            return
        lines = [document.line(i) for i in range(document.line_count)]
        if step.anchor not in lines:
            return
        now = lines.index(step.anchor)
        for key in ("position",):
            if key in step.argument:
                step.argument[key]["line"] = now
        if (
            "range" in step.argument
            and step.argument["range"]["start"] == step.argument["range"]["end"]
        ):
            step.argument["range"] = {
                "start": {"line": now, "character": 0},
                "end": {"line": now, "character": 0},
            }

    def _diffs(self) -> None:
        self.out.write(self._paint("\nWhat changed:\n", "1"))
        for uri, document in self.buffers.items():
            before, after = self.originals[uri], document.text
            if before == after:
                continue
            name = Path(to_fs_path(uri) or uri).name
            for line in difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                f"a/{name}",
                f"b/{name}",
            ):
                code = "32" if line.startswith("+") else "31" if line.startswith("-") else "0"
                self.out.write(self._paint(line if line.endswith("\n") else line + "\n", code))


def sample_files() -> list[tuple[str, str]]:
    """(name, text) of the demo's sample files: packaged in the wheel, or, in a source checkout
    (an editable install), the repository's ``examples/python``."""
    packaged = resources.files("fastedit_lsp") / PACKAGED_SAMPLES
    if packaged.is_dir():
        files = [e for e in packaged.iterdir() if e.name.endswith(".py") and e.is_file()]
        if files:
            return sorted((e.name, e.read_text(encoding="utf-8")) for e in files)
    folder = Path(__file__).resolve().parents[3] / "examples" / "python"
    found = sorted(folder.glob("*.py"))
    if not found:
        raise SystemExit(
            "fastedit-lsp demo: no sample files in this installation; "
            "run `fastedit-lsp demo FOLDER` on a folder of Python files"
        )
    return [(p.name, p.read_text(encoding="utf-8")) for p in found]


def copy_samples(folder: str | None, workdir: Path) -> None:
    """The packaged samples (or FOLDER's Python files) into ``workdir``."""
    if folder is None:
        for name, text in sample_files():
            (workdir / name).write_text(text, encoding="utf-8")
        return
    source = Path(folder)
    for path in sorted(source.rglob("*.py")):
        if any(part.startswith(".") for part in path.relative_to(source).parts):
            continue
        target = workdir / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def plan(workdir: Path) -> list[Step]:
    """One step per action, found in the files: examples, a function, an error, a cursor."""
    steps: dict[str, Step] = {}
    for path in sorted(workdir.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines()
        for number, line in enumerate(lines):
            if "generateRegex" not in steps and re.match(r"\s*#\s*(regex|match):", line):
                here = {
                    "start": {"line": number, "character": 0},
                    "end": {"line": number, "character": 0},
                }
                steps["generateRegex"] = Step(
                    "Generate regex", "fastedit.generateRegex", path, {"range": here}, line
                )
            if "completeRest" not in steps and re.fullmatch(r"\s*return (.*\()?\s*", line):
                at = {"line": number, "character": len(line)}
                steps["completeRest"] = Step(
                    "Complete the rest", "fastedit.completeRest", path, {"position": at}, line
                )
        try:
            tree = ast.parse(text)
        except SyntaxError:
            if "fixSyntax" not in steps:
                everything = {
                    "start": {"line": 0, "character": 0},
                    "end": {"line": len(lines), "character": 0},
                }
                steps["fixSyntax"] = Step(
                    "Fix syntax", "fastedit.fixSyntax", path, {"range": everything}
                )
            continue
        if "generateTests" not in steps:
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and ">>>" in (ast.get_docstring(node) or ""):
                    at = {"line": node.lineno - 1, "character": 0}
                    anchor = lines[node.lineno - 1]
                    steps["generateTests"] = Step(
                        "Write tests", "fastedit.generateTests", path, {"position": at}, anchor
                    )
                    break
    order = ("generateRegex", "completeRest", "generateTests", "fixSyntax")
    return [steps[k] for k in order if k in steps]


def main(folder: str | None, out: TextIO) -> int:
    """Run the demo; the exit code."""
    if folder is not None and not os.path.isdir(folder):
        out.write(f"fastedit-lsp demo: {folder} is not a folder\n")
        return 2
    with tempfile.TemporaryDirectory(prefix="fastedit-demo-") as tmp:
        workdir = Path(tmp)
        copy_samples(folder, workdir)
        steps = plan(workdir)
        out.write(f"fastedit-lsp demo on copies in {workdir} ({len(steps)} actions)\n")
        if not steps:
            out.write(
                "nothing to do: found no regex examples, function with doctests, syntax "
                "error or unfinished 'return' line\n"
            )
            return 1
        return asyncio.run(Demo(out, workdir).run(steps))
