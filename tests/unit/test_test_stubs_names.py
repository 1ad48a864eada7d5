"""The names check on a generated test module: unbound standard-library modules are imported,
examples reading names nothing binds are left out, and the module runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from fastedit_lsp.engines.test_stubs import find_target, generate

AREA = textwrap.dedent(
    '''
    def area(r):
        """Area of a circle.

        >>> area(1) == math.pi
        True
        >>> undefined_helper(2)
        3
        >>> area(0)
        0.0
        """
        import math
        return math.pi * r * r
    '''
).lstrip()


def test_an_examples_stdlib_module_gets_its_import() -> None:
    generated = generate(AREA, find_target(AREA, 0), "geo")
    assert "\nimport math\n" in generated
    assert "area(1) == math.pi" in generated


def test_an_example_reading_an_unbound_name_is_left_out() -> None:
    generated = generate(AREA, find_target(AREA, 0), "geo")
    assert "undefined_helper" not in generated
    assert "assert area(0) == 0.0" in generated


def test_the_generated_module_passes_on_the_unchanged_code(tmp_path: Path) -> None:
    (tmp_path / "geo.py").write_text(AREA)
    (tmp_path / "test_geo.py").write_text(generate(AREA, find_target(AREA, 0), "geo"))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_geo.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_function_whose_every_example_is_unbound_still_gets_a_todo() -> None:
    source = textwrap.dedent(
        '''
        def f(x):
            """
            >>> nowhere(1)
            2
            """
            return g(x)
        '''
    ).lstrip()
    generated = generate(source, find_target(source, 0), "mod")
    assert "nowhere" not in generated
    assert "def test_f_todo" in generated
