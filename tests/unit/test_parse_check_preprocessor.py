"""The parse check in C and C++ where only the preprocessor could read the code
(engines/preprocessor.py, engines/parse.py's second comparison), and far errors that are the
grammar's own (engines/parse.py's bracket balance).

Each case is a correct draft that the check failed before (the corpus of
test_parse_check_corpus.py found them in zlib's, nettle's, mypyc's and code-server's sources),
next to the same draft with a bracket broken, which must still fail.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.engines import parse as ts_parse
from fastedit_lsp.engines import preprocessor

MARK = "@@DRAFT@@"


def _check(language: str, document: str, draft: str) -> ts_parse.Verdict:
    """The check of ``draft`` written at ``MARK`` in ``document`` (complete the rest)."""
    at = document.index(MARK)
    before = ts_parse.parse(language, document.replace(MARK, ""))
    return ts_parse.check_edit(before, at, at, draft)


#: (language, document with MARK, correct draft, the draft broken).
CASES = {
    "a directive inside an initializer's expression": (
        "c",
        'static PyType_Spec spec = {\n    .name = "f",\n@@DRAFT@@'
        "             Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DEFAULT,\n    .slots = slots,\n};\n",
        "    .flags = Py_TPFLAGS_IMMUTABLETYPE |\n#if PY_VERSION_HEX >= 0x030C0000\n"
        "             Py_TPFLAGS_MANAGED_DICT |\n#endif\n",
        "    .flags = (Py_TPFLAGS_IMMUTABLETYPE |\n#if PY_VERSION_HEX >= 0x030C0000\n"
        "             Py_TPFLAGS_MANAGED_DICT |\n#endif\n",
    ),
    "macros between string literals (inline assembly)": (
        "c",
        'void f(void) {\n  __asm__ volatile (\n    "    b.ne 88b \\n\\t"\n@@DRAFT@@'
        '    "    sub %[rounds], %[rounds], #4 \\n\\t"\n    : [rounds] "+r" (rounds)\n  );\n}\n',
        '    "4:  cmp  %[rounds], #4 \\n\\t"\n    "    " ROUND_A_FIRST()\n    "    " ROUND_B()\n',
        '    "4:  cmp  %[rounds], #4 \\n\\t"\n    "    " ROUND_A_FIRST(\n    "    " ROUND_B()\n',
    ),
    "a macro standing for the parameters, branches split by #else": (
        "c",
        "int\nbase64_encode BASE64_ENC_PARAMS\n{\n#if HAVE_AVX\n"
        '\t#include "../generic/enc_head.c"\n\tenc_loop_avx(&s, &slen, &o, &olen);\n#@@DRAFT@@\n'
        "int g(void) {\n  return 0;\n}\n",
        "else\n\tbase64_enc_stub(state, src, srclen, out, outlen);\n#endif\n}\n",
        "else\n\tbase64_enc_stub(state, src, srclen, out, outlen;\n#endif\n}\n",
    ),
    "statement macros without a semicolon": (
        "cpp",
        "void Init(Object exports) {\n  [&]() {\n"
        "    DEFINE_CONSTANT_INTEGER(exports, SQLITE_LIMIT_ATTACHED, LIMIT_ATTACHED)\n@@DRAFT@@"
        "  }();\n}\n",
        "    DEFINE_CONSTANT_INTEGER(exports, SQLITE_LIMIT_LIKE, LIMIT_LIKE)\n"
        "    DEFINE_CONSTANT_INTEGER(exports, SQLITE_LIMIT_VARIABLE, LIMIT_VARIABLE)\n",
        "    DEFINE_CONSTANT_INTEGER(exports, SQLITE_LIMIT_LIKE, LIMIT_LIKE\n"
        "    DEFINE_CONSTANT_INTEGER(exports, SQLITE_LIMIT_VARIABLE, LIMIT_VARIABLE)\n",
    ),
    "attribute macros on the line after the declarator (glibc)": (
        "c",
        "extern int pthread_attr_getscope (const pthread_attr_t *__attr, int *__scope)\n"
        "     __THROW __nonnull ((1, 2));\n\n@@DRAFT@@\n"
        "extern int pthread_attr_getstack (const pthread_attr_t *__attr)\n     __THROW;\n",
        "extern int pthread_attr_setscope (pthread_attr_t *__attr, int __scope)\n"
        "     __THROW __nonnull ((1));\n",
        "extern int pthread_attr_setscope (pthread_attr_t *__attr, int __scope\n"
        "     __THROW __nonnull ((1));\n",
    ),
    "a #define between enumerators": (
        "c",
        "enum\n{\n  MM_NOTOK = -1,\n#define MM_NOTOK MM_NOTOK\n  MM_OK = 0,\n@@DRAFT@@"
        "  MM_NOCON = 4\n#define MM_NOCON MM_NOCON\n};\n",
        "#define MM_OK MM_OK\n  MM_NOMSG = 1,\n#define MM_NOMSG MM_NOMSG\n",
        "#define MM_OK MM_OK\n  MM_NOMSG = (1,\n#define MM_NOMSG MM_NOMSG\n",
    ),
    "specifier macros before a declaration (libstdc++)": (
        "cpp",
        "namespace std _GLIBCXX_VISIBILITY(default)\n{\n  template<typename _Alloc>\n"
        "    _GLIBCXX14_CONSTEXPR inline void\n    __alloc_on_move(_Alloc& __one) { }\n\n"
        "@@DRAFT@@\n  template<typename _Tp>\n    _GLIBCXX20_CONSTEXPR void f(_Tp) { }\n}\n",
        "  template<typename _Alloc>\n    _GLIBCXX14_CONSTEXPR inline void\n"
        "    __alloc_on_copy(_Alloc& __one, const _Alloc& __two)\n    { __one = __two; }\n",
        "  template<typename _Alloc>\n    _GLIBCXX14_CONSTEXPR inline void\n"
        "    __alloc_on_copy(_Alloc& __one, const _Alloc& __two)\n    { __one = __two; \n",
    ),
    "a macro's parameter list over two lines (zlib's OF)": (
        "c",
        "void test_deflate       OF((Byte *compr, uLong comprLen));\n@@DRAFT@@"
        "void test_flush         OF((Byte *compr, uLong *comprLen));\nint main(void);\n",
        "void test_inflate       OF((Byte *compr, uLong comprLen,\n"
        "                            Byte *uncompr, uLong uncomprLen));\n",
        "void test_inflate       OF((Byte *compr, uLong comprLen,\n"
        "                            Byte *uncompr, uLong uncomprLen);\n",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_code_only_the_preprocessor_reads_passes_and_broken_code_there_fails(case: str) -> None:
    language, document, good, bad = CASES[case]
    verdict = _check(language, document, good)
    assert verdict.ok, verdict.message
    assert not _check(language, document, bad).ok


def test_a_draft_closing_what_the_document_left_open_is_not_blamed_for_the_grammars_gaps() -> None:
    # K&R definitions (zlib's examples) are errors to tree-sitter-c far below; with the two
    # braces the draft restores missing, tree-sitter hid them: they are not the draft's.
    document = (
        "int f(int x) {\n  while (x) {\n    if (x > 2) {\n      x--;\n@@DRAFT@@"
        "  return x;\n}\n\n" + "int pad;\n" * 8 + "int gzwrite OF((gzFile, const void *));\n"
        "int gzwrite(gz, buf)\n    gzFile gz;\n    const void *buf;\n{\n  return 0;\n}\n"
    )
    assert _check("c", document, "    }\n  }\n").ok
    # One brace short: the document stays unbalanced, and the far errors count again.
    assert not _check("c", document, "    }\n").ok


def test_normalize_keeps_offsets_and_the_branch_holding_the_region() -> None:
    text = b"#if A\nint a;\n#else\nint b;\n#endif\nint c = K_SIZE(void *);\n"
    at_b = text.index(b"int b")
    for keep in ((0, 0), (at_b, at_b)):
        out = preprocessor.normalize(text, keep)
        assert len(out) == len(text)
        assert out.count(b"\n") == text.count(b"\n")
    first = preprocessor.normalize(text, (0, 0))
    assert b"int a;" in first and b"int b;" not in first and b"#" not in first
    second = preprocessor.normalize(text, (at_b, at_b))
    assert b"int b;" in second and b"int a;" not in second
    assert b"int c = K_SIZE        ;" in first
    # A broken call is left for the parse to see.
    broken = b"int c = K_SIZE(void *;\n"
    assert preprocessor.normalize(broken, (0, 0)) == broken


def test_a_broken_conditional_in_the_draft_still_fails() -> None:
    document = "#include <stdio.h>\n@@DRAFT@@int main(void) {\n  return 0;\n}\n"
    assert _check("c", document, "#if defined(__GNUC__) && __GNUC__ == 12\n#endif\n").ok
    assert not _check("c", document, "#if defined(__GNUC__ && __GNUC__ == 12\n#endif\n").ok


def test_a_call_over_lines_is_read_whole_and_a_broken_one_is_left_for_the_parse() -> None:
    text = b"void f OF((int a,\n           char *b));\nint x = K_SIZE(a,\n  b) + 1;\n"
    out = preprocessor.normalize(text, (0, 0))
    assert len(out) == len(text) and out.count(b"\n") == text.count(b"\n")
    assert b"void f    (int a,\n           char *b) ;" in out
    assert b"int x = K_SIZE   \n     + 1;" in out
    # A statement ends the search: the call's ``)`` is missing, whatever a later line closes.
    broken = b"int x = K_SIZE(a,\n  g(b);\n  h(c));\n"
    assert preprocessor.normalize(broken, (0, 0)) == broken


#: mypyc's base64 ``enc_tail.c``: the end of a function's body, ``#include``d inside it.
FRAGMENT = (
    "\t\tif (slen-- == 0) {\n\t\t\tbreak;\n\t\t}\n\t\tst.bytes++;\n\n"
    "\tcase 1:\tif (slen-- == 0) {\n\t\t\tbreak;\n\t\t}\n\t\tst.bytes = 0;\n"
    "\t\tolen += 2;\n@@DRAFT@@"
)


def test_closing_braces_in_a_body_fragment_close_the_function_it_is_included_in() -> None:
    assert _check("c", FRAGMENT, "\t}\n}\nstate->bytes = st.bytes;\n*outlen = olen;\n").ok
    # Anything else broken there still fails.
    assert not _check("c", FRAGMENT, "\t}\n}\nstate->bytes = (st.bytes;\n*outlen = olen;\n").ok
    # In a file of functions, a brace that closes nothing is the draft's error.
    whole = "int f(int x) {\n  return x;\n}\n@@DRAFT@@int g(void) {\n  return 0;\n}\n"
    assert _check("c", whole, "int h(int y) {\n  return y;\n}\n").ok
    assert not _check("c", whole, "int h(int y) {\n  return y;\n}\n}\n").ok


@given(st.lists(st.sampled_from(["#", "# ", "if", "ifdef", "endif", "define", "x", " ", "\n"])))
def test_directives_are_found_as_the_regex_alone_finds_them(parts: list[str]) -> None:
    data = "".join(parts).encode()
    found = [m.span() for m in preprocessor._directives(data)]
    assert found == [m.span() for m in preprocessor._DIRECTIVE_ANYWHERE.finditer(data)]


def test_conditional_balance_counts_the_groups_a_draft_opens_or_closes() -> None:
    text = b"int a;\n#ifndef A\n# if (B)\nint b;\n#else\n#endif\nint c;\n"
    assert preprocessor.conditional_balance(text, 0, len(text)) == 1
    # From inside a directive's line: the line is read whole (a cut after ``#e`` of ``#endif``).
    at = text.index(b"ndif")
    assert preprocessor.conditional_balance(text, at, len(text)) == -1
    assert preprocessor.conditional_balance(b"int x;\n", 0, 6) == 0
