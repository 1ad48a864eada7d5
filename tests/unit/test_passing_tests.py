"""With ``tests.run``: the generated tests that fail on the current code are dropped before
they land (``pipeline.passing_tests``, ``write_tests.without_tests``), with a fake pytest."""

from __future__ import annotations

from fastedit_lsp.actions.write_tests import test_names as names_in
from fastedit_lsp.actions.write_tests import without_tests
from fastedit_lsp.core.jobs import TestModule
from fastedit_lsp.pipeline.passing_tests import UNRUN, keep_passing

GENERATED = """

import math

import pytest

from mod import f


def test_f_example_1() -> None:
    assert f(1) == 2


@pytest.mark.slow
def test_f_returns_1() -> None:
    assert math.isfinite(f(2))


def test_f_raises_value_error() -> None:
    with pytest.raises(ValueError):
        f(-1)
"""


def test_without_tests_drops_the_named_functions_and_the_imports_only_they_used() -> None:
    kept = without_tests(GENERATED, {"test_f_returns_1"})
    assert names_in(kept) == ["test_f_example_1", "test_f_raises_value_error"]
    assert "import math" not in kept  # only the dropped test used it
    assert "import pytest" in kept
    assert "@pytest.mark.slow" not in kept
    assert kept.startswith("\n\nimport pytest\n") or "\nimport pytest\n" in kept
    compile(kept, "kept", "exec")


def test_without_tests_is_empty_when_no_test_is_left() -> None:
    assert without_tests(GENERATED, set(names_in(GENERATED))) == ""


class FakePytest:
    """The host's ``run_tests``: outcomes by name, as a real run would report them."""

    def __init__(self, *results: dict[str, str]) -> None:
        self.results = list(results)
        self.modules: list[str] = []

    async def run_tests(
        self, destination: TestModule, module_text: str
    ) -> tuple[str, dict[str, str]]:
        self.modules.append(module_text)
        outcomes = self.results.pop(0)
        present = {n: o for n, o in outcomes.items() if f"def {n}(" in module_text}
        failed = sum(o == "failed" for o in present.values())
        return f"pytest: {failed} failed, {len(present) - failed} passed", present


def _destination(existing: str = "") -> TestModule:
    return TestModule("/w/test_mod.py", "file:///w/test_mod.py", "mod", "", "", existing, False)


async def test_failing_generated_tests_are_dropped_and_named() -> None:
    pytest_ = FakePytest(
        {
            "test_f_example_1": "passed",
            "test_f_returns_1": "failed",
            "test_f_raises_value_error": "passed",
        },
        {"test_f_example_1": "passed", "test_f_raises_value_error": "passed"},
    )
    kept, verification = await keep_passing(pytest_, _destination("# mine\n"), GENERATED)  # type: ignore[arg-type]
    assert names_in(kept) == ["test_f_example_1", "test_f_raises_value_error"]
    assert verification["ok"] is True
    assert verification["details"] == (
        "pytest: 0 failed, 2 passed; dropped 1 generated test that failed on the current code: "
        "test_f_returns_1"
    )
    # Run with the module's own text first; the second run confirms what is left.
    assert pytest_.modules[0] == "# mine\n" + GENERATED
    assert pytest_.modules[1] == "# mine\n" + kept


async def test_an_existing_failing_test_is_not_ours_to_drop() -> None:
    existing = "def test_mine() -> None:\n    assert False\n"
    pytest_ = FakePytest(
        {
            "test_mine": "failed",
            "test_f_example_1": "passed",
            "test_f_returns_1": "passed",
            "test_f_raises_value_error": "skipped",
        },
    )
    kept, verification = await keep_passing(pytest_, _destination(existing), GENERATED)  # type: ignore[arg-type]
    assert kept == GENERATED
    assert "dropped" not in verification["details"]


async def test_tests_pytest_cannot_run_are_kept_flagged_unverified() -> None:
    """No test is known to fail: the static tests land (a function with tests never ends
    without a test module), flagged."""

    class Broken(FakePytest):
        async def run_tests(
            self, destination: TestModule, module_text: str
        ) -> tuple[str, dict[str, str]]:
            return "pytest took longer than 60 s", {}

    kept, verification = await keep_passing(Broken(), _destination(), GENERATED)  # type: ignore[arg-type]
    assert kept == GENERATED
    assert verification["ok"] is False
    assert verification["details"] == f"pytest took longer than 60 s; {UNRUN}"


def test_without_tests_keeps_the_placement_of_an_insertion_before_the_last_line_break() -> None:
    """Inserted before the module's last line break, the text starts with one and ends without
    one: dropping its first test must keep both, or it would join the module's last line."""
    inserted = "\n\n\ndef test_a() -> None:\n    assert False\n\n\ndef test_b() -> None:\n    pass"
    kept = without_tests(inserted, {"test_a"})
    assert kept == "\n\n\ndef test_b() -> None:\n    pass"


async def test_tests_of_a_module_pytest_cannot_collect_are_dropped() -> None:
    """pytest ran and could not collect the module (it does not import): every test fails."""

    class Uncollectable(FakePytest):
        async def run_tests(
            self, destination: TestModule, module_text: str
        ) -> tuple[str, dict[str, str]]:
            return "pytest: 1 error in 0.10s", {}

    kept, verification = await keep_passing(Uncollectable(), _destination(), GENERATED)  # type: ignore[arg-type]
    assert kept == ""
    assert verification["ok"] is None
    assert "dropped 3 generated tests that failed on the current code" in verification["details"]
