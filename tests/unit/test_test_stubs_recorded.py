"""Recorded tests (``test_stubs.recorded``, pure): the plan of calls and variants, what the
recorder's answer becomes, the greedy choice of calls that catch slips, and the tests rendered
from them. The recorder itself (a subprocess) is tested in ``test_recorder.py``."""

from __future__ import annotations

import ast
import re
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.engines import test_stubs as stubs
from fastedit_lsp.engines.test_stubs import Observation, Recording, recording_from
from fastedit_lsp.engines.test_stubs.recorded import (
    MAX_RECORDED,
    TEXT,
    _source,
    choose,
    decode,
)

SOURCE = textwrap.dedent('''
    class ParseError(ValueError):
        pass


    def clamp(value: int, low: int = 0, high: int = 10) -> int:
        """Value, kept between low and high."""
        if low > high:
            raise ParseError("empty range")
        return max(low, min(value, high))


    def counter(n: int):
        i = 0
        while True:
            yield i * n
            i += 1
''').lstrip()


def _target(name: str) -> stubs.Target:
    line = next(i for i, text in enumerate(SOURCE.splitlines()) if f"def {name}(" in text)
    return stubs.find_target(SOURCE, line)


def test_the_plan_writes_calls_as_the_tests_do_and_the_variants_as_defs() -> None:
    plan = stubs.record_plan(SOURCE, _target("clamp"), "mod")
    assert plan is not None
    assert (plan.module, plan.qualname) == ("mod", "clamp")
    assert plan.calls[0] == "clamp(1)"  # the most ordinary arguments first
    assert any("high=" in call for call in plan.calls)
    assert len(set(plan.calls)) == len(plan.calls)
    for call in plan.calls:
        assert isinstance(ast.parse(call, mode="eval").body, ast.Call)
    assert plan.variants
    for variant in plan.variants:
        (node,) = ast.parse(variant).body
        assert isinstance(node, ast.FunctionDef) and node.name == "clamp"
        assert not node.decorator_list
    # One change each: none is the function itself.
    original = ast.unparse(ast.parse(SOURCE).body[1])
    assert original not in plan.variants


def test_a_generator_is_called_bare_so_the_recorder_can_take_its_first_items() -> None:
    plan = stubs.record_plan(SOURCE, _target("counter"), "mod")
    assert plan is not None
    assert all(call.startswith("counter(") for call in plan.calls)


def test_nothing_is_planned_for_a_function_that_changes_the_module() -> None:
    source = "SEEN = []\n\n\ndef remember(x: int) -> None:\n    SEEN.append(x)\n"
    assert stubs.record_plan(source, stubs.find_target(source, 3), "mod") is None


LAZY = """
_TABLE = None
_PAIRS = {}
_COUNT = 0


def encode(text: str) -> str:
    global _TABLE
    if _TABLE is None:
        _TABLE = {c: c.upper() for c in "abc"}
    return "".join(_TABLE.get(c, c) for c in text)


def pairs(alphabet: str) -> list[str]:
    if alphabet not in _PAIRS:
        _PAIRS[alphabet] = [a + b for a in alphabet for b in alphabet]
    return _PAIRS[alphabet]


def count(n: int) -> int:
    global _COUNT
    if not _COUNT:
        _COUNT = n
    _COUNT += 1
    return _COUNT
"""


def test_a_function_that_fills_a_module_table_on_its_first_call_is_planned() -> None:
    """A table built on the first call that needs it (``global`` set under ``is None``, an
    item stored under ``not in``) is the same for every later call: no test sees what
    another did. A global changed on every call still gets no plan."""
    lines = LAZY.split("\n")
    line = {
        n: next(i for i, t in enumerate(lines) if t.startswith(f"def {n}("))
        for n in ("encode", "pairs", "count")
    }
    assert stubs.record_plan(LAZY, stubs.find_target(LAZY, line["encode"]), "mod") is not None
    assert stubs.record_plan(LAZY, stubs.find_target(LAZY, line["pairs"]), "mod") is not None
    assert stubs.record_plan(LAZY, stubs.find_target(LAZY, line["count"]), "mod") is None


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text()
        | st.binary(),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.tuples(inner, inner)
            | st.dictionaries(st.text(max_size=3), inner, max_size=3)
            | st.frozensets(st.integers(), max_size=3)
        ),
        max_leaves=8,
    )
)
def test_recorded_values_render_as_source_that_evaluates_back_to_them(value: object) -> None:
    rendered = _source(value)
    assert rendered is not None
    assert eval(rendered) == value


