"""test_stubs.py: targets, module names and placement, generated tests, merging into a test file."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.engines import test_stubs as stubs
from fastedit_lsp.engines.test_stubs import (
    NoTargetError,
    Target,
    find_target,
    generate,
    merge,
    module_name,
)

# Imported by name, `test_path` would be collected by pytest as a test.
place = stubs.test_path


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def line_of(source: str, needle: str) -> int:
    """The 0-based line of the first line containing ``needle``."""
    for number, line in enumerate(source.splitlines()):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in source")


def gen(source: str, needle: str, module: str = "mod") -> str:
    """The generated module for the function defined on the line containing ``needle``."""
    source = dedent(source)
    out = generate(source, find_target(source, line_of(source, needle)), module)
    ast.parse(out)  # every generated module parses
    return out


def function(out: str, name: str) -> str:
    """The source of the generated test function ``name``."""
    tree = ast.parse(out)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return "\n".join(out.splitlines()[first - 1 : node.end_lineno])
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    raise AssertionError(f"no test {name} in {names}")


def names_of(out: str) -> list[str]:
    return [n.name for n in ast.parse(out).body if isinstance(n, ast.FunctionDef)]


# -- find_target -----------------------------------------------------------------------------------

SOURCE = dedent(
    '''
    """A module."""
    import functools

    LIMIT = 3


    @functools.cache
    @other
    def parse(text):
        """Doc."""

        def helper(x):
            return x

        return helper(text)


    class Parser:
        """A class."""

        mode = "strict"

        def __init__(self):
            self.seen = []

        @staticmethod
        def load(path):
            return path

        class Inner:
            async def fetch(self):
                return 1


    if True:
        def conditional():
            pass
    '''
)


@pytest.mark.parametrize(
    ("needle", "qualname", "is_method", "def_needle"),
    [
        pytest.param("def parse", "parse", False, "def parse", id="def-line"),
        pytest.param("@functools.cache", "parse", False, "def parse", id="first-decorator"),
        pytest.param("@other", "parse", False, "def parse", id="second-decorator"),
        pytest.param('"""Doc."""', "parse", False, "def parse", id="docstring"),
        pytest.param("return x", "parse", False, "def parse", id="nested-function-body"),
        pytest.param("return helper(text)", "parse", False, "def parse", id="last-line"),
        pytest.param("self.seen", "Parser.__init__", True, "def __init__", id="method-body"),
        pytest.param("@staticmethod", "Parser.load", True, "def load", id="method-decorator"),
        pytest.param("return 1", "Parser.Inner.fetch", True, "async def fetch", id="nested-class"),
        pytest.param("pass", "conditional", False, "def conditional", id="inside-if-block"),
    ],
)
def test_find_target_finds_the_enclosing_function(
    needle: str, qualname: str, is_method: bool, def_needle: str
) -> None:
    target = find_target(SOURCE, line_of(SOURCE, needle))
    assert target == Target(qualname, is_method, line_of(SOURCE, def_needle))


@pytest.mark.parametrize(
    ("needle", "message"),
    [
        pytest.param("import functools", "no function or method at line 2", id="module-level"),
        pytest.param("LIMIT = 3", "no function or method at line 4", id="constant"),
        pytest.param('mode = "strict"', "in class Parser but not inside", id="class-body"),
        pytest.param("class Parser", "in class Parser but not inside", id="class-line"),
    ],
)
def test_find_target_explains_when_there_is_no_function(needle: str, message: str) -> None:
    with pytest.raises(NoTargetError, match=message):
        find_target(SOURCE, line_of(SOURCE, needle))


def test_find_target_on_a_file_that_does_not_parse() -> None:
    with pytest.raises(NoTargetError, match=r"does not parse: .* \(line 2\)"):
        find_target("def f():\n    return (\n", 0)


def test_find_target_past_the_end_of_the_file() -> None:
    with pytest.raises(NoTargetError, match="no function"):
        find_target("def f():\n    pass\n", 40)


# -- module_name -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "packages", "expected"),
    [
        pytest.param("/w/pkg/sub/mod.py", ["/w/pkg", "/w/pkg/sub"], "pkg.sub.mod", id="package"),
        pytest.param("/w/src/pkg/mod.py", ["/w/src/pkg"], "pkg.mod", id="src-layout"),
        pytest.param("/w/scripts/tool.py", [], "tool", id="no-package"),
        pytest.param("/w/pkg/sub/mod.py", ["/w/pkg/sub"], "sub.mod", id="stops-at-non-package"),
        pytest.param("/w/pkg/sub/__init__.py", ["/w/pkg"], "pkg.sub", id="init-module"),
        pytest.param("/w/mod.py", ["/w"], "mod", id="workspace-root-is-not-a-package-level"),
        pytest.param("/w/pkg/mod.py", ["pkg"], "pkg.mod", id="relative-package-dirs"),
        pytest.param("pkg/mod.py", ["pkg"], "pkg.mod", id="relative-module-path"),
        pytest.param("/w/pkg/./sub/../mod.py", ["/w/pkg/"], "pkg.mod", id="normalised"),
    ],
)
def test_module_name(path: str, packages: list[str], expected: str) -> None:
    assert module_name(path, "/w", packages) == expected


def test_module_name_without_a_workspace_walks_all_known_packages() -> None:
    assert module_name("/a/b/c.py", None, ["/a", "/a/b"]) == "a.b.c"


def test_module_name_without_package_dirs_is_the_stem() -> None:
    assert module_name("/w/pkg/mod.py", "/w") == "mod"


# -- test_path -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "tests_dirs", "expected"),
    [
        pytest.param("/w/pkg/mod.py", ["/w/tests"], "/w/tests/test_mod.py", id="root-tests"),
        pytest.param(
            "/w/pkg/sub/mod.py",
            ["/w/tests", "/w/pkg/tests"],
            "/w/pkg/tests/test_mod.py",
            id="nearest-tests-wins",
        ),
        pytest.param("/w/pkg/mod.py", [], "/w/pkg/test_mod.py", id="beside-without-tests"),
        pytest.param(
            "/w/pkg/mod.py", ["/w/other/tests"], "/w/pkg/test_mod.py", id="not-an-ancestor"
        ),
        pytest.param("/w/pkg/mod.py", ["/tests"], "/w/pkg/test_mod.py", id="outside-workspace"),
        pytest.param(
            "/w/tests/helpers.py", ["/w/tests"], "/w/tests/test_helpers.py", id="in-tests"
        ),
        pytest.param("/w/pkg/__init__.py", ["/w/tests"], "/w/tests/test_pkg.py", id="init"),
        pytest.param("/w/pkg/mod.py", ["tests"], "/w/tests/test_mod.py", id="relative-tests-dir"),
    ],
)
def test_test_path_placement(path: str, tests_dirs: list[str], expected: str) -> None:
    assert Path(place(path, "/w", tests_dirs)) == Path(expected)


def test_test_path_without_a_workspace_is_beside_the_module() -> None:
    assert Path(place("/w/pkg/mod.py", None, ["/w/tests"])) == Path("/w/pkg/test_mod.py")


def test_test_path_for_a_module_outside_the_workspace_is_beside_it() -> None:
    assert Path(place("/elsewhere/mod.py", "/w", ["/w/tests"])) == Path("/elsewhere/test_mod.py")


# -- generate: doctest examples --------------------------------------------------------------------


def test_doctest_values_become_assertions() -> None:
    out = gen(
        '''
        def square(x: int) -> int:
            """The square.

            >>> square(2)
            4
            >>> square(-3)
            9
            """
            return x * x
        ''',
        "def square",
        module="pkg.maths",
    )
    assert "from pkg.maths import square" in out
    assert "    assert square(2) == 4" in function(out, "test_square_example_1")
    assert "    assert square(-3) == 9" in function(out, "test_square_example_2")


def test_booleans_and_none_compare_by_identity() -> None:
    out = gen(
        '''
        def check(x):
            """
            >>> check(1)
            True
            >>> check(0)
            False
            >>> check(None) is None
            True
            """
        ''',
        "def check",
    )
    assert "assert check(1) is True" in out
    assert "assert check(0) is False" in out
    # A comparison is parenthesised so `is True` applies to the whole of it.
    assert "assert (check(None) is None) is True" in out


def test_strings_and_containers_are_rendered_as_literals() -> None:
    out = gen(
        '''
        def info(name):
            """
            >>> info('ada')
            {'name': 'ada', 'tags': ['x', 'y'], 'pos': (1, 2.5)}
            >>> info('x')['name']
            'x'
            """
        ''',
        "def info",
    )
    assert 'assert info("ada") == {"name": "ada", "tags": ["x", "y"], "pos": (1, 2.5)}' not in out
    assert 'assert info(\'ada\') == {"name": "ada", "tags": ["x", "y"], "pos": (1, 2.5)}' in out
    assert "assert info('x')['name'] == \"x\"" in out


def test_multi_line_expected_value_is_one_assertion() -> None:
    out = gen(
        '''
        def table():
            """
            >>> table()
            [{'a': 1},
             {'b': 2}]
            """
        ''',
        "def table",
    )
    assert 'assert table() == [{"a": 1}, {"b": 2}]' in out


def test_expected_set_keeps_the_docstring_order() -> None:
    out = gen(
        '''
        def letters(word):
            """
            >>> letters("abca")
            {'a', 'b', 'c'}
            """
        ''',
        "def letters",
    )
    assert "assert letters(\"abca\") == {'a', 'b', 'c'}" in out


def test_non_literal_output_compares_the_repr() -> None:
    out = gen(
        '''
        def point():
            """
            >>> point()
            Point(x=1, y=2)
            """
        ''',
        "def point",
    )
    assert 'assert repr(point()) == "Point(x=1, y=2)"' in out


def test_printed_output_is_captured() -> None:
    out = gen(
        '''
        def show(rows):
            """
            >>> show([1, 2])
            1
            <BLANKLINE>
            2
            >>> show([])
            """
            for row in rows:
                print(row)
                print()
        ''',
        "def show",
    )
    first = function(out, "test_show_example_1")
    assert "def test_show_example_1(capsys: pytest.CaptureFixture[str]) -> None:" in first
    assert '    show([1, 2])\n    assert capsys.readouterr().out == "1\\n\\n2\\n"' in first
    # A printing function called without output printed nothing.
    assert 'assert capsys.readouterr().out == ""' in function(out, "test_show_example_2")


def test_statements_with_output_are_captured() -> None:
    out = gen(
        '''
        def f():
            """
            >>> for i in range(2):
            ...     print(i)
            0
            1
            """
        ''',
        "def f",
    )
    body = function(out, "test_f_example_1")
    assert "    for i in range(2):\n        print(i)\n" in body
    assert 'assert capsys.readouterr().out == "0\\n1\\n"' in body


def test_expected_exception_becomes_pytest_raises() -> None:
    out = gen(
        '''
        class BadInput(ValueError):
            pass


        def parse(text):
            """
            >>> parse("x")
            Traceback (most recent call last):
                ...
            mod.BadInput: cannot parse 'x' (1.0)
            >>> parse("")
            Traceback (most recent call last):
            ValueError
            """
        ''',
        "def parse",
    )
    assert "from mod import BadInput, parse" in out
    assert (
        "    with pytest.raises(BadInput, match=r\"cannot parse 'x' \\(1\\.0\\)\"):\n"
        '        parse("x")'
    ) in function(out, "test_parse_example_1")
    assert 'with pytest.raises(ValueError):\n        parse("")' in function(
        out, "test_parse_example_2"
    )


def test_exception_of_an_unknown_class_checks_its_name() -> None:
    out = gen(
        '''
        def load(text):
            """
            >>> load("{")
            Traceback (most recent call last):
            json.decoder.JSONDecodeError: Expecting value
            """
        ''',
        "def load",
    )
    body = function(out, "test_load_example_1")
    assert 'with pytest.raises(Exception, match="Expecting value") as excinfo:' in body
    assert 'assert excinfo.type.__name__ == "JSONDecodeError"' in body


def test_ellipsis_and_whitespace_directives() -> None:
    out = gen(
        '''
        def f():
            """
            >>> f()  # doctest: +ELLIPSIS
            <Thing at 0x...>
            >>> list(range(12))  # doctest: +NORMALIZE_WHITESPACE
            [0, 1, 2, 3, 4, 5,
             6, 7, 8, 9, 10, 11]
            >>> f().name  # doctest: +NORMALIZE_WHITESPACE
            'a   b'
            >>> f()  # doctest: +SKIP
            42
            """
        ''',
        "def f",
    )
    assert "import re\n" in out
    assert 'assert re.fullmatch("<Thing at 0x.*>", repr(f()), re.DOTALL)' in out
    assert "list(range(12)) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]" in out
    assert 'assert f().name == "a   b"' in out
    assert "42" not in out  # skipped examples are not tests
    assert names_of(out)[:3] == ["test_f_example_1", "test_f_example_2", "test_f_example_3"]


def test_skipped_example_showing_a_dict_or_set_compares_its_value() -> None:
    out = gen(
        '''
        def group(key, seq):
            """
            >>> group(len, ['ab', 'c', 'de'])  # doctest: +SKIP
            {2: ['ab', 'de'],
             1: ['c']}
            >>> group(len, [])  # doctest: +SKIP
            set()
            >>> sample(3)  # doctest: +SKIP
            [4, 1, 7]
            >>> group(key, seq)  # doctest: +SKIP
            {1: []}
            >>> group(len,  # doctest: +SKIP
            ...       ['a'])
            {1: ['a']}
            """
        ''',
        "def group",
    )
    # Printed order is why such examples are skipped; == ignores it.
    assert function(out, "test_group_example_1").endswith(
        "assert group(len, ['ab', 'c', 'de']) == {2: [\"ab\", \"de\"], 1: [\"c\"]}"
    )
    assert "group(len, []) == set()" in out
    assert "sample" not in out  # a plain value: skipped for another reason (random)
    assert "group(key, seq)" not in out  # names only the docstring's skipped setup binds
    # The doctest directive is not copied into the test.
    assert "doctest" not in function(out, "test_group_example_3")
    examples = [n for n in names_of(out) if "_example_" in n]
    assert examples == ["test_group_example_1", "test_group_example_2", "test_group_example_3"]


def test_an_example_that_asserts_on_the_function_runs_as_written() -> None:
    out = gen(
        '''
        def join(sep, *parts):
            """
            >>> assert join(".", "a") == "a"
            >>> ret = "a.b"
            >>> assert join(".", "a", "b") == ret
            >>> assert len("ab") == 2
            """
        ''',
        "def join",
    )
    assert function(out, "test_join_example_1").endswith('assert join(".", "a") == "a"')
    # The setup it uses is replayed; the earlier check is not repeated.
    assert function(out, "test_join_example_2").splitlines()[1:] == [
        '    ret = "a.b"',
        '    assert join(".", "a", "b") == ret',
    ]
    assert "len(" not in out  # an assert that does not call the function tests nothing of it


def test_an_example_that_only_echoes_a_literal_is_not_a_test() -> None:
    out = gen(
        '''
        def deburr(text):
            """
            >>> deburr("déjà")
            'deja'
            >>> "deja vu"
            'deja vu'
            """
        ''',
        "def deburr",
    )
    assert "deja vu" not in out  # `assert "deja vu" == "deja vu"` would pass vacuously
    assert 'assert deburr("déjà") == "deja"' in out


def test_examples_replay_the_state_they_use() -> None:
    out = gen(
        '''
        class Counter:
            def __init__(self):
                self.n = 0

            def bump(self):
                """
                >>> c = Counter()
                >>> c.bump()
                1
                >>> c.bump()
                2
                >>> Counter().bump()
                1
                """
                self.n += 1
                return self.n
        ''',
        "def bump",
    )
    assert function(out, "test_counter_bump_example_1").endswith(
        "    c = Counter()\n    assert c.bump() == 1"
    )
    assert function(out, "test_counter_bump_example_2").endswith(
        "    c = Counter()\n    c.bump()\n    assert c.bump() == 2"
    )
    # An example that uses nothing bound earlier stands alone.
    assert function(out, "test_counter_bump_example_3").endswith(
        "-> None:\n    assert Counter().bump() == 1"
    )
    assert "from mod import Counter\n" in out


def test_examples_import_the_module_names_they_use() -> None:
    out = gen(
        '''
        import os.path
        from collections import OrderedDict
        from .helpers import make

        LIMIT = 3


        def f(x):
            """
            >>> f(LIMIT) == make(OrderedDict(), os.path.sep)
            True
            """
        ''',
        "def f",
        module="pkg.mod",
    )
    assert "import os.path\n" in out
    assert "from collections import OrderedDict\n" in out
    assert "from pkg.mod import LIMIT, f, make\n" in out


def test_an_example_that_is_not_python_becomes_a_todo() -> None:
    out = gen(
        '''
        def f():
            """
            >>> f(
            1
            """
        ''',
        "def f",
    )
    assert "# TODO:" in out
    assert 'pytest.skip("TODO: the example at line 3 is not valid Python")' in out


# -- generate: raises ------------------------------------------------------------------------------


def raises_case(out: str, name: str) -> str:
    """The two lines of a raises test: the `with` line and the call."""
    lines = function(out, name).splitlines()
    return "\n".join(line.strip() for line in lines[1:])


def test_raises_from_comparisons_with_literals() -> None:
    out = gen(
        """
        def clamp(value: int, low: int = 0, high: int = 10) -> int:
            if low > high:
                raise ValueError("low must not exceed high")
            if value < -100:
                raise OverflowError(f"too small: {value}")
            return max(low, min(value, high))
        """,
        "def clamp",
    )
    assert raises_case(out, "test_clamp_raises_value_error") == (
        'with pytest.raises(ValueError, match="^low must not exceed high$"):\nclamp(1, 99)'
    )
    assert raises_case(out, "test_clamp_raises_overflow_error") == (
        'with pytest.raises(OverflowError, match="^too small: -101$"):\nclamp(-101)'
    )


def test_raises_from_isinstance_truthiness_membership_and_length() -> None:
    out = gen(
        """
        ALLOWED = frozenset({"red", "green"})


        def paint(colour, items: list[int], name: str):
            if not isinstance(colour, str):
                raise TypeError("colour must be a str")
            if colour not in ALLOWED:
                raise KeyError(colour)
            if not items:
                raise ValueError("no items")
            if len(name) > 5:
                raise ValueError("name too long")
        """,
        "def paint",
    )
    calls = [raises_case(out, n).splitlines()[1] for n in names_of(out) if "_raises_" in n]
    assert calls == [
        'paint(1, [1], "a")',
        'paint("a", [1], "a")',
        'paint("green", [], "a")',
        'paint("green", [1], "aaaaaa")',
    ]
    assert "with pytest.raises(KeyError):" in out  # str(KeyError) is the repr: no match


def test_raise_reached_past_earlier_guards_and_reassignments() -> None:
    out = gen(
        """
        def parse_port(text: str) -> int:
            text = text.strip()
            if not text:
                raise ValueError("empty")
            try:
                port = int(text)
            except ValueError:
                raise ValueError(f"not a number: {text!r}") from None
            if port > 65535:
                raise ValueError("too large")
            return port
        """,
        "def parse_port",
    )
    calls = [raises_case(out, n).splitlines()[1] for n in names_of(out) if "_raises_" in n]
    assert calls == ['parse_port("")', 'parse_port("a")', 'parse_port("65536")']


def test_custom_exception_is_imported_and_matched_when_str_is_plain() -> None:
    out = gen(
        """
        class ParseError(ValueError):
            pass


        class RichError(Exception):
            def __init__(self, code):
                super().__init__(f"code {code}")


        def check(x: int) -> None:
            if x == 1:
                raise ParseError("one")
            if x == 2:
                raise RichError("two")
        """,
        "def check",
    )
    assert "from mod import ParseError, RichError, check\n" in out
    assert 'with pytest.raises(ParseError, match="^one$"):\n        check(1)' in out
    assert "with pytest.raises(RichError):\n        check(2)" in out


def test_a_raise_message_the_evaluator_computes_is_matched_whole() -> None:
    out = gen(
        """
        def make(f, options):
            factory = options.pop("factory", None)
            if options:
                raise TypeError(
                    "{}() got an unexpected keyword argument '{}'".format(
                        f.__name__, options.popitem()[0]
                    )
                )
            return factory
        """,
        "def make",
    )
    # `options` is used as a mapping, `f` by its name: a dict and a builtin function reach it.
    assert function(out, "test_make_raises_type_error").endswith(
        "    with pytest.raises(\n"
        "        TypeError, match=r\"^len\\(\\) got an unexpected keyword argument 'a'$\"\n"
        "    ):\n"
        '        make(len, {"a": 1})'
    )


def test_raise_that_cannot_be_reached_is_a_skipped_todo() -> None:
    out = gen(
        """
        def fetch(url: str) -> bytes:
            response = download(url)
            if response.status != 200:
                raise IOError("bad status")
            return response.body
        """,
        "def fetch",
    )
    body = function(out, "test_fetch_todo_raises_io_error")
    assert body.splitlines()[1].startswith("    # TODO: call fetch with arguments that reach")
    assert body.splitlines()[-1] == (
        '    pytest.skip("TODO: arguments that reach the raise at line 4")'
    )


def test_raise_shown_by_a_doctest_is_not_repeated() -> None:
    out = gen(
        '''
        def half(n: int) -> int:
            """
            >>> half(3)
            Traceback (most recent call last):
            ValueError: odd: 3
            """
            if n % 2:
                raise ValueError(f"odd: {n}")
            return n // 2
        ''',
        "def half",
    )
    assert [n for n in names_of(out) if "raises" in n] == []
    assert 'with pytest.raises(ValueError, match="odd: 3"):' in out


def test_generator_and_async_calls_are_consumed() -> None:
    out = gen(
        """
        def gen(n: int):
            if n < 0:
                raise ValueError("negative")
            yield n


        async def run(n: int) -> int:
            if n < 0:
                raise ValueError("negative")
            return n
        """,
        "def gen",
    )
    assert "        list(gen(-1))" in out
    out = gen(
        """
        async def run(n: int) -> int:
            if n < 0:
                raise ValueError("negative")
            return n
        """,
        "async def run",
    )
    assert "import asyncio\n" in out
    assert "        asyncio.run(run(-1))" in out


def test_an_endless_loop_in_the_code_does_not_hang_generation() -> None:
    out = gen(
        """
        def spin(x: int) -> None:
            while True:
                x += 1
            raise ValueError("unreachable")
        """,
        "def spin",
    )
    assert "test_spin_todo_raises_value_error" in names_of(out)


def test_user_code_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    source = dedent(
        f"""
        import pathlib

        pathlib.Path({str(marker)!r}).write_text("module ran")


        def touch():
            return pathlib.Path({str(marker)!r}).write_text("function ran") > 0


        def f(x: int) -> int:
            '''
            >>> f(1)
            1
            '''
            if touch():
                raise ValueError("touched")
            return x
        """
    )
    out = generate(source, find_target(source, line_of(source, "def f")), "mod")
    assert not marker.exists()
    assert "test_f_todo_raises_value_error" in names_of(out)


# -- generate: properties --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "strategy"),
    [
        ("int", "st.integers()"),
        ("float", "st.floats(allow_nan=False, allow_infinity=False)"),
        ("str", "st.text()"),
        ("bool", "st.booleans()"),
        ("bytes", "st.binary()"),
        ("list[int]", "st.lists(st.integers())"),
        ("typing.List[str]", "st.lists(st.text())"),
        ("Optional[int]", "st.integers() | st.none()"),
        ("int | None", "st.integers() | st.none()"),
        ("Union[int, str]", "st.integers() | st.text()"),
        # A member with no strategy is left out: a property over part of the declared domain.
        ("Union[str, Callable[[int], str]]", "st.text()"),
        ("Optional[Callable[[int], str]] | int", "st.integers()"),
        ("dict[str, int]", "st.dictionaries(st.text(), st.integers())"),
        ("set[str]", "st.sets(st.text())"),
        ("tuple[int, str]", "st.tuples(st.integers(), st.text())"),
        ("tuple[int, ...]", "st.lists(st.integers()).map(tuple)"),
        ('Literal["a", "b"]', 'st.sampled_from(["a", "b"])'),
        ("Sequence[float]", "st.lists(st.floats(allow_nan=False, allow_infinity=False))"),
        ('"int"', "st.integers()"),
    ],
)
def test_type_hints_infer_strategies(annotation: str, strategy: str) -> None:
    out = gen(f"def f(x: {annotation}) -> None:\n    pass\n", "def f")
    assert f"@given(x={strategy})\n" in out
    assert "from hypothesis import given\nfrom hypothesis import strategies as st\n" in out


def test_no_property_when_only_none_has_a_strategy() -> None:
    out = gen("def f(x: Optional[Callable[[int], str]]) -> None:\n    pass\n", "def f")
    assert "@given" not in out and "test_f_todo_property" in names_of(out)


def test_property_checks_the_return_type_and_allows_raised_exceptions() -> None:
    out = gen(
        """
        def spread(a: int, b: int, *, digits: int = 2) -> float:
            if b == 0:
                raise ZeroDivisionError("b is zero")
            if a < 0:
                raise ValueError("negative")
            return a - b + digits
        """,
        "def spread",
    )
    assert function(out, "test_spread_property") == (
        "@given(a=st.integers(), b=st.integers())\n"
        "def test_spread_property(a: int, b: int) -> None:\n"
        "    try:\n"
        "        result = spread(a, b)\n"
        "    except (ValueError, ZeroDivisionError):\n"
        "        return  # raised on purpose by spread\n"
        "    assert isinstance(result, (int, float))"
    )


def test_a_property_over_a_function_that_is_not_total_treats_exceptions_as_its_answer() -> None:
    """parse_price calls float(): most text is outside its domain, which the hint `str` does
    not show. The property must not fail at once on ``text=""``."""
    out = gen(
        """
        def parse_price(text: str) -> float:
            return float(text.strip().lstrip("$"))
        """,
        "def parse_price",
    )
    assert function(out, "test_parse_price_property") == (
        "@given(text=st.text())\n"
        "def test_parse_price_property(text: str) -> None:\n"
        "    try:\n"
        "        result = parse_price(text)\n"
        "    except Exception:\n"
        "        return  # outside the domain the hints show: the exception is its answer\n"
        "    assert isinstance(result, (int, float))"
    )
    namespace: dict[str, object] = {}
    exec(  # the generated test, run: it passes on the code it characterises
        "from hypothesis import given, settings\nfrom hypothesis import strategies as st\n"
        "def parse_price(text: str) -> float:\n    return float(text.strip().lstrip('$'))\n"
        + function(out, "test_parse_price_property"),
        namespace,
    )
    test = namespace["test_parse_price_property"]
    assert callable(test)
    test()


def test_declared_raises_are_answers_and_a_path_returning_none_is_allowed() -> None:
    out = gen(
        """
        def pick(flag: bool) -> str:
            \"\"\"Pick.

            Raises:
                KeyError: when the flag is unknown.
                    (a continuation line, not a name)
            \"\"\"
            if flag:
                return "yes"
        """,
        "def pick",
    )
    assert function(out, "test_pick_property").endswith(
        "    except KeyError:\n"
        "        return  # raised on purpose by pick\n"
        "    assert result is None or isinstance(result, str)"
    )


def test_no_property_for_a_function_that_changes_module_state() -> None:
    out = gen(
        """
        RULES = []


        def add_rule(rule: str) -> None:
            RULES.insert(0, rule)
        """,
        "def add_rule",
    )
    assert "@given" not in out


@pytest.mark.parametrize(
    ("returns", "check"),
    [
        ("str", "assert isinstance(result, str)"),
        ("Optional[str]", "assert result is None or isinstance(result, str)"),
        ("list[int]", "assert isinstance(result, list)"),
        ("None", "assert result is None"),
        ("int | str", "assert isinstance(result, (int, str))"),
    ],
)
def test_property_return_checks(returns: str, check: str) -> None:
    out = gen(f"def f(x: int) -> {returns}:\n    return x\n", "def f")
    assert function(out, "test_f_property").endswith(check)


def test_long_strategies_are_wrapped_like_ruff_format() -> None:
    out = gen("def f(p: list[tuple[float, float]]) -> None:\n    pass\n", "def f")
    assert (
        "@given(\n"
        "    p=st.lists(\n"
        "        st.tuples(\n"
        "            st.floats(allow_nan=False, allow_infinity=False),\n"
        "            st.floats(allow_nan=False, allow_infinity=False),\n"
        "        ),\n"
        "    ),\n"
        ")\n"
    ) in out


def test_hints_without_a_strategy_are_a_todo() -> None:
    out = gen("def f(conn: Connection, n: int) -> None:\n    pass\n", "def f")
    assert "given" not in out
    assert 'pytest.skip("TODO: a hypothesis strategy for conn")' in out


def test_no_hints_no_property() -> None:
    out = gen("def f(x):\n    return x\n", "def f")
    assert "given" not in out


def test_nothing_to_derive_is_one_skipped_todo_not_a_vacuous_pass() -> None:
    out = gen("def f(x):\n    return x.combine()\n", "def f")
    assert names_of(out) == ["test_f_todo"]
    assert "pytest.skip(" in function(out, "test_f_todo")
    assert "from mod import" not in out  # nothing calls it: no unused import


# -- generate: methods -----------------------------------------------------------------------------


def test_method_of_a_class_built_without_arguments() -> None:
    out = gen(
        """
        class Stack:
            def __init__(self, limit: int = 10):
                self.items = []

            def pop(self) -> int:
                if not self.items:
                    raise IndexError("empty")
                return self.items.pop()

            def push(self, item: int) -> None:
                self.items.append(item)
        """,
        "def pop",
    )
    assert 'with pytest.raises(IndexError, match="^empty$"):\n        Stack().pop()' in out
    out = gen(
        """
        class Stack:
            def push(self, item: int) -> None:
                pass
        """,
        "def push",
    )
    assert "        result = Stack().push(item)\n" in out or "Stack().push(item)" in out


@pytest.mark.parametrize(
    "cls",
    [
        pytest.param(
            "class Box:\n    def __init__(self, size):\n        self.size = size\n", id="init-args"
        ),
        pytest.param(
            "@dataclass\nclass Box:\n    size: int\n    tags: list = field(default_factory=list)\n",
            id="dataclass-field",
        ),
        pytest.param("class Box(Base):\n    pass_ = 1\n", id="unknown-base"),
    ],
)
def test_method_of_a_class_that_needs_arguments_is_a_todo(cls: str) -> None:
    source = (
        cls
        + "\n    def grow(self, by: int) -> int:\n"
        + "        if by < 0:\n            raise ValueError('shrink')\n        return by\n"
    )
    out = gen(source, "def grow")
    assert "Box()." not in out
    assert "test_box_grow_todo_raises_value_error" in names_of(out)
    assert "test_box_grow_todo_property" in names_of(out)
    assert "needs arguments" in out


def test_static_and_class_methods_are_called_on_the_class() -> None:
    out = gen(
        """
        class Units:
            def __init__(self, scale):
                self.scale = scale

            @staticmethod
            def parse(text: str) -> int:
                if not text:
                    raise ValueError("empty")
                return len(text)
        """,
        "def parse",
    )
    assert 'Units.parse("")' in out
    assert "result = Units.parse(text)" in out


# -- generate: the module as a whole ---------------------------------------------------------------


def test_generated_module_is_deterministic_and_sorted() -> None:
    source = dedent(
        '''
        import os.path


        class Oops(Exception):
            pass


        async def f(x: int) -> int:
            """
            >>> import asyncio
            >>> asyncio.run(f(1)) == len(os.path.sep)
            True
            >>> f  # doctest: +ELLIPSIS
            <function f at ...>
            """
            if x < 0:
                raise Oops("negative")
            return x
        '''
    )
    target = find_target(source, line_of(source, "async def f"))
    first = generate(source, target, "mod")
    assert first == generate(source, target, "mod")
    header, imports = first.split("\n\n\n")[0].split("\n\n", 1)
    assert header.startswith('"""Tests for mod, generated by fastedit')
    assert imports == (
        "import asyncio\nimport os.path\nimport re\n\n"
        "import pytest\nfrom hypothesis import given\nfrom hypothesis import strategies as st\n\n"
        "from mod import Oops, f"
    )


def test_generate_for_a_target_that_moved_uses_its_name() -> None:
    source = "def f(x: int) -> int:\n    return x\n"
    out = generate(source, Target("f", False, 40), "mod")
    assert "test_f_property" in names_of(out)
    with pytest.raises(NoTargetError, match="no function or method named g"):
        generate(source, Target("g", False, 0), "mod")


# -- merge -----------------------------------------------------------------------------------------

GENERATED = gen(
    '''
    def double(x: int) -> int:
        """
        >>> double(2)
        4
        """
        if x > 100:
            raise ValueError("too big")
        return 2 * x
    ''',
    "def double",
    module="mymod",
)


def without_lines(text: str, lines: list[str]) -> str:
    remaining = text.splitlines(keepends=True)
    for line in lines:
        remaining.remove(line + "\n")
    return "".join(remaining)


def test_merge_appends_and_adds_only_missing_imports() -> None:
    existing = dedent(
        '''
        """My tests."""

        import pytest

        from mymod import other


        def test_other() -> None:
            assert other() == 1
        '''
    )
    merged = merge(existing, GENERATED)
    added = [
        "from hypothesis import given",
        "from hypothesis import strategies as st",
        "from mymod import double",
    ]
    assert "from mymod import other\n" + "\n".join(added) + "\n\n\ndef test_other" in merged
    assert merged.count("import pytest") == 1
    original, appended = without_lines(merged, added).split("\n\n\n", 1)[0], None
    del appended
    assert without_lines(merged, added).startswith(existing)
    assert original.startswith('"""My tests."""')
    assert merged.endswith("    assert isinstance(result, int)\n")
    assert '"""Tests for mymod' not in merged  # the generated docstring is not appended
    ast.parse(merged)


def test_merge_keeps_existing_text_when_nothing_is_missing() -> None:
    existing = dedent(
        """
        import pytest
        from hypothesis import given
        from hypothesis import strategies as st

        from mymod import double
        """
    )
    merged = merge(existing, GENERATED)
    assert merged.startswith(existing)
    assert merged[len(existing) :].startswith("\n\ndef test_double_example_1() -> None:")


def test_merge_never_duplicates_a_test_name() -> None:
    existing = dedent(
        """
        from mymod import double


        def test_double_example_1() -> None:
            assert double(1) == 2


        def test_double_example_1_2() -> None:
            assert double(0) == 0
        """
    )
    merged = merge(existing, GENERATED)
    assert "def test_double_example_1_3() -> None:\n    assert double(2) == 4" in merged
    names = names_of(merged)
    assert len(names) == len(set(names))
    assert merged.startswith(existing.split("\n", 1)[0] + "\n")


def test_merging_the_same_tests_twice_adds_nothing() -> None:
    once = merge("import os\n", GENERATED)
    assert merge(once, GENERATED) == once
    renamed = merge("def test_double_example_1():\n    pass\n", GENERATED)
    assert "test_double_example_1_2" in renamed
    assert merge(renamed, GENERATED) == renamed


def test_merge_into_an_empty_file_is_the_generated_module() -> None:
    assert merge("", GENERATED) == GENERATED


def test_merge_after_a_docstring_only() -> None:
    merged = merge('"""Doc."""\n', GENERATED)
    assert merged.startswith('"""Doc."""\n\nimport pytest\n')
    ast.parse(merged)


def test_merge_into_a_file_that_does_not_parse_only_appends() -> None:
    existing = "def test_broken(:\n    pass\n"
    merged = merge(existing, GENERATED)
    assert merged.startswith(existing)
    assert "import pytest\n" in merged[len(existing) :]


SNIPPETS = [
    "import pytest",
    "from mymod import double",
    "from hypothesis import given",
    "import hypothesis.strategies as st",
    "def test_double_example_1() -> None:\n    assert double(2) == 4",
    "def test_double_property():\n    pass",
    "def test_double_raises_value_error():\n    pass",
    "X = 1",
    "# a comment",
    '"""Docstring."""',
    "class TestThing:\n    def test_a(self):\n        pass",
]


@given(st.lists(st.sampled_from(SNIPPETS), max_size=8), st.sampled_from(["\n", "\n\n\n", ""]))
def test_merge_only_inserts_lines_and_names_stay_unique(parts: list[str], end: str) -> None:
    existing = "\n\n".join(parts) + (end if parts else "")
    merged = merge(existing, GENERATED)
    before = [n.name for n in ast.parse(existing).body if hasattr(n, "name")]
    after = [n.name for n in ast.parse(merged).body if hasattr(n, "name")]
    added = after[len(before) :]
    assert after[: len(before)] == before
    assert len(added) == len(set(added))
    assert not set(added) & set(before)
    # Existing lines appear in order: only whole lines were inserted.
    merged_lines = iter(merged.splitlines())
    assert all(any(line == m for m in merged_lines) for line in existing.splitlines())
    assert merge(merged, GENERATED) == merged


def test_merge_append_only_puts_missing_imports_before_the_new_tests() -> None:
    existing = "from mymod import other\n\n\ndef test_double_example_1():\n    assert other()\n"
    merged = merge(existing, GENERATED, append_only=True)
    assert merged.startswith(existing)
    tail = merged[len(existing) :]
    assert tail.startswith(
        "\n\nimport pytest\nfrom hypothesis import given\nfrom hypothesis import strategies as st"
        "\nfrom mymod import double\n\n\ndef test_double_example_1_2() -> None:\n"
    )
    assert merge(merged, GENERATED, append_only=True) == merged


def test_todo_names_the_file_line_of_a_broken_example() -> None:
    source = 'def f():\n    """Doc.\n\n    >>> f(\n    """\n'
    out = generate(source, find_target(source, 0), "mod")
    assert "the example at line 4 is not valid Python" in out


def test_pprint_and_printing_helpers_are_captured() -> None:
    out = gen(
        '''
        from pprint import pprint


        def show(rows):
            for row in rows:
                print(row)


        def rows():
            """
            >>> pprint(rows())
            [1, 2]
            >>> show(rows())
            1
            2
            """
            return [1, 2]
        ''',
        "def rows",
    )
    assert '    pprint(rows())\n    assert capsys.readouterr().out == "[1, 2]\\n"' in out
    assert '    show(rows())\n    assert capsys.readouterr().out == "1\\n2\\n"' in out
    assert "from pprint import pprint\n" in out
    assert "from mod import rows, show\n" in out


def test_examples_naming_their_own_module_import_it() -> None:
    source = 'def shorten(text):\n    """\n    >>> textwrap.shorten("a")\n    \'a\'\n    """\n'
    target = find_target(source, 0)
    assert "\nimport textwrap\n" in generate(source, target, "textwrap")
    assert "\nfrom lib import textwrap\n" in generate(source, target, "lib.textwrap")


def test_a_measured_parameter_gets_a_sequence_first() -> None:
    out = gen(
        """
        def mean(data, weights=None):
            n = len(data)
            if not n:
                raise ValueError("no data")
            if weights is not None and len(weights) != n:
                raise ValueError("lengths differ")
            return sum(data) / n
        """,
        "def mean",
    )
    assert "        mean([])\n" in out
    assert "        mean([1], [])\n" in out


# -- return tests: values the evaluator computes exactly --------------------------------------


def test_return_tests_assert_the_values_the_code_computes() -> None:
    out = gen(
        """
        import math

        LIMIT = 10


        def _scale(n):
            return n * 2


        def bucket(n: int) -> str:
            if n < 0:
                raise ValueError("negative")
            if n >= LIMIT:
                return f"{_scale(n):>4}+"
            return str(math.floor(n / 3))
        """,
        "def bucket",
    )
    returns = [n for n in names_of(out) if "_returns_" in n]
    assert returns, out
    namespace: dict[str, object] = {}
    source = dedent(
        """
        import math
        LIMIT = 10
        def _scale(n):
            return n * 2
        def bucket(n: int) -> str:
            if n < 0:
                raise ValueError("negative")
            if n >= LIMIT:
                return f"{_scale(n):>4}+"
            return str(math.floor(n / 3))
        """
    )
    exec(source, namespace)
    for name in returns:  # every return test passes on the code
        body = function(out, name).split("\n", 1)[1]
        exec(dedent(body), namespace)
    # Both branches are covered: the f-string through the module's own helper, and math.
    assert any('+"' in function(out, n) for n in returns)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("return len(helper(s))", "a call into code the evaluator does not model"),
        ("return str({s, 'b', 'c'})", "a set's order differs per process"),
        ("return (c for c in s)", "a generator expression is not the tuple it yields"),
    ],
)
def test_no_return_test_where_the_value_is_not_exactly_known(body: str, why: str) -> None:
    out = gen(f"def f(s: str) -> object:\n    {body}\n", "def f")
    assert not [n for n in names_of(out) if "_returns_" in n], why


