"""regex_synth.py and regex_worker.py: reading examples, synthesising, checking, naming, and
running synthesis in a killable process."""

from __future__ import annotations

import asyncio
import multiprocessing
import re
from pathlib import Path

import pytest

from fastedit_lsp.engines.regex.synth import (
    MAX_EXAMPLE_CHARS,
    MAX_EXAMPLES,
    RegexExamples,
    SynthesisError,
    name_for,
    parse_examples,
    string_literals,
    synthesize,
    verify,
)
from fastedit_lsp.engines.regex.worker import synthesize_async

ISO_POSITIVES = ["2024-01-31", "1999-12-01"]
ISO_NEGATIVES = ["2024-1-31"]


def classifies(pattern: str, positives: list[str], negatives: list[str]) -> bool:
    return all(re.fullmatch(pattern, p) for p in positives) and not any(
        re.fullmatch(pattern, n) for n in negatives
    )


# --- parse_examples ----------------------------------------------------------------------------


def test_design_md_block_is_read_with_description_positives_and_negatives() -> None:
    block = [
        "# regex: ISO date",
        "#   match: 2024-01-31",
        "#   match: 1999-12-01",
        "#   reject: 2024-1-31",
    ]
    assert parse_examples(block) == RegexExamples(
        "ISO date", ("2024-01-31", "1999-12-01"), ("2024-1-31",)
    )


def test_example_is_verbatim_after_the_one_space_following_the_colon() -> None:
    found = parse_examples(
        [
            "# match:   two leading spaces kept",
            "# match: trailing spaces kept  ",
            "# match:no space at all",
            "# reject: a # inside is text",
        ]
    )
    assert found is not None
    assert found.positives == (
        "  two leading spaces kept",
        "trailing spaces kept  ",
        "no space at all",
    )
    assert found.negatives == ("a # inside is text",)


def test_empty_example_is_the_empty_string() -> None:
    found = parse_examples(["# match: x", "# reject:", "# reject: "])
    assert found is not None
    assert found.negatives == ("", "")


def test_indented_lines_and_line_endings() -> None:
    found = parse_examples(["    # match: a\r\n", "\t#\tmatch: b\n"])
    assert found is not None
    assert found.positives == ("a", "b")


@pytest.mark.parametrize("comment", ["//", "--", ";", "%"])
def test_other_comment_prefixes(comment: str) -> None:
    block = [f"{comment} regex: hex colour", f"  {comment} match: #fff", f"{comment} reject: fff"]
    assert parse_examples(block, comment) == RegexExamples("hex colour", ("#fff",), ("fff",))


def test_repeated_comment_marker_counts_as_one() -> None:
    assert parse_examples([";; match: x", "/// reject: y"], ";") == RegexExamples(None, ("x",), ())
    assert parse_examples(["/// reject: y"], "//") == RegexExamples(None, (), ("y",))


def test_other_lines_are_ignored() -> None:
    block = [
        "x = 1  # match: not a comment line",
        "# a plain comment",
        "# matches: not the keyword",
        "// match: another language",
        "# match: kept",
    ]
    assert parse_examples(block) == RegexExamples(None, ("kept",), ())


def test_no_example_lines_is_none() -> None:
    assert parse_examples(["# regex: ISO date", "# just prose"]) is None
    assert parse_examples([]) is None


# --- string_literals ---------------------------------------------------------------------------


def test_string_literals_of_a_selection_in_order() -> None:
    source = 'dates = ["2024-01-31", \'1999-12-01\']\nother = """multi\nline"""\n'
    assert string_literals(source) == ("2024-01-31", "1999-12-01", "multi\nline")


def test_string_literals_skip_bytes_and_fstrings_and_join_adjacent_ones() -> None:
    source = 'a = b"raw", f"{x}-y", "joined" "together", r"\\d", "x"\n'
    assert string_literals(source) == ("joinedtogether", "\\d", "x")


def test_string_literals_of_an_indented_or_broken_selection() -> None:
    assert string_literals('    "a",\n    "b",\n') == ("a", "b")
    assert string_literals('"a", "b", foo(') == ("a", "b")


def test_string_literals_never_evaluate_code() -> None:
    assert string_literals('__import__("os").system("exit 1")') == ("os", "exit 1")


# --- synthesize --------------------------------------------------------------------------------