def test_sets_render_in_a_stable_order_and_nan_not_at_all() -> None:
    assert _source({3, 1, 2}) == "{1, 2, 3}"
    assert _source(set()) == "set()"
    assert _source(frozenset({"b", "a"})) == 'frozenset({"a", "b"})'
    assert _source([1.0, float("nan")]) is None


def test_the_recorders_tagged_values_decode_and_garbage_is_left_out() -> None:
    tagged = ["dict", [[["str", "k"], ["tuple", [["int", "10"], ["float", "inf"], ["none"]]]]]]
    assert decode(tagged) == {"k": (10, float("inf"), None)}
    with pytest.raises(ValueError, match="not a recorded value"):
        decode(["object", "x"])
    recording = recording_from(
        {
            "observations": [
                {"call": "f(1)", "value": ["int", "2"], "kills": [0, 3]},
                {"call": "f(0)", "exception": ["builtins", "ZeroDivisionError"], "kills": [1]},
                {"call": "f(2)", "value": ["weird"], "kills": []},
                {"value": ["int", "1"]},
                {"call": "f(3)", "value": ["list", [["int", "1"]]], "wrap": "islice"},
            ],
            "variants": 4,
            "dropped": {"unstable": 2},
        }
    )
    assert [o.call for o in recording.observations] == ["f(1)", "f(0)", "f(3)"]
    assert recording.observations[0] == Observation("f(1)", 2, None, frozenset({0, 3}))
    assert recording.observations[1].exception == ("builtins", "ZeroDivisionError")
    assert recording.observations[2].expression() == "list(islice(f(3), 10))"
    assert (recording.variants, dict(recording.dropped)) == (4, {"unstable": 2})


def test_the_choice_covers_the_most_variants_with_the_fewest_calls() -> None:
    observations = [
        Observation("f(1)", 1, kills=frozenset({0})),
        Observation("f(2)", 2, kills=frozenset({0, 1, 2})),
        Observation("f(3)", 3, kills=frozenset({2, 3})),
        Observation("f(4)", 4, kills=frozenset({1})),
        Observation("f(100000)", 5, kills=frozenset({3})),
    ]
    chosen = choose(observations)
    assert [o.call for o in chosen] == ["f(2)", "f(3)"]
    # A tie goes to the shorter test.
    tie = [
        Observation("f(100000)", 1, kills=frozenset({0})),
        Observation("f(1)", 1, kills=frozenset({0})),
    ]
    assert [o.call for o in choose(tie)] == ["f(1)"]


def test_with_no_variant_told_apart_two_distinct_outcomes_are_pinned() -> None:
    observations = [Observation("f(1)", 1), Observation("f(2)", 1), Observation("f(3)", 3)]
    assert [o.call for o in choose(observations)] == ["f(1)", "f(3)"]


def test_at_most_a_handful_of_recorded_tests() -> None:
    observations = [Observation(f"f({i})", i, kills=frozenset({i})) for i in range(20)]
    assert len(choose(observations)) == MAX_RECORDED


def test_recorded_observations_become_tests_that_name_their_exceptions() -> None:
    recording = Recording(
        (
            Observation("clamp(1)", 1, kills=frozenset({0})),
            Observation("clamp(1, 5, 2)", None, ("mod", "ParseError"), frozenset({1, 2})),
            Observation("clamp(1, 2, 3)", 2, kills=frozenset({3})),
            Observation("clamp(1, 1, 1)", None, ("otherpkg", "Boom"), frozenset({4})),
            Observation("clamp(2, 2, 2)", None, ("re", "error"), frozenset({6})),
            Observation("clamp(-1)", True, kills=frozenset({5})),
        ),
        variants=6,
    )
    generated = stubs.generate(SOURCE, _target("clamp"), "mod", None, recording)
    assert "recorded calls" in generated.splitlines()[0] + generated.splitlines()[2]
    assert "from mod import ParseError, clamp" in generated
    assert (
        "def test_clamp_recorded_1() -> None:\n    with pytest.raises(ParseError):\n" in generated
    )
    assert "    assert clamp(1, 2, 3) == 2\n" in generated
    assert "    assert clamp(-1) is True\n" in generated
    # An exception of a standard module is named through it; one the test could not import is
    # not pinned.
    assert "import re\n" in generated and "with pytest.raises(re.error):" in generated
    assert "clamp(1, 1, 1)" not in generated
    ast.parse(generated)