def test_return_tests_follow_calls_into_the_projects_other_modules() -> None:
    helpers = "def clean(text):\n    return text.strip().lower()\n"
    source = (
        "from pkg import helpers\n\n\n"
        "def slug(text: str) -> str:\n"
        "    return helpers.clean(text).replace(' ', '-')\n"
    )
    target = find_target(source, 3)
    alone = generate(source, target, "pkg.names")
    with_reader = generate(
        source, target, "pkg.names", lambda dotted: helpers if dotted == "pkg.helpers" else None
    )
    assert "_returns_" not in alone
    assert "assert slug(" in with_reader and "_returns_1" in with_reader


def test_a_generator_gets_return_tests_of_what_it_yields() -> None:
    out = gen("def pairs(n: int):\n    for i in range(n):\n        yield (i, i * i)\n", "def pairs")
    checks = [function(out, n) for n in names_of(out) if "_returns_" in n]
    assert any("assert list(pairs(" in c for c in checks), out


def test_a_parameter_the_function_calls_gets_builtin_functions() -> None:
    out = gen(
        "def longest(items, key):\n    return max(items, key=key) if items else None\n",
        "def longest",
    )
    assert "key=len" in out.replace("len)", "len") or ", len)" in out, out


ITERATING = """
def size(items):
    if hasattr(items, "__len__"):
        return len(items)
    return sum(1 for _ in items)


def first_repeat(seq):
    if iter(seq) is seq:
        seen = set()
        for item in seq:
            if item in seen:
                return item
            seen.add(item)
        return None
    return "sized"


def label(seq):
    it = iter(seq)
    first = next(it, None)
    return f"{first} then {list(it)} of {it}"
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("size", "size(iter([1, 2])) == 2", id="no-len"),
        pytest.param("first_repeat", "first_repeat(iter([1, 2, 1])) == 1", id="iter-is-itself"),
    ],
)
def test_an_iterated_parameter_gets_iterators_and_their_paths_are_asserted(
    name: str, expected: str
) -> None:
    out = generate(ITERATING, find_target(ITERATING, line_of(ITERATING, f"def {name}")), "mod")
    returns = [function(out, n) for n in names_of(out) if "_returns_" in n]
    assert any(expected in r for r in returns), out
    namespace: dict[str, object] = {}
    exec(ITERATING, namespace)
    for body in returns:  # every return test passes on the code
        exec(dedent(body.split("\n", 1)[1]), namespace)


def test_the_text_of_an_iterator_is_never_asserted() -> None:
    # Python shows an address: f"{it}" is not known, so no call of label() is asserted.
    out = generate(ITERATING, find_target(ITERATING, line_of(ITERATING, "def label")), "mod")
    assert not [n for n in names_of(out) if "_returns_" in n], out


def test_a_raise_whose_message_cannot_be_built_is_not_the_exception_raised() -> None:
    out = gen(
        """
        def check(value, name):
            if value < 0:
                raise ValueError("expected a positive " + name)
            return value
        """,
        "def check",
    )
    for line in function(out, "test_check_raises_value_error").splitlines():
        if "check(" in line:
            assert '"' in line.split(",", 1)[1], line  # the name is a string


# -- domain of properties, doctests -----------------------------------------------------------


def test_integers_that_may_be_sizes_are_bounded() -> None:
    out = gen("def rule(width: int) -> str:\n    return '-' * width\n", "def rule")
    assert "@given(width=st.integers(min_value=-1000, max_value=1000))" in out


def test_an_elided_doctest_output_is_matched_as_an_ellipsis() -> None:
    out = gen(
        '''
        def f(x):
            """
            >>> f("déjà vu")
            '...
            """
            return x
        ''',
        "def f",
    )
    assert 're.fullmatch("\'.*", repr(f("déjà vu")), re.DOTALL)' in out


def test_a_doctest_import_the_module_does_not_need_is_skipped_where_missing() -> None:
    out = gen(
        '''
        def f(x):
            """
            >>> from dateutil.tz import gettz
            >>> f(gettz("UTC")) is not None
            True
            """
            return x
        ''',
        "def f",
    )
    assert 'pytest.importorskip("dateutil")' in function(out, "test_f_example_1")


def test_lambdas_builtin_defaults_and_computed_constants_are_followed() -> None:
    source = dedent(
        """
        SIZES = [2**i for i in range(4)]


        def pick(items: list[int], factory=dict) -> object:
            table = factory()
            for n in sorted(items, key=lambda n: -n):
                table[n] = n in SIZES
            return table
        """
    )
    out = generate(source, find_target(source, line_of(source, "def pick")), "mod")
    returns = [n for n in names_of(out) if "_returns_" in n]
    assert returns, out
    namespace: dict[str, object] = {}
    exec(source, namespace)
    for name in returns:
        exec(dedent(function(out, name).split("\n", 1)[1]), namespace)


def test_an_example_written_as_the_packages_users_see_it_imports_from_the_package() -> None:
    """A private module's docstring uses a name the package exports and the module itself
    never imports (``spec=HTML4``, as the package's own docs run): the test imports it from the
    package. A private name, or one the package does not bind, is not imported that way."""
    source = (
        "from ._defs import CSS3\n\n\n"
        "def lookup(name: str, spec: str = CSS3) -> str:\n"
        '    """Look up.\n\n'
        '    >>> lookup("navy", spec=HTML4)\n'
        "    'navy/html4'\n"
        '    """\n'
        '    return f"{name}/{spec}"\n'
    )
    package = "from ._defs import CSS3, HTML4, _PRIVATE\n"
    target = find_target(source, 3)
    out = generate(source, target, "colors._conv", lambda d: package if d == "colors" else None)
    assert "from colors import HTML4" in out
    assert 'assert lookup("navy", spec=HTML4) == "navy/html4"' in out
    alone = generate(source, target, "colors._conv")
    assert "import HTML4" not in alone
