"""C#'s names check: lowercase names and unqualified calls bound nowhere in the file are
flagged; types, members and what a base class of another file may bring are left alone."""

from __future__ import annotations

from fastedit_lsp.engines.names import check_names
from fastedit_lsp.engines.parse import parse

FILE = """using System;
using System.Collections.Generic;

namespace Demo
{
    class Counter
    {
        private int total;

        public int Count(IEnumerable<string> words, int limit)
        {
            var seen = new HashSet<string>();
            foreach (var word in words)
            {
                BODY;
            }
            return Normalize(total);
        }

        private static int Normalize(int value) => Math.Max(value, 0);
    }
}
"""


def _check(body: str, text: str = FILE) -> tuple[bool | None, str]:
    text = text.replace("BODY", body)
    parsed = parse("c_sharp", text)
    start = text.index("            var seen")
    verdict = check_names("c_sharp", parsed.tree, parsed.data, start, len(parsed.data))
    return verdict.ok, verdict.message


def test_correct_c_sharp_resolves() -> None:
    body = "if (seen.Add(word) && total < limit) total += Normalize(word.Length)"
    assert _check(body) == (True, "every name read resolves")


def test_a_misspelled_local_is_flagged_with_its_line() -> None:
    assert _check("seen.Add(wrd)") == (False, "line 15: 'wrd' is not defined")


def test_an_unqualified_call_of_a_method_defined_nowhere_is_flagged() -> None:
    assert _check("total += Normalise(limit)") == (False, "line 15: 'Normalise' is not defined")


def test_types_members_and_lambdas_are_not_flagged() -> None:
    body = "Func<int, int> twice = n => n * 2; total = twice(Console.WindowWidth + Tab.Size)"
    assert _check(body)[0] is True


def test_a_base_class_of_another_file_leaves_lowercase_names_alone() -> None:
    text = FILE.replace("class Counter", "class Counter : CounterBase")
    assert _check("seen.Add(prefix)", text)[0] is True
    interface = FILE.replace("class Counter", "class Counter : IDisposable")
    assert _check("seen.Add(prefix)", interface)[0] is False  # an interface brings no fields


def test_a_partial_class_or_using_static_leaves_names_alone() -> None:
    partial = FILE.replace("class Counter", "partial class Counter")
    assert _check("seen.Add(prefix)", partial)[0] is True
    text = FILE.replace("using System;", "using System;\nusing static Helpers;")
    assert _check("total += Clamp(limit)", text)[0] is True
    assert _check("seen.Add(prefx)", text)[0] is False


def test_an_enums_integral_type_or_a_structs_interfaces_bring_no_names() -> None:
    declared = "namespace Demo\n{\n    enum Level : uint { Low }\n    struct Cell : Marker { }\n"
    text = FILE.replace("namespace Demo\n{\n", declared)
    assert _check("seen.Add(wrd)", text) == (False, "line 17: 'wrd' is not defined")
    assert _check("seen.Add(word)", text)[0] is True
