"""What the names-check corpora share (tests/unit/test_names_check_corpus*.py): a sample, the
held-out split, the mistakes a model makes (a synonym of a helper, a misspelled local), a
function's cut, the verification of a draft as a job does it, and the scoring with its floors.

Each language's test builds its samples from real third-party code the machine has installed;
this module scores them the same way for every language.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

import pytest

from fastedit_lsp.actions import parse_check
from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.engines.parse_trees import ParseTrees

#: The kinds of mistake (a language whose check cannot see one leaves it out).
KINDS = ("synonym", "misspelled", "member", "import")
#: The largest file read.
MAX_BYTES = 150_000
#: The issue's goal for false alarms on correct answers, in every language.
FALSE_ALARM_CEILING = 0.01


@dataclass(frozen=True)
class Sample:
    """One answer: the document before the job, the region, the draft, and its kind."""

    path: str
    kind: str  # "control" or one of the corpus' kinds
    before: str
    start: Point
    end: Point
    draft: str


def held_out(path: str) -> bool:
    """One file in four, by a hash of its path (chosen before any tuning)."""
    return hashlib.sha1(path.encode()).digest()[0] % 4 == 0


#: Verbs a model swaps for one another in a function's name.
SYNONYMS = {
    "get": "fetch",
    "fetch": "get",
    "read": "load",
    "load": "read",
    "make": "create",
    "create": "make",
    "build": "construct",
    "parse": "decode",
    "decode": "parse",
    "find": "search",
    "search": "find",
    "check": "validate",
    "validate": "check",
    "remove": "delete",
    "delete": "remove",
    "add": "append",
    "write": "save",
    "save": "write",
    "compute": "calculate",
    "update": "refresh",
    "is": "has",
    "has": "is",
    "to": "as",
    "format": "render",
    "split": "tokenize",
    "open": "load",
    "run": "execute",
    "set": "put",
    "new": "create",
    "init": "setup",
}


def synonym(name: str) -> str:
    """A plausible name for a helper that does not exist (``read_config`` → ``load_config``)."""
    core = name.lstrip("_")
    head, _, tail = core.partition("_")
    lead = name[: len(name) - len(core)]
    if tail and head in SYNONYMS:
        return f"{lead}{SYNONYMS[head]}_{tail}"
    for verb, other in SYNONYMS.items():
        if core.startswith(verb) and core[len(verb) : len(verb) + 1].isupper():
            return lead + other + core[len(verb) :]
    return f"{lead}{core}_all" if "_" in core else f"{lead}{core}s"


def misspell(name: str) -> str:
    """One letter dropped (``buffer`` → ``bufer``)."""
    for i in range(1, len(name)):
        if name[i] == name[i - 1] and name[i].isalpha():
            return name[:i] + name[i + 1 :]
    middle = len(name) // 2
    return name[:middle] + name[middle + 1 :] if len(name) > 3 else name + "x"


@dataclass
class Function:
    start: int  # the first statement of the body (character offset)
    end: int
    names: list[tuple[str, int, int]]  # identifiers in the body: (name, start, end)


def point(text: str, offset: int) -> Point:
    line = text.count("\n", 0, offset)
    return Point(line, offset - (text.rfind("\n", 0, offset) + 1))


class Cut:
    """One function's cut: the text before it, the body from the cut on, the text after."""

    def __init__(self, path: str, text: str, function: Function, *, edit: bool) -> None:
        self.path, self.edit = path, edit  # edit selection: the region holds the original
        self.head, self.tail = text[: function.start], text[function.end :]
        self.body = text[function.start : function.end]

    def sample(self, kind: str, draft: str, head: str | None = None) -> Sample:
        head = self.head if head is None else head
        start = point(head, len(head))
        if self.edit:
            before = head + self.body + self.tail
            end = point(before, len(head) + len(self.body))
            return Sample(self.path, kind, before, start, end, draft)
        return Sample(self.path, kind, head + self.tail, start, start, draft)

    def replaced(self, at: tuple[str, int, int], new: str) -> str:
        return self.body[: at[1]] + new + self.body[at[2] :]

    def renamed(
        self,
        kind: str,
        candidates: Sequence[tuple[str, int, int]],
        rename: Callable[[str], str],
        every: Collection[str],
        rng: random.Random,
    ) -> Iterator[Sample]:
        """One of the candidates renamed (a synonym, a misspelling), unless the new name is one
        the file already has."""
        if candidates:
            at = rng.choice(candidates)
            new = rename(at[0])
            if new not in every:
                yield self.sample(kind, self.replaced(at, new))

    def is_call(self, at: tuple[str, int, int]) -> bool:
        body = self.body
        return body[at[2] : at[2] + 1] == "(" and body[at[1] - 1 : at[1]] != "."