def test_a_call_another_test_already_makes_is_not_recorded_again() -> None:
    plain = stubs.generate(SOURCE, _target("clamp"), "mod")
    shown = next(
        line.split("assert ", 1)[1].split(" ==")[0]
        for line in plain.splitlines()
        if line.strip().startswith("assert clamp(")
    )
    recording = Recording((Observation(shown, 0, kills=frozenset({0})),))
    generated = stubs.generate(SOURCE, _target("clamp"), "mod", None, recording)
    assert "_recorded_" not in generated


TEXTS = textwrap.dedent('''
    import re

    WORD = re.compile(r"[a-z]+")


    def words(text: str, limit: int = 3) -> list[str]:
        """The first words of the text."""
        return WORD.findall(text)[:limit]
''').lstrip()


def test_a_text_parameter_gets_a_template_the_recorder_fills_and_values_of_other_shapes() -> None:
    target = stubs.find_target(
        TEXTS, TEXTS.splitlines().index("def words(text: str, limit: int = 3) -> list[str]:")
    )
    plan = stubs.record_plan(TEXTS, target, "mod")
    assert plan is not None
    assert plan.templates == (f'words("{TEXT}")',)
    # Beyond the static search's candidates: text of numbers, accents, line breaks; numbers
    # far from the code's own.
    assert {'words("1.5")', 'words("é")', 'words("a\\nb")'} <= set(plan.calls)
    assert 'words("a", 256)' in plan.calls
    # Both parameters get values of their own before the calls run out.
    assert len({c for c in plan.calls if c.startswith('words("a", ')}) >= 5


def test_a_recorded_exceptions_message_is_matched_whole() -> None:
    message = "bad (x) at 1.5? [no]"
    recording = Recording(
        (Observation("clamp(1, 7, 3)", None, ("mod", "ParseError"), frozenset({1}), "", message),)
    )
    generated = stubs.generate(SOURCE, _target("clamp"), "mod", None, recording)
    recorded = generated.split("def test_clamp_recorded_1() -> None:\n", 1)[1]
    line = recorded.splitlines()[0]
    assert line.startswith("    with pytest.raises(ParseError, match=")
    pattern = eval(line.split("match=", 1)[1].removesuffix("):"))
    assert re.search(pattern, message)
    # Only the whole message: a slip that adds to it (or another message) fails the test.
    assert not re.search(pattern, "XX" + message) and not re.search(pattern, message + "_")


def test_a_recorded_warning_is_asserted_with_its_whole_message() -> None:
    recording = recording_from(
        {
            "observations": [
                {
                    "call": "clamp(1, 7, 3)",
                    "exception": ["mod", "ParseError"],
                    "warning": ["builtins", "DeprecationWarning"],
                    "warning_message": "clamp(1.5) is old",
                    "kills": [0],
                },
                {
                    "call": "clamp(7, 2, 9)",
                    "value": ["int", "7"],
                    "warning": ["builtins", "UserWarning"],
                    "kills": [1],
                },
                # A category no test can name: its kills count on it, so it is left out.
                {"call": "clamp(3)", "value": ["int", "3"], "warning": None, "kills": [2]},
            ]
        }
    )
    assert [o.call for o in recording.observations] == ["clamp(1, 7, 3)", "clamp(7, 2, 9)"]
    generated = stubs.generate(SOURCE, _target("clamp"), "mod", None, recording)
    bodies = [
        block.split(" -> None:\n", 1)[1].split("\n\n")[0].splitlines()
        for block in generated.split("def test_clamp_recorded_")[1:]
    ]
    assert [
        '    with pytest.warns(DeprecationWarning, match=r"^clamp\\(1\\.5\\) is old$"):',
        "        with pytest.raises(ParseError):",
        "            clamp(1, 7, 3)",
    ] in bodies
    assert ["    with pytest.warns(UserWarning):", "        assert clamp(7, 2, 9) == 7"] in bodies
    compile(generated, "generated", "exec")


