"""What the reconciler knows of the place an answer goes: the text around it, its indentation.

Pure. :class:`Target` is built once per answer from the document's text before and after the
target (and the selection a rewrite replaces); everything here is derived from it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

#: How many lines before the target an answer may repeat (a re-sent function is found within it).
PREFIX_LINES = 400
#: How many lines after the target an answer's tail is compared with.
SUFFIX_LINES = 200

_SPACE = " \t"
_CLOSERS_ONLY = re.compile(r"[)\]}>;,.]+|end|fi|done|esac|endif|endfunction", re.IGNORECASE)
_DEFINITION = re.compile(
    r"(?:(?:pub(?:\([^)]*\))?|export|default|async|public|private|protected|internal|static|"
    r"final|abstract|synchronized|override|unsafe|const|inline|virtual|extern|open|suspend)\s+)*"
    r"(?:def|fn|func|function|class|interface|impl|trait|struct|enum|module|sub|proc|fun)\b"
)
_METHOD = re.compile(
    r"(?:(?:public|private|protected|static|final|abstract|synchronized|async|override|get|set)"
    r"\s+)+[\w<>\[\],.? ]*\w\s*\("
)
_OPENER_ENDS = ("{", ":", "(", "[", "=>", "->")


def indent_text(line: str) -> str:
    return line[: len(line) - len(line.lstrip(_SPACE))]


def is_trivial(stripped: str) -> bool:
    """A line too common to say, alone, that an answer repeats the text around it."""
    return len(stripped) < 4 or bool(_CLOSERS_ONLY.fullmatch(stripped))


def is_closers(stripped: str) -> bool:
    return bool(stripped) and bool(_CLOSERS_ONLY.fullmatch(stripped.split()[0]))


def is_definition(stripped: str) -> bool:
    """Whether a line starts a function, method, class or type: unique enough to be re-sent."""
    return bool(_DEFINITION.match(stripped) or _METHOD.match(stripped))


def is_opener(stripped: str) -> bool:
    return stripped.endswith(_OPENER_ENDS)


_BRACELESS = re.compile(r"(?:if|for|while|else|foreach|do)\b.*[^;{}]$")
_CONTINUED = re.compile(r"(?:[\\+\-*/&|=?%^~]|\band|\bor)$")
_CONTINUATION = re.compile(r"(?:[.?:+\-*/%^&|]|&&|\|\||and\b|or\b)")


def expects_deeper(stripped: str) -> bool:
    """Whether the line after this one is indented deeper: a block opens or the line goes on."""
    return is_opener(stripped) or bool(_BRACELESS.match(stripped) or _CONTINUED.search(stripped))


def is_continuation(stripped: str) -> bool:
    """Whether a line continues the one before (``.method()``, ``&& cond``)."""
    return bool(_CONTINUATION.match(stripped))


def _lines(text: str) -> list[str]:
    return [line.removesuffix("\r") for line in text.split("\n")]


def _newline(*texts: str) -> str:
    for text in texts:
        index = text.find("\n")
        if index != -1:
            return "\r\n" if index > 0 and text[index - 1] == "\r" else "\n"
    return "\n"


def _in_comment_or_string(head: str) -> bool:
    """Roughly: the cursor line ends inside a comment or a string."""
    quote = ""
    index = 0
    while index < len(head):
        char = head[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'`":
            quote = char
        elif char == "#" or head.startswith("//", index):
            return True
        index += 1
    return bool(quote)


#: Languages whose formatter indents with tabs: the style when the file shows none yet.
_TAB_LANGUAGES = frozenset({"go", "makefile"})


@dataclass(frozen=True)
class Indentation:
    """How the file indents: tabs or spaces, and the columns of one level."""

    tabs: bool = False
    width: int = 4

    @classmethod
    def of(cls, lines: list[str], *, head: str = "", default_tabs: bool = False) -> Indentation:
        """From the file's indented lines; with none, from the target line's own whitespace
        (``head``), then the language's habit (``default_tabs``: gofmt indents with tabs)."""
        tabs = spaces = 0
        steps: Counter[int] = Counter()
        previous = 0
        for line in lines:
            if not line.strip():
                continue
            lead = indent_text(line)
            if lead.startswith("\t"):
                tabs += 1
            elif lead.startswith(" "):
                spaces += 1
                width = len(lead)
                if width > previous:
                    steps[width - previous] += 1
                previous = width
                continue
            previous = len(lead.expandtabs(4))
        if not tabs and not spaces:
            lead = indent_text(head)
            return cls(tabs=lead.startswith("\t") or (not lead and default_tabs))
        width = 4
        if steps and spaces > tabs:
            common = [w for w, _ in steps.most_common(3) if 2 <= w <= 8]
            width = common[0] if common else 4
        return cls(tabs=tabs > spaces, width=width)

    def columns(self, lead: str) -> int:
        """Columns of leading whitespace, a tab as one level."""
        return sum(self.width if char == "\t" else 1 for char in lead)

    def render(self, columns: int) -> str:
        columns = max(0, columns)
        if self.tabs:
            return "\t" * (columns // self.width) + " " * (columns % self.width)
        return " " * columns

    def native(self, lead: str) -> bool:
        """Whether leading whitespace is already in the file's style."""
        return " " not in lead if self.tabs else "\t" not in lead


@dataclass(frozen=True)
class PrefixLine:
    stripped: str
    columns: int


@dataclass(frozen=True)
class Target:
    """The place an answer goes.

    ``before`` and ``after`` are the document's text around the target (windows of it are fine),
    ``selection`` the text a rewrite replaces (``replace``); an insertion has none.
    """

    before: str
    after: str
    selection: str = ""
    replace: bool = False
    language_id: str = ""
    # Derived.
    newline: str = field(init=False)
    head: str = field(init=False)  # the target line before the target
    rest: str = field(init=False)  # the target's last line after the target
    prefix: tuple[PrefixLine, ...] = field(init=False)  # whole lines before the target line
    suffix: tuple[str, ...] = field(init=False)  # non-blank whole lines after the rest
    style: Indentation = field(init=False)
    column: int = field(init=False)  # where the answer's first line starts, in columns
    indent: int = field(init=False)  # the indentation of the target's first line, in columns
    in_comment: bool = field(init=False)

    def __post_init__(self) -> None:
        before_lines = _lines(self.before)
        after_lines = _lines(self.after)
        selection_lines = _lines(self.selection) if self.selection else []
        head = before_lines[-1]
        full = before_lines[:-1][-PREFIX_LINES:]
        style = Indentation.of(
            full[-200:] + selection_lines + after_lines[:200],
            head=head,
            default_tabs=self.language_id in _TAB_LANGUAGES,
        )
        first = head + (selection_lines[0] if selection_lines else "")
        set_ = object.__setattr__
        set_(self, "newline", _newline(self.before, self.selection, self.after))
        set_(self, "head", head)
        set_(self, "rest", after_lines[0])
        set_(
            self,
            "prefix",
            tuple(PrefixLine(line.strip(), style.columns(indent_text(line))) for line in full),
        )
        set_(self, "suffix", tuple(line for line in after_lines[1:SUFFIX_LINES] if line.strip()))
        set_(self, "style", style)
        set_(self, "column", style.columns(head) if not head.strip(_SPACE) else -1)
        set_(self, "indent", style.columns(indent_text(first)))
        set_(self, "in_comment", _in_comment_or_string(head))

    @property
    def head_blank(self) -> bool:
        return not self.head.strip(_SPACE)

    @property
    def keeps_final_newline(self) -> bool:
        """An answer's last line break is kept only where the target ends at a line start."""
        if self.replace:
            return self.selection.endswith("\n")
        return not self.head and bool(self.after) and not self.after.startswith(("\n", "\r"))