Verdict = dict[str, object] | None

#: The documents' last parses, kept across samples as the server keeps them across jobs (one
#: ``ParseTrees``, the job runner's): a file's drafts find its text before parsed already.
_TREES = ParseTrees()


def verify(sample: Sample, language: str, package: Callable[[], object] | None = None) -> Verdict:
    """The job's verification of the sample's draft (``actions.parse_check``: parse, the
    language's own parser where there is one, names); ``package`` gives what the package's other
    files declare, as the server reads it from disk."""

    class Data:  # the fields the verifier reads of an ActionInput
        document = Document(f"file://{sample.path}", sample.before, language_id=language)
        path = sample.path
        start, end = sample.start, sample.end
        original = None
        trees = _TREES

        @staticmethod
        def package() -> object:
            return None if package is None else package()

    verifier = parse_check.verifier(Data())  # type: ignore[arg-type]
    return None if verifier is None else verifier(sample.draft)


@dataclass(frozen=True)
class Corpus:
    """How one language's corpus is scored and reported."""

    language: str  # as the figures name it
    source: str  # where the code comes from
    missing: str  # what to install when it is not there
    kinds: Sequence[str]
    floor: float  # caught, over all kinds
    minimum: int = 40  # mistakes and controls at the least


def score(
    corpus: Corpus,
    part: str,
    samples: Sequence[Sample],
    check: Callable[[Sample], Verdict],
    figures: list[str],
) -> None:
    """Verify every sample, print the caught and false-alarm rates per kind, and assert the
    floors. Skipped (failed when ``CI=true``) when the sources are not installed;
    ``NAMES_MISSED=1`` also prints the misses by cause (why the check let each one pass) and
    the first missed mistakes."""
    if len(samples) < min(20, corpus.minimum):
        message = f"no {corpus.language} sources installed: {corpus.missing}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    count: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    alarms: list[str] = []
    missed: list[str] = []
    causes: Counter[str] = Counter()
    show = bool(os.environ.get("NAMES_MISSED"))
    for sample in samples:
        result = check(sample)
        count[sample.kind] += 1
        if result is not None and result["ok"] is False:
            failed[sample.kind] += 1
            if sample.kind == "control" and len(alarms) < 5:
                alarms.append(f"{sample.path}: {result['details']}")
        elif sample.kind != "control" and show:
            causes[f"{sample.kind}: {_cause(result)}"] += 1
            if len(missed) < 12:
                missed.append(f"{sample.kind} {sample.path}: {result and result['details']}")
    kinds = corpus.kinds
    mistakes = sum(count[k] for k in kinds)
    caught = sum(failed[k] for k in kinds)
    assert mistakes >= corpus.minimum and count["control"] >= corpus.minimum
    alarm_rate = failed["control"] / count["control"]
    per_kind = ", ".join(
        f"{k} {failed[k]}/{count[k]} ({failed[k] / count[k]:.1%})" for k in kinds if count[k]
    )
    figures.append(
        f"{corpus.language} ({part}): caught {caught}/{mistakes} ({caught / mistakes:.1%}, "
        f"floor {corpus.floor:.0%}) — {per_kind}; false alarms "
        f"{failed['control']}/{count['control']} ({alarm_rate:.1%}, ceiling "
        f"{FALSE_ALARM_CEILING:.0%}); from {corpus.source}"
    )
    figures.extend(f"  false alarm: {alarm}" for alarm in alarms)
    figures.extend(f"  missed {n}: {cause}" for cause, n in causes.most_common())
    figures.extend(f"  missed: {m}" for m in missed)
    assert alarm_rate <= FALSE_ALARM_CEILING
    assert caught / mistakes >= corpus.floor


def _cause(result: Verdict) -> str:
    """Why the check let a mistake pass: the names check's answer, its names and headers left
    out so that answers of one kind count together."""
    if result is None:
        return "no verifier"
    checks = result.get("checks")
    names = [c for c in checks if c.get("name") == "names"] if isinstance(checks, list) else []
    details = str(names[0].get("details") if names else result.get("details"))
    details = re.sub(r"the header \S+ cannot", "a header cannot", details)
    return re.sub(r"'[^']*'", "'…'", details)
