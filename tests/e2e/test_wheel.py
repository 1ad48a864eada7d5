"""The wheel `pip install .` builds: the demo's samples are the examples' Python files, and the
demo runs from the installed wheel in any directory, with no source checkout beside it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support.harness import hermetic_env

ROOT = Path(__file__).resolve().parents[2]
_PIP = (sys.executable, "-m", "pip")


def _build_wheel(out: Path) -> Path:
    # No build isolation: hatchling comes with the test extras, so no index is asked.
    subprocess.run(
        [*_PIP, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
        env=hermetic_env(),
    )
    (wheel,) = out.glob("fastedit_lsp-*.whl")
    return wheel


def test_the_installed_wheel_runs_the_demo_on_the_examples_from_any_directory(
    tmp_path: Path,
) -> None:
    wheel = _build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        packaged = {
            Path(name).name: archive.read(name).decode("utf-8")
            for name in archive.namelist()
            if name.startswith("fastedit_lsp/samples/")
        }
    examples = {
        p.name: p.read_text(encoding="utf-8") for p in (ROOT / "examples/python").glob("*.py")
    }
    assert packaged == examples

    site = tmp_path / "site"
    subprocess.run(
        [*_PIP, "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=120,
        env=hermetic_env(),
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = subprocess.run(
        [sys.executable, "-c", "import fastedit_lsp; print(fastedit_lsp.__file__)"],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=hermetic_env(PYTHONPATH=str(site)),
        check=True,
    )
    assert Path(probe.stdout.strip()).is_relative_to(site)
    result = subprocess.run(
        [sys.executable, "-m", "fastedit_lsp", "demo"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=elsewhere,
        env=hermetic_env(PYTHONPATH=str(site)),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 of 4 actions succeeded" in result.stdout
    assert "+ISO_DATE_PATTERN = re.compile(" in result.stdout