def test_design_md_iso_date_generalises() -> None:
    pattern = synthesize(ISO_POSITIVES, ISO_NEGATIVES)
    assert classifies(pattern, ISO_POSITIVES, ISO_NEGATIVES)
    assert re.fullmatch(pattern, "2031-07-15")
    assert not re.fullmatch(pattern, "2031/07/15")
    assert pattern == r"\d{4}-\d{2}-\d{2}"


@pytest.mark.parametrize(
    ("positives", "negatives", "also_matches", "also_rejects"),
    [
        (["foo_bar", "snake_case_name", "x"], ["FooBar", "foo__bar", "_foo"], ["a_b_c"], ["foo_"]),
        (["1.0.0", "2.10.3", "0.1.12"], ["1.0", "v1.0.0"], ["10.20.30"], ["1.2.3.4"]),
        (["camelCase", "getHttpResponse", "x"], ["CamelCase", "snake_case"], ["toString"], ["Foo"]),
        (
            ["12345", "90210", "12345-6789"],
            ["1234", "123456", "12345-678"],
            ["00501-0001"],
            ["1-2"],
        ),
        (["# Title", "## Section two"], ["#Title", "####### Too deep"], ["###### Six"], ["#"]),
        (["3.14", "-0.5", "42"], ["3.", ".5", "1.2.3"], ["-273.15", "-8"], ["--1", "1..2"]),
    ],
)
def test_generalises_where_the_negatives_allow(
    positives: list[str], negatives: list[str], also_matches: list[str], also_rejects: list[str]
) -> None:
    pattern = synthesize(positives, negatives)
    assert classifies(pattern, positives + also_matches, negatives + also_rejects), pattern


def test_generalises_runs_into_classes_not_lists() -> None:
    pattern = synthesize(["abc-123", "xyz-9"])
    assert pattern == r"[A-Za-z0-9_]+-\d+" or pattern == r"\w+-\d+"
    assert re.fullmatch(pattern, "hello-2024")


def test_a_negative_forces_only_what_it_must() -> None:
    # Without a negative, letters generalise to the word class; "us-east-1" vs "US-EAST-1"
    # forces lowercase, nothing more.
    assert re.fullmatch(synthesize(["us-east-1", "eu-west-2"]), "US-EAST-1")
    pattern = synthesize(["us-east-1", "eu-west-2"], ["US-EAST-1"])
    assert not re.fullmatch(pattern, "US-EAST-1")
    assert re.fullmatch(pattern, "ap-southeast-1")


# What users mean by common formats, applied without a negative asking for it (the examples
# here are not the corpus's).
@pytest.mark.parametrize(
    ("positives", "negatives", "also_matches", "also_rejects"),
    [
        # Numbers joined by "." that reach three digits are bounded there (octets).
        (
            ["10.1.20.255", "172.16.0.1", "8.8.4.4"],
            ["10.1.20"],
            ["1.2.3.4", "255.255.255.0"],
            ["1000.1.1.1", "10.1.1234.1"],
        ),
        # A number beside one of an established width is bounded by the widths seen (hours).
        (["7:45", "10:05", "12:30"], ["7.45"], ["1:00", "23:59"], ["100:00", "7:5"]),
        (["3/4/2021", "12/10/1999", "1/11/2000"], ["3-4-2021"], ["31/12/2023"], ["123/4/2021"]),
        # Without such evidence numbers stay unbounded: versions, durations.
        (["1.2.3", "10.0.1", "0.9.12"], ["1.2"], ["100.200.300"], ["1.2.3.4"]),
        # Letters right after a number are units, the ones seen (not "s" for hours and minutes).
        (["3h20m", "50m", "4h", "12h7m"], ["2.5h", "m", "45"], ["200h5m", "9m"], ["20s", "3m4h"]),
        (["12px", "0.5em", "3rem"], ["px", "1.5"], ["1.25rem", "16px"], ["12pt", "12 px"]),
        # The parts of dotted names may hold "-" (host names).
        (
            ["ann@site.com", "b.c@mail.org", "x@y.example.net"],
            ["ann@site"],
            ["dev@my-host.io", "first-last@a.b-c.de"],
            ["ann@@site.com", "ann@-site.com"],
        ),
        # The value of an assignment is text.
        (
            ["host=db1", "retries=3", "mode=fast"],
            ["host = db1"],
            ["root=/var/lib", "url=http://x.org/?a"],
            ["host=", "host=a b", "=x"],
        ),
        # Capitals throughout, with no negative about case: lowercase is rejected, field by field.
        (["10:15 PM", "9:05 AM", "11:40 AM"], ["10:15"], ["1:00 PM"], ["10:15 pm", "10:15 Pm"]),
        (["AA:BB", "CC:DD"], [], ["XY:ZW"], ["aa:BB", "AA:bb"]),
    ],
)
def test_conventions_of_common_formats(
    positives: list[str], negatives: list[str], also_matches: list[str], also_rejects: list[str]
) -> None:
    pattern = synthesize(positives, negatives)
    assert classifies(pattern, positives + also_matches, negatives + also_rejects), pattern


