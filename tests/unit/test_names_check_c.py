"""C's and C++'s names check (engines/names/c.py; headers on disk: project/c_headers.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from fastedit_lsp.engines.names import CIncludes, NamesVerdict, check_names
from fastedit_lsp.engines.names import c as c_names
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.project.c_headers import CHeaders

PROGRAM = """#include <stdio.h>
#include <string.h>

static int read_config(const char *path, char *buffer, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buffer, 1, size, f);
    fclose(f);
    return (int)n + (int)strlen(buffer);
}

int main(void) {
    char buffer[64];
    return read_config("x", buffer, sizeof buffer);
}
"""


def _check(
    text: str, language: str = "c", includes: CIncludes | None = None, region: str | None = None
) -> NamesVerdict:
    parsed = parse(language, text)
    start = text.index(region) if region else 0
    end = start + len(region) if region else len(text)
    prefix = text[:start].encode()
    return check_names(
        language,
        parsed.tree,
        parsed.data,
        len(prefix),
        len(prefix) + len(text[start:end].encode()),
        includes,
    )


def test_a_correct_c_file_passes() -> None:
    verdict = _check(PROGRAM)
    assert verdict.ok is True, verdict.message


def test_a_misspelled_local_is_flagged_with_its_line() -> None:
    verdict = _check(PROGRAM.replace("fclose(f)", "fclose(fp)"))
    assert verdict.ok is False and verdict.message == "line 9: 'fp' is not defined"


def test_a_call_of_a_helper_the_file_does_not_define_is_flagged() -> None:
    verdict = _check(PROGRAM.replace('read_config("x"', 'load_config("x"'))
    assert verdict.ok is False and "'load_config' is not defined" in verdict.message


def test_a_name_whose_standard_header_is_not_included_is_flagged() -> None:
    verdict = _check(PROGRAM.replace("#include <string.h>\n", ""))
    assert verdict.ok is False and "'strlen' is not defined" in verdict.message


def test_a_header_that_cannot_be_read_leaves_unknown_names_not_checked() -> None:
    text = '#include "config.h"\n' + PROGRAM.replace("fclose(f)", "fclose(fp)")
    verdict = _check(text)
    assert verdict.ok is None and '"config.h" cannot be read' in verdict.message


def test_a_project_header_on_disk_declares_names(tmp_path: Path) -> None:
    (tmp_path / "util.h").write_text("#include <stddef.h>\nint load_config(const char *p);\n")
    source = tmp_path / "main.c"
    text = '#include "util.h"\n' + PROGRAM.replace('read_config("x"', 'load_config("x"')
    source.write_text(text)
    includes = CHeaders().includes(str(source))
    assert _check(text, includes=includes).ok is True
    wrong = text.replace('load_config("x"', 'load_settings("x"')
    assert _check(wrong, includes=includes).ok is False


def _age(*paths: Path) -> None:
    """Files and folders as if last changed a minute ago (what a kept closure trusts)."""
    past = time.time() - 60
    for path in paths:
        os.utime(path, (past, past))


def test_what_an_include_brings_is_kept_until_a_header_changes(tmp_path: Path) -> None:
    util = tmp_path / "util.h"
    util.write_text("int load_config(const char *p);\n")
    text = '#include "util.h"\n' + PROGRAM.replace('read_config("x"', 'load_config("x"')
    (tmp_path / "main.c").write_text(text)
    _age(util, tmp_path / "main.c", tmp_path)
    headers = CHeaders()
    includes = headers.includes(str(tmp_path / "main.c"))
    first = headers.header("util.h", True, tmp_path)
    assert first is not None and "load_config" in first.words
    # Kept: the same answer, not a new reading.
    assert headers.header("util.h", True, tmp_path) is first
    assert _check(text, includes=includes).ok is True
    # The header renamed its function: the next check reads it again.
    util.write_text("int load_settings(const char *path);\n")
    _age(util)
    verdict = _check(text, includes=includes)
    assert verdict.ok is False and "'load_config' is not defined" in verdict.message


def test_a_header_created_after_a_check_is_found_by_the_next(tmp_path: Path) -> None:
    text = '#include "util.h"\n' + PROGRAM.replace('read_config("x"', 'load_config("x"')
    (tmp_path / "main.c").write_text(text)
    _age(tmp_path / "main.c", tmp_path)
    includes = CHeaders().includes(str(tmp_path / "main.c"))
    assert includes is not None
    assert _check(text, includes=includes).ok is None  # "util.h" cannot be read
    (tmp_path / "util.h").write_text("int load_config(const char *p);\n")
    assert _check(text, includes=includes).ok is True


def test_a_header_changed_within_the_last_second_is_read_again(tmp_path: Path) -> None:
    # An mtime may not show a second change in the same clock tick: a header changed in the
    # last second is not kept. Here the change keeps the size and the mtime, as in one tick.
    util = tmp_path / "util.h"
    util.write_text("int load_config(const char *p);\n")
    seen = util.stat().st_mtime_ns
    headers = CHeaders()
    first = headers.header("util.h", True, tmp_path)
    util.write_text("int load_kernel(const char *p);\n")
    os.utime(util, ns=(seen, seen))
    again = headers.header("util.h", True, tmp_path)
    assert first is not None and again is not None
    assert "load_kernel" in again.words and "load_config" not in again.words


def test_an_unknown_macro_argument_is_not_checked_rather_than_flagged() -> None:
    text = (
        "#include <stdio.h>\n#define SHOW(x) puts(#x)\n"
        "int f(void) { SHOW(anything); return __builtin_expect(1, 1); }\n"
    )
    verdict = _check(text)
    assert verdict.ok is None and "'anything' is a macro's argument" in verdict.message


def test_a_name_handed_to_an_all_caps_macro_counts_as_declared() -> None:
    text = (
        "#include <stdio.h>\n#define MUTEX(m) int m = 0\n"
        "int f(void) { MUTEX(mtx); return mtx + __builtin_expect(1, 1); }\n"
    )
    assert _check(text, region="return mtx").ok is True


def test_code_under_an_if_is_not_flagged() -> None:
    text = (
        "#include <stdio.h>\nint f(void) {\n#ifdef DEBUG\n  dump_state();\n#endif\n  return 0;\n}\n"
    )
    assert _check(text).ok is None


def test_a_macro_pasting_tokens_makes_unknown_names_uncertain() -> None:
    text = (
        "#include <stdio.h>\n#define MAKE(n) int get_##n(void) { return 0; }\nMAKE(size)\n"
        "int f(void) { return get_size(); }\n"
    )
    assert _check(text, region="return get_size();").ok is None


def test_cpp_members_templates_and_std_are_not_flagged_wrongly() -> None:
    text = (
        "#include <vector>\n#include <string>\n"
        "class Box { public: int size() const { return count_ + extra(); }\n"
        "  int extra() const { return 1; }\n  int count_ = 0; };\n"
        "int h(const std::vector<int>& v) { auto [a, b] = std::pair<int, int>{1, 2};\n"
        "  return static_cast<int>(v.size()) + a + b + [&](int k) { return k; }(3); }\n"
    )
    verdict = _check(text, "cpp")
    assert verdict.ok is True, verdict.message
    assert _check(text.replace("count_ + extra", "cout_ + extra"), "cpp").ok is False


def test_a_templates_dependent_call_is_not_checked_rather_than_ok() -> None:
    text = "#include <vector>\ntemplate <typename T> int g(T t) { return helper(t); }\n"
    verdict = _check(text, "cpp")
    assert verdict.ok is None and "'helper' is a template's name" in verdict.message
    plain = "#include <vector>\ntemplate <typename T> int g(T t) { return t + offset; }\n"
    assert _check(plain, "cpp").ok is False


def test_cpp_using_namespace_of_an_unknown_namespace_is_not_checked() -> None:
    text = "#include <vector>\nusing namespace boost;\nint f() { return thing(); }\n"
    assert _check(text, "cpp").ok is None
    std = "#include <algorithm>\nusing namespace std;\nint f(int a, int b) { return max(a, b); }\n"
    assert _check(std, "cpp").ok is True


UNREADABLE = '#include "config.h"\n'


def test_a_misspelled_local_is_flagged_even_when_a_header_cannot_be_read() -> None:
    verdict = _check(UNREADABLE + PROGRAM.replace("fread(buffer", "fread(bufer"))
    assert verdict.ok is False and verdict.message == "line 9: 'bufer' is not defined"
    swapped = _check(UNREADABLE + PROGRAM.replace("size, f)", "sizee, f)"))
    assert swapped.ok is False and "'sizee' is not defined" in swapped.message


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("fread(buffer", "fread(buffers"),  # a letter added at the end: another name
        ("strlen(buffer)", "strlen(puffer)"),  # the first letter replaced
        ("fclose(f)", "fclose(fp)"),  # too short to tell from a header's name
        ("size, f)", "size2, f)"),  # a digit
        ("fread(buffer", "fread(Buffer"),  # case only
        ("return read_config(", "return rread_config("),  # a function's name, not a local
    ],
)
def test_an_unknown_name_a_header_may_declare_stays_not_checked(old: str, new: str) -> None:
    verdict = _check(UNREADABLE + PROGRAM.replace(old, new, 1))
    assert verdict.ok is None, verdict.message


def test_a_slip_of_another_functions_local_stays_not_checked() -> None:
    text = UNREADABLE + PROGRAM.replace("char buffer[64];", "char buffer[64]; int total = 0;")
    assert _check(text.replace("return (int)n", "return (int)totl")).ok is None
    assert _check(text.replace("buffer, sizeof buffer)", "buffer, totl)")).ok is False


def test_a_slip_of_a_local_that_the_file_reads_elsewhere_stays_not_checked() -> None:
    text = UNREADABLE + PROGRAM + "int other(void) { return sizee; }\n"
    text = text.replace("size, f)", "sizee, f)")
    region = text[text.index("    FILE *f") : text.index("int main")]
    assert _check(text, region=region).ok is None  # 'sizee' may be config.h's global


def test_a_slip_called_as_a_function_or_under_if_0_stays_not_checked() -> None:
    called = UNREADABLE + PROGRAM.replace("fclose(f);", "fclose(f); buffr(1);")
    assert _check(called).ok is None  # a function of config.h, as a rule
    unused = "fclose(f);\n#if 0\n    bufer[0] = 0;\n#endif"
    dead = UNREADABLE + PROGRAM.replace("fclose(f);", unused)
    assert _check(dead).ok is None


def test_a_cpp_local_declared_with_constructor_arguments_is_a_local_in_scope() -> None:
    text = (
        '#include "edge.h"\n#include <string>\n'
        "std::string join(const char* text) {\n  std::string prefix(text);\n"
        "  return prefix + tail_of(text);\n}\n"
    )
    assert _check(text, "cpp").ok is None
    verdict = _check(text.replace("return prefix +", "return prefx +"), "cpp")
    assert verdict.ok is False and "'prefx' is not defined" in verdict.message


def test_a_misspelled_local_in_a_macros_arguments_is_flagged_when_the_macro_is_unknown() -> None:
    text = (
        UNREADABLE + "#include <assert.h>\n"
        "int twice(int count) {\n  CHECK_ARG(count > 0);\n  return count * 2;\n}\n"
    )
    assert _check(text).ok is None
    verdict = _check(text.replace("CHECK_ARG(count", "CHECK_ARG(cunt"))
    assert verdict.ok is False and "'cunt' is not defined" in verdict.message


@pytest.mark.parametrize(
    ("read", "local", "slip"),
    [
        ("bufer", "buffer", True),  # a letter dropped
        ("proces", "process", True),  # a doubled letter at the end loses its inner copy
        ("lenght", "length", True),  # neighbours swapped
        ("valeu", "value", True),
        ("countr", "counter", True),
        ("items", "item", False),  # a plural is another name
        ("item", "items", False),
        ("y_pos", "x_pos", False),  # the first letter
        ("get_value", "set_value", False),
        ("buf2", "buf1", False),  # digits
        ("Value", "value", False),  # case only
        ("data_", "data", False),
        ("lengths", "length", False),
    ],
)
def test_a_slip_is_one_letter_inside_the_word(read: str, local: str, slip: bool) -> None:
    assert c_names._one_slip(read, local) is slip


def test_a_unity_builds_part_is_checked_with_what_its_includer_brings(tmp_path: Path) -> None:
    (tmp_path / "all.c").write_text(
        '#include <stdio.h>\n#include "one.c"\n#include "two.c"\nint main(void) { return 0; }\n'
    )
    (tmp_path / "one.c").write_text("static int shout(const char *s) { return puts(s); }\n")
    part = "static int twice(const char *s) { return shout(s) + puts(s) + CALL(s); }\n"
    (tmp_path / "two.c").write_text(part)
    includes = CHeaders().includes(str(tmp_path / "two.c"))
    assert includes is not None and includes.part
    # puts: the includer's <stdio.h>; shout: its other part; CALL: nothing (a macro's name).
    assert _check(part.replace(" + CALL(s)", ""), includes=includes).ok is True
    verdict = _check(part.replace("shout(s)", "yell(s)"), includes=includes)
    assert verdict.ok is False and "'yell' is not defined" in verdict.message


def test_a_part_whose_includer_includes_an_unknown_header_stays_not_checked(
    tmp_path: Path,
) -> None:
    (tmp_path / "all.c").write_text('#include "gen/config.h"\n#include "two.c"\n')
    part = "static int twice(int n) { return helper(n) * 2; }\n"
    (tmp_path / "two.c").write_text(part)
    verdict = _check(part, includes=CHeaders().includes(str(tmp_path / "two.c")))
    assert verdict.ok is None and "includes nothing" in verdict.message


@pytest.mark.parametrize(
    ("alternatives", "ok"),
    [
        ('#if defined(A)\n# include "a_tcl.h"\n#else\n# include "tcl.h"\n#endif\n', None),
        (
            '#ifdef A\n# include "a.h"\n#elif B\n# include "b.h"\n#else\n# include "c.h"\n#endif\n',
            None,
        ),
        ('#if defined(A)\n# include "a_tcl.h"\n#else\n# include <string.h>\n#endif\n', False),
        ('#ifdef A\n# include "a_tcl.h"\n#endif\n', False),
    ],
)
def test_an_if_that_includes_an_unreadable_header_either_way_leaves_names_not_checked(
    alternatives: str, ok: bool | None
) -> None:
    text = f"#include <stdio.h>\n{alternatives}int f(void) {{ return Tcl_Eval(0); }}\n"
    verdict = _check(text)
    assert verdict.ok is ok, verdict.message
