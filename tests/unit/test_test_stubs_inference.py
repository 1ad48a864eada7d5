"""test_stubs: what the generator infers from the code beyond its hints, and the generated tests
run on that code (they must pass on it, and fail on a planted bug where they claim to see it)."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import sys
import types

from fastedit_lsp.engines.test_stubs import find_target, generate
from fastedit_lsp.engines.test_stubs.variants import variants

from .test_test_stubs import dedent, function, gen, line_of, names_of


class _Capsys:
    """Enough of pytest's ``capsys`` for a generated test run by hand."""

    def __init__(self, buffer: io.StringIO) -> None:
        self.buffer = buffer

    def readouterr(self) -> types.SimpleNamespace:
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return types.SimpleNamespace(out=text, err="")


def run(code: str, out: str, name: str, module: str = "mod") -> None:
    """Run the generated test ``name`` of the module ``out`` against ``code`` (imported as
    ``module``): it must pass."""
    fake = types.ModuleType(module)
    exec(dedent(code), fake.__dict__)
    saved = sys.modules.get(module)
    sys.modules[module] = fake
    try:
        tests: dict[str, object] = {}
        exec(out, tests)
        test = tests[name]
        assert callable(test)
        if "capsys" in inspect.signature(test).parameters:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                test(capsys=_Capsys(buffer))
        else:
            test()
    finally:
        if saved is None:
            del sys.modules[module]
        else:
            sys.modules[module] = saved


# -- doctest examples ----------------------------------------------------------------------


def test_a_decorated_function_defined_in_an_example_keeps_its_decorator() -> None:
    code = '''
        def twice(func):
            """
            >>> @twice
            ... def add_one(n):
            ...     return n + 1
            >>> add_one(1)
            3
            """
            return lambda n: func(func(n))
        '''
    out = gen(code, "def twice")
    assert "    @twice\n    def add_one(n):" in function(out, "test_twice_example_1")
    run(code, out, "test_twice_example_1")


def test_a_call_through_what_an_example_defined_to_print_checks_the_printed_text() -> None:
    code = '''
        def each(func, items):
            """
            >>> show = lambda item: print('got', item)
            >>> each(show, [1, 2])
            got 1
            got 2
            >>> loud = lambda item: print(item) or item
            >>> list(map(loud, [3]))
            3
            [3]
            """
            for item in items:
                func(item)
        '''
    out = gen(code, "def each")
    second = function(out, "test_each_example_2")
    assert "    result = list(map(loud, [3]))" in second
    assert 'assert shown == "3\\n[3]\\n"' in second
    run(code, out, "test_each_example_1")
    run(code, out, "test_each_example_2")


def test_a_replayed_example_keeps_the_calls_inside_an_expression_it_showed() -> None:
    code = '''
        def counter():
            """
            >>> it = counter()
            >>> (next(it), next(it))
            (0, 1)
            >>> next(it)
            2
            """
            n = 0
            while True:
                yield n
                n += 1
        '''
    out = gen(code, "def counter")
    assert "    (next(it), next(it))\n" in function(out, "test_counter_example_2")
    run(code, out, "test_counter_example_2")


# -- the argument search -------------------------------------------------------------------


def test_a_parameter_handed_to_an_iterating_builtin_gets_an_iterable_in_raise_tests() -> None:
    code = """
        from collections import deque

        def rotate(iterable, steps=1):
            buffer = deque(iterable)
            if steps == 0:
                raise ValueError("steps must not be zero")
            buffer.rotate(steps)
            return list(buffer)
        """
    out = gen(code, "def rotate")
    body = function(out, "test_rotate_raises_value_error")
    assert "rotate([1], 0)" in body, body
    run(code, out, "test_rotate_raises_value_error")


def test_arguments_of_a_call_the_evaluator_does_not_follow_still_raise() -> None:
    code = """
        def shout(text):
            emit(text.upper())
            raise RuntimeError("shouted")

        def emit(text):
            print(text)
        """
    source = dedent(code)
    out = generate(source, find_target(source, line_of(source, "def shout")), "mod")
    body = function(out, "test_shout_raises_runtime_error")
    assert "shout(1)" not in body, "(1).upper() raises AttributeError first"
    run(code, out, "test_shout_raises_runtime_error")


def test_a_list_appended_an_unknown_value_is_not_assumed_empty() -> None:
    out = gen(
        """
        def collect(n):
            found = []
            found.append(lookup(n))
            if not found:
                raise ValueError("nothing found")
            return found
        """,
        "def collect",
    )
    assert not [n for n in names_of(out) if "_raises_" in n and "_todo_" not in n], out