def test_the_variants_change_the_functions_and_lambdas_the_function_defines() -> None:
    source = textwrap.dedent("""
        def ranked(items):
            def score(item: int = 1) -> int:
                "The item's score."
                return item * 2

            return sorted(items, key=lambda item: score(item) + 1)
    """).lstrip()
    plan = stubs.record_plan(source, stubs.find_target(source, 0), "mod")
    assert plan is not None
    assert any("return item // 2" in v for v in plan.variants)
    assert any("key=lambda item: score(item) - 1" in v for v in plan.variants)
    assert any("item: int=2" in v for v in plan.variants)  # a default of the inner function
    # Not its docstring, its hints, nor whether it is defined.
    assert not any("The item's score._" in v for v in plan.variants)
    assert not any("def score" not in v for v in plan.variants)


def test_a_function_that_takes_text_apart_gets_texts_of_its_pieces_in_turn() -> None:
    source = textwrap.dedent("""
        def content_range(value: str):
            units, rest = value.split(None, 1)
            span, length = rest.split("/", 1)
            start, stop = span.split("-", 1)
            return units, int(start), int(stop), int(length)
    """).lstrip()
    plan = stubs.record_plan(source, stubs.find_target(source, 0), "mod")
    assert plan is not None
    assert 'content_range("1 2-3/4")' in plan.calls
    # A function that takes no text apart does not get them.
    plain = 'def tidy(text: str):\n    return text.replace("/", "").replace("-", " ")\n'
    plan = stubs.record_plan(plain, stubs.find_target(plain, 0), "mod")
    assert plan is not None and not any("2-3" in c or "2/3" in c for c in plan.calls)


def test_views_of_values_with_no_literal_form_are_read_and_written() -> None:
    recording = recording_from(
        {
            "observations": [
                {"call": "f(1)", "value": ["dict", [[["str", "x"], ["int", "1"]]]], "wrap": "vars"},
                {"call": "f(2)", "value": ["str", "Money(2)"], "wrap": "repr"},
                {"call": "f(3)", "value": ["list", [["list", []]]], "wrap": "parts"},
                {"call": "f(4)", "exception": ["builtins", "KeyError"], "message": "'k'"},
                {"call": "f(5)", "value": ["int", "1"], "wrap": "eval"},
            ]
        }
    )
    assert [o.expression() for o in recording.observations] == [
        "vars(f(1))",
        "repr(f(2))",
        "[list(part) for part in f(3)]",
        "f(4)",
        "f(5)",  # a view it does not know: the value itself
    ]
    assert recording.observations[3].message == "'k'"


CALLBACKS = textwrap.dedent("""
    import re as _re

    ENTITY = _re.compile(r"&#(\\d+);")


    def _numeric(match, base):
        return chr(int(match.group(1), base))


    def _plain(match):
        return match.group(0).upper()


    def decode(text):
        text = _re.sub(r"&([a-z]+);", _plain, text)
        return ENTITY.sub(lambda m: _numeric(m, 10), text)
""").lstrip()


@pytest.mark.parametrize(
    ("name", "template"),
    [
        ("_numeric", f'_numeric(re.search(ENTITY, "{TEXT}"), 10)'),
        ("_plain", f"_plain(re.search('&([a-z]+);', \"{TEXT}\"))"),
    ],
)
def test_a_callback_of_a_patterns_sub_gets_a_template_with_a_match_of_it(
    name: str, template: str
) -> None:
    """The module hands the function to ``sub`` (through a lambda, or by name): it is given
    a match; the recorder writes the pattern's source and texts it matches."""
    line = next(i for i, text in enumerate(CALLBACKS.splitlines()) if f"def {name}(" in text)
    target = stubs.find_target(CALLBACKS, line)
    plan = stubs.record_plan(CALLBACKS, target, "mod")
    assert plan is not None
    assert plan.templates[0] == template
    assert "import re" in plan.imports


