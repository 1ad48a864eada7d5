"""The user documentation: README.md, docs/, CHANGELOG.md, CONTRIBUTING.md and examples/.

What a reader follows must lead somewhere (every relative link and anchor resolves), the README
starts with the commands CI runs, and it stays a product README: short, without development
history.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


#: Pages whose file names in prose, code spans and code blocks are checked: what a user or a
#: contributor reads and follows. (The CHANGELOG is history: it names files that are gone.)
PATH_PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "editors").glob("*/README.md"),
        *(ROOT / "editors" / "nvim" / "doc").glob("*.txt"),
        *(ROOT / "examples").rglob("*.md"),
    ]
)

#: A name that looks like a path in the repository (not a part of a longer path or a URL).
_PATH = re.compile(
    r"(?<![\w./~-])(?:server/fastedit_lsp|fastedit_lsp|tests|editors|examples|docs|\.ci)/"
    r"[\w./*<>{}-]*"
)
#: A path in the package without its ``server/fastedit_lsp/`` (``pipeline/runner.py``), in a code
#: span: its first folder is one of the package's layers.
_LAYERS = "|".join(
    sorted(p.parent.name for p in (ROOT / "server" / "fastedit_lsp").glob("*/__init__.py"))
)
_IN_PACKAGE = re.compile(rf"`((?:{_LAYERS})/[\w./*-]+)`")
#: A dotted module name of the package (``python -m fastedit_lsp.tools.stub``).
_MODULE = re.compile(r"(?<![\w./-])fastedit_lsp(?:\.\w+)+")

#: Paths the pages name that are not in the repository, each with the file it comes from.
NOT_IN_THE_REPOSITORY = {
    # What the build script writes (the VS Code extension's package).
    "editors/vscode/fastedit.vsix": "editors/vscode/scripts/build.sh",
    # The test module "write tests" creates for the sample (docs/actions.md's example).
    "tests/test_geometry.py": "examples/python/geometry.py",
}


def _path_exists(name: str, page: Path) -> bool:
    """Whether ``name`` is in the repository, from its root or (a page in a folder of samples
    naming its neighbours) from the page's folder; a placeholder (``test_<module>.py``) or an
    ellipsis (``server/fastedit_lsp/...``) stands for anything in the folder before it."""
    name = name.rstrip(".,:;")
    if name.startswith("fastedit_lsp/"):
        name = "server/" + name
    cut = min((i for i in (name.find("<"), name.find("{"), name.find("...")) if i >= 0), default=-1)
    if cut >= 0:
        name = name[:cut].rsplit("/", 1)[0]
    for base in (ROOT, page.parent):
        if any(base.glob(name)) if "*" in name else (base / name).exists():
            return True
    return False


def _module_exists(dotted: str) -> bool:
    """Whether ``dotted`` is a module of the package, or a name a module of it defines."""
    parts = dotted.split(".")
    base = ROOT / "server" / Path(*parts)
    if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
        return True
    parent = base.parent.with_suffix(".py")
    defined = rf"^(?:async def|def|class) {parts[-1]}\b|^{parts[-1]}\b[^=\n]*="
    return (
        parent.is_file()
        and re.search(defined, parent.read_text(encoding="utf-8"), re.M) is not None
    )


@pytest.mark.parametrize("page", PATH_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_and_module_a_page_names_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    paths = {m.group(0) for m in _PATH.finditer(text)}
    paths |= {f"fastedit_lsp/{m.group(1)}" for m in _IN_PACKAGE.finditer(text)}
    missing = sorted(
        p
        for p in paths
        if p.rstrip(".,:;") not in NOT_IN_THE_REPOSITORY and not _path_exists(p, page)
    )
    missing += sorted(m for m in set(_MODULE.findall(text)) if not _module_exists(m))
    assert missing == [], f"{page.relative_to(ROOT)} names what is not in the repository: {missing}"


def test_the_paths_named_that_are_not_in_the_repository_come_from_files_that_are() -> None:
    # Tracked files: a checkout where the build or an action ran holds these paths on disk.
    tracked = subprocess.run(
        ["git", "ls-files", "--", *NOT_IN_THE_REPOSITORY],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for path, origin in NOT_IN_THE_REPOSITORY.items():
        assert path not in tracked, f"{path} is in the repository: drop it from the list"
        assert (ROOT / origin).is_file(), origin
    build = (ROOT / "editors/vscode/scripts/build.sh").read_text(encoding="utf-8")
    assert "editors/vscode/fastedit.vsix" in build


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


# -- what each page must hold --------------------------------------------------------------------


def _sections(text: str, level: int) -> dict[str, str]:
    """The page's sections of ``level`` (2: ``## ``), heading -> body, code blocks kept."""
    marker = "#" * level + " "
    found: dict[str, str] = {}
    heading = None
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith(marker):
            heading = line[len(marker) :].strip()
            found[heading] = ""
        elif not fenced and re.match(rf"#{{1,{level - 1}}} ", line):
            heading = None
        elif heading is not None:
            found[heading] += line + "\n"
    return found


