"""The project's environment, read from files: does it have hypothesis? (project/environment.py)

Never by running its interpreter: its virtual environment's site-packages, its pyproject.toml
and its requirement files are read.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fastedit_lsp.engines import test_stubs as stubs
from fastedit_lsp.project.environment import has_package

#: A guard against a hung subprocess, not a timing.
HANG_GUARD_S = 120


def _project(tmp_path: Path) -> Path:
    module = tmp_path / "pkg" / "mod.py"
    module.parent.mkdir()
    module.write_text("def f(x: int) -> int:\n    return x\n")
    return module


def test_a_project_with_nothing_declared_has_no_hypothesis(tmp_path: Path) -> None:
    module = _project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["httpx"]\n')
    assert not has_package(str(module), str(tmp_path), "hypothesis")
    assert has_package(str(module), str(tmp_path), "HTTPX")


def test_an_installed_distribution_in_the_virtual_environment_counts(tmp_path: Path) -> None:
    module = _project(tmp_path)
    site = tmp_path / ".venv" / "lib" / "python3.12" / "site-packages"
    (site / "hypothesis-6.100.0.dist-info").mkdir(parents=True)
    assert not has_package(str(module), str(tmp_path), "hypothesis")  # no pyvenv.cfg: no venv
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert has_package(str(module), str(tmp_path), "hypothesis")


@pytest.mark.parametrize(
    "pyproject",
    [
        '[project]\nname = "p"\n[project.optional-dependencies]\n'
        "test = [\"hypothesis>=6; python_version>'3'\"]\n",
        '[dependency-groups]\ndev = ["pytest", "Hypothesis[cli]==6.1"]\n',
        '[tool.poetry.group.dev.dependencies]\nhypothesis = "^6"\n',
        '[tool.uv]\ndev-dependencies = ["hypothesis"]\n',
    ],
    ids=["optional", "groups", "poetry", "uv"],
)
def test_a_pyproject_declaring_it_counts(tmp_path: Path, pyproject: str) -> None:
    module = _project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(pyproject)
    assert has_package(str(module), str(tmp_path), "hypothesis")


def test_requirement_files_count_with_their_includes(tmp_path: Path) -> None:
    module = _project(tmp_path)
    (tmp_path / "requirements-dev.txt").write_text("# tools\n-r requirements/test.in\npytest\n")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "test.in").write_text("--hash=sha256:00\nhypothesis==6.1  # x\n")
    assert has_package(str(module), str(tmp_path), "hypothesis")


def test_a_broken_pyproject_or_a_folder_outside_the_project_is_not_read(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    module = _project(project)
    (project / "pyproject.toml").write_text("[project\n")  # does not parse
    (tmp_path / "requirements.txt").write_text("hypothesis\n")  # above the project's root
    assert not has_package(str(module), str(project), "hypothesis")


SOURCE = """def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))
"""


def test_without_hypothesis_the_hinted_test_uses_plain_values_that_pass(tmp_path: Path) -> None:
    target = stubs.find_target(SOURCE, 0)
    with_it = stubs.generate(SOURCE, target, "geometry")
    without = stubs.generate(SOURCE, target, "geometry", hypothesis=False)
    assert "from hypothesis import" in with_it and "@given(" in with_it
    assert "hypothesis" not in without and "given" not in without
    assert "@pytest.mark.parametrize(" in without
    assert "def test_clamp_hinted_inputs(value: int, low: int, high: int) -> None:" in without
    (tmp_path / "geometry.py").write_text(SOURCE)
    (tmp_path / "test_geometry.py").write_text(without)
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "hinted_inputs" not in ran.stdout  # none failed
