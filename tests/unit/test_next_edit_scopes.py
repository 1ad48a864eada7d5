"""Renames carried in the tree-sitter languages: to the uses of the variable in its scope, from the
syntax tree, never to a same-named variable of another function or block, nor into a string, a
comment, a member access or a shadowing closure's parameter."""

from __future__ import annotations

import pytest

from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.engines.next_edit.history import EditHistory
from fastedit_lsp.engines.next_edit.lines import ListLines
from fastedit_lsp.engines.next_edit.predict import predict
from fastedit_lsp.engines.next_edit.syntax_scope import region


def carry(language: str, text: str, line: int, old: str, new: str) -> tuple[list[Point], str]:
    """Rename the first ``old`` of ``line`` to ``new`` one key at a time, as a user types, then
    accept every suggestion: (where they were, the text at the end)."""
    document = Document("file:///t", text, language_id=language)
    history = EditHistory()

    def change(start: Point, end: Point, inserted: str) -> None:
        before = (document.line(start.line),)
        made = document.replace(start, end, inserted)
        history.record(made, before, (document.line(start.line),), own=False)

    col = document.line(line).index(old)
    for _ in old:
        change(Point(line, col), Point(line, col + 1), "")
    for offset, ch in enumerate(new):
        change(Point(line, col + offset), Point(line, col + offset), ch)
    cursor = Point(line, col + len(new))
    seen: list[Point] = []
    while (p := predict(document, list(history.records), cursor, language)) is not None:
        assert p.kind == "rename" and p.text == new and len(seen) < 20
        seen.append(p.start)
        change(p.start, p.end, p.text)
        cursor = Point(p.start.line, p.start.col + len(new))
    return seen, document.text


GO = """\
package stats

// total sums xs; count is what it returns.
func total(xs []int) int {
\tcount := 0
\tfor _, x := range xs {
\t\tcount += x // add x to count
\t}
\tlog.Printf("count=%d", count)
\treturn count + s.count
}

func other(ys []int) int {
\tcount := len(ys)
\treturn count
}
"""


def test_go_a_local_renamed_in_its_function_only() -> None:
    seen, text = carry("go", GO, 4, "count", "sum")
    assert seen == [Point(6, 2), Point(8, 24), Point(9, 8)]
    assert "\t\tsum += x // add x to count\n" in text
    assert '\tlog.Printf("count=%d", sum)\n\treturn sum + s.count\n' in text
    assert "\tcount := len(ys)\n\treturn count\n" in text  # the other function's own
    assert "// total sums xs; count is what it returns." in text


def test_go_a_loop_variable_renamed_in_its_loop() -> None:
    seen, text = carry("go", GO, 5, "x", "item")
    assert seen == [Point(6, 11)]
    assert "\t\tcount += item // add x to count\n" in text


JAVASCRIPT = """\
class Cart {
  total(items) {
    let count = 0;
    items.forEach((item) => { count += item.price; });
    const label = `count: ${count}`; // count
    return count + this.count;
  }

  size() {
    let count = this.items.length;
    return count;
  }
}

function first(list) {
  for (let i = 0; i < list.length; i++) { use(list[i]); }
  for (let i = list.length; i > 0; i--) { use(list[i]); }
}
"""


def test_javascript_a_method_local_renamed_in_its_method_only() -> None:
    seen, text = carry("javascript", JAVASCRIPT, 2, "count", "sum")
    assert seen == [Point(3, 30), Point(4, 28), Point(5, 11)]
    assert "    const label = `count: ${sum}`; // count\n    return sum + this.count;\n" in text
    assert "    let count = this.items.length;\n    return count;\n" in text


def test_javascript_a_loop_variable_renamed_in_its_loop_not_the_next_loop() -> None:
    seen, text = carry("javascript", JAVASCRIPT, 15, "i", "k")
    assert seen == [Point(15, 18), Point(15, 35), Point(15, 51)]
    assert "  for (let k = 0; k < list.length; k++) { use(list[k]); }\n" in text
    assert "  for (let i = list.length; i > 0; i--) { use(list[i]); }\n" in text


TYPESCRIPT = """\
export function average(values: number[]): number {
  let count: number = 0;
  let sum = 0;
  for (const value of values) {
    count += 1;
    sum += value;
  }
  return count === 0 ? 0 : sum / count;
}

export function median(values: number[]): number {
  const count = values.length;
  return values[Math.floor(count / 2)];
}
"""


