"""The offline next-edit engine and its edit history, on small documents."""

from __future__ import annotations

from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.engines.next_edit.history import EditHistory
from fastedit_lsp.engines.next_edit.lines import Prediction
from fastedit_lsp.engines.next_edit.predict import predict
from fastedit_lsp.engines.next_edit.rewrite import format_to_fstring, percent_to_fstring

SOURCE = '''\
def total(items, scale):
    """Sum items: total(items) is the items' sum."""
    count = 0
    for item in items:
        count += item * scale
    log(count, "done")
    log(scale, "scale")
    return count


def other(count):
    return count
'''


class Editor:
    """A document typed into one keystroke at a time, its history fed as the store feeds it."""

    def __init__(self, text: str = SOURCE) -> None:
        self.document = Document("file:///t.py", text, language_id="python")
        self.history = EditHistory()
        self.cursor = Point(0, 0)

    def type(self, line: int, col: int, end: int, text: str, *, own: bool = False) -> None:
        """Replace ``line[col:end]`` by ``text``: deleting first, then one character at a time."""
        for _ in range(end - col):
            self._change(Point(line, col), Point(line, col + 1), "", own)
        for offset, ch in enumerate(text):
            self._change(Point(line, col + offset), Point(line, col + offset), ch, own)
        self.cursor = Point(line, col + len(text))

    def _change(self, start: Point, end: Point, text: str, own: bool) -> None:
        last = start.line + text.count("\n")
        before = tuple(self.document.line(i) for i in range(start.line, end.line + 1))
        change = self.document.replace(start, end, text)
        after = tuple(self.document.line(i) for i in range(start.line, last + 1))
        self.history.record(change, before, after, own=own)

    def apply(self, p: Prediction) -> None:
        self.type(p.start.line, p.start.col, p.end.col, p.text)

    def next(self) -> Prediction | None:
        return predict(self.document, list(self.history.records), self.cursor, "python")


def test_keystrokes_on_one_line_coalesce_into_one_record() -> None:
    editor = Editor()
    editor.type(2, 4, 9, "total")
    assert len(editor.history.records) == 1
    record = editor.history.records[0]
    assert record.single_line == ("    count = 0", "    total = 0")


def test_a_rename_is_carried_to_each_occurrence_in_its_function_then_stops() -> None:
    editor = Editor()
    editor.type(2, 4, 9, "acc")
    seen = []
    while (p := editor.next()) is not None:
        assert p.kind == "rename" and p.text == "acc"
        seen.append(p.start)
        editor.apply(p)
    assert seen == [Point(4, 8), Point(5, 8), Point(7, 11)]
    # Not in the other function, not in the docstring.
    assert editor.document.line(11) == "    return count"
    assert "total(items)" in editor.document.line(1)


def test_a_variable_swapped_for_another_in_scope_is_not_a_rename() -> None:
    editor = Editor()
    editor.type(7, 11, 16, "scale")  # return count -> return scale
    assert editor.next() is None


def test_the_servers_own_edits_teach_nothing() -> None:
    editor = Editor()
    editor.type(2, 4, 9, "acc", own=True)
    assert editor.next() is None
    assert not editor.history.records


def test_an_added_argument_is_carried_to_the_next_call_of_the_function() -> None:
    editor = Editor()
    editor.type(5, 21, 21, ", level=2")
    p = editor.next()
    assert p is not None and p.kind == "argument"
    editor.apply(p)
    assert editor.document.line(6) == '    log(scale, "scale", level=2)'
    assert editor.next() is None


def test_a_line_rewrite_is_carried_to_the_next_line_it_fits() -> None:
    text = 'a = "x %s" % (b,)\nprint("n=%d, m=%r" % (n, m))\nc = "{} and {:.2f}".format(p, q)\n'
    editor = Editor(text)
    editor.type(0, 4, 17, 'f"x {b}"')
    p = editor.next()
    assert p is not None and p.kind == "rewrite"
    editor.apply(p)
    assert editor.document.line(1) == 'print(f"n={n}, m={m!r}")'


def test_a_method_renamed_at_one_call_is_renamed_at_the_next() -> None:
    text = "self.assertEquals(a, 1)\nx = 2\nself.assertEquals(b, 2)\nassertEquals = 3\n"
    editor = Editor(text)
    editor.type(0, 5, 17, "assertEqual")
    p = editor.next()
    assert p == Prediction(Point(2, 5), Point(2, 17), "assertEqual", "rewrite")
    editor.apply(p)
    assert editor.next() is None  # the bare name on line 3 is not a method call


