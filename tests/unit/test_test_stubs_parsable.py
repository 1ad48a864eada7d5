"""Tests from a function's own text when the file does not parse elsewhere (``parsable``)."""

from __future__ import annotations

import pytest

from fastedit_lsp.engines import test_stubs as stubs

SOURCE = '''import math

@staticmethod
def decorated(x):
    return x

def broken(:
    pass

def area(r: float) -> float:
    """Area.

    >>> area(1) == math.pi
    True
    """
    return math.pi * r * r

x = (1,
'''


def test_blocks_that_do_not_parse_are_blanked_and_every_line_kept() -> None:
    kept, error = stubs.parsable(SOURCE)
    assert error == SOURCE.splitlines().index("def broken(:") + 1
    assert len(kept.splitlines()) == len(SOURCE.splitlines())
    assert "broken" not in kept and "x = (1," not in kept
    # A decorator stays with its def; the module's imports stay.
    assert "@staticmethod\ndef decorated(x):" in kept and "import math" in kept


def test_the_tests_are_written_from_the_functions_own_text() -> None:
    kept, _ = stubs.parsable(SOURCE)
    line = SOURCE.splitlines().index("def area(r: float) -> float:")
    target = stubs.find_target(kept, line)
    generated = stubs.generate(kept, target, "circle")
    assert "import math" in generated and "assert (area(1) == math.pi) is True" in generated


def test_a_file_that_parses_is_unchanged() -> None:
    assert stubs.parsable("def f():\n    return 1\n") == ("def f():\n    return 1\n", None)


def test_an_error_inside_the_function_leaves_no_target() -> None:
    kept, _ = stubs.parsable(SOURCE)
    with pytest.raises(stubs.NoTargetError):
        stubs.find_target(kept, SOURCE.splitlines().index("def broken(:"))
