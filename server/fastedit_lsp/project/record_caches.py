"""Calls a function's cache may answer from another call's entry. Part of the recorder's
worker (``record_worker.py``, which imports it beside itself): standard library only, never
imported by the server.

A test module's tests share what a cached function remembers (``functools.lru_cache``): one
test's call fills the cache another test's call may find. Its keys compare by ``==`` (unless
``typed=True``), so ``col(1.0, text)`` finds what ``col(1, text)`` left there and returns
where, alone, it raised ``TypeError``; ``True`` finds ``1``'s entry. The test written from
the call alone then fails after another test (a static one the recorder never sees) made the
other call. The search, which makes such arguments (half of 2), leaves those calls out for a
function with a cache.
"""

from __future__ import annotations

import ast


def cache_may_answer(call: str) -> bool:
    """Whether an argument of ``call`` holds a value equal to one of another type: a whole
    float (``1.0 == 1``) or a boolean (``True == 1``), at any depth."""
    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(node, ast.Call):
        return False
    arguments = [*node.args, *(k.value for k in node.keywords)]
    return any(
        isinstance(c, ast.Constant)
        and (isinstance(c.value, bool) or (isinstance(c.value, float) and c.value.is_integer()))
        for argument in arguments
        for c in ast.walk(argument)
    )