def test_bytes_beyond_ascii_are_tried_where_bytes_may_be_passed() -> None:
    source = "def packed(data: bytes, other=None):\n    return data.decode()\n"
    plan = stubs.record_plan(source, stubs.find_target(source, 0), "mod")
    assert plan is not None
    assert {"packed(b'caf\\xc3\\xa9')", "packed(b'\\xff\\x80')"} <= set(plan.calls)
    # A parameter with no hint is given some too.
    assert "packed(b'a', b'\\xff\\x80')" in plan.calls


SHAPES = textwrap.dedent("""
    def seconds(stamp):
        hours, minutes, rest = stamp[:3]
        return hours * 3600 + minutes * 60 + rest


    def joined(pairs):
        return ";".join(f"{name}={value}" for name, value in pairs[1:])


    def third(value, fallback="x"):
        if isinstance(value, tuple):
            return value[2]
        return fallback


    def group(match):
        match = match.group(1)
        return match[1]
""").lstrip()


def test_a_function_that_holds_bytes_is_given_bytes_made_of_them() -> None:
    """``b"="`` in the body: bytes with it alone, inside others and beside another piece (the
    text candidates never hold them; without a hint, ``b"a"`` and ``b""`` were all)."""
    source = textwrap.dedent("""
        def needs_quoting(c, quotetabs):
            if c in b" \\t":
                return quotetabs
            if c == b"_":
                return True
            return c == b"=" or not (b" " <= c <= b"~")
    """).lstrip()
    plan = stubs.record_plan(source, stubs.find_target(source, 0), "mod")
    assert plan is not None
    given = set(_first_arguments(plan))
    assert {b"=", b"_", b"a=", b"a=a"} <= given
    assert b"a=a_a" in given or b"a_a=a" in given


def _first_arguments(plan: stubs.RecordPlan | None) -> list[object]:
    assert plan is not None
    found: list[object] = []
    for call in plan.calls:
        node = ast.parse(call, mode="eval").body
        assert isinstance(node, ast.Call)
        try:
            found.append(ast.literal_eval(node.args[0]))
        except ValueError:
            continue
    return found


def _shape(value: object) -> object:
    """``("tuple", 3, "str")``; items' shapes for a list."""
    if isinstance(value, list):
        return ["list", *(_shape(v) for v in value[:1])]
    if isinstance(value, tuple):
        return ("tuple", len(value), *{type(v).__name__ for v in value})
    return type(value).__name__


@pytest.mark.parametrize(
    ("name", "wanted"),
    [
        # Taken apart into three: three texts, three numbers.
        ("seconds", [("tuple", 3, "str"), ("tuple", 3, "int")]),
        # Its items taken apart into two: a few pairs.
        ("joined", [["list", ("tuple", 2, "str")], ["list", ("tuple", 2, "int")]]),
        # Its third item read.
        ("third", [("tuple", 3, "str"), ("tuple", 3, "int")]),
    ],
)
def test_a_parameter_taken_apart_is_given_sequences_of_the_size_it_is_taken_apart_into(
    name: str, wanted: list[object]
) -> None:
    """No plain value goes down the path after ``a, b, c = x`` (``for a, b in x``,
    ``x[2]``): the plan passes sequences of that size."""
    line = next(i for i, text in enumerate(SHAPES.splitlines()) if f"def {name}(" in text)
    shapes = [
        _shape(v)
        for v in _first_arguments(stubs.record_plan(SHAPES, stubs.find_target(SHAPES, line), "mod"))
    ]
    for shape in wanted:
        assert shape in shapes


def test_a_parameter_given_a_new_value_is_not_taken_for_a_sequence() -> None:
    line = next(i for i, text in enumerate(SHAPES.splitlines()) if "def group(" in text)
    plan = stubs.record_plan(SHAPES, stubs.find_target(SHAPES, line), "mod")
    shapes = [_shape(v) for v in _first_arguments(plan)]
    assert ("tuple", 2, "str") not in shapes
    assert ("tuple", 2, "int") not in shapes


FLAGS = textwrap.dedent("""
    import enum


    class Style(enum.Flag):
        PLAIN = 0
        BOLD = enum.auto()
        ITALIC = enum.auto()


    def render(text: str, style: Style = Style.PLAIN) -> str:
        if style & Style.BOLD:
            return "*" + text + "*"
        return text


    def size_of(count: int) -> int:
        if count < 1 << 16:
            return 2
        return 4
""").lstrip()


