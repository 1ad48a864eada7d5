"""The recorder (``project.recorder`` and its worker): the user's function really runs, in a
subprocess, on planned calls and on variants of itself; what it observed."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import textwrap
import types
from pathlib import Path

import pytest

from fastedit_lsp.engines.test_stubs import Recording, RecordPlan
from fastedit_lsp.project.recorder import record

MODULE = textwrap.dedent("""
    import itertools
    import random


    class Refused(Exception):
        pass


    def half(n):
        if n < 0:
            raise Refused("negative")
        return n // 2


    def spin(n):
        while n >= 0:
            n += 1
        return n


    def dice(n):
        return random.random() * n


    def handle(n):
        return object()


    def squares(n):
        return (i * i for i in itertools.count(n))


    def pair(n):
        return {"n": n, "pair": (n, [n + 1])}


    def getter(i):
        return lambda seq: seq[i]
""").lstrip()


@pytest.fixture
def project(tmp_path: Path) -> str:
    (tmp_path / "usercode.py").write_text(MODULE)
    return str(tmp_path)


async def _record(project: str, *plans: RecordPlan, **limits: float) -> list[Recording]:
    return await record(list(plans), [project], **limits)


async def test_values_are_recorded_and_variants_that_return_otherwise_are_told_apart(
    project: str,
) -> None:
    plan = RecordPlan(
        "usercode",
        "half",
        ("half(9)", "half(-1)", "half(0)"),
        (
            "def half(n):\n    if n < 0:\n        raise Refused('negative')\n    return n // 3",
            "def half(n):\n    if n <= 0:\n        raise Refused('negative')\n    return n // 2",
            "def half(n) -> syntax error",
        ),
    )
    [recording] = await _record(project, plan)
    assert recording.error == ""
    assert recording.variants == 2  # the third does not compile
    by_call = {o.call: o for o in recording.observations}
    assert by_call["half(9)"].value == 4 and by_call["half(9)"].kills == {0}
    assert by_call["half(-1)"].exception == ("usercode", "Refused")
    assert by_call["half(-1)"].kills == frozenset()
    assert by_call["half(0)"].value == 0 and by_call["half(0)"].kills == {1}


async def test_a_call_that_hangs_is_stopped_and_left_out(project: str) -> None:
    plan = RecordPlan("usercode", "spin", ("spin(1)", "spin(-1)"))
    [recording] = await _record(project, plan, call_seconds=0.2)
    assert [(o.call, o.value) for o in recording.observations] == [("spin(-1)", -1)]
    assert recording.dropped == {"timeout": 1}


async def test_a_variant_that_hangs_counts_as_told_apart(project: str) -> None:
    plan = RecordPlan(
        "usercode",
        "spin",
        ("spin(-1)", "spin(-2)"),
        ("def spin(n):\n    while n >= -5:\n        n += 1\n    return n",),
    )
    [recording] = await _record(project, plan, call_seconds=0.2)
    assert [o.kills for o in recording.observations] == [{0}, frozenset()]


async def test_an_unstable_call_is_dropped(project: str) -> None:
    plan = RecordPlan("usercode", "dice", ("dice(6)", "dice(0)"))
    [recording] = await _record(project, plan)
    assert [(o.call, o.value) for o in recording.observations] == [("dice(0)", 0.0)]
    assert recording.dropped == {"unstable": 1}


async def test_a_result_no_source_can_write_is_dropped_and_an_iterator_is_sampled(
    project: str,
) -> None:
    plans = [
        RecordPlan("usercode", "handle", ("handle(1)",)),
        RecordPlan("usercode", "squares", ("squares(2)",)),
        RecordPlan("usercode", "pair", ("pair(1)",)),
    ]
    handle, squares, pair = await _record(project, *plans)
    assert handle.observations == () and handle.dropped == {"unrenderable": 1}
    [sample] = squares.observations
    assert sample.wrap == "islice" and sample.value == [i * i for i in range(2, 12)]
    assert pair.observations[0].value == {"n": 1, "pair": (1, [2])}


async def test_a_module_that_does_not_import_is_an_error_not_a_crash(project: str) -> None:
    (Path(project) / "broken.py").write_text("raise RuntimeError('at import')\n")
    plans = [RecordPlan("broken", "f", ("f(1)",)), RecordPlan("usercode", "half", ("half(2)",))]
    broken, half = await _record(project, *plans)
    assert "RuntimeError: at import" in broken.error and broken.observations == ()
    # The next function is still recorded.
    assert half.error == "" and half.observations[0].value == 1


async def test_calls_run_in_a_temporary_directory_not_the_project(project: str) -> None:
    (Path(project) / "writer.py").write_text(
        "import os\n\ndef where():\n    open('left.txt', 'w').close()\n    return 1\n"
    )
    [recording] = await _record(project, RecordPlan("writer", "where", ("where()",)))
    assert not (Path(project) / "left.txt").exists()
    # Its test would write into the folder pytest runs in (the project): not written.
    assert recording.observations == ()
    assert recording.dropped == {"files": 1}


async def test_what_a_call_leaves_in_the_folder_no_later_call_sees(project: str) -> None:
    # A variant of ``open_if_exists`` without its guard created the file '1' where the calls
    # run; a later call then raised "invalid mode" for ('1', '1.5'), and the test written from
    # it failed in every other folder (found by the mutation tool on jinja2.utils).
    (Path(project) / "files.py").write_text(
        textwrap.dedent("""
            import os


            def touch(name):
                open(name, "w").close()
                return 1


            def exists(name):
                return os.path.exists(name)


            def open_if_exists(filename, mode="rb"):
                if not os.path.isfile(filename):
                    return None
                return open(filename, mode)
        """).lstrip()
    )
    unguarded = "def open_if_exists(filename, mode='rb'):\n    return open(filename, mode)\n"
    touched, seen, opened = await _record(
        project,
        RecordPlan("files", "touch", ("touch('x')",)),
        RecordPlan("files", "exists", ("exists('x')",)),
        RecordPlan(
            "files",
            "open_if_exists",
            ("open_if_exists('1', 'w')", "open_if_exists('1', '1.5')"),
            (unguarded,),
        ),
    )
    assert touched.observations == () and touched.dropped == {"files": 1}
    assert [o.value for o in seen.observations] == [False]
    assert [(o.call, o.value, o.exception) for o in opened.observations] == [
        ("open_if_exists('1', 'w')", None, None),
        ("open_if_exists('1', '1.5')", None, None),
    ]
    assert opened.observations[0].kills  # the variant that opens (and creates) it is told apart
    assert sorted(os.listdir(project)) == ["files.py", "usercode.py"]


async def test_a_function_the_function_returns_is_recorded_by_what_it_does(project: str) -> None:
    plan = RecordPlan(
        "usercode", "getter", ("getter(0)",), ("def getter(i):\n    return lambda seq: seq[i + 1]",)
    )
    [recording] = await _record(project, plan)
    by_call = {o.call: o for o in recording.observations}
    assert by_call["getter(0)([1, 2])"].value == 1
    assert by_call["getter(0)([1, 2])"].kills == {0}
    assert by_call['getter(0)("a1b2")'].value == "a"
    assert by_call["getter(0)(1)"].exception == ("builtins", "TypeError")
    assert "getter(0)" not in by_call and recording.dropped["unrenderable"] == 1


EXTRA = textwrap.dedent("""
    import enum
    import re
    import warnings

    RANGE = re.compile(r"(\\d+)-(\\d+)|~(\\d+)")


    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y


    class Money:
        __slots__ = ("cents",)

        def __init__(self, cents):
            self.cents = cents

        def __repr__(self):
            return f"Money({self.cents})"


    def span(text):
        found = RANGE.search(text)
        if found is None:
            raise ValueError(f"no range in {text!r}")
        if found.group(3):
            return int(found.group(3))
        return int(found.group(2)) - int(found.group(1))


    def point(n):
        return Point(n, n + 1)


    def money(n):
        return Money(n * 100)


    def halves(items):
        return iter(items[: len(items) // 2]), iter(items[len(items) // 2 :])


    def step(n, down=False):
        if n < 0:
            raise ValueError("negative")
        return n - 1 if down else n + 1


    def old_step(n):
        warnings.warn("old_step is deprecated", DeprecationWarning, stacklevel=2)
        return n + 1


    def answer(prompt=None):
        if prompt is None:
            return input()
        return prompt.strip()


    class Style(enum.Flag):
        PLAIN = 0
        BOLD = enum.auto()
        ITALIC = enum.auto()
        UNDER = enum.auto()


    globals().update(Style.__members__)  # as plistlib binds FMT_XML


    def styled(text, style=PLAIN):
        if style & Style.BOLD:
            text = f"*{text}*"
        if style & Style.ITALIC:
            text = f"_{text}_"
        return text
""").lstrip()


@pytest.fixture
def extra(project: str) -> str:
    (Path(project) / "extra.py").write_text(EXTRA)
    return project


async def test_a_template_is_made_with_texts_the_functions_own_regex_matches(extra: str) -> None:
    """``span`` reads a module-level compiled pattern: no text in its body shows what it
    matches, the recorder finds texts for each of its branches."""
    plan = RecordPlan("extra", "span", ('span("a")',), templates=('span("__fastedit_text__")',))
    [recording] = await _record(extra, plan)
    by_call = {o.call: o for o in recording.observations}
    assert by_call['span("a")'].exception == ("builtins", "ValueError")
    values = {o.call: o.value for o in recording.observations if o.exception is None}
    assert values['span("1-1")'] == 0 and values['span("~1")'] == 1
    # Each text inside a longer one too (what the function finds in it).
    assert values['span("a 1-1 b")'] == 0
    assert "__fastedit_text__" not in "".join(by_call)


async def test_a_match_template_is_made_with_the_patterns_source_and_texts_it_matches(
    tmp_path: Path,
) -> None:
    (tmp_path / "entities.py").write_text(
        "import re\n\nENTITY = re.compile(r'&#(\\d+);|&(amp);', re.I)\n\n\n"
        "def numeric(match, base):\n    if match.group(2):\n        return '&'\n"
        "    return chr(int(match.group(1), base))\n"
    )
    plan = RecordPlan(
        "entities",
        "numeric",
        ("numeric(1, 10)",),
        templates=('numeric(re.search(ENTITY, "__fastedit_text__"), 10)',),
        imports=("import re",),
    )
    [recording] = await _record(str(tmp_path), plan)
    values = {o.call: o.value for o in recording.observations if o.exception is None}
    # The name is written as the pattern's source (and its flags): the test needs only ``re``.
    assert values == {
        "numeric(re.search('&#(\\\\d+);|&(amp);', '&#1;', re.IGNORECASE), 10)": "\x01",
        "numeric(re.search('&#(\\\\d+);|&(amp);', '&amp;', re.IGNORECASE), 10)": "&",
    }
    for call, value in values.items():
        assert eval(call, {"re": re, "numeric": _numeric}) == value


def _numeric(match: re.Match[str], base: int) -> str:
    return "&" if match.group(2) else chr(int(match.group(1), base))


def test_a_template_is_also_made_with_the_texts_the_functions_own_body_holds() -> None:
    from fastedit_lsp.project.record_texts import texts

    def hyphens(word: str) -> str:
        """Parts."""
        if "-" in word:
            return "+".join(part for part in word.split("--"))
        return word

    assert texts(hyphens) == ["-", "+", "--"]  # not the docstring


async def test_a_member_template_is_made_with_each_member_of_its_enumeration(extra: str) -> None:
    """The default is a member the module binds by a bare name: the recorder writes the
    members through the enumeration the module names (a flag's zero is not one of them), and
    for a flag two of them together."""
    plan = RecordPlan(
        "extra",
        "styled",
        ('styled("a")',),
        templates=(
            'styled("a", __fastedit_members__(PLAIN))',
            'styled("a", __fastedit_members__(Style))',  # the same members: made once
            'styled("a", __fastedit_members__(RANGE))',  # not an enumeration: nothing
        ),
    )
    [recording] = await _record(extra, plan)
    values = {o.call: o.value for o in recording.observations}
    assert values == {
        'styled("a")': "a",
        'styled("a", Style.BOLD)': "*a*",
        'styled("a", Style.ITALIC)': "_a_",
        'styled("a", Style.UNDER)': "a",
        'styled("a", Style.BOLD | Style.ITALIC)': "_*a*_",
        'styled("a", Style.BOLD | Style.UNDER)': "*a*",
        'styled("a", Style.ITALIC | Style.UNDER)': "_a_",
    }


async def test_a_call_that_reads_the_standard_input_is_left_out(extra: str) -> None:
    """What it reads depends on where the test runs (pytest's capture refuses it)."""
    plan = RecordPlan("extra", "answer", ("answer()", 'answer(" y ")'))
    [recording] = await _record(extra, plan)
    assert [(o.call, o.value) for o in recording.observations] == [('answer(" y ")', "y")]
    assert recording.dropped == {"stdin": 1}


def test_pattern_texts_are_matched_by_their_pattern() -> None:
    from fastedit_lsp.project.record_texts import pattern_texts

    for source in (r"\x1b\[[0-9;]*[A-Za-z]", r"^\s*(foo|bar)$", r"([a-z])\1", r"[^\W\d_]+"):
        pattern = re.compile(source)
        texts = pattern_texts(pattern)
        assert texts and all(pattern.search(t) for t in texts), (source, texts)
    assert pattern_texts(re.compile(r"^\s*(foo|bar)$")) == [" foo", " bar"]


async def test_an_exceptions_message_is_recorded_and_another_message_tells_a_variant_apart(
    extra: str,
) -> None:
    plan = RecordPlan(
        "extra",
        "step",
        ("step(-1)",),
        (
            "def step(n, down=False):\n    if n < 0:\n        raise ValueError('negative_')\n"
            "    return n + 1",
            "def step(n, down=False):\n    if n < 0:\n        raise ValueError('negative')\n"
            "    return n + 2",
        ),
    )
    [recording] = await _record(extra, plan)
    # (The search finds a call that tells the other variant apart: ``step(0)``, a nudge.)
    raised = next(o for o in recording.observations if o.call == "step(-1)")
    assert raised.exception == ("builtins", "ValueError") and raised.message == "negative"
    assert raised.kills == {0}


async def test_a_warning_is_recorded_and_a_variant_that_drops_or_changes_it_is_told_apart(
    extra: str,
) -> None:
    warn = "    warnings.warn({!r}, DeprecationWarning, stacklevel=2)\n"
    plan = RecordPlan(
        "extra",
        "old_step",
        ("old_step(1)",),
        (
            "def old_step(n):\n    pass\n    return n + 1",
            "def old_step(n):\n" + warn.format("old_step is deprecated_") + "    return n + 1",
            "def old_step(n):\n" + warn.format("old_step is deprecated") + "    return n + 1",
        ),
    )
    [recording] = await _record(extra, plan)
    seen = next(o for o in recording.observations if o.call == "old_step(1)")
    assert seen.value == 2 and seen.warning == ("builtins", "DeprecationWarning")
    assert seen.warning_message == "old_step is deprecated"
    assert seen.kills == {0, 1}  # the third is the function itself


async def test_a_value_with_no_literal_form_is_seen_through_its_attributes_or_its_repr(
    extra: str,
) -> None:
    plans = [
        RecordPlan("extra", "point", ("point(1)",), ("def point(n):\n    return Point(n, n)",)),
        RecordPlan("extra", "money", ("money(2)",), ("def money(n):\n    return Money(n * 10)",)),
        RecordPlan("extra", "halves", ("halves([1, 2, 3])",)),
    ]
    point, money, halves = await _record(extra, *plans)
    [seen] = point.observations
    assert (seen.wrap, seen.value, seen.kills) == ("vars", {"x": 1, "y": 2}, {0})
    assert seen.expression() == "vars(point(1))"
    [seen] = money.observations
    assert (seen.wrap, seen.value, seen.kills) == ("repr", "Money(200)", {0})
    [seen] = halves.observations
    assert (seen.wrap, seen.value) == ("parts", [[1], [2, 3]])
    assert seen.expression() == "[list(part) for part in halves([1, 2, 3])]"


async def test_progress_is_told_the_variants_the_worker_went_through(extra: str) -> None:
    variants = tuple(f"def step(n, down=False):\n    return n + {i}" for i in range(2, 40))
    plan = RecordPlan("extra", "step", ("step(1)", "step(2, True)"), variants)
    told: list[tuple[int, int]] = []
    [recording] = await record(
        [plan], [extra], progress=lambda index, done: told.append((index, done))
    )
    assert recording.variants == len(variants)
    assert told == sorted(told) and all(i == 0 for i, _ in told)
    assert told[-1] == (0, len(variants))


CLOCKED = textwrap.dedent("""
    import datetime
    import gzip
    import time
    from datetime import date


    def packed(data):
        return gzip.compress(data)


    def stamped(text):
        return f"{text} at {time.strftime('%Y-%m-%d %H:%M:%S')}"


    def due(days):
        return (date.today() + datetime.timedelta(days=days)).isoformat()


    def elapsed(start):
        return int(time.time()) - start > 0


    def tags(text):
        return list(set(text.split()))


    def shout(text):
        return " ".join({word.upper() for word in text.split()})


    def vocabulary(text):
        return sorted(set(text.split()))
""").lstrip()


async def test_a_call_whose_outcome_depends_on_the_clock_or_the_hash_seed_is_dropped(
    tmp_path: Path,
) -> None:
    """Two runs a moment apart in one process agree on a timestamp (gzip's header, a date)
    and on the order of a set of texts; a test of it would fail tomorrow or in another
    process. The checks' processes (another hash seed, the clock shifted) see them otherwise."""
    (tmp_path / "clocked.py").write_text(CLOCKED)
    text = "'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'"
    plans = [
        RecordPlan("clocked", "packed", ("packed(b'abc')", "packed(1)")),
        RecordPlan("clocked", "stamped", ("stamped('x')",)),
        RecordPlan("clocked", "due", ("due(1)",)),
        RecordPlan("clocked", "elapsed", ("elapsed(0)",)),
        RecordPlan("clocked", "tags", (f"tags({text})", "tags('one')")),
        RecordPlan("clocked", "shout", (f"shout({text})",)),
        RecordPlan("clocked", "vocabulary", (f"vocabulary({text})",)),
    ]
    packed, stamped, due, elapsed, tags, shout, vocabulary = await _record(str(tmp_path), *plans)
    # What does not depend on them stays: an exception, a value that is always the same.
    assert [o.call for o in packed.observations] == ["packed(1)"]
    assert [o.call for o in elapsed.observations] == ["elapsed(0)"]
    assert [(o.call, o.value) for o in tags.observations] == [("tags('one')", ["one"])]
    assert vocabulary.observations[0].value == sorted(text.strip("'").split())
    for recording in (packed, stamped, due, tags, shout):
        assert recording.dropped == {"unstable": 1}
    assert stamped.observations == due.observations == shout.observations == ()


WHERE = textwrap.dedent("""
    import ntpath
    import os


    def relative(path):
        return ntpath.relpath(path)


    def depth():
        return os.getcwd().count(os.sep)


    def joined(name):
        return os.path.join("data", name)
""").lstrip()


async def test_a_call_whose_outcome_depends_on_the_working_directory_is_dropped(
    tmp_path: Path,
) -> None:
    """``ntpath.relpath(path)`` is relative to the working directory: every process of the
    recording sat as deep as the others, so a test of it passed the checks and failed where
    pytest runs (the project's root). The checks sit deeper than the recording."""
    (tmp_path / "where.py").write_text(WHERE)
    plans = [
        RecordPlan("where", "relative", ("relative('/srv/app/x.py')",)),
        RecordPlan("where", "depth", ("depth()",)),
        RecordPlan("where", "joined", ("joined('x')",)),
    ]
    relative, depth, joined = await _record(str(tmp_path), *plans)
    assert relative.observations == depth.observations == ()
    assert relative.dropped == depth.dropped == {"unstable": 1}
    assert [(o.call, o.value) for o in joined.observations] == [("joined('x')", "data/x")]


def test_neighbours_take_an_argument_from_another_call_of_the_same_shape() -> None:
    from fastedit_lsp.project.record_search import neighbours, nudges

    found = neighbours(["f(1, 'a')", "f(2, 'b')", "g(3)", "f(x=1)"], 50)
    assert {"f(2, 'a')", "f(1, 'b')", "f(1, 'ab')", "f(2, 'ba')"} <= set(found)
    # Only calls of the same shape meet; none of the given calls comes back.
    assert not {"f(1, 'a')", "f(2, 'b')", "g(3)"} & set(found)
    # Only calls of the same shape meet: a call alone is only changed a little.
    assert {c for c in found if c.startswith(("g(", "f(x="))} <= {
        *(f"g({n!r})" for n in nudges(3)),
        *(f"f(x={n!r})" for n in nudges(1)),
    }
    assert found == neighbours(["f(1, 'a')", "f(2, 'b')", "g(3)", "f(x=1)"], 50)  # stable
    assert len(neighbours([f"f({i}, {i})" for i in range(30)], 7)) == 7


def test_nudges_are_values_a_little_away_of_the_same_kind() -> None:
    from fastedit_lsp.project.record_search import nudges

    assert nudges(1) == [2, 0, -1, 0.5, 1 / 3]
    assert {"a", "b", "abab", "AB", " ab", "ab1", "ab " * 33 + "ab", "ab\nab", "  ab"} | {
        "abé",
        "e\u0301ab",
    } == set(nudges("ab"))
    assert {"  a\n  b", "a\n\t b"} <= set(nudges("a\nb"))  # lines indented
    # A number in a text is changed as a number.
    assert {"v11", "v9", "v100", "v10.5", "v-10"} <= set(nudges("v10"))
    # A list: reversed, shorter, longer; an item changed a little; neighbours swapped.
    assert nudges([1, 2])[:4] == [[2, 1], [2], [1], [1, 2, 1]]
    assert all(n in nudges([1, 2]) for n in ([0, 2], [-1, 2], [0.5, 2], [1, 3]))
    assert ["b", "a", "c"] in nudges(["a", "b", "c"])
    assert nudges(True) == [False] and nudges(None) == [] and nudges(float("inf")) == []


async def test_the_search_finds_a_value_a_little_away_from_the_planned_ones(extra: str) -> None:
    """No planned call reaches the function's middle branch; half of one does, and a call
    found is searched around in turn."""
    (Path(extra) / "sixth.py").write_text(
        "def sixth(h):\n    i = int(h * 6)\n    if i == 3:\n        return 1\n"
        "    if i == 1:\n        return 2\n    return 0\n"
    )
    plan = RecordPlan(
        "sixth",
        "sixth",
        ("sixth(1)", "sixth(0)"),
        (
            "def sixth(h):\n    i = int(h * 6)\n    if i == 3:\n        return 5\n"
            "    if i == 1:\n        return 2\n    return 0",
            "def sixth(h):\n    i = int(h * 6)\n    if i == 3:\n        return 1\n"
            "    if i == 1:\n        return 5\n    return 0",
        ),
    )
    [recording] = await _record(extra, plan)
    found = {o.call: o for o in recording.observations if o.kills}
    assert [(o.value, o.kills) for o in found.values()] == [(1, {0}), (2, {1})]
    # 0.5 is half of 1 (round one); 0.25, half of 0.5, is found around the call found.
    first, second = found
    assert first == "sixth(0.5)"
    assert second in {f"sixth({n!r})" for n in (0.25, 0.5 / 3)}


async def test_the_search_finds_a_call_that_tells_apart_a_variant_no_planned_call_did(
    extra: str,
) -> None:
    (Path(extra) / "gate.py").write_text(
        "def both(a, b):\n    if a > 5 and b > 5:\n        return 1\n    return 0\n"
    )
    plan = RecordPlan(
        "gate",
        "both",
        ("both(9, 0)", "both(0, 9)"),
        ("def both(a, b):\n    if a > 5 and b > 5:\n        return 2\n    return 0",),
    )
    [recording] = await _record(extra, plan)
    by_call = {o.call: o for o in recording.observations}
    assert by_call["both(9, 0)"].kills == frozenset() == by_call["both(0, 9)"].kills
    assert by_call["both(9, 9)"].value == 1 and by_call["both(9, 9)"].kills == {0}


def test_retyped_calls_pass_an_argument_as_a_value_of_another_type_that_holds_the_same() -> None:
    from fastedit_lsp.project.record_search import retyped, retypes

    found = retyped(["f('ab', [1])", "g(b'x', k=2)"], 20)
    assert {"f(b'ab', [1])", "f('ab', (1,))", "g('x', k=2)", "g(b'x', k=2.0)"} <= set(found)
    assert "f('ab', [1])" not in found and len(retyped(["f('ab', [1])"] * 3, 1)) == 1
    assert retypes("é") == ["é".encode()] and retypes(2.5) == ["2.5"] and retypes(3.0) == [3]
    assert retypes(True) == retypes(None) == [] and retypes(b"a") == ["a", bytearray(b"a")]


def test_around_a_call_are_its_nudges_and_the_arguments_of_calls_of_its_shape() -> None:
    from fastedit_lsp.project.record_search import around, nudges

    found = around("f(b'ab', 1)", ["f('x', 2)", "g(3)"], 100)
    assert {"f('x', 1)", "f(b'ab', 2)"} <= set(found)
    assert {f"f({n!r}, 1)" for n in nudges(b"ab")} <= set(found)
    assert not any(c.startswith("g(") for c in found) and "f(b'ab', 1)" not in found
    assert found == around("f(b'ab', 1)", ["f('x', 2)", "g(3)"], 100)  # stable
    assert len(around("f(b'ab', 1)", [], 3)) == 3


def test_lines_are_the_lines_of_the_function_and_its_lambdas_a_call_runs() -> None:
    from fastedit_lsp.project.record_coverage import Lines

    namespace: dict[str, object] = {}
    exec(
        "def pick(n):\n"  # line 1
        "    if n > 1:\n"
        "        return sorted([n, 1], key=lambda v: -v)\n"
        "    return [n]\n",
        namespace,
    )
    pick = namespace["pick"]
    assert isinstance(pick, types.FunctionType)
    lines = Lines(pick)
    value, reached = lines.run(pick, 0)
    assert value == [0] and {line for _, line in reached} == {2, 4}
    value, reached = lines.run(pick, 2)
    assert value == [2, 1] and {line for _, line in reached} == {2, 3}
    assert len({code for code, _ in reached}) == 2  # the function's code and the lambda's
    assert sys.gettrace() is None  # the tracer is taken off


async def test_the_search_passes_an_argument_as_another_type_and_searches_around_new_lines(
    extra: str,
) -> None:
    """The planned calls pass text. Passing it as bytes reaches the bytes branch but tells
    no variant apart (it is not kept); a call changed a little around it, the first call
    that ran those lines, reaches the inner branch, where the variant is."""
    (Path(extra) / "level.py").write_text(
        "def level(s):\n    if isinstance(s, bytes):\n        if len(s) > 2:\n"
        "            return 2\n        return 1\n    return 0\n"
    )
    plan = RecordPlan(
        "level",
        "level",
        ('level("ab")',),
        (
            "def level(s):\n    if isinstance(s, bytes):\n        if len(s) > 2:\n"
            "            return 3\n        return 1\n    return 0",
        ),
    )
    [recording] = await _record(extra, plan)
    found = [(o.call, o.value, o.kills) for o in recording.observations if o.kills]
    assert [(v, k) for _, v, k in found] == [(2, {0})]
    assert found[0][0].startswith("level(b'") and "level(b'ab')" not in {
        o.call for o in recording.observations
    }


def test_infused_calls_pass_the_texts_and_numbers_the_function_holds() -> None:
    from fastedit_lsp.project.record_search import alternated, held, infused

    def cut(text: str, width: int = 3, sep: str = "/") -> str:
        """Cut."""
        if width > 12 and "::" in text:
            return (lambda: "x")()
        return text

    assert held(cut) == [12, "::", "x", "/"]  # not the docstring; the default text
    found = infused(["cut('ab', 5)"], held(cut), 100)
    assert {"cut('a::b', 5)", "cut('::ab', 5)", "cut('ab/', 5)", "cut('x', 5)"} <= set(found)
    assert {"cut('ab', 11)", "cut('ab', 12)", "cut('ab', 13)"} <= set(found)
    assert "cut('ab', 5)" not in found and found == infused(["cut('ab', 5)"], held(cut), 100)
    assert len(infused(["cut('ab', 5)"], held(cut), 4)) == 4
    # Bytes the function holds go inside a bytes argument (texts only inside texts).
    assert set(infused(["f(b'ab')"], [b"::", "/"], 10)) == {
        "f(b'::')",
        "f(b'::ab')",
        "f(b'a::b')",
        "f(b'ab::')",
    }
    assert alternated(["a", "b", "c"], ["d"], ["b", "e"]) == ["a", "d", "b", "e", "c"]


async def test_the_search_passes_a_text_the_function_holds_inside_a_planned_text(
    extra: str,
) -> None:
    """No nudge of the planned text holds the separator (a default value) the function looks
    for; the search puts it inside."""
    (Path(extra) / "parent.py").write_text(
        "def parent(path, sep='/'):\n    if sep in path:\n"
        "        return path.rsplit(sep, 1)[0]\n    return ''\n"
    )
    plan = RecordPlan(
        "parent",
        "parent",
        ('parent("ab")',),
        (
            "def parent(path, sep='/'):\n    if sep in path:\n"
            "        return path.rsplit(sep, 1)[1]\n    return ''",
        ),
    )
    [recording] = await _record(extra, plan)
    found = [(o.call, o.value) for o in recording.observations if o.kills]
    assert found and all("/" in call and value for call, value in found)


async def test_a_cancelled_recording_followed_for_its_progress_leaves_no_process(
    tmp_path: Path,
) -> None:
    """The job is cancelled while the recorder follows the worker's progress: the worker and
    the child running the user's code are killed, not left to their time limits."""
    pid_file = tmp_path / "pid.txt"
    (tmp_path / "hang.py").write_text(
        "import os\nimport time\n\n\ndef f(n):\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(0.5)\n    return n\n"
    )
    plan = RecordPlan("hang", "f", tuple(f"f({i})" for i in range(50)))
    task = asyncio.ensure_future(record([plan], [str(tmp_path)], progress=lambda i, k: None))
    # The user's code runs (and has written its pid: the file exists, empty, before that).
    while not (pid_file.exists() and pid_file.read_text()):
        await asyncio.wait([task], timeout=0.05)
        assert not task.done()
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(200):  # gone at once, or the worker's limits would take seconds
        if not _runs(pid):
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail(f"process {pid} still runs")


def _runs(pid: int) -> bool:
    """The process exists and is not a zombie (killed, not yet reaped by whoever adopted it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return not Path("/proc").is_dir()  # gone meanwhile (or no /proc: it exists)
    return state not in ("Z", "X")


async def test_a_huge_result_is_left_out_not_written_into_the_answer(tmp_path: Path) -> None:
    """A text of millions of characters (or an int Python will not write) is no test's
    expected value; written whole into the answer it would exhaust the worker's memory and
    lose the function's other observations."""
    (tmp_path / "big.py").write_text("def big(n):\n    return 'x' * n if n > 0 else 10 ** -n\n")
    calls = ("big(1)", "big(30000000)", "big(-50000)", "big(-2)")
    [recording] = await _record(str(tmp_path), RecordPlan("big", "big", calls))
    assert [(o.call, o.value) for o in recording.observations] == [
        ("big(1)", "x"),
        ("big(-2)", 100),
    ]
    assert recording.dropped == {"unrenderable": 2}


async def test_a_found_call_a_cache_may_answer_from_another_calls_entry_is_left_out(
    extra: str,
) -> None:
    """``at(1.0, "abc")`` raises alone (a float index), but after another test called
    ``at(1, "abc")`` it finds that call's entry in the function's ``lru_cache`` (``1.0 == 1``)
    and returns: its test would fail there. The search leaves it out."""
    (Path(extra) / "cached.py").write_text(
        "import functools\n\n\n@functools.lru_cache\ndef at(i, text):\n    return text[i]\n"
    )
    plan = RecordPlan(
        "cached",
        "at",
        ('at(2, "abc")', 'at(3, "abc")'),
        # Told apart by an index that is a whole float only.
        ("def at(i, text):\n    return text[int(i) if i == int(i) else i]",),
    )
    [recording] = await _record(extra, plan)
    by_call = {o.call: o for o in recording.observations}
    assert by_call['at(2, "abc")'].value == "c"
    assert recording.variants == 1
    assert not [c for c in by_call if ".0," in c], by_call


def test_a_cache_may_answer_a_call_with_a_whole_float_or_a_boolean() -> None:
    from fastedit_lsp.project.record_caches import cache_may_answer

    assert cache_may_answer("f(1.0)") and cache_may_answer("f([1, True])")
    assert cache_may_answer("f(x=(2.0,))")
    assert not cache_may_answer("f(1, 0.5, 'a', None)") and not cache_may_answer("f(")