@pytest.mark.parametrize("language", ["typescript", "typescriptreact"])
def test_typescript_a_local_renamed_in_its_function_only(language: str) -> None:
    seen, text = carry(language, TYPESCRIPT, 1, "count", "n")
    assert seen == [Point(4, 4), Point(7, 9), Point(7, 29)]
    assert "  return n === 0 ? 0 : sum / n;\n" in text
    assert "  const count = values.length;\n  return values[Math.floor(count / 2)];\n" in text


RUST = """\
impl Stats {
    pub fn total(&self, xs: &[i64]) -> i64 {
        let mut count = 0;
        for x in xs {
            count += x; // count
        }
        let double = |count: i64| count * 2;
        println!("count = {}", count);
        double(count) + self.count
    }

    fn other(&self) -> i64 {
        let count = 3;
        count
    }
}
"""


def test_rust_a_local_renamed_in_its_function_not_in_a_shadowing_closure() -> None:
    seen, text = carry("rust", RUST, 2, "count", "sum")
    assert seen == [Point(4, 12), Point(7, 31), Point(8, 15)]
    assert "        let double = |count: i64| count * 2;\n" in text
    assert "        double(sum) + self.count\n" in text
    assert "        let count = 3;\n        count\n" in text


JAVA = """\
public class Stats {
    private int count;

    public int total(int[] xs) {
        int count = 0;
        for (int x : xs) {
            count += x;
        }
        String label = "count";
        return count + this.count;
    }

    public int other() {
        int count = 4;
        return count;
    }
}
"""


def test_java_a_local_renamed_in_its_method_only() -> None:
    seen, text = carry("java", JAVA, 4, "count", "sum")
    assert seen == [Point(6, 12), Point(9, 15)]
    assert "        return sum + this.count;\n" in text
    assert '        String label = "count";\n' in text
    assert "        int count = 4;\n        return count;\n" in text


C = """\
static int total(const int *xs, size_t n)
{
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        count += xs[i]; /* count */
    }
    printf("count=%d\\n", count);
    return count + s->count;
}

static int other(void)
{
    int count = 5;
    return count;
}
"""


def test_c_a_local_renamed_in_its_function_only() -> None:
    seen, text = carry("c", C, 2, "count", "sum")
    assert seen == [Point(4, 8), Point(6, 25), Point(7, 11)]
    assert "        sum += xs[i]; /* count */\n" in text
    assert '    printf("count=%d\\n", sum);\n    return sum + s->count;\n' in text
    assert "    int count = 5;\n    return count;\n" in text


CPP = """\
int Stats::total(const std::vector<int>& xs) {
    int count = 0;
    for (int x : xs) {
        count += x;
    }
    auto twice = [](int count) { return count * 2; };
    return twice(count) + this->count + ns::count;
}

int Stats::other() {
    int count = 8;
    return count;
}
"""


def test_cpp_a_local_renamed_in_its_function_not_in_a_lambdas_parameter() -> None:
    seen, text = carry("cpp", CPP, 1, "count", "sum")
    assert seen == [Point(3, 8), Point(6, 17)]
    assert "    auto twice = [](int count) { return count * 2; };\n" in text
    assert "    return twice(sum) + this->count + ns::count;\n" in text
    assert "    int count = 8;\n    return count;\n" in text


CSHARP = """\
namespace Demo
{
    public class Stats
    {
        public int Total(int[] xs)
        {
            var count = 0;
            foreach (var x in xs)
            {
                count += x;
            }
            Func<int, int> next = count => count + 1;
            return next(count) + this.count;
        }

        public int Other()
        {
            var count = 6;
            return count;
        }
    }
}
"""


def test_csharp_a_local_renamed_in_its_method_not_in_a_lambdas_parameter() -> None:
    seen, text = carry("csharp", CSHARP, 6, "count", "sum")
    assert seen == [Point(9, 16), Point(12, 24)]
    assert "            Func<int, int> next = count => count + 1;\n" in text
    assert "            return next(sum) + this.count;\n" in text
    assert "            var count = 6;\n            return count;\n" in text


