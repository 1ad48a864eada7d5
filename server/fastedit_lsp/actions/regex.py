"""Generate regex: a pattern from the examples in a comment block (or selected string literals).

Pure, but for the offline answer, which runs synthesis in a process of its own
(``engines.regex.worker``). The syntax (docs/actions.md, "Commands"): a comment block at the
range, in the language's line-comment syntax, with an optional ``regex: <description>`` line and
``match:`` / ``reject:`` lines. The pattern is meant for ``fullmatch``. In Python it lands below the
block as ``NAME = re.compile(r"...")`` (a rerun replaces the assignment it made; ``import re`` is
added when missing), or fills an empty ``re.compile()`` at the range. Other languages get their
idiomatic literal, anchored, verified only where a matching engine exists (Python ``re``).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..backends.base import ChatMessage, ChatRequest
from ..core.document import Document, Point
from ..core.jobs import Inputs
from ..engines.regex.synth import RegexExamples, name_for, parse_examples, string_literals, verify
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

COMMENTS: dict[str, str] = {
    "python": "#",
    "ruby": "#",
    "shellscript": "#",
    "perl": "#",
    "r": "#",
    "yaml": "#",
    "toml": "#",
    "javascript": "//",
    "javascriptreact": "//",
    "typescript": "//",
    "typescriptreact": "//",
    "go": "//",
    "rust": "//",
    "java": "//",
    "c": "//",
    "cpp": "//",
    "csharp": "//",
    "kotlin": "//",
    "swift": "//",
    "php": "//",
    "lua": "--",
    "sql": "--",
    "haskell": "--",
    "elisp": ";",
    "emacs-lisp": ";",
    "clojure": ";",
}
_EMPTY_COMPILE = re.compile(r"re\.compile\(\s*\)")
_ASSIGNMENT = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*=\s*re\.compile\(.*\)\s*$")


@dataclass(frozen=True)
class RegexTarget:
    """Where the pattern goes and what it must satisfy."""

    start: Point
    end: Point
    examples: RegexExamples
    language: str
    #: ``assign``: a whole line below the block; ``fill``: inside an empty ``re.compile()``.
    mode: Literal["assign", "fill"]
    name: str
    indent: str
    #: The line (0-based) where ``import re`` goes when the file lacks it, else None.
    import_line: int | None
    #: The block ends the document: the new line goes at the end of its last line, after a
    #: line break of its own; not after the document's last line break (where Neovim, which
    #: keeps a line break at the end of every buffer, makes it a line of its own plus one more,
    #: and reports a change the job cannot follow: it stopped).
    break_first: bool = False


@dataclass(frozen=True)
class RegexInputs(Inputs):
    """The target found when the command ran (its region is tracked since)."""

    target: RegexTarget | None = None


def start(document: Document, command: CommandInput) -> Start:
    """Where the pattern goes (below the examples, or in an empty ``re.compile()``)."""
    found = target(document, command.start, command.end)
    return Start(found.start, found.end, RegexInputs(target=found))


def offers(view: OfferView) -> Sequence[Offer]:
    """Offered where a comment block of examples (or selected string literals) is."""
    try:
        found = target(view.document, view.start, view.end)
    except ActionError:
        return ()
    what = found.examples.description or f"{len(found.examples.positives)} examples"
    return [
        Offer(
            f"Generate regex: {what} (fastedit)",
            "refactor.rewrite",
            {"uri": view.uri, "range": view.wire_range},
        )
    ]


def _comment_for(language: str) -> str:
    return COMMENTS.get(language, "#")


def _block(document: Document, line: int, comment: str) -> tuple[int, int]:
    """The contiguous comment lines around ``line`` (inclusive bounds)."""

    def is_comment(i: int) -> bool:
        return document.line(i).lstrip().startswith(comment)

    first = last = line
    while first > 0 and is_comment(first - 1):
        first -= 1
    while last + 1 < document.line_count and is_comment(last + 1):
        last += 1
    return first, last


def target(document: Document, start: Point, end: Point) -> RegexTarget:
    """Find the examples at the range and where the pattern goes; ActionError when none."""
    language = document.language_id or "python"
    comment = _comment_for(language)
    selection = document.get_text(start, end)
    fill_line = None
    if _EMPTY_COMPILE.search(document.line(start.line)):
        fill_line = start.line
        first, last = _block(document, max(0, start.line - 1), comment)
        if not document.line(first).lstrip().startswith(comment):
            first = last = start.line
    elif document.line(start.line).lstrip().startswith(comment):
        first, last = _block(document, start.line, comment)
    else:
        first, last = (
            start.line,
            max(start.line, end.line if end.col or end == start else end.line - 1),
        )
    lines = [document.line(i) for i in range(first, last + 1)]
    examples = parse_examples(lines, comment)
    if examples is None and selection.strip():
        literals = string_literals(selection) if language == "python" else ()
        if literals:
            examples = RegexExamples(None, tuple(literals), ())
    if examples is None or not examples.positives:
        raise ActionError(
            f"no regex examples at line {start.line + 1}: write a comment block with "
            f"'{comment} match: <example>' lines (and '{comment} reject: <example>' lines, "
            f"optionally '{comment} regex: <description>'), or select string literals"
        )
    name = name_for(examples.description)
    if fill_line is not None:
        text = document.line(fill_line)
        match = _EMPTY_COMPILE.search(text)
        assert match is not None
        col = text.index("(", match.start()) + 1
        at = Point(fill_line, col)
        return RegexTarget(
            at,
            Point(fill_line, match.end() - 1),
            examples,
            language,
            "fill",
            name,
            "",
            _import_line(document, language),
        )
    below = last + 1
    indent = re.match(r"\s*", document.line(last)).group(0)  # type: ignore[union-attr]
    if below < document.line_count:
        existing = _ASSIGNMENT.match(document.line(below))
        if existing and existing.group(2) == name and language == "python":
            # A rerun replaces the assignment it made.
            line_end = Point(below, len(document.line(below)))
            return RegexTarget(
                Point(below, 0),
                line_end,
                examples,
                language,
                "assign",
                name,
                indent,
                _import_line(document, language),
            )
        at = Point(below, 0)
    else:
        at = document.end
    # At the end of the document: after the last line's text (with no line break after it,
    # the pattern's line needs one before it all the more).
    break_first = at == document.end and (at.line, at.col) != (0, 0)
    if break_first and at.col == 0:
        at = Point(at.line - 1, len(document.line(at.line - 1)))
    return RegexTarget(
        at,
        at,
        examples,
        language,
        "assign",
        name,
        indent,
        _import_line(document, language),
        break_first,
    )


def _import_line(document: Document, language: str) -> int | None:
    """Where ``import re`` goes in a Python file that lacks it (after docstring and imports)."""
    if language != "python":
        return None
    position = 0
    in_docstring = False
    for i in range(document.line_count):
        text = document.line(i).strip()
        if re.match(r"^(import re\b|from re import)", text):
            return None
        if i == 0 and text.startswith(("#!", "# -*-")):
            position = 1
            continue
        if text.startswith(('"""', "'''")) and i <= position:
            quote = text[:3]
            in_docstring = not (len(text) > 3 and text.endswith(quote))
            position = i + 1
            continue
        if in_docstring:
            if text.endswith(('"""', "'''")):
                in_docstring = False
            position = i + 1
            continue
        if text.startswith(("import ", "from ")):
            position = i + 1
    return position


