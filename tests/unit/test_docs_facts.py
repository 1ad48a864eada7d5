"""What the README, docs/ and the editors' READMEs state as facts agree with the source of each
fact: the runtime dependencies with ``pyproject.toml`` (each described in docs/architecture.md's
table, none called rejected anywhere: the README once said orjson was "not worth a dependency"
after adopting it), and the settings' defaults stated in a table or in prose with the schema's
(docs/settings.md, generated from it).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The pages a user reads for facts (the CHANGELOG is history: what was dropped stays there).
PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "editors").glob("*/README.md")]
)


def _dependencies() -> list[str]:
    """The names of ``[project] dependencies``, as pyproject.toml writes them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.match(r"[A-Za-z0-9_.-]+", spec) for spec in project["dependencies"]]
    return [m.group(0) for m in names if m is not None]


def _section(page: Path, heading: str) -> str:
    """The body of ``page``'s ``## heading`` section."""
    found = re.search(
        rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)",
        page.read_text(encoding="utf-8"),
        re.M | re.S,
    )
    assert found is not None, f"{page.name} has no section {heading!r}"
    return found.group(1)


def test_the_dependencies_table_names_every_runtime_dependency_and_no_other() -> None:
    table = _section(ROOT / "docs" / "architecture.md", "Dependencies")
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`([A-Za-z0-9_.-]+)`", row)}
    declared = set(_dependencies())
    assert len(declared) >= 10, declared
    assert named == declared, (sorted(declared - named), sorted(named - declared))


#: What a page must not say of a package it depends on.
_REJECTED = re.compile(
    r"not worth (?:a|the|its) (?:dependency|package)|\brejected\b|not adopted|"
    r"(?:dependency|package) (?:was |is )?(?:dropped|removed)",
    re.I,
)


def _sentences(text: str) -> list[str]:
    """The page's sentences (a list item or a table row ends one too)."""
    sentences: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-|] |\d+\. ))", text):
        joined = " ".join(block.split())
        sentences += re.split(r"(?<=[.!?])\s+(?=[A-Z*`(])", joined)
    return sentences


def _called_rejected(text: str, names: list[str]) -> list[str]:
    """The sentences of ``text`` that name one of ``names`` and call something rejected.
    ``packaging`` is an English word too: only written as code (`` `packaging` ``) is it read."""
    found = []
    for passage in _sentences(text):
        if not _REJECTED.search(passage):
            continue
        for name in names:
            pattern = rf"`{re.escape(name)}`" if name == "packaging" else rf"\b{re.escape(name)}\b"
            if re.search(pattern, passage, re.I):
                found.append(f"{name}: {passage[:160]}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_calls_a_dependency_rejected(page: Path) -> None:
    said = _called_rejected(page.read_text(encoding="utf-8"), _dependencies())
    assert said == [], said


def test_the_rejection_check_finds_the_readmes_old_orjson_sentence() -> None:
    # The README before the docs skeleton (5f6ee6c^), its paragraph on the message loop.
    old = (
        "loop's next turn. **orjson** for SSE events and JSON-RPC framing. `json.loads` of a chunk"
        " costs 4.8 µs,\norjson's 2.3 µs: ~6 % of the server's 35–40 µs per token at 20,000"
        " tok/s, and pygls' cattrs\n(un)structuring dominates each JSON-RPC message, not the"
        " codec — not worth a dependency.\n"
    )
    # The sentence that says it names orjson (and pygls' cattrs).
    said = _called_rejected(old, _dependencies())
    assert [s.split(":")[0] for s in said] == ["pygls", "cattrs", "orjson"], said


def _schema_defaults() -> dict[str, str]:
    """Each setting's default as docs/settings.md (generated from the schema) shows it."""
    table = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `fastedit\.([\w.]+)` \| ([^|]+) \|", table, re.M)
    assert len(rows) > 50, "docs/settings.md's table moved"
    return {key: value.strip() for key, value in rows}


def _normal(value: str) -> str:
    """A default as prose or the table writes it, in one spelling: ``2,000 ms`` and ``2000``;
    ``fast → standard → local`` and ``fast, standard, local``."""
    value = value.replace("`", "").replace("→", ",").strip()
    value = re.sub(r"(\d),(\d{3})\b", r"\1\2", value)
    value = re.sub(r"\s*ms$", "", value)
    return re.sub(r"\s*,\s*", ", ", value)


def _stated_defaults() -> list[tuple[str, str, str]]:
    """(page, setting, default) for each default the README's settings table or a page's prose
    states: ``| `mode` | `auto` |`` and ``verify.timeoutMs` (default 2,000 ms)``."""
    stated = []
    for page in PAGES:
        if page.name == "settings.md":
            continue
        text = page.read_text(encoding="utf-8")
        rows = re.findall(r"^\| `([\w.]+)` \| `([^`|]+)` \|", text, re.M)
        prose = re.findall(r"`(?:fastedit\.)?([\w.]+)` \(default ([^)]+)\)", " ".join(text.split()))
        stated += [(page.name, key, value) for key, value in rows + prose]
    return stated


def test_every_default_stated_in_prose_is_the_schemas() -> None:
    schema = _schema_defaults()
    stated = [(page, key, value) for page, key, value in _stated_defaults() if key in schema]
    assert len(stated) >= 5, stated  # the README's table and the prose of docs/
    wrong = [
        f"{page}: {key} = {value!r}, the schema's {schema[key]!r}"
        for page, key, value in stated
        if _normal(value) != _normal(schema[key])
    ]
    assert wrong == [], wrong
