"""Generated tests on third-party code: they pass on it, and they catch bugs planted in it.

Two corpora, read where ``pip install -e '.[test]'`` installed them (never copied here):

- **Held out**: every top-level function of ``natsort.natsort`` and ``natsort.utils`` (natsort
  8.4.0) and of ``ftfy.fixes`` and ``ftfy.formatting`` (ftfy 6.3.1), 56 functions. Both are
  maintained, pure Python, and keep their doctests right (their own CI runs them); natsort is
  type-hinted and works on keys and iterables, ftfy on text. They were chosen, and the generator
  of the time measured on them, before the generator changes that followed; nobody tuned on them
  since. Issue 15's floors are meant for this corpus: 98 % of functions' tests pass on the
  unchanged code (enforced), and a mutation score of 75 % (met with ``tests.run``: 75.1 %
  blind recorded; 38.7 % blind static; the floors asserted here are guards against falling
  below those, not the goal).
- **Held out, 2026-12** (issue 28): every top-level function of ``idna.core``, ``rsa.common``,
  ``rsa.transform``, ``pyparsing.util``, ``jsonpointer``, ``urllib3.util.url``,
  ``charset_normalizer.utils`` and ``dateutil.easter``, 83 functions of packages installed on the
  machine, chosen before the changes they measure and sharing no package with any tuning. Blind,
  main (3ffc4ab) and the testgen branch: static 83/83 pass (100 %), mutation score 38.4 % / 38.5 %;
  with ``tests.run`` 83/83 pass, 70.2 % / 70.1 % (432 and 431 of 615 mutants: the recorder's
  search under load). Then 70.7 % (435/615, 83/83 pass; one run, load 7): sequences of the
  size a parameter is taken apart into, and bytes made of the bytes a function holds, both
  tuned on standard library modules only; the plans of 3 held-out functions changed, and those
  kill 26 of their 35 mutants instead of 22. Then 71.2 %, 70.9 %, 70.6 % (438, 436 and 434
  of 615; 83/83 pass; three runs at load 7 to 9): functions that fill a module-level table on
  their first call (``global`` set under ``is None``, an item stored under ``not in``) are
  planned, texts the function's pieces wrap (``"a"``, ``<a>``) tried, the search starts from
  the calls that told the most variants apart, leaves out calls a cache may answer from
  another call's entry (a whole float, a boolean: one such found call's test had failed on
  the unchanged code), and a call costs half; tuned on standard library modules, humanize,
  inflection and boltons only (a stdlib set 55.7 -> 66.3 %). Issue 28's pass goals
  (98 % / 99 %) are met; its 75 % mutation goal is not. Then 71.4 % (439/615, 83/83 pass;
  main the same minute: 438/615, 71.2 %; one blind run each, load 2): a warning a call emits
  asserted with ``pytest.warns`` (its category, its whole message), variants inside the
  functions and lambdas a function defines, texts of three of the body's pieces in turn
  (``"1 2-3/4"``) for a function that takes text apart; tuned on standard library modules and
  packaging, pygments, werkzeug, xmltodict, decorator, six, quopri, base64 (two tuning sets
  943 -> 969 of 1,253 and 642 -> 653 of 960; a third set measured only, 390 -> 395 of 632):
  nearly all the survivors left there are variants no call tells apart (no planned or found
  call reaches the line, or an equivalent one), not a cap on the recorded tests. Then 72.0 %
  (443/615, 83/83 pass; main 439/615 the same minutes; one blind run each, load 3.4-3.9;
  recording 33.3 -> 40.0 s): the search is coverage-guided (the lines of the function a call
  runs, by ``sys.settrace``; calls around one that ran new lines are tried first) and tries an
  argument as another type (a text as bytes, a list as a tuple) and with the texts, bytes and
  numbers the function holds put in or in place; tuned on standard library modules, jinja2,
  click, parso, requests, dotenv (two sets 969 -> 983-990 of 1,253 and 587 -> 601 of 984; a
  third measured only, 395 -> 398 of 632).
- **Tuned**: ``pydash.strings`` (pydash 8.1.0) and ``toolz.itertoolz``/``toolz.dicttoolz``
  (toolz 1.2.0), the earlier held-out set. Rules were chosen by reading which of their mutants
  survived, so their score says what the rules do, not how the generator does on unseen code;
  both floors guard those rules.

Each corpus is measured in two modes. **Static**: the offline generator as it runs by default,
never running the package. **Recorded**: as with ``tests.run`` on, the recorder
(``project.recorder``: the functions and their one-change variants run in a subprocess) first
records what each function does on the generator's candidate calls, and the generator adds a few
``test_<name>_recorded_<n>`` tests whose outcomes tell the function apart from the most
variants. On the held-out corpus the recorded mode reaches a mutation score of 75.1 % measured
blind, and 56 of 56 functions' tests pass (the recorder was tuned on humanize, inflection,
boltons, more_itertools, pydash, toolz, titlecase, python-slugify, webcolors, wcwidth,
packaging, pygments, text_unidecode, docstring_to_markdown and stdlib modules only; 38.7 %
static): issue 15's 75 % is met, by a hair; 73 % is asserted as a guard, with the 98 % pass
floor. Tuned corpus, recorded: 95.4 % (93 % guarded).

The held-out recorded figure's history, each one measured blind with this test (the generator
tuned in between on the tuning modules only, never on which held-out mutants survived): 64.9 %
(the first recorder); 68.5 % (a plan of more varied calls, values of other shapes by hint,
texts the function's module-level regexes and tables give, exception messages matched whole,
views of values with no literal form: 200 calls, 80 variants, 8 recorded tests at most); 70.5 %
(a kill-guided search for the variants no planned call told apart, probes of the functions a
function makes, texts from the functions it calls). The next round, three tries: 70.5 % (calls
checked again in other processes, with the clock shifted and another hash seed; a search that
also nudges one argument and goes on around the calls it found); 71.8 % (variants of default
values; numbers inside texts and items of lists nudged); 74.1 % (a pattern's ``sub`` callbacks
called with matches of it, nudges inside built arguments, bytes beyond ASCII, texts of the
function's own body, nudges with lines and accents). The round after, 75.1 % four times
(members of the enumeration a parameter takes, ``alg=ns.DEFAULT``: each, and two flags
together; the bounds a constant expression gives, ``1 << 16``; infinities and NaN; then a
docstring example the function does otherwise written as it ran, which made the 56th
function's tests pass, and calls that read the standard input left out: 229 of 305 mutants
each time; tried and not kept, for no gain on the tuning modules or held out: more texts of
Unicode, a wider search, more recorded tests per function, more probes of returned functions,
more functions for called parameters). Scoring run 4.0 s, recording 10.0 s.

The generator is otherwise tuned with ``python tests/tools/mutation.py humanize.number inflection
boltons.strutils more_itertools.recipes more_itertools.more`` (any installed module;
``RECORDED=1`` for the recorded mode).

``mutation.measure`` runs, in a subprocess with a time limit, each function's generated tests on
the unchanged code (Hypothesis derandomized, 100 examples), then on simple AST mutants of the
function (statement deletion, ``return None``, comparison and arithmetic operator swaps,
constant changes; at most 3 of each kind per function): a mutant is killed when a test that
passed on the unchanged code fails. The figures are printed, with the recording's time. The
issue's budget for the scoring run (90 s) is printed with its time, not asserted: the project
asserts no wall clock in tests; a hang guard far above it stops a runaway. The recorder's calls
are deterministic (the plan is; calls whose outcome changes between runs, or in another process
with another hash seed and the clock shifted, are dropped).
"""

