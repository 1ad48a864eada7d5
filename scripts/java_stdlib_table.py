# ruff: noqa: B023  (the closures are called within their loop iteration only)
"""Regenerate ``server/fastedit_lsp/engines/names/java_stdlib.txt`` from a JDK's ``src.zip``.

The table lists, for every public type of the packages ``java.base`` exports, the names of its
public and protected members (fields, methods, member types, enum constants) and its direct
supertypes (qualified; ``?`` for one that cannot be resolved). It is read with tree-sitter's
Java grammar; nothing of Java runs. One line per type::

    <package> <Type or Outer.Inner>\t<supertype,...>\t<member member ...>

Usage::

    python scripts/java_stdlib_table.py [path/to/src.zip]   # default: the JDK 17 one

The committed table was made from Debian bookworm's openjdk-17-source (17.0.x).
"""

from __future__ import annotations

import glob
import re
import sys
import zipfile
from pathlib import Path

from tree_sitter import Node

from fastedit_lsp.engines.parse_tree import parse

OUT = Path(__file__).resolve().parents[1] / "server/fastedit_lsp/engines/names/java_stdlib.txt"
TYPES = (
    "class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
    "annotation_type_declaration",
)


def _text(node: Node | None) -> str:
    return node.text.decode() if node is not None and node.text is not None else ""


def _modifiers(node: Node) -> set[str]:
    for child in node.children:
        if child.type == "modifiers":
            return {_text(c) for c in child.children if c.type not in ("annotation",)}
    return set()


def _visible(node: Node, in_interface: bool) -> bool:
    mods = _modifiers(node)
    return bool(mods & {"public", "protected"}) or (in_interface and "private" not in mods)


def _type_names(node: Node | None) -> list[str]:
    """Supertypes as written (``Map.Entry``), without type arguments."""
    if node is None:
        return []
    out: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("type_identifier", "scoped_type_identifier"):
            out.append(re.sub(r"<.*", "", _text(current)).replace(" ", ""))
            continue
        if current.type == "type_arguments":
            continue
        stack.extend(reversed(current.named_children))
    return out


def _members(body: Node, in_interface: bool) -> tuple[set[str], list[Node]]:
    names: set[str] = set()
    nested: list[Node] = []
    for member in body.named_children:
        if member.type == "enum_body_declarations":
            more, deeper = _members(member, in_interface)
            names |= more
            nested += deeper
            continue
        if member.type == "enum_constant":
            names.add(_text(member.child_by_field_name("name")))
            continue
        if not _visible(member, in_interface):
            continue
        if member.type in ("field_declaration", "constant_declaration"):
            for declarator in member.children_by_field_name("declarator"):
                names.add(_text(declarator.child_by_field_name("name")))
        elif member.type in ("method_declaration", "annotation_type_element_declaration"):
            names.add(_text(member.child_by_field_name("name")))
        elif member.type in TYPES:
            names.add(_text(member.child_by_field_name("name")))
            nested.append(member)
    return names, nested


def main() -> None:
    found = sys.argv[1:] or sorted(glob.glob("/usr/lib/jvm/*17*/lib/src.zip"))
    archive = zipfile.ZipFile(found[0])
    module = archive.read("java.base/module-info.java").decode()
    exported = sorted(set(re.findall(r"^\s*exports ([\w.]+);", module, re.M)))
    files = set(archive.namelist())
    lines: list[str] = []
    for package in exported:
        folder = "java.base/" + package.replace(".", "/") + "/"
        for name in sorted(n for n in files if n.startswith(folder) and n.endswith(".java")):
            nested_dir = "/" in name[len(folder) :]
            if nested_dir or name.endswith(("package-info.java", "module-info.java")):
                continue
            text = archive.read(name).decode("utf-8", "replace")
            tree = parse("java", text).tree
            imports: dict[str, str] = {}
            wildcards: list[str] = []
            for top in tree.root_node.named_children:
                if top.type != "import_declaration" or "static" in _text(top).split():
                    continue
                path = _text(top.named_children[0])
                if any(c.type == "asterisk" for c in top.named_children):
                    wildcards.append(path)
                else:
                    imports[path.rsplit(".", 1)[-1]] = path

            def exists(qualified: str) -> bool:
                return f"java.base/{qualified.replace('.', '/')}.java" in files

            def resolve(written: str, local: dict[str, str]) -> str:
                head, _, rest = written.partition(".")
                if rest and exists(written):
                    return written
                if head in local:
                    base = local[head]
                elif head in imports:
                    base = imports[head]
                elif exists(f"{package}.{head}"):
                    base = f"{package}.{head}"
                elif exists(f"java.lang.{head}"):
                    base = f"java.lang.{head}"
                else:
                    hits = [w for w in wildcards if exists(f"{w}.{head}")]
                    if len(hits) != 1:
                        return "?"
                    base = f"{hits[0]}.{head}"
                return f"{base}.{rest}" if rest else base

            def walk(node: Node, outer: str, local: dict[str, str], in_interface: bool) -> None:
                name = _text(node.child_by_field_name("name"))
                path = f"{outer}.{name}" if outer else name
                body = node.child_by_field_name("body")
                if body is None:
                    return
                interface = node.type in ("interface_declaration", "annotation_type_declaration")
                members, nested = _members(body, interface)
                scope = dict(local)
                for inner in nested:
                    inner_name = _text(inner.child_by_field_name("name"))
                    scope[inner_name] = f"{package}.{path}.{inner_name}"
                written = _type_names(node.child_by_field_name("superclass"))
                written += _type_names(node.child_by_field_name("interfaces"))
                for child in node.named_children:
                    if child.type == "extends_interfaces":
                        written += _type_names(child)
                supers = [resolve(w, scope) for w in written]
                if node.type == "enum_declaration":
                    supers.append("java.lang.Enum")
                elif node.type == "record_declaration":
                    supers.append("java.lang.Record")
                elif node.type == "annotation_type_declaration":
                    supers.append("java.lang.annotation.Annotation")
                lines.append(
                    f"{package} {path}\t{','.join(supers)}\t{' '.join(sorted(members - {''}))}"
                )
                for inner in nested:
                    walk(inner, path, scope, interface)

            for top in tree.root_node.named_children:
                if top.type in TYPES and "public" in _modifiers(top):
                    walk(top, "", {}, False)
    header = f"# Java SE public types of java.base's exported packages, from {Path(found[0])}\n"
    OUT.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} types of {len(exported)} packages → {OUT}")  # noqa: T201


if __name__ == "__main__":
    main()