README = (ROOT / "README.md").read_text(encoding="utf-8")
README_SECTIONS = _sections(README, 2)

#: What the README must tell a user (issue 30's "documentation for users"), each a section whose
#: heading matches.
README_REQUIRED = {
    "install": r"^Install",
    "per-editor install and keys": r"^Editors",
    "providers": r"provider",
    "how it keeps your code safe": r"safe",
    "troubleshooting": r"^Troubleshooting",
}


def _readme_section(pattern: str) -> str:
    found = [body for heading, body in README_SECTIONS.items() if re.search(pattern, heading)]
    assert len(found) == 1, f"README: one section matching {pattern!r}: {list(README_SECTIONS)}"
    return found[0]


@pytest.mark.parametrize("what", README_REQUIRED, ids=lambda w: w.replace(" ", "-"))
def test_the_readme_has_each_section_a_user_needs(what: str) -> None:
    assert _readme_section(README_REQUIRED[what]).strip(), what


def test_the_readme_names_every_provider_the_settings_accept() -> None:
    from fastedit_lsp.backends.presets import PROVIDERS

    text = _readme_section(README_REQUIRED["providers"])
    missing = [p for p in PROVIDERS if f"`{p}`" not in text]
    assert missing == [], f"providers the README does not name: {missing}"


def _exports(text: str) -> list[dict[str, str]]:
    """Each ``export A=x B=y`` line of the section's shell blocks, as variables (``...``, a key
    the reader fills in, becomes a test key)."""
    lines = [line for block in _code_blocks(text) for line in block.splitlines()]
    return [
        {name: "test-key" if value == "..." else value for name, value in pairs}
        for line in lines
        if line.startswith("export ")
        for pairs in [re.findall(r"(\w+)=(\S+)", line)]
    ]


#: The seeds' models: each is shown with the settings that reach it, over its own wire.
SEED_MODELS = {"gpt-5.3-codex": "responses", "claude-opus-4-6": "messages"}


@pytest.mark.parametrize("model", SEED_MODELS)
def test_the_readme_shows_the_seeds_models_on_their_wire(model: str) -> None:
    from fastedit_lsp.settings import load, resolve_profile

    text = _readme_section(README_REQUIRED["providers"])
    names = {"gpt-5.3-codex": "GPT-5.3-Codex", "claude-opus-4-6": "Opus 4.6"}
    wires = {"responses": "Responses API", "messages": "Messages API"}
    prose = " ".join(text.split())
    assert names[model] in prose and wires[SEED_MODELS[model]] in prose
    found = [e for e in _exports(text) if model in e.values()]
    assert len(found) == 1, f"README: one export line sets {model}: {found}"
    [environ] = found
    resolved = load(environ)
    assert resolved.problems == [] and resolved.warnings == [], resolved
    [profile] = [p for p in ("fast", "standard") if environ.get(f"FASTEDIT_{p.upper()}_MODEL")]
    resolved_profile = resolve_profile(profile, resolved.settings, environ)
    assert resolved_profile.fallback_reason is None, resolved_profile.fallback_reason
    assert resolved_profile.model == model
    assert resolved_profile.api_for(model) == SEED_MODELS[model]


def test_every_export_line_of_the_readme_reaches_a_model() -> None:
    from fastedit_lsp.settings import load, resolve_profile

    for environ in _exports(_readme_section(README_REQUIRED["providers"])):
        if set(environ) == {"FASTEDIT_CONFIG"}:
            continue  # a file: tests/unit/test_example_configs.py loads each
        resolved = load(environ)
        assert resolved.problems == [] and resolved.warnings == [], (environ, resolved)
        for profile in ("fast", "standard"):
            if f"FASTEDIT_{profile.upper()}_MODEL" in environ:
                reached = resolve_profile(profile, resolved.settings, environ)
                assert reached.fallback_reason is None, (environ, reached.fallback_reason)


