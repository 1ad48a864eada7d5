"""Rust's names check: names bound nowhere in the file, paths that start with a module the file
never imports, and what is left alone (macros, globs, unknown crates)."""

from __future__ import annotations

from pathlib import Path

from fastedit_lsp.engines.names import check_names
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.project.rust_crate import RustCrates

FILE = """use std::collections::HashMap;
use crate::ast::{self, Ast};

pub fn count(words: &[&str], limit: usize) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for (index, word) in words.iter().enumerate() {
        if let Some(first) = word.chars().next() {
            let key = format!("{}{}", first, index);
            BODY;
        }
    }
    counts
}
"""
CRATES = frozenset({"std", "core", "alloc", "serde"})


def _check(
    body: str, crates: frozenset[str] | None = CRATES, text: str = FILE
) -> tuple[bool | None, str]:
    text = text.replace("BODY", body)
    parsed = parse("rust", text)
    start = text.index("    let mut counts")
    verdict = check_names("rust", parsed.tree, parsed.data, start, len(parsed.data), crates)
    return verdict.ok, verdict.message


def test_correct_rust_resolves() -> None:
    body = "*counts.entry(key).or_insert(0) += limit.min(1); let _x: Option<Ast> = None"
    assert _check(body) == (True, "every name read resolves")


def test_a_misspelled_local_is_flagged_with_its_line() -> None:
    assert _check("counts.insert(ky, 1)") == (False, "line 9: 'ky' is not defined")


def test_a_function_defined_nowhere_is_flagged() -> None:
    ok, message = _check("counts.insert(make_key(word), 1)")
    assert ok is False and message == "line 9: 'make_key' is not defined"


def test_a_std_module_never_imported_is_flagged() -> None:
    ok, message = _check("counts.insert(key, cmp::max(limit, 1))")
    assert ok is False and message == "line 9: 'cmp' is not defined"


def test_a_module_path_is_flagged_only_when_the_crates_are_known() -> None:
    assert _check("parse::run(&key)")[0] is False
    assert _check("parse::run(&key)", None)[0] is True  # no Cargo.toml: may be a crate
    assert _check("serde::run(&key)")[0] is True  # a dependency
    assert _check("ast::run(&key)")[0] is True  # imported (use crate::ast::{self, …})


def test_names_inside_macros_and_glob_modules_are_not_flagged() -> None:
    assert _check('println!("{}", kye)')[0] is True
    text = FILE.replace(
        "use std::collections::HashMap;", "use super::*;\nuse std::collections::HashMap;"
    )
    assert _check("counts.insert(helper(&key), 1)", CRATES, text)[0] is True


def test_an_enum_glob_only_leaves_capitalized_names_alone() -> None:
    body = "{ use self::Kind::*; counts.insert(key, Variant.len() + lmit) }"
    ok, message = _check(body)
    assert ok is False and message == "line 9: 'lmit' is not defined"


def test_the_crates_come_from_the_nearest_manifest(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "my-tool"\nedition = "2021"\n\n[dependencies]\nserde-json = "1"\n'
        "\n[target.'cfg(unix)'.dev-dependencies]\nlibc = \"0.2\"\n"
    )
    (tmp_path / "src").mkdir()
    crates = RustCrates().crates(str(tmp_path / "src" / "lib.rs"))
    assert crates is not None and {"serde_json", "libc", "my_tool", "std"} <= crates
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "old"\n')  # edition 2015
    assert RustCrates().crates(str(tmp_path / "src" / "lib.rs")) is None


def test_a_use_binds_its_last_segment_not_the_path_before_it() -> None:
    text = FILE.replace(
        "use std::collections::HashMap;",
        "use std::collections::HashMap;\nuse std::iter::FromIterator;",
    )
    assert _check("let _v: Vec<u8> = iter::empty().collect()", text=text)[0] is False
    assert _check("let _v = Vec::<u8>::from_iter(None)", text=text)[0] is True
    # `self` in a list binds the path's last segment
    assert _check("let _a: Option<ast::Ast> = None")[0] is True