def test_an_exception_a_with_suppress_block_swallows_is_not_raised() -> None:
    code = """
        from contextlib import suppress

        def settle(n: int) -> int:
            with suppress(ValueError):
                raise ValueError("swallowed")
            if n < 0:
                raise KeyError(n)
            return n + 1
        """
    out = gen(code, "def settle")
    assert "test_settle_raises_value_error" not in names_of(out)
    assert "test_settle_raises_key_error" in names_of(out)
    returns = [n for n in names_of(out) if "_returns_" in n]
    assert returns, out
    for name in [*returns, "test_settle_raises_key_error"]:
        run(code, out, name)


def test_a_default_the_evaluator_cannot_compute_does_not_stop_the_generator() -> None:
    out = gen(
        """
        def pad(x, fill=chr(-1)):
            if x == 2:
                raise ValueError("two")
            return x
        """,
        "def pad",
    )
    assert "test_pad_raises_value_error" in names_of(out)


# -- what the evaluator computes -----------------------------------------------------------


def returns_of(code: str, needle: str) -> tuple[str, list[str]]:
    """The generated module and its return tests, each run against the code (they pass)."""
    out = gen(code, needle)
    names = [n for n in names_of(out) if "_returns_" in n]
    for name in names:
        run(code, out, name)
    return out, names


def test_return_values_through_module_level_regular_expressions() -> None:
    out, names = returns_of(
        r"""
        import re

        WORD = re.compile(r"[a-z]+", re.IGNORECASE)

        def words(text: str) -> list:
            return WORD.findall(text)

        def snake(name: str) -> str:
            spaced = re.sub(r"([A-Z])", r"_\1", name)
            found = re.match(r"_?(\w+)", spaced)
            return found.group(1).lower() if found else spaced
        """,
        "def snake",
    )
    assert names, out
    assert 'snake("A") == "a"' in out


def test_return_values_through_builtins_a_function_passes_along() -> None:
    out, names = returns_of(
        """
        def table(text: str, n: int) -> object:
            swapped = text.translate(str.maketrans("ab", "ba")).zfill(3)
            pairs = list(zip(range(n), map(str.upper, swapped)))
            return pairs, n >> 1, pow(2, n, 5)
        """,
        "def table",
    )
    assert names, out


def test_a_helper_cached_with_lru_cache_or_yielding_is_followed() -> None:
    code = """
        from functools import lru_cache

        @lru_cache
        def _halves(n):
            return n >> 1, n & 1

        def _lines(text):
            for line in text.split(","):
                if line:
                    yield line

        def describe(n, text):
            return _halves(n), list(_lines(text))
        """
    out, names = returns_of(code, "def describe")
    assert names, out


def test_isinstance_against_builtin_and_abstract_classes_is_computed() -> None:
    out, _ = returns_of(
        """
        from collections.abc import Mapping

        STRINGLIKE = (str, bytearray)

        def kind(value):
            if isinstance(value, Mapping):
                return "mapping"
            if isinstance(value, STRINGLIKE):
                return "text"
            return "other"
        """,
        "def kind",
    )
    results = {line.rsplit("== ", 1)[-1] for line in out.splitlines() if "assert kind(" in line}
    assert {'"mapping"', '"text"', '"other"'} <= results, out


def test_types_the_docstring_states_make_the_arguments() -> None:
    out, _ = returns_of(
        '''
        def clip(text, limit=10):
            """Cut text.

            Args:
                text (str): what to cut.
                limit (int): the longest result.
            """
            if len(text) <= limit:
                return text
            return text[:limit] + "."
        ''',
        "def clip",
    )
    calls = [line for line in out.splitlines() if "assert clip(" in line]
    assert calls and all("clip([" not in c for c in calls), out
    assert any('."' in c for c in calls), "a text longer than the limit, cut"


def test_return_tests_tell_the_function_apart_from_small_slips() -> None:
    """A call at the boundary (``bonus(10)``) is chosen: it fails on the code with ``>=`` for
    ``>``, which the calls that only cover both branches (1 and 11) do not."""
    code = """
        def bonus(n: int) -> int:
            if n > 10:
                return n * 2
            return n
        """
    out, names = returns_of(code, "def bonus")
    assert "assert bonus(10) == 10" in out, out
    slipped = code.replace("n > 10", "n >= 10")
    caught = []
    for name in names:
        try:
            run(slipped, out, name)
        except AssertionError:
            caught.append(name)
    assert caught, "a return test catches the moved boundary"


def test_variants_change_one_thing_each() -> None:
    source = dedent(
        """
        def f(a, b):
            \"\"\"Doc.\"\"\"
            if a < b and b:
                return a + 1
            return None
        """
    )
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    changed = [ast.unparse(ast.Module(body=body, type_ignores=[])) for body in variants(fn, 50)]
    original = ast.unparse(ast.Module(body=fn.body, type_ignores=[]))
    assert original not in changed and len(set(changed)) == len(changed)
    assert any("a <= b" in c for c in changed)
    assert any("a < b or b" in c for c in changed)
    assert any("a - 1" in c and "a < b" in c for c in changed)
    assert any("return a + 2" in c for c in changed)
    assert any("return None\n" in c and "a + 1" not in c for c in changed)
    assert all("Doc." in c for c in changed), "the docstring is not code"
    assert len(variants(fn, 3)) == 3