def test_a_changed_number_is_not_repeated() -> None:
    editor = Editor("x = 1\ny = 1\n")
    editor.type(0, 4, 5, "2")
    assert editor.next() is None


def test_a_suggestion_that_would_break_the_syntax_is_dropped() -> None:
    # "==" -> ":=" fits "x = b == 1" too, where an unparenthesized ":=" is a syntax error.
    editor = Editor("if (a == 1):\n    pass\nx = b == 1\n")
    editor.type(0, 6, 8, ":=")
    assert editor.next() is None
    editor = Editor("if (a == 1):\n    pass\nif (b == 1):\n    pass\n")
    editor.type(0, 6, 8, ":=")
    assert editor.next() == Prediction(Point(2, 6), Point(2, 8), ":=", "rewrite")


def test_the_fstring_rewrites() -> None:
    assert percent_to_fstring('x = "%s: %5.2f%%" % (a, b.c)') == 'x = f"{a}: {b.c:5.2f}%"'
    assert percent_to_fstring("y = 'a %s' % name") == "y = f'a {name}'"
    assert percent_to_fstring('"%s" % (a, b)') is None  # one field, two values
    assert percent_to_fstring('b"%s" % a') is None
    assert format_to_fstring('"{} {:>3}".format(a, b)') == 'f"{a} {b:>3}"'
    assert format_to_fstring('"{0}".format(a)') is None


def test_a_suggestion_that_breaks_another_languages_syntax_is_dropped_by_tree_sitter() -> None:
    from fastedit_lsp.engines.next_edit.lines import ListLines
    from fastedit_lsp.engines.next_edit.predict import verified

    lines = ListLines(["function f(a) {", "  g(a, b);", "  g(c, d);", "}"])
    fine = Prediction(Point(2, 8), Point(2, 8), ", 1", "argument")
    broken = Prediction(Point(2, 8), Point(2, 8), ", (", "argument")
    assert verified(lines, fine, "javascript") is None
    assert verified(lines, broken, "javascript") == "it adds a syntax error"


def test_a_jobs_echoed_edit_is_reported_as_its_own() -> None:
    from fastedit_lsp.core.document import Change
    from fastedit_lsp.core.tracking import RegionTracker, apply_change

    document = Document("file:///t.py", "x = 1\n")
    tracker = RegionTracker(Point(0, 4), Point(0, 5), "1")
    edit = tracker.next_edit("2")
    tracker.sent(edit)
    echoed = apply_change(document, [(tracker, True)], Change(edit.start, edit.end, edit.text))
    typed = apply_change(document, [(tracker, True)], Change(Point(0, 0), Point(0, 0), "#"))
    assert (echoed, typed) == (True, False)


def test_a_docstrings_lines_are_followed_without_tokenizing_them_as_the_tokenizer_would() -> None:
    """``string_state`` (the rename scan's shortcut) says what ``scan_row`` says, on every line of
    installed modules, from outside a string and from inside each kind of triple quote."""
    import sysconfig
    from pathlib import Path

    from fastedit_lsp.engines.next_edit.tokens import scan_row, string_state

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    checked = 0
    for name in ("inspect.py", "pydoc.py", "textwrap.py", "doctest.py"):
        for line in (stdlib / name).read_text(encoding="utf-8").split("\n"):
            for quote in (None, '"""', "'''"):
                offset, _, state = scan_row(line, quote)
                assert string_state(line, quote) == (offset, state), (line, quote)
                checked += 1
    assert checked > 10_000


def test_a_rename_outside_a_function_skips_a_docstrings_example_then_stops_at_a_new_name() -> None:
    text = (
        "limit = 10\n"
        '"""Module notes.\n'
        "\n"
        "    limit = 3  # an example, in a string\n"
        '"""\n'
        "total = limit * 2\n"
        "cap = limit\n"
    )
    editor = Editor(text)
    editor.type(0, 0, 5, "bound")
    p = editor.next()
    assert p is not None and (p.start, p.text) == (Point(5, 8), "bound")
    editor.apply(p)
    p = editor.next()
    assert p is not None and p.start == Point(6, 6)
    # "cap" renamed to a name used elsewhere already: another variable, no rename.
    other = Editor("cap = 1\nlimit = 2\nprint(cap, limit)\n")
    other.type(0, 0, 3, "limit")
    assert other.next() is None