from __future__ import annotations

import importlib.machinery
from dataclasses import dataclass

import pytest

from tests.tools.mutation import Report, cases, measure, recorded_cases


@dataclass(frozen=True)
class Corpus:
    name: str
    modules: tuple[str, ...]
    packages: frozenset[str]
    #: Share of functions whose generated tests all pass on the unchanged code.
    pass_floor: float
    #: Share of mutants the tests that pass on the unchanged code kill.
    mutation_floor: float
    min_functions: int
    min_mutants: int
    #: The same with recorded tests (``tests.run``: the recorder ran the functions).
    recorded_pass_floor: float = 0.98
    recorded_mutation_floor: float = 0.0


HELD_OUT = Corpus(
    "held-out",
    ("natsort.natsort", "natsort.utils", "ftfy.fixes", "ftfy.formatting"),
    frozenset({"natsort", "ftfy"}),
    pass_floor=0.98,
    mutation_floor=0.35,  # a guard under the blind 38.7 %; issue 15's goal is 75 %
    min_functions=50,
    min_mutants=250,
    recorded_mutation_floor=0.73,  # a guard under the blind 75.1 % (under load, less search)
)
#: Issue 28's held-out set, chosen on 2026-12-06 before any change it measures (pure functions
#: of packages installed on the machine; none of the packages the generator was tuned on or
#: measured with before: natsort, ftfy, pydash, toolz, humanize, inflection, boltons,
#: more-itertools, nor the recorder's tuning modules), then measured blind, main and the branch.
HELD_OUT_2026_12 = Corpus(
    "held-out-2026-12",
    (
        "idna.core",
        "rsa.common",
        "rsa.transform",
        "pyparsing.util",
        "jsonpointer",
        "urllib3.util.url",
        "charset_normalizer.utils",
        "dateutil.easter",
    ),
    frozenset(
        {"idna", "rsa", "pyparsing", "jsonpointer", "urllib3", "charset_normalizer", "dateutil"}
    ),
    pass_floor=0.98,  # issue 28's goal (static): measured 83/83
    mutation_floor=0.35,  # a guard under the blind 38.5 % (main: 38.4 %)
    min_functions=80,
    min_mutants=600,
    recorded_pass_floor=0.99,  # issue 28's goal (tests.run): measured 83/83
    # A guard under the blind 70.6 to 71.2 % (434 to 438 of 615); issue 28's goal is 75 %: not
    # met on this set.
    recorded_mutation_floor=0.68,
)
#: What no held-out set may share with the generator's tuning (issue 28).
TUNING_PACKAGES = frozenset(
    {"natsort", "ftfy", "pydash", "toolz", "humanize", "inflection", "boltons", "more_itertools"}
)
TUNED = Corpus(
    "tuned",
    ("pydash.strings", "toolz.itertoolz", "toolz.dicttoolz"),
    frozenset({"pydash", "toolz"}),
    pass_floor=0.98,
    mutation_floor=0.75,
    min_functions=100,
    min_mutants=300,
    recorded_mutation_floor=0.93,  # a guard under 95.4 %
)
#: Issue 15's goals, printed beside each corpus' figures (issue 28: 99 % pass with tests.run).
GOAL_PASS, GOAL_MUTATION = 0.98, 0.75
GOAL_RECORDED_PASS = 0.99
#: The issue's budget for one scoring run (the subprocess running tests and mutants).
RUN_BUDGET_S = 90.0
# A hang guard for the subprocess, above the budget (a loaded machine is slower).
LIMIT_S = 600