def test_names_a_module_imports_with_a_star_are_followed() -> None:
    patterns = dedent(
        r"""
        import re

        SPACES = re.compile(r"\s+")
        """
    )
    source = dedent(
        """
        from .patterns import *

        def squeeze(text: str) -> str:
            return SPACES.sub(" ", text).strip()
        """
    )
    modules = {"pkg.patterns": patterns}
    out = generate(
        source, find_target(source, line_of(source, "def squeeze")), "pkg.text", modules.get
    )
    assert [n for n in names_of(out) if "_returns_" in n], out
    assert 'squeeze("a b") == "a b"' in out or 'squeeze(" ") == ""' in out, out


def test_a_value_an_example_states_in_a_comment_is_asserted() -> None:
    code = '''
        def is_even(n):
            """
            >>> is_even(2)  # returns true
            >>> is_even(3)  # -> False
            >>> is_even(4)  # an even number, see above
            """
            return n % 2 == 0
        '''
    out = gen(code, "def is_even")
    assert "assert is_even(2) is True" in out
    assert "assert is_even(3) is False" in out
    assert "is_even(4)" not in out, "a comment that states no value asserts nothing"
    for name in names_of(out):
        if "_example_" in name:
            run(code, out, name)


def test_an_example_without_output_of_a_function_that_always_returns_is_not_none() -> None:
    """doctest would fail on it too; asserting ``is None`` would fail on correct code."""
    code = '''
        def double(n):
            """
            >>> double(2)
            """
            return n * 2

        def log(n):
            """
            >>> log(2)
            """
            if n:
                return
        '''
    assert "double(2)" not in gen(code, "def double")
    assert "assert log(2) is None" in gen(code, "def log")


def test_small_integers_of_other_shapes_pass_a_divisibility_guard() -> None:
    code = """
        def label(n: int) -> str:
            if n > 10 and n % 7 == 0:
                return "a big multiple of seven"
            return "other"
        """
    out, _ = returns_of(code, "def label")
    assert '"a big multiple of seven"' in out, out


def test_no_return_value_shows_the_text_of_a_modelled_object() -> None:
    """str() of a match or an iterator is an address in Python; isinstance of a generator
    against ``Generator`` is what the model of it (an iterator) cannot answer."""
    for body in (
        "return f\"{re.match('a', text)}\"",
        "return str(re.compile('a'))",
        "return isinstance(_gen(text), Generator)",
    ):
        code = f"""
            import re
            from collections.abc import Generator

            def _gen(text):
                yield text

            def show(text: str) -> object:
                {body}
            """
        out = gen(code, "def show")
        shown = [function(out, n) for n in names_of(out) if "_returns_" in n]
        assert all(s.endswith('== "None"') for s in shown), (body, out)  # no match there


def test_return_values_through_itertools_on_finite_arguments() -> None:
    out, names = returns_of(
        """
        import itertools
        from itertools import chain, groupby, islice

        def summary(items: list, n: int) -> object:
            head = tuple(islice(iter(items), n))
            runs = [(key, len(list(group))) for key, group in groupby(items)]
            return head, list(chain.from_iterable([items, items])), runs, list(
                itertools.repeat(0, 2)
            )
        """,
        "def summary",
    )
    assert names, out


def test_a_generator_expression_returned_is_not_the_tuple_it_yields() -> None:
    out = gen(
        """
        def pairs(items: list) -> object:
            found = ((item, item) for item in items)
            return found
        """,
        "def pairs",
    )
    assert not [n for n in names_of(out) if "_returns_" in n], out
    out, names = returns_of(
        """
        def total(items: list) -> int:
            return sum(item * 2 for item in items)
        """,
        "def total",
    )
    assert names, "consumed at once, its values are known"


def test_star_args_get_candidates_and_reach_what_depends_on_them() -> None:
    code = """
        class Unequal(ValueError):
            pass

        def zip_same(*iterables):
            first = len(iterables[0])
            for i, it in enumerate(iterables[1:], 1):
                if len(it) != first:
                    raise Unequal("sizes differ")
            return list(zip(*iterables))
        """
    out = gen(code, "def zip_same")
    assert "zip_same([1], [1, 2])" in function(out, "test_zip_same_raises_unequal"), out
    run(code, out, "test_zip_same_raises_unequal")
    for name in [n for n in names_of(out) if "_returns_" in n]:
        run(code, out, name)


