"""``write_tests.check``: a model's test module lands only if it parses, imports what exists, and
adds at least one test pytest collects (the tests already in the module do not count)."""

from __future__ import annotations

import pytest

from fastedit_lsp.actions.write_tests import check

SOURCE = "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n"
EXISTING = "from geometry import clamp\n\n\ndef test_mine():\n    assert clamp(1, 0, 2) == 1"


@pytest.mark.parametrize(
    ("existing", "answer", "ok", "details"),
    [
        pytest.param("", "def test_a():\n    assert True\n", True, "1 test functions", id="one"),
        pytest.param(
            "",
            "class TestClamp:\n    def test_a(self):\n        pass\n\n    def helper(self):\n"
            "        pass\n",
            True,
            "1 test functions",
            id="in-a-test-class",
        ),
        pytest.param("", "import pytest\n", False, "defines no test", id="imports-only"),
        pytest.param(
            "",
            "def check_a():\n    assert True\n\n\nclass Checks:\n    def test_b(self):\n"
            "        pass\n\n\ndef outer():\n    def test_c():\n        pass\n",
            False,
            "defines no test",
            id="nothing-pytest-collects",
        ),
        pytest.param(
            EXISTING, "\n\n\ndef helper():\n    pass", False, "defines no test", id="only-old-tests"
        ),
        pytest.param(
            EXISTING, "\n\n\ndef test_new():\n    pass", True, "1 test functions", id="one-new"
        ),
    ],
)
def test_check_counts_the_tests_the_answer_adds(
    existing: str, answer: str, ok: bool, details: str
) -> None:
    result = check(existing, answer, "geometry", SOURCE)
    assert result["ok"] is ok
    assert details in result["details"]
