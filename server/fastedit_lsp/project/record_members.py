"""Members for the recorder's member templates: an enumeration's other values.

Part of the recorder's worker (``record_worker.py``, which imports it beside itself): standard
library only, never imported by the server. A parameter whose default is a member of an
enumeration (``alg=ns.DEFAULT``), whose hint is one (``kind: Kind``), or that the body compares
or combines with one (``alg & ns.FLOAT``, ``kind == Kind.A``) is tried with the enumeration's
other members, and for a flag with two of them together (``ns.FLOAT | ns.SIGNED``): values no
static reading of the body lists (an enumeration may be built when its module is imported).
"""

from __future__ import annotations

import ast
import enum
import itertools
import types

try:
    from .record_texts import slot_of  # imported with the package (the tests)
except ImportError:  # run as a script beside the recorder's worker
    from record_texts import slot_of  # type: ignore[no-redef, import-not-found]

#: Where a member template takes a member: ``__fastedit_members__(<expression>)``, the
#: expression a member, or the enumeration, as the module names it.
MEMBERS_CALL = "__fastedit_members__("
#: Members (and pairs of flags) tried per template at most.
MOST = 24


def _enumeration(value: object) -> type[enum.Enum] | None:
    if isinstance(value, type) and issubclass(value, enum.Enum):
        return value
    if isinstance(value, enum.Enum):
        return type(value)
    return None


def _owner(source: ast.expr, kind: type[enum.Enum], module: types.ModuleType) -> str | None:
    """How a test names the enumeration: as the expression does (``ns`` of ``ns.DEFAULT``,
    ``Kind`` of the hint ``Kind``), else a public module-level name bound to it."""
    scope = vars(module)
    for candidate in (source, source.value if isinstance(source, ast.Attribute) else None):
        if candidate is None:
            continue
        try:
            value = eval(compile(ast.Expression(candidate), "<members>", "eval"), dict(scope))
        except Exception:
            continue
        if value is kind:
            return ast.unparse(candidate)
    names = sorted(
        (n for n, v in scope.items() if v is kind and n.isidentifier()),
        key=lambda n: (n.startswith("_"), len(n), n),
    )
    return names[0] if names else None


def members(source: ast.expr, module: types.ModuleType) -> list[str]:
    """Expressions of the enumeration's members (a member's, or the enumeration's, expression
    as the module names it): each member, then for a flag two members together."""
    try:
        value = eval(compile(ast.Expression(source), "<members>", "eval"), dict(vars(module)))
    except Exception:
        return []
    kind = _enumeration(value)
    if kind is None:
        return []
    owner = _owner(source, kind, module)
    if owner is None:
        return []
    named = [m for m in kind if m.name and getattr(kind, m.name, None) is m]
    shown = [f"{owner}.{m.name}" for m in named]
    if issubclass(kind, enum.Flag):
        bits = [s for s, m in zip(shown, named, strict=True) if int(m.value).bit_count() == 1]
        shown += [f"{a} | {b}" for a, b in itertools.combinations(bits[:8], 2)]
    return shown[:MOST]


def member_calls(template: str, module: types.ModuleType) -> list[str]:
    """A member template made with each of the members its expression's enumeration has."""
    found = slot_of(
        template,
        lambda n: (
            isinstance(n.func, ast.Name) and n.func.id + "(" == MEMBERS_CALL and len(n.args) == 1
        ),
    )
    if found is None:
        return []
    tree, slot = found
    marker = ast.unparse(slot)
    # The template as the plan wrote it (its quotes), else as the parser reads it.
    written = template if marker in template else ast.unparse(tree)
    return [written.replace(marker, member, 1) for member in members(slot.args[0], module)]