def _editor_paragraphs() -> dict[str, str]:
    """The Editors section cut at each editor's bold name (``**Neovim``, ``**Emacs``, ...)."""
    text = _readme_section(README_REQUIRED["per-editor install and keys"])
    parts = re.split(r"^\*\*(Neovim|Emacs|VS Code)\b", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def _neovim_keys() -> list[str]:
    lua = (ROOT / "editors" / "nvim" / "lua" / "fastedit" / "init.lua").read_text(encoding="utf-8")
    block = re.search(r"^M\.default_keys = \{(.*?)^\}", lua, re.M | re.S)
    defaults = re.search(r"^M\.defaults = \{(.*?)^\}", lua, re.M | re.S)
    assert block is not None and defaults is not None, "init.lua's key tables moved"
    leader = re.findall(r"'<leader>(\w+)'", block.group(1))
    chords = re.findall(r"'(<M-\w>)'", defaults.group(1))
    assert leader and chords
    return leader + chords


def _emacs_keys() -> list[str]:
    el = (ROOT / "editors" / "emacs" / "fastedit.el").read_text(encoding="utf-8")
    block = re.search(r"^\(defvar fastedit-command-map\n(.*?)^  \"", el, re.M | re.S)
    assert block is not None, "fastedit.el's command map moved"
    keys = re.findall(r'\(define-key map \(kbd "([^"]+)"\)', block.group(1))
    prefix = re.search(r'^\(defcustom fastedit-keymap-prefix "([^"]+)"', el, re.M)
    assert keys and prefix is not None
    return [prefix.group(1), *keys]


def _vscode_keys() -> list[str]:
    import json

    package = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    return [binding["key"] for binding in package["contributes"]["keybindings"]]


@pytest.mark.parametrize(
    ("editor", "keys"),
    [("Neovim", _neovim_keys), ("Emacs", _emacs_keys), ("VS Code", _vscode_keys)],
    ids=["Neovim", "Emacs", "VS-Code"],
)
def test_the_readme_names_each_editors_default_keys(
    editor: str, keys: Callable[[], list[str]]
) -> None:
    paragraph = _editor_paragraphs()[editor]
    missing = [key for key in keys() if f"`{key}`" not in paragraph]
    assert missing == [], f"{editor}'s keys the README does not name: {missing}"


# -- CHANGELOG.md: the history by version --------------------------------------------------------

CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
_VERSION = re.compile(r"^(?:Unreleased|(\d+)\.(\d+)\.(\d+) \((\d{4}-\d{2}-\d{2})\))$")


def test_the_changelog_is_the_history_by_version_newest_first() -> None:
    from fastedit_lsp import __version__

    assert CHANGELOG.startswith("# Changelog\n")
    versions = list(_sections(CHANGELOG, 2))
    assert versions, "no version in CHANGELOG.md"
    bad = [v for v in versions if not _VERSION.match(v)]
    assert bad == [], f"headings that are not 'Unreleased' or 'X.Y.Z (YYYY-MM-DD)': {bad}"
    assert "Unreleased" not in versions[1:], "Unreleased comes first, once"
    released = [m.groups() for v in versions if (m := _VERSION.match(v)) and m.group(1)]
    numbers = [tuple(int(n) for n in g[:3]) for g in released]
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers)
    dates = [g[3] for g in released]
    assert dates == sorted(dates, reverse=True)
    # The package's version is the newest released one.
    assert released and ".".join(released[0][:3]) == __version__


@pytest.mark.parametrize("version", list(_sections(CHANGELOG, 2)))
def test_every_change_of_a_version_is_under_one_of_its_areas(version: str) -> None:
    body = _sections(CHANGELOG, 2)[version]
    areas = _sections(f"## {version}\n{body}", 3)
    assert areas, f"{version}: no ### area"
    before_first_area = body.split("\n### ", 1)[0]
    loose = [line for line in before_first_area.splitlines() if line.startswith("- ")]
    assert loose == [], f"{version}: changes outside any ### area: {loose}"
    empty = [area for area, text in areas.items() if "\n- " not in "\n" + text]
    assert empty == [], f"{version}: areas with no change: {empty}"


