"""The README's test command is deterministic; ``--hypothesis-profile=random`` explores."""

from __future__ import annotations

import pytest
from hypothesis import settings


def test_without_a_profile_flag_property_tests_are_derandomized_without_a_database(
    pytestconfig: pytest.Config,
) -> None:
    if pytestconfig.getoption("--hypothesis-profile"):
        pytest.skip("a Hypothesis profile was chosen on the command line")
    current = settings()  # the loaded profile, as every @settings in the tests inherits it
    assert settings.get_current_profile_name() == "deterministic"
    assert current.derandomize is True
    assert current.database is None
    assert current.deadline is None
    assert current.print_blob is True


def test_the_random_profile_explores_with_more_examples_and_the_database() -> None:
    explore = settings.get_profile("random")
    assert explore.derandomize is False
    assert explore.database is not None
    assert explore.max_examples > settings.get_profile("deterministic").max_examples