def literal(pattern: str, language: str) -> str:
    """The pattern as the language's idiomatic literal (anchored where ``fullmatch`` is not)."""
    if language == "python":
        if '"' not in pattern and not pattern.endswith("\\"):
            return f'r"{pattern}"'
        if "'" not in pattern and not pattern.endswith("\\"):
            return f"r'{pattern}'"
        return repr(pattern)
    anchored = f"^(?:{pattern})$"
    if language in ("javascript", "javascriptreact", "typescript", "typescriptreact"):
        return "/" + anchored.replace("/", "\\/") + "/u"
    if language == "go":
        return f"regexp.MustCompile(`{anchored}`)" if "`" not in anchored else repr(anchored)
    if language == "rust":
        return f'Regex::new(r#"{anchored}"#).unwrap()'
    return '"' + anchored.replace("\\", "\\\\").replace('"', '\\"') + '"'


def insertion(t: RegexTarget, pattern: str) -> str:
    """The text that goes into the target region."""
    lit = literal(pattern, t.language)
    if t.mode == "fill":
        return lit
    line = _assignment(t, lit)
    return "\n" + line.removesuffix("\n") if t.break_first else line


def _assignment(t: RegexTarget, lit: str) -> str:
    """The pattern's line, below the examples."""
    if t.language == "python":
        return f"{t.indent}{t.name} = re.compile({lit})\n"
    if t.language in ("javascript", "javascriptreact", "typescript", "typescriptreact"):
        return f"{t.indent}const {t.name} = {lit};\n"
    if t.language == "go":
        return f"{t.indent}var {t.name} = {lit}\n"
    if t.language == "rust":
        return f"{t.indent}let {t.name.lower()} = {lit};\n"
    return f"{t.indent}{_comment_for(t.language)} {t.name}: {lit}\n"