def test_a_negative_still_overrides_a_convention() -> None:
    for positives in (["a.b", "cc.dd"], ["a.b.c", "dd.ee", "f.g"]):
        assert re.fullmatch(synthesize(positives), "a-b.c")
        assert not re.fullmatch(synthesize(positives, ["x-y.z"]), "a-b.c")
    emails = ["ann@site.com", "b.c@mail.org", "x@y.example.net"]
    pattern = synthesize(emails, ["ann@site", "ann@my-site.com"])
    assert not re.fullmatch(pattern, "bob@test-server.com")


def test_case_is_only_implied_by_capitals_throughout() -> None:
    # Lowercase or mixed-case examples imply nothing about case; hex digits neither.
    assert re.fullmatch(synthesize(["alpha-1", "beta-2"]), "Gamma-3")
    assert re.fullmatch(synthesize(["GET /a", "PUT /b"]), "get /c")
    assert re.fullmatch(synthesize(["0xFF", "0x1A"]), "0xff")
    assert re.fullmatch(synthesize(["DE:AD:BE", "01:23:4F"]), "de:ad:be")


def test_many_different_letters_after_numbers_are_not_units() -> None:
    positives = [f"{n}{word}" for n, word in enumerate(["ab", "cd", "ef", "gh", "ij", "kl"] * 2)]
    positives += ["7mn", "8op", "9qr"]
    assert re.fullmatch(synthesize(positives, ["ab", "12"]), "5zz")


def test_positives_with_no_shared_structure_fall_back_to_an_exact_pattern() -> None:
    positives = ["a1!", "??", "zz top"]
    negatives = ["a2!", "?", "zz  top", "b1!"]
    pattern = synthesize(positives, negatives)
    assert classifies(pattern, positives, negatives)


def test_special_characters_are_escaped() -> None:
    positives = ["a.b", "c.d", "(x)", "[y]", "$1^2", "a|b", "\\n"]
    pattern = synthesize(positives, ["a-b", "ab"])
    assert classifies(pattern, positives, ["a-b", "ab"])


def test_one_positive_and_duplicates() -> None:
    pattern = synthesize(["hello", "hello"], ["world!"])
    assert classifies(pattern, ["hello"], ["world!"])


def test_empty_string_can_be_a_positive_or_a_negative() -> None:
    assert classifies(synthesize(["", "ab"], ["a b"]), ["", "ab"], ["a b"])
    assert classifies(synthesize(["a", "bb"], [""]), ["a", "bb"], [""])


def test_a_string_both_positive_and_negative_is_impossible() -> None:
    with pytest.raises(SynthesisError, match=r"'2024-01-31' is both a 'match:' and a 'reject:'"):
        synthesize(["2024-01-31"], ["2024-01-31"])


def test_no_positive_is_an_error() -> None:
    with pytest.raises(SynthesisError, match="no positive example"):
        synthesize([], ["x"])


def test_bounds() -> None:
    assert issubclass(SynthesisError, ValueError)
    synthesize(["a" * MAX_EXAMPLE_CHARS])
    with pytest.raises(SynthesisError, match=f"at most {MAX_EXAMPLE_CHARS}"):
        synthesize(["a" * (MAX_EXAMPLE_CHARS + 1)])
    with pytest.raises(SynthesisError, match=f"at most {MAX_EXAMPLES}"):
        synthesize([str(i) for i in range(MAX_EXAMPLES)], ["x"])


def test_largest_input_still_gives_a_correct_pattern() -> None:
    positives = [f"item-{i:03d}" for i in range(150)]
    negatives = [f"item-{i}" for i in range(1, 51) if f"item-{i}" not in positives]
    pattern = synthesize(positives, negatives)
    assert classifies(pattern, positives, negatives)