def test_a_name_already_used_in_the_scope_is_not_a_rename() -> None:
    seen, _ = carry("go", GO, 9, "count", "x")  # return count -> return x: x is a variable
    assert seen == []


def test_the_parsed_region_is_the_function_around_the_edit_not_the_document() -> None:
    lines = ListLines(GO.split("\n"))
    assert region(lines, 6) == (3, 11)  # func total ... its closing brace
    assert region(lines, 14) == (12, 16)
    java = ListLines(JAVA.split("\n"))
    assert region(java, 6) == (0, 17)  # the whole class: under MAX_REGION lines


def test_a_parameter_renamed_in_the_signature_is_carried_through_the_body() -> None:
    source = (
        "function scale(value, factor) {\n"
        '  const label = "é→" + value; // value\n'
        "  return value * factor;\n"
        "}\n"
        "function other(value) {\n"
        "  return value;\n"
        "}\n"
    )
    seen, text = carry("javascript", source, 0, "value", "v")
    assert seen == [Point(1, 23), Point(2, 9)]  # code points, after a non-ASCII string
    assert '  const label = "é→" + v; // value\n  return v * factor;\n' in text
    assert "function other(value) {\n  return value;\n" in text


def test_a_module_level_variable_is_renamed_in_the_functions_that_do_not_declare_their_own() -> (
    None
):
    source = (
        "let count = 0;\n"
        "count += 1;\n"
        "function f() { return count; }\n"
        "function g() { const count = 2; return count; }\n"
        "const label = 'count';\n"
    )
    seen, text = carry("javascript", source, 0, "count", "n")
    assert seen == [Point(1, 0), Point(2, 22)]
    assert "function g() { const count = 2; return count; }\n" in text
    assert "const label = 'count';" in text


GO_PACKAGE = """\
package stats

var limit = 10

func clamp(x int) int {
\tif x > limit {
\t\treturn limit
\t}
\treturn x
}

func scaled(limit int) int {
\treturn limit * 2
}
"""


def test_go_a_package_variable_is_renamed_in_functions_not_where_a_parameter_shadows_it() -> None:
    seen, text = carry("go", GO_PACKAGE, 2, "limit", "maxValue")
    assert seen == [Point(5, 8), Point(6, 9)]
    assert "func scaled(limit int) int {\n\treturn limit * 2\n}\n" in text


def test_in_a_function_too_long_to_parse_whole_the_rename_stays_in_the_parsed_block() -> None:
    filler = "".join(f"\tlog.Print({i})\n" for i in range(400))
    source = (
        "func long(xs []int) int {\n"
        "\tcount := 0\n" + filler + "\tfor _, x := range xs {\n"
        "\t\tif x > 0 {\n"
        "\t\t\tcount += x\n"
        "\t\t\tlog.Print(count)\n"
        "\t\t}\n"
        "\t}\n"
        "\treturn count\n"
        "}\n"
    )
    row = 2 + 400 + 2  # count += x
    seen, text = carry("go", source, row, "count", "sum")
    assert seen == [Point(row + 1, 13)]  # the block around it; the function is 400+ lines
    assert text.endswith("\t\t\tsum += x\n\t\t\tlog.Print(sum)\n\t\t}\n\t}\n\treturn count\n}\n")


def test_a_keyword_changed_is_a_line_rewrite_and_a_python_keyword_is_a_name() -> None:
    source = (
        "function f(xs) {\n  var total = 0;\n  var first = xs[0];\n  return total + first;\n}\n"
    )
    document = Document("file:///t.js", source, language_id="javascript")
    history = EditHistory()
    before = (document.line(1),)
    made = document.replace(Point(1, 2), Point(1, 5), "let")
    history.record(made, before, (document.line(1),), own=False)
    p = predict(document, list(history.records), Point(1, 5), "javascript")
    assert p is not None and (p.start, p.end, p.text, p.kind) == (
        Point(2, 2),
        Point(2, 5),
        "let",
        "rewrite",
    )
    # "match" is a soft keyword in Python only: here a variable, renamed in its scope.
    source = "function f(xs) {\n  const match = xs[0];\n  return match;\n}\n"
    seen, text = carry("javascript", source, 1, "match", "first")
    assert seen == [Point(2, 9)] and "  return first;\n" in text