def test_a_module_function_passed_along_and_a_builtin_kept_as_data() -> None:
    code = """
        def _factory(f, options):
            factory = options.pop("factory", dict)
            if options:
                raise TypeError(f"{f.__name__}() got unexpected options")
            return factory

        def merge(*dicts, **options):
            merged = _factory(merge, options)()
            for d in dicts:
                merged.update(d)
            return merged
        """
    out, _ = returns_of(code, "def merge")
    assert 'merge({"a": 1}) == {"a": 1}' in out, out


def test_a_function_defined_inside_and_os_fspath_are_followed() -> None:
    code = """
        import os

        def prefix_lines(text, prefix, predicate=None):
            text = os.fspath(text)
            if predicate is None:
                def predicate(line):
                    return line.strip()

            def prefixed():
                for line in text.splitlines(True):
                    yield prefix + line if predicate(line) else line

            return "".join(prefixed())
        """
    out, names = returns_of(code, "def prefix_lines")
    assert names, out


def test_a_function_the_module_deletes_after_using_it_gets_a_todo_only() -> None:
    out = gen(
        """
        def _setup():
            return 1

        _setup()
        del _setup
        """,
        "def _setup",
    )
    assert names_of(out) == ["test_setup_todo"], out
    assert "from mod import" not in out


def test_item_assignment_and_deletion_are_modelled() -> None:
    """``text[0] = ...`` raises TypeError on a str; ``del table[key]`` removes the key."""
    code = """
        def drop(table: dict, key: str) -> dict:
            if key in table:
                del table[key]
            return table

        def poke(text, i):
            text[i] = 0
            return text
        """
    out, names = returns_of(code, "def drop")
    assert names and 'drop({"a": 1}, "a") == {}' in out, out
    out = gen(code, "def poke")
    assert not [line for line in out.splitlines() if 'assert poke("' in line], out


def test_the_module_exception_built_by_a_raise_can_fail_first() -> None:
    """``DecodeError(msg, doc, pos)`` counts lines in ``doc``: with a list for ``doc`` that is
    a TypeError, not the DecodeError the raise means; the raise test passes a text."""
    code = """
        class DecodeError(ValueError):
            def __init__(self, msg, doc, pos):
                self.lineno = doc.count("\\\\n", 0, pos) + 1
                super().__init__(msg)

        def escape_code(s, pos):
            esc = s[pos + 1 : pos + 5]
            if len(esc) == 4:
                return esc
            raise DecodeError("bad escape", s, pos)
        """
    out = gen(code, "def escape_code")
    body = function(out, "test_escape_code_raises_decode_error")
    assert "escape_code([" not in body, body
    run(code, out, "test_escape_code_raises_decode_error")


def test_a_decorated_function_gets_no_raise_test_nor_return_type_check() -> None:
    """A decorator may turn what the function raises into a value (a validator)."""
    code = """
        import functools

        def validator(func):
            @functools.wraps(func)
            def wrapper(*args):
                try:
                    return func(*args)
                except ValueError as error:
                    return error
            return wrapper

        @validator
        def positive(n: int) -> bool:
            if n < 0:
                raise ValueError("negative")
            return True
        """
    out = gen(code, "def positive")
    assert "test_positive_todo_raises_value_error" in names_of(out), out
    assert "isinstance(result" not in out
    assert "a decorator of it may handle what it raises" in out


def test_an_example_of_statements_then_an_expression_checks_the_expression() -> None:
    """doctest shows the value of the last expression of ``>>> x = f(); g(x) == y``."""
    code = '''
        def sep(char):
            """
            >>> fmt = sep("-") ; fmt * 2 == "--"
            True
            """
            return char
        '''
    out = gen(code, "def sep")
    body = function(out, "test_sep_example_1")
    assert 'fmt = sep("-")' in body and 'assert (fmt * 2 == "--") is True' in body, body
    run(code, out, "test_sep_example_1")


def test_a_loop_over_what_is_not_known_leaves_no_exact_value() -> None:
    """``helper(lines)`` inside it may change ``lines``: the value returned is not known."""
    out = gen(
        """
        def collect(lines, rows):
            for row in rows.values():
                helper(lines, row)
            return lines
        """,
        "def collect",
    )
    assert not [n for n in names_of(out) if "_returns_" in n], out


def test_an_example_uses_names_the_module_gets_by_a_star_import_and_its_package() -> None:
    core = "class Word:\n    pass\n\n_hidden = 1\n"
    source = dedent(
        '''
        from .core import *

        def counted(expr):
            """
            >>> counted(Word()) is not None
            True
            >>> counted(pkg.helpers.Word()) is not None
            True
            """
            return expr
        '''
    )
    out = generate(
        source,
        find_target(source, line_of(source, "def counted")),
        "pkg.helpers",
        {"pkg.core": core}.get,
    )
    assert "from pkg.helpers import Word, counted" in out, out
    assert "import pkg\n" in out, out