# --- verify ------------------------------------------------------------------------------------


def test_verify_counts_what_was_checked() -> None:
    assert verify(r"\d{4}-\d{2}-\d{2}", ISO_POSITIVES, ISO_NEGATIVES) == (
        True,
        "2/2 positives match, 1/1 negatives rejected",
    )


def test_verify_names_the_first_failures() -> None:
    ok, details = verify(r"\d+", ["1", "a", "b", "c", "d"], ["2", "x"])
    assert not ok
    assert details == (
        "1/5 positives match (not: 'a', 'b', 'c' and 1 more), 1/2 negatives rejected (matched: '2')"
    )


def test_verify_reports_a_pattern_that_does_not_compile() -> None:
    ok, details = verify("(", ["a"], [])
    assert not ok
    assert details.startswith("the pattern does not compile")


# --- name_for ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "name"),
    [
        ("ISO date", "ISO_DATE"),
        ("an email address", "EMAIL_ADDRESS"),
        ("24-hour time HH:MM", "RE_24_HOUR_TIME_HH_MM"),
        ("Datum für Verträge", "DATUM_FUR_VERTRAGE"),
        ("  snake_case   identifier ", "SNAKE_CASE_IDENTIFIER"),
        (None, "PATTERN"),
        ("", "PATTERN"),
        ("—!?", "PATTERN"),
        ("日本語", "PATTERN"),
    ],
)
def test_name_for(description: str | None, name: str) -> None:
    assert name_for(description) == name
    assert name.isidentifier()


def test_name_for_a_long_description_stays_short() -> None:
    name = name_for("a very long description of the pattern that goes on and on and on")
    assert name.isidentifier()
    assert len(name) <= 40


# --- synthesize_async --------------------------------------------------------------------------


def worker_gone(pid: int) -> bool:
    """The worker is no process at all any more (not even a zombie)."""
    if multiprocessing.active_children():
        return False
    return not Path("/proc").is_dir() or not Path(f"/proc/{pid}").exists()


async def test_worker_returns_what_synthesize_returns() -> None:
    pids: list[int] = []
    cases = [(ISO_POSITIVES, ISO_NEGATIVES), (["foo_bar", "x"], ["FooBar"]), (["a"], [])]
    for positives, negatives in cases:
        got = await synthesize_async(positives, negatives, _on_start=pids.append)
        assert got == synthesize(positives, negatives)
    assert len(set(pids)) == len(cases)  # a fresh process each time
    assert all(worker_gone(pid) for pid in pids)


async def test_worker_reports_synthesis_errors() -> None:
    with pytest.raises(SynthesisError, match="both a 'match:' and a 'reject:'"):
        await synthesize_async(["x"], ["x"])
    with pytest.raises(SynthesisError, match="too many examples"):
        await synthesize_async(["x"] * (MAX_EXAMPLES + 1), [])
    assert not multiprocessing.active_children()


async def test_hung_synthesis_is_killed_at_the_time_limit() -> None:
    pids: list[int] = []
    with pytest.raises(TimeoutError, match="stopped"):
        await synthesize_async(["a"], [], timeout=0.5, _debug_sleep=3600, _on_start=pids.append)
    assert len(pids) == 1
    assert worker_gone(pids[0])


async def test_event_loop_runs_while_synthesis_does_and_cancel_kills_the_worker() -> None:
    started = asyncio.Event()
    pids: list[int] = []

    def on_start(pid: int) -> None:
        pids.append(pid)
        started.set()

    job = asyncio.create_task(
        synthesize_async(["a"], [], timeout=3600, _debug_sleep=3600, _on_start=on_start)
    )
    await started.wait()  # the loop kept running while the process started
    for _ in range(10):
        await asyncio.sleep(0)
    assert not job.done()
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    assert worker_gone(pids[0])


async def test_concurrent_requests_each_get_their_answer() -> None:
    requests = [([f"{n}-a", f"{n}{n}-bb"], [f"{n}a"]) for n in range(4)]
    answers = await asyncio.gather(*(synthesize_async(p, n) for p, n in requests))
    for (positives, negatives), pattern in zip(requests, answers, strict=True):
        assert classifies(pattern, positives, negatives)
    assert not multiprocessing.active_children()
