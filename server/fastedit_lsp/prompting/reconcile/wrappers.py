"""What wraps the code in a chat model's answer: fences, prose, reasoning.

Pure and streaming. :class:`Unwrap` takes the answer's text as it arrives (``feed``) and returns
the code in it, line breaks as ``\\n``; ``finish`` returns what it still held. It holds back at
most the current line, and only while that line could still be a fence, a reasoning tag or prose.

- ``<think>…</think>`` / ``<thinking>…</thinking>`` at the start (reasoning models put it in the
  content) is dropped; an answer that ends inside it gives nothing.
- A fence line (```` ``` ```` or ``~~~``, with or without a language tag) before any code opens the
  code; after code it closes it, and everything after a closing fence is commentary.
- Before the first line of code, prose lines ("Here is the rest:", "Okay, so the user wants…")
  and the blank lines around them are dropped. A line is never prose when it continues a comment
  or a string the cursor is in.
- After code, a blank line followed by prose ends the code (unfenced commentary after it).
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_FENCE_MARKS = ("```", "~~~")
_THINK_OPEN = ("<think>", "<thinking>", "<reasoning>")
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>")
# How prose that introduces, closes or reasons about code begins; never how a line of code begins.
_OPENERS = (
    "here's",
    "here is",
    "here are",
    "sure",
    "certainly",
    "of course",
    "okay",
    "ok,",
    "ok.",
    "ok!",
    "alright",
    "below is",
    "the following",
    "the updated",
    "the corrected",
    "the completed",
    "the rewritten",
    "the fixed",
    "the rest",
    "the user",
    "i've",
    "i have",
    "i need",
    "i'll",
    "i will",
    "let me",
    "let's",
    "we need",
    "looking at",
    "this code",
    "this function",
    "this change",
    "this version",
    "this completes",
    "this implementation",
    "let me know",
    "note:",
    "explanation:",
    "hope this",
)
_CHATTER = re.compile(
    r"^\s*(" + "|".join(re.escape(o) + (r"\b" if o[-1].isalpha() else "") for o in _OPENERS) + ")",
    re.IGNORECASE,
)
# A sentence: a capitalised word, at least two more words, ending like a sentence, and none of
# the characters code lines are made of.
_SENTENCE = re.compile(r"^\s*[A-Z][a-z']*(?: [\w'`,*-]+){2,}[.:!?]\s*$")
_LONGEST_WORD = 16  # a first word longer than this is an identifier, not prose
_CODE_CHARS = re.compile(r"[=;{}()\[\]<>]|->|::")


def without_reasoning(answer: str) -> str:
    """A whole answer without its leading reasoning block (all of it when never closed)."""
    head = answer.lstrip()
    if not head.lower().startswith(_THINK_OPEN):
        return answer
    closing = _THINK_CLOSE.search(head)
    return "" if closing is None else head[closing.end() :].lstrip("\r\n")


def is_prose(line: str) -> bool:
    """Whether a whole line reads as a sentence about code rather than code."""
    if _CHATTER.match(line):
        return True
    return bool(_SENTENCE.match(line)) and not _CODE_CHARS.search(line)


def _could_be_prose(partial: str) -> bool:
    stripped = partial.lstrip().lower()
    if _CHATTER.match(partial):
        return True
    if any(o.startswith(stripped) for o in _OPENERS):
        return True
    # Could still become a sentence: a capitalised word (not a long identifier), words and
    # spaces only so far.
    head = partial.lstrip()
    if len(head.split(" ", 1)[0]) > _LONGEST_WORD:
        return False
    return bool(re.fullmatch(r"[A-Z][\w' `,*-]*", head)) and not _CODE_CHARS.search(partial)


class Unwrap:
    """Strip reasoning, fences and prose around the code; hold at most the current line."""

    def __init__(
        self, *, in_comment: bool = False, mid_line: bool = False, sentences: bool = True
    ) -> None:
        self._in_comment = in_comment  # the first line continues a comment or string
        # The first line continues code on the target's line: a sentence there is code.
        self._mid_line = mid_line
        # Whether a sentence is prose; off for answers that are prose (a plan): then only the
        # introductions and sign-offs models put around any answer are dropped.
        self._sentences = sentences
        self._buffer = ""  # text not decided yet: the start (a reasoning tag?) or the current line
        self._think = "maybe"  # "maybe" (undecided), "in" (inside), "no"
        self._line_open = False  # part of the current line went out: the rest is code
        self._seen_code = False
        self._fenced = False  # an opening fence was seen
        self._blanks = ""  # blank lines held (before the first code line, or after code)
        self._done = False  # after a closing fence or trailing prose: only commentary follows
        self._prose = False  # an introduction was dropped: the blank lines after it go too
        self._quotes = 0  # triple quotes seen in the code: odd inside a multi-line string

    def feed(self, text: str) -> str:
        if self._done:
            return ""
        self._buffer += text
        if self._think != "no" and not self._skip_reasoning(final=False):
            return ""
        out: list[str] = []
        while self._buffer and not self._done:
            if self._line_open:
                index = self._buffer.find("\n")
                if index == -1:
                    out.append(self._buffer)
                    self._buffer = ""
                    break
                out.append(self._buffer[: index + 1])
                self._buffer = self._buffer[index + 1 :]
                self._line_open = False
                continue
            index = self._buffer.find("\n")
            if index == -1:
                if not self._could_be_special(self._buffer):
                    out.append(self._code(self._buffer))
                    self._buffer = ""
                    self._line_open = True
                break
            line, self._buffer = self._buffer[: index + 1], self._buffer[index + 1 :]
            out.append(self._complete(line))
        return "".join(out)

    def finish(self) -> str:
        if self._think != "no" and not self._skip_reasoning(final=True):
            return ""
        if self._done:
            return ""
        out = self.feed("")
        line, self._buffer = self._buffer, ""
        if self._line_open:
            return out + line
        if not line or _FENCE.match(line) or (not self._seen_code and self._special(line)):
            return out
        if self._trailing_prose(line):
            return out
        return out + self._code(line)

    def _skip_reasoning(self, *, final: bool) -> bool:
        """Drop a leading reasoning block; False while undecided or inside it."""
        if self._think == "maybe":
            head = self._buffer.lstrip()
            lowered = head.lower()
            if any(lowered.startswith(tag) for tag in _THINK_OPEN):
                self._think = "in"
            elif not final and any(tag.startswith(lowered) for tag in _THINK_OPEN):
                return False
            else:
                self._think = "no"
                return True
        closing = _THINK_CLOSE.search(self._buffer)
        if closing is None:
            if final:
                self._buffer = ""
            return False
        self._buffer = self._buffer[closing.end() :].lstrip("\r\n")
        self._think = "no"
        return True

    def _special(self, line: str) -> bool:
        if self._in_comment and not self._seen_code:
            return False
        if self._mid_line and not self._seen_code:
            return bool(_CHATTER.match(line) or _THINK_CLOSE.search(line))
        if not self._sentences:
            return bool(_CHATTER.match(line) or _THINK_CLOSE.search(line))
        return is_prose(line) or bool(_THINK_CLOSE.search(line))

    def _could_be_special(self, partial: str) -> bool:
        """Whether an incomplete line might still turn out to be a fence or prose."""
        stripped = partial.lstrip()
        if not stripped:
            return True
        if any(mark.startswith(stripped[:3]) for mark in _FENCE_MARKS):
            return True
        if stripped.startswith("<") and any(
            t.startswith(stripped[:12]) for t in ("</think>", "</thinking>", "</reasoning>")
        ):
            return True
        if self._in_comment and not self._seen_code:
            return False
        if self._mid_line and not self._seen_code:
            lowered = stripped.lower()
            return bool(_CHATTER.match(partial)) or any(o.startswith(lowered) for o in _OPENERS)
        if self._seen_code and (not self._blanks or self._fenced or self._quotes % 2):
            return False
        if not self._sentences:
            lowered = stripped.lower()
            return bool(_CHATTER.match(partial)) or any(o.startswith(lowered) for o in _OPENERS)
        return _could_be_prose(partial)

    def _code(self, text: str) -> str:
        held, self._blanks = self._blanks, ""
        self._seen_code = True
        self._quotes += text.count('"""') + text.count("'''")
        return held + text

    def _trailing_prose(self, line: str) -> bool:
        """Prose after the code and a blank line: not inside a fence or a multi-line string."""
        if not (self._seen_code and self._blanks) or self._fenced or self._quotes % 2:
            return False
        return self._special(line)

    def _complete(self, line: str) -> str:
        if _FENCE.match(line):
            if self._seen_code or self._fenced:
                self._done = self._seen_code  # a closing fence: commentary follows
            self._fenced = True
            self._blanks = ""
            return ""
        if not line.strip():
            if self._seen_code or not self._prose:
                self._blanks += line
            return ""
        if not self._seen_code and self._special(line):
            self._blanks = ""
            self._prose = True
            return ""
        if self._trailing_prose(line):
            self._done = True  # prose after the code
            self._blanks = ""
            return ""
        return self._code(line)