# -- CONTRIBUTING.md: setup, tiers and soak, bench, layout ---------------------------------------

CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
CONTRIBUTING_SECTIONS = _sections(CONTRIBUTING, 2)


def _contributing(pattern: str) -> str:
    found = [b for h, b in CONTRIBUTING_SECTIONS.items() if re.search(pattern, h, re.I)]
    assert len(found) == 1, f"CONTRIBUTING.md: one section matching {pattern!r}"
    return found[0]


def _pyproject() -> dict[str, Any]:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_contributing_setup_installs_extras_that_exist() -> None:
    extras = _pyproject()["project"]["optional-dependencies"]
    named = set(re.findall(r"pip install -e '\.\[(\w+)\]'", CONTRIBUTING))
    assert "test" in set(re.findall(r"pip install -e '\.\[(\w+)\]'", _contributing(r"^Setup")))
    assert named and named <= set(extras), (named, sorted(extras))


def test_contributing_test_command_is_cis() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci in _code_blocks(_contributing(r"test command"))[0]


def test_contributing_tiers_use_declared_markers_and_existing_files() -> None:
    text = _contributing(r"tiers")
    declared = {m.split(":")[0] for m in _pyproject()["tool"]["pytest"]["ini_options"]["markers"]}
    rows = re.findall(r"^\| `pytest ([^`]*)` \|", text, re.M)
    assert len(rows) >= 4, rows
    used = {name for row in rows for name in re.findall(r"-m \"?(?:not )?(\w+)", row)}
    assert used and used <= declared, (used, declared)
    for row in rows:
        for path in re.findall(r"(tests/\S+)", row):
            assert (ROOT / path).exists(), path
    for folder in ("tests/unit/", "tests/e2e/", "tests/editors/", "tests/support/"):
        assert f"`{folder}`" in text and (ROOT / folder).is_dir(), folder


def test_contributing_soak_commands_run_the_soak_tool_with_its_options() -> None:
    text = _contributing(r"^Soak")
    soak = (ROOT / "tests" / "tools" / "soak.py").read_text(encoding="utf-8")
    commands = [c for block in _code_blocks(text) for c in block.splitlines() if c.strip()]
    assert commands and all(c.startswith("python tests/tools/soak.py") for c in commands)
    options = {o for c in commands for o in re.findall(r"(--[a-z-]+)", c.split(" -- ")[0])}
    declared = set(re.findall(r"add_argument\(\s*\"(--[a-z-]+)\"", soak))
    assert options and options <= declared, (options, declared)


def test_contributing_emacs_soak_command_sets_what_the_emacs_terminal_module_reads() -> None:
    text = _contributing(r"^Emacs soak")
    module = (ROOT / "tests" / "editors" / "test_emacs_terminal.py").read_text(encoding="utf-8")
    [command] = [c for block in _code_blocks(text) for c in block.splitlines() if "pytest" in c]
    assert (rounds := re.search(r"FASTEDIT_EMACS_ROUNDS=(\d+)", command)), command
    assert 'os.environ["FASTEDIT_EMACS_ROUNDS"]' in module and int(rounds[1]) >= 20, command
    assert (selected := re.search(r"-k (\w+)", command)), command
    assert len(re.findall(rf"^def test_\w*{selected[1]}\w*\(", module, re.M)) == 2, command


def test_contributing_bench_command_parses_with_the_real_cli() -> None:
    from fastedit_lsp.cli import _parser
    from fastedit_lsp.tools.bench_figures import SECTIONS

    text = _contributing(r"^Bench")
    [command] = [
        c for block in _code_blocks(text) for c in block.splitlines() if "fastedit-lsp bench" in c
    ]
    args = _parser().parse_args(command.split()[1:])
    assert args.command == "bench"
    assert set(args.only.split(",")) <= set(SECTIONS), args.only
    assert (ROOT / "docs" / "performance.md").is_file()


def test_contributing_layout_names_folders_that_exist() -> None:
    [block] = re.findall(r"^```\n(.*?)^```", _contributing(r"^Layout"), re.M | re.S)
    paths = [line.split()[0] for line in block.splitlines() if line.strip()]
    assert len(paths) >= 5, paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert missing == [], missing