_reports: dict[tuple[str, str], Report] = {}


@pytest.fixture(
    scope="module",
    params=[
        (HELD_OUT, "static"),
        (HELD_OUT, "recorded"),
        (HELD_OUT_2026_12, "static"),
        (HELD_OUT_2026_12, "recorded"),
        (TUNED, "static"),
        (TUNED, "recorded"),
    ],
    ids=lambda p: f"{p[0].name}-{p[1]}",
)
def corpus(request: pytest.FixtureRequest) -> tuple[Corpus, str, Report]:
    spec, mode = request.param
    if (spec.name, mode) not in _reports:
        missing = [
            m
            for m in spec.modules
            if importlib.machinery.PathFinder.find_spec(m.split(".")[0]) is None
        ]
        assert not missing, f"install the test extras (pip install -e '.[test]'): {missing}"
        recording = ""
        if mode == "recorded":
            generated, seconds = recorded_cases(list(spec.modules))
            recording = f"; recording {seconds:.1f} s"
        else:
            generated = cases(list(spec.modules))
        result = measure(generated, timeout=LIMIT_S)
        pass_floor, mutation_floor = floors(spec, mode)
        print(  # noqa: T201 (the corpus figures are the point of this test)
            "\n"
            + result.summary(f"{spec.name} {mode} test stubs (" + ", ".join(spec.modules) + ")")
            + f"\n  goals: pass {GOAL_RECORDED_PASS if mode == 'recorded' else GOAL_PASS:.0%}"
            f", mutation score {GOAL_MUTATION:.0%}"
            f" (guarded here: {pass_floor:.0%}, {mutation_floor:.0%}); scoring run "
            f"budget {RUN_BUDGET_S:.0f} s{recording}"
        )
        _reports[spec.name, mode] = result
    return spec, mode, _reports[spec.name, mode]


def test_the_2026_12_held_out_set_shares_nothing_with_the_tuning() -> None:
    assert not HELD_OUT_2026_12.packages & (TUNING_PACKAGES | HELD_OUT.packages | TUNED.packages)


def floors(spec: Corpus, mode: str) -> tuple[float, float]:
    if mode == "recorded":
        return spec.recorded_pass_floor, spec.recorded_mutation_floor
    return spec.pass_floor, spec.mutation_floor


def test_the_corpus_is_large_enough(corpus: tuple[Corpus, str, Report]) -> None:
    spec, _, report = corpus
    assert report.functions >= spec.min_functions
    assert {r["module"].split(".")[0] for r in report.results} == spec.packages
    assert report.mutants >= spec.min_mutants, "too few mutants to measure with"


def test_generated_tests_pass_on_the_code_they_characterise(
    corpus: tuple[Corpus, str, Report],
) -> None:
    spec, mode, report = corpus
    assert report.pass_rate >= floors(spec, mode)[0], report.summary(spec.name)


def test_generated_tests_kill_mutants_of_the_code(corpus: tuple[Corpus, str, Report]) -> None:
    spec, mode, report = corpus
    assert report.score >= floors(spec, mode)[1], report.summary(spec.name)


def test_recorded_tests_are_added_where_the_recorder_ran(
    corpus: tuple[Corpus, str, Report],
) -> None:
    _, mode, report = corpus
    if mode == "recorded":
        assert report.tests["recorded"] >= report.functions // 2
    else:
        assert report.tests["recorded"] == 0