def _flags_target(name: str) -> stubs.Target:
    line = next(i for i, text in enumerate(FLAGS.splitlines()) if f"def {name}(" in text)
    return stubs.find_target(FLAGS, line)


def test_a_parameter_that_takes_an_enumerations_members_gets_a_member_template() -> None:
    """Its default is a member (and its hint, and the body combines it with one): the
    recorder makes the call with each member of the enumeration that expression names, once."""
    plan = stubs.record_plan(FLAGS, _flags_target("render"), "mod")
    assert plan is not None
    members = [t for t in plan.templates if "__fastedit_members__(" in t]
    assert members == ['render("a", __fastedit_members__(Style.PLAIN))']
    # A parameter compared with members, with neither default nor hint naming them.
    source = FLAGS.replace("style: Style = Style.PLAIN", "style")
    plan = stubs.record_plan(source, stubs.find_target(source, 10), "mod")
    assert plan is not None
    assert 'render("a", __fastedit_members__(Style.BOLD))' in plan.templates


def test_a_recorded_call_with_a_member_imports_its_enumeration() -> None:
    recording = Recording(
        (
            Observation('render("a", Style.BOLD | Style.ITALIC)', "*a*", kills=frozenset({0})),
            # A name the module does not bind: a test could not import it.
            Observation('render("b", Other.BOLD)', "b", kills=frozenset({1})),
        ),
        variants=2,
    )
    test = stubs.generate(FLAGS, _flags_target("render"), "mod", recording=recording)
    assert "from mod import Style, render" in test
    assert 'render("a", Style.BOLD | Style.ITALIC) == "*a*"' in test
    assert "Other" not in test


def test_the_bounds_a_constant_expression_gives_are_tried() -> None:
    """``1 << 16``: the numbers around 65536, where the comparison changes its answer."""
    plan = stubs.record_plan(FLAGS, _flags_target("size_of"), "mod")
    assert plan is not None
    assert {"size_of(65535)", "size_of(65536)", "size_of(65537)"} <= set(plan.calls)


def test_infinities_and_nan_are_tried_where_a_float_may_be_passed() -> None:
    source = "def scaled(x: float, y=None):\n    return x * 2\n"
    plan = stubs.record_plan(source, stubs.find_target(source, 0), "mod")
    assert plan is not None
    assert {'scaled(float("inf"))', 'scaled(float("-inf"))', 'scaled(float("nan"))'} <= set(
        plan.calls
    )


STALE = textwrap.dedent('''
    def shout(text: str) -> str:
        """The text, loud.

        >>> shout("hi")
        'HI'
        >>> shout("")
        Traceback (most recent call last):
        ValueError: 'nothing' to shout
        >>> shout("ok")
        'OK!'
        """
        if not text:
            raise ValueError('"nothing" to shout')
        return text.upper() + "!"
''').lstrip()


def test_a_docstring_example_the_function_does_otherwise_is_written_as_it_ran() -> None:
    """With ``tests.run`` the recorder made the examples' calls: one whose docstring went stale
    (another value, another message) is repaired, with a comment saying what the docstring
    shows; one that agrees is left as the docstring shows it."""
    recording = Recording(
        (
            Observation('shout("hi")', "HI!"),
            Observation(
                'shout("")', None, ("builtins", "ValueError"), message='"nothing" to shout'
            ),
            Observation('shout("ok")', "OK!"),
        ),
        variants=1,
    )
    target = stubs.find_target(STALE, 0)
    test = stubs.generate(STALE, target, "mod", recording=recording)
    assert stubs.amended_tests(test) == ["test_shout_example_1", "test_shout_example_2"]
    assert (
        "    # The docstring shows that it returns 'HI'; run, it does this (tests.run).\n"
        '    assert shout("hi") == "HI!"\n'
    ) in test
    assert "shows that it raises ValueError" in test
    assert "with pytest.raises(ValueError, match='^\"nothing\" to shout$'):" in test
    assert 'assert shout("ok") == "OK!"' in test and test.count("The docstring shows") == 2
    # Without a recording the examples are as the docstring shows them.
    plain = stubs.generate(STALE, target, "mod")
    assert 'assert shout("hi") == "HI"' in plain and not stubs.amended_tests(plain)