def extract_pattern(text: str, t: RegexTarget) -> str:
    """The pattern inside an inserted text (what the model or the engine produced)."""
    body = text.strip()
    m = re.search(r"re\.compile\((.*)\)\s*$", body, re.S)
    if m:
        body = m.group(1).strip()
    if body[:2] in ('r"', "r'") and body[-1:] == body[1]:
        return body[2:-1]
    if body[:1] in ('"', "'") and body[-1:] == body[0]:
        try:
            value = ast.literal_eval(body)
        except (ValueError, SyntaxError):
            return body
        return str(value)
    return body


def check(pattern: str, t: RegexTarget) -> Verification:
    """Verify with Python ``re`` (the only engine here); other flavours are not verified."""
    if t.language != "python":
        return {"ok": None, "details": f"no {t.language} regex engine here to verify with"}
    try:
        ok, details = verify(pattern, t.examples.positives, t.examples.negatives)
    except re.error as exc:
        return {"ok": False, "details": f"not a valid Python regex: {exc}"}
    return {"ok": ok, "details": details}


#: Answers asked of one model before its route gives up (the second names what failed).
MODEL_ROUNDS = 2


def request(t: RegexTarget, data: ActionInput, failing: str = "") -> ChatRequest:
    lines = []
    if t.examples.description:
        lines.append(f"Description: {t.examples.description}")
    lines.extend(f"Must match: {p!r}" for p in t.examples.positives)
    lines.extend(f"Must not match: {n!r}" for n in t.examples.negatives)
    if failing:
        lines.append(f"A previous attempt failed: {failing}")
    return ChatRequest(
        messages=(ChatMessage("system", prompts.REGEX), ChatMessage("user", "\n".join(lines))),
        max_tokens=min(data.max_tokens, 256),
        temperature=data.temperature,
    )


def prepare(data: ActionInput) -> Draft:
    """Offline: synthesis from the examples (in a process of its own); a model's pattern is
    checked against every example before it lands."""
    from ..engines.regex.worker import synthesize_async

    found = data.inputs.target if isinstance(data.inputs, RegexInputs) else None
    if found is None:
        found = target(data.document, data.start, data.end)
    else:
        # Found when the command ran; the region has been tracked since.
        found = dataclasses.replace(found, start=data.start, end=data.end)
    t = found

    async def offline() -> OfflineAnswer | None:
        pattern = await synthesize_async(t.examples.positives, t.examples.negatives)
        return OfflineAnswer(insertion(t, pattern))

    return Draft(
        request=request(t, data),
        pipeline=Pipeline(Unwrap()),
        transform=lambda answer: insertion(t, answer.strip().strip("`").strip()),
        offline=offline,
        verify=lambda text: check(extract_pattern(text, t), t),
        extra=None if t.import_line is None else (t.import_line, "import re\n"),
        refine=lambda _text, result: request(t, data, failing=str(result.get("details", ""))),
        rounds=MODEL_ROUNDS,
    )
