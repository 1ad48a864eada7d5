"""Test stubs from the code: a pytest module for the function or method at a position.

Pure: no pygls, no httpx, no I/O. The caller passes the source text and what it knows of the file
system (which directories hold ``__init__.py``, which ``tests`` folders exist). The user's code is
parsed with :mod:`ast` and never imported or executed (a cloned repository is untrusted: the server
never runs its code unless the user opts in).

The modules, each importing only ones above it in this list:

- ``targets``: :class:`Target`, :func:`find_target`, the functions and methods a test can import;
- ``placement``: :func:`module_name` and :func:`test_path`, where the tests go;
- ``values``: the evaluator's value model (unknown, control flow, the builtins it may apply);
- ``bindings``: what the user's module binds (names, literal constants, classes);
- ``imports``: the imports of the generated module, in isort/ruff order;
- ``render``: Python source for values, ruff-format line splitting, one generated test;
- ``scope``: what a name means to the evaluator (the module's functions, constants, imports);
- ``evaluator``: walks a function body with concrete arguments to reach ``raise`` statements;
- ``doctests``: doctest examples as assertions, and the generator's per-module context;
- ``candidates``: candidate arguments and the search for ones that reach each ``raise``;
- ``variants``: copies of the body with one slip each, which return tests are chosen to catch;
- ``raises``: a ``pytest.raises`` case per reachable ``raise``;
- ``recorded``: tests of what the function really did, when the user opted in to running it
  (the plan of calls and variants; choosing and rendering what the recorder observed);
- ``properties``: hypothesis ``@given`` stubs from the type hints;
- ``classes``: whether a method's class can be built with no arguments;
- ``generate``: :func:`generate`, the complete test module for a target;
- ``merge``: :func:`merge`, generated tests appended to an existing test module.
"""

from __future__ import annotations

from .bindings import forget_parsed
from .generate import generate, record_plan
from .merge import merge
from .placement import module_name, test_path
from .recorded import Observation, Recording, RecordPlan, amended_tests, recording_from
from .targets import NoTargetError, Target, find_target, parsable

__all__ = [
    "NoTargetError",
    "Observation",
    "RecordPlan",
    "Recording",
    "Target",
    "amended_tests",
    "find_target",
    "forget_parsed",
    "generate",
    "merge",
    "module_name",
    "parsable",
    "record_plan",
    "recording_from",
    "test_path",
]
