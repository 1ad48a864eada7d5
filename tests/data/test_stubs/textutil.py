"""Small text helpers of the kind every project grows."""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")
VOWELS = frozenset("aeiou")


def slugify(title: str, separator: str = "-") -> str:
    """A URL slug: lowercase ASCII words joined by ``separator``.

    >>> slugify("Hello, World!")
    'hello-world'
    >>> slugify("  Crème Brûlée  ")
    'creme-brulee'
    >>> slugify("2024 Annual Report", separator="_")
    '2024_annual_report'
    """
    if not separator:
        raise ValueError("separator must not be empty")
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return _NON_WORD.sub(separator, ascii_text.lower()).strip(separator)


def truncate(text: str, width: int, suffix: str = "...") -> str:
    """Cut ``text`` to at most ``width`` characters, ending with ``suffix`` when cut.

    >>> truncate("The quick brown fox", 10)
    'The qui...'
    >>> truncate("short", 10)
    'short'
    >>> truncate("abc", 2, suffix="")
    'ab'
    """
    if width < 0:
        raise ValueError(f"width must be non-negative, got {width}")
    if len(suffix) > width:
        raise ValueError("suffix is longer than width")
    if len(text) <= width:
        return text
    return text[: width - len(suffix)] + suffix


def word_count(text: str) -> dict[str, int]:
    """How often each lowercase word occurs, in order of first appearance.

    >>> word_count("the cat and the hat")
    {'the': 2, 'cat': 1, 'and': 1, 'hat': 1}
    >>> word_count("")
    {}
    """
    counts: dict[str, int] = {}
    for word in re.findall(r"[a-z']+", text.lower()):
        counts[word] = counts.get(word, 0) + 1
    return counts


def count_vowels(text: str) -> int:
    """The number of vowels in ``text``.

    >>> count_vowels("Programming")
    3
    >>> count_vowels("rhythm")
    0
    """
    return sum(1 for ch in text.lower() if ch in VOWELS)


def is_palindrome(text: str) -> bool:
    """Whether ``text`` reads the same backwards, ignoring case, spaces and punctuation.

    >>> is_palindrome("A man, a plan, a canal: Panama")
    True
    >>> is_palindrome("python")
    False
    """
    letters = [ch.lower() for ch in text if ch.isalnum()]
    return letters == letters[::-1]


def initials(name: str) -> str:
    """The initials of a full name, upper case with dots.

    >>> initials("ada lovelace")
    'A.L.'
    >>> initials("Guido van Rossum")
    'G.V.R.'
    >>> initials("   ")
    Traceback (most recent call last):
        ...
    ValueError: name has no words
    """
    words = name.split()
    if not words:
        raise ValueError("name has no words")
    return "".join(word[0].upper() + "." for word in words)


def print_table(rows: list[tuple[str, int]]) -> None:
    """Print name/value rows as an aligned two-column table.

    >>> print_table([("apples", 3), ("kiwis", 12)])
    apples   3
    kiwis   12
    >>> print_table([])
    """
    if not rows:
        return
    width = max(len(name) for name, _ in rows)
    digits = max(len(str(value)) for _, value in rows)
    for name, value in rows:
        print(f"{name.ljust(width)} {str(value).rjust(digits + 1)}")  # noqa: T201
