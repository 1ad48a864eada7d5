"""The user documentation: README.md, docs/, CHANGELOG.md, CONTRIBUTING.md and examples/.

What a reader follows must lead somewhere (every relative link and anchor resolves), the README
starts with the commands CI runs, and it stays a product README: short, without development
history.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Markdown files a user reads; each one's relative links are checked.
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        ROOT / "CONTRIBUTING.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "examples").rglob("*.md"),
    ]
)

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def _links(page: Path) -> list[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return [m.group(1) for m in _LINK.finditer(text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_of_a_page_resolves(page: Path) -> None:
    assert page.exists(), page
    broken = []
    for target in _links(page):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        missing_anchor = bool(anchor) and resolved.suffix == ".md" and resolved.exists()
        if not resolved.exists() or (missing_anchor and anchor not in _anchors(resolved)):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


def _code_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S)


def test_the_readme_starts_with_the_demo_and_the_ci_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first, second = _code_blocks(readme)[:2]
    assert first.strip() == "pip install . && fastedit-lsp demo"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert second.strip() == ci


def test_the_readme_is_a_short_product_readme_without_development_history() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 320
    history = re.compile(r"this stop|last stop|issue [0-9]+|\b(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
    assert history.findall(readme) == []


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_the_user_documentation_names_no_development_stops_or_issues(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"this stop|last stop|two stops ago|issue [0-9]+", text)
    assert found == [], page.name


@pytest.mark.parametrize(
    ("command", "pages"),
    [
        (
            "fastedit-lsp stub",
            ["README.md", "editors/nvim/README.md", "editors/emacs/README.md"],
        ),
        ("editors/vscode/scripts/build.sh", ["README.md", "editors/vscode/README.md"]),
    ],
)
def test_the_readmes_name_the_stub_command_and_the_vscode_build_script(
    command: str, pages: list[str]
) -> None:
    missing = [page for page in pages if command not in (ROOT / page).read_text(encoding="utf-8")]
    assert missing == [], f"{command!r} is not in {missing}"


def test_the_stub_command_and_the_vscode_build_script_the_readmes_name_exist() -> None:
    from fastedit_lsp.cli import _parser

    assert _parser().parse_args(["stub"]).command == "stub"
    build = ROOT / "editors" / "vscode" / "scripts" / "build.sh"
    assert build.is_file()
    assert build.stat().st_mode & 0o111, f"{build} is not executable"
