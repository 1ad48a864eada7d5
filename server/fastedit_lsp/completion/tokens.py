"""Token estimates of code, per model family: what a completion's budget counts.

Pure. Costs are counted in thousandths of a token (:data:`MILLI`) so that the parts of a prompt
add up exactly and are rounded once each (:func:`whole_tokens`); :func:`estimate_tokens` is the
estimate of one text. :mod:`.budget` fits the prefix and suffix with them, :mod:`.snippets` the
other documents' snippets.
"""

from __future__ import annotations

import math
import re

#: Characters per token of code for a model family, by a substring of the model id (first match
#: wins, so narrower names come first). Newlines and non-ASCII characters are counted apart (see
#: estimate_tokens), and the figures are on the low side so that the estimate errs high: larger
#: vocabularies pack more code into a token; Llama 2's 32k SentencePiece vocabulary the least.
CHARS_PER_TOKEN: tuple[tuple[tuple[str, ...], float], ...] = (
    (("codellama", "llama-2", "llama2"), 3.0),
    (("gpt", "o200k", "cl100k"), 3.8),
    (("llama",), 3.5),
    (("qwen",), 3.5),
    (("deepseek",), 3.4),
    (("codestral", "devstral", "mistral", "mixtral", "ministral"), 3.2),
    (("gemma",), 3.4),
)
DEFAULT_CHARS_PER_TOKEN = 3.5

# Token costs are kept in thousandths of a token, so that costs add up exactly and the rounding
# happens once per part (a float sum could round a total over the budget).
MILLI = 1000
# Tokenizers merge runs of spaces and tabs: past its first four characters, a run costs an eighth
# of a token per character. The cost of a run is concave, so splitting text never lowers the sum.
_RUN_FREE = 4
RUN_MILLI = 125
_LONG_RUN = re.compile(r"[ \t]{5,}")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def estimate_tokens(text: str, model: str | None = None) -> int:
    """A conservative (over-)estimate of the token count of code for this model family.

    ASCII characters cost ``1 / chars-per-token`` of the family (:data:`CHARS_PER_TOKEN`), except
    past the fourth character of a run of spaces or tabs (an eighth); a line break costs a whole
    token, a non-ASCII character one (two outside the Basic Multilingual Plane), as byte-level
    tokenizers split them. Rounded up. The estimate of a text never exceeds the sum of the
    estimates of its pieces.
    """
    return whole_tokens(milli_cost(text, milli_per_char(model)))


def milli_per_char(model: str | None) -> int:
    name = (model or "").lower()
    for keys, chars in CHARS_PER_TOKEN:
        if any(key in name for key in keys):
            return math.ceil(MILLI / chars)
    return math.ceil(MILLI / DEFAULT_CHARS_PER_TOKEN)


def milli_cost(text: str, per_char: int) -> int:
    """Estimated cost of ``text`` in thousandths of a token."""
    if not text:
        return 0
    breaks = text.count("\n") + text.count("\r")
    if text.isascii():
        wide = astral = 0
    else:
        wide = len(text) - len(text.encode("ascii", "ignore"))
        astral = len(_ASTRAL.findall(text))
    milli = (len(text) - breaks - wide) * per_char + (breaks + wide + astral) * MILLI
    if "     " in text or "\t" in text:
        for run in _LONG_RUN.finditer(text):
            milli -= (run.end() - run.start() - _RUN_FREE) * (per_char - RUN_MILLI)
    return milli


def whole_tokens(milli: int) -> int:
    return -(-milli // MILLI)
