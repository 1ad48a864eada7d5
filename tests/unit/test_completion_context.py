"""completion/budget.py, snippets.py and tokens.py: what an inline completion sends a model, and
what it never sends."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastedit_lsp.completion.budget import (
    MAX_HEAD_CHARS,
    MAX_TAIL_CHARS,
    CompletionContext,
    build,
)
from fastedit_lsp.completion.snippets import (
    MAX_INDEXED_CHARS,
    MAX_SNIPPET_LINE_CHARS,
    OpenDocument,
    snippet_tokens,
)
from fastedit_lsp.completion.tokens import estimate_tokens
from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.prompting.context import DEFAULT_EXCLUDE

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "fastedit_lsp"

CURSOR = "<|>"

ORDERS = f'''"""Orders: totals and invoices."""

from decimal import Decimal

from billing import parse_invoice


def order_total(order_lines):
    subtotal = Decimal(0)
    for entry in order_lines:
        subtotal += entry.price * entry.quantity
    return subtotal


def load_order(raw_text):
    invoice = parse_invoice(raw_text)
    total = order_total(invoice.order_lines)
    return invoice.customer, {CURSOR}
'''

PARSE_INVOICE = '''@dataclass_cache
def parse_invoice(raw_text):
    """An invoice from its text export: a customer line, then one line per order line."""
    customer, *rows = raw_text.strip().splitlines()
    order_lines = [parse_order_line(row) for row in rows]
    return Invoice(customer=customer.strip(), order_lines=order_lines)'''

BILLING = f'''"""Billing: invoices and their text export."""

import dataclasses


def format_currency(amount):
    return f"{{amount:,.2f}} EUR"


def parse_order_line(row):
    sku, price, quantity = row.split(";")
    return OrderLine(sku, float(price), int(quantity))


{PARSE_INVOICE}


def export_ledger(entries):
    for posting in entries:
        yield posting.account, posting.debit, posting.credit
'''

WEATHER = '''"""Weather: forecasts from station readings."""


def mean_temperature(readings):
    celsius = [reading.celsius for reading in readings]
    return sum(celsius) / len(celsius)


def forecast(station, horizon_hours):
    history = station.history(hours=48)
    trend = mean_temperature(history[-6:]) - mean_temperature(history[:6])
    return [trend * step / horizon_hours for step in range(horizon_hours)]
'''

SECRET = "SECRET-TOKEN-4242"


def at_cursor(marked: str, *, language_id: str = "python") -> tuple[Document, Point]:
    """A document from text with one cursor marker, and the marker's point."""
    offset = marked.index(CURSOR)
    before = marked[:offset]
    document = Document(
        "file:///proj/orders.py", marked.replace(CURSOR, ""), language_id=language_id
    )
    line = before.count("\n")
    return document, Point(line, len(before) - (before.rfind("\n") + 1))


def complete(
    marked: str,
    others: list[OpenDocument],
    *,
    budget: int = 2_000,
    path: str = "proj/orders.py",
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE,
    model: str | None = None,
) -> CompletionContext:
    document, cursor = at_cursor(marked)
    return build(
        document,
        cursor,
        path=path,
        others=others,
        budget_tokens=budget,
        exclude=exclude,
        model=model,
    )


def python(path: str, text: str) -> OpenDocument:
    return OpenDocument(path, text, "python")


def everything_sent(result: CompletionContext) -> str:
    return "\n".join([result.prefix, result.suffix, *(s.path + s.text for s in result.snippets)])


def total_tokens(result: CompletionContext, model: str | None = None) -> int:
    return (
        estimate_tokens(result.prefix, model)
        + estimate_tokens(result.suffix, model)
        + sum(snippet_tokens(s, model) for s in result.snippets)
    )


def normalised(text: str) -> str:
    return re.sub(r"\r\n|\r", "\n", text)


# -- estimate_tokens -------------------------------------------------------------------------------


def test_nothing_costs_nothing() -> None:
    assert estimate_tokens("") == 0


def test_each_line_break_costs_a_token() -> None:
    assert estimate_tokens("\n" * 7) == 7
    assert estimate_tokens("\r\n" * 3) == 6


def test_non_ascii_characters_cost_more_than_ascii_ones() -> None:
    assert estimate_tokens("é" * 40) > estimate_tokens("e" * 40)
    assert estimate_tokens("名" * 40) == 40
    # Outside the Basic Multilingual Plane a byte-level tokenizer needs even more.
    assert estimate_tokens("😀" * 40) > estimate_tokens("名" * 40)


def test_indentation_runs_cost_less_than_the_same_number_of_letters() -> None:
    indented = " " * 32 + "return"
    assert estimate_tokens(indented) < estimate_tokens("x" * 32 + "return")
    # ...but never nothing: a run still costs something per character.
    assert estimate_tokens(" " * 64) > estimate_tokens(" " * 32) > 0


def test_smaller_vocabularies_are_estimated_to_need_more_tokens() -> None:
    code = (PACKAGE / "core" / "document.py").read_text(encoding="utf-8")
    llama2 = estimate_tokens(code, "codellama-7b-instruct")
    mistral = estimate_tokens(code, "codestral-latest")
    default = estimate_tokens(code)
    gpt = estimate_tokens(code, "openai/gpt-oss-120b")
    assert llama2 > mistral > default > gpt


def test_model_names_match_their_family_case_insensitively() -> None:
    code = (PACKAGE / "prompting" / "context.py").read_text(encoding="utf-8")
    assert estimate_tokens(code, "Qwen/Qwen2.5-Coder-32B") == estimate_tokens(code, "qwen-3-32b")
    assert estimate_tokens(code, "Llama-2-13b") == estimate_tokens(code, "codellama")
    assert estimate_tokens(code, "llama-3.3-70b") != estimate_tokens(code, "llama-2-70b")
    assert estimate_tokens(code, "some-unknown-model") == estimate_tokens(code)


@pytest.mark.parametrize(
    "module",
    ["core/document.py", "prompting/context.py", "prompting/filters.py", "pipeline/edits.py"],
)
@pytest.mark.parametrize("model", [None, "gpt-4o", "llama-3.1-8b", "qwen-3-coder", "deepseek"])
def test_real_code_is_estimated_above_the_four_characters_per_token_rule(
    module: str, model: str | None
) -> None:
    # context.CHARS_PER_TOKEN (4) is the optimistic rule of thumb for code; this estimate errs
    # higher for every family, on this project's own sources.
    code = (PACKAGE / module).read_text(encoding="utf-8")
    assert estimate_tokens(code, model) >= len(code) / 4


_TEXT = st.text(alphabet=st.sampled_from(list("ab_ (){}:=\t\n\r é名😀")), max_size=120)


@settings(max_examples=200)
@given(_TEXT, _TEXT)
def test_estimates_never_shrink_when_text_grows_and_never_exceed_the_sum_of_the_pieces(
    left: str, right: str
) -> None:
    whole = estimate_tokens(left + right)
    assert max(estimate_tokens(left), estimate_tokens(right)) <= whole
    assert whole <= estimate_tokens(left) + estimate_tokens(right)


# -- snippets: what is included -------------------------------------------------------------------


def test_the_definition_of_a_name_used_near_the_cursor_is_the_first_snippet() -> None:
    result = complete(ORDERS, [python("proj/billing.py", BILLING)])
    assert result.snippets, "no snippet"
    first = result.snippets[0]
    assert first.path == "proj/billing.py"
    # The whole definition with its decorator, and nothing after it.
    assert first.text == PARSE_INVOICE
    assert all(s.score <= first.score for s in result.snippets)


def test_an_unrelated_document_gives_no_snippet() -> None:
    result = complete(ORDERS, [python("proj/weather.py", WEATHER)])
    assert result.snippets == ()
    assert "forecast" not in everything_sent(result)


def test_only_the_related_document_of_several_gives_snippets() -> None:
    others = [python("proj/weather.py", WEATHER), python("proj/billing.py", BILLING)]
    result = complete(ORDERS, others)
    assert {s.path for s in result.snippets} == {"proj/billing.py"}


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("proj/.env", id="dotenv"),
        pytest.param("proj/.env.local", id="dotenv-local"),
        pytest.param("proj/config/secrets.py", id="secrets-py"),
        pytest.param("proj/secrets.json", id="secrets-json"),
        pytest.param("/home/u/.ssh/id_rsa", id="ssh-key"),
        pytest.param("proj/deploy/server.pem", id="pem"),
    ],
)
def test_an_excluded_document_never_appears_even_when_it_is_the_most_relevant(path: str) -> None:
    # The excluded document defines exactly what the cursor uses, better than billing.py does.
    secret = python(path, f'API_KEY = "{SECRET}"\n\n{PARSE_INVOICE}\n\n{ORDERS.split("def ")[1]}')
    result = complete(ORDERS, [secret, python("proj/billing.py", BILLING)])
    assert path not in {s.path for s in result.snippets}
    assert SECRET not in everything_sent(result)
    assert result.snippets and result.snippets[0].path == "proj/billing.py"


def test_the_users_own_exclude_patterns_are_honoured() -> None:
    result = complete(
        ORDERS,
        [python("proj/private/billing.py", BILLING)],
        exclude=(*DEFAULT_EXCLUDE, "private/"),
    )
    assert result.snippets == ()


def test_the_current_document_is_never_its_own_snippet_source() -> None:
    # An editor may list the current document among the open ones, under a spelling of its path.
    stale = python("proj/./orders.py", BILLING)
    result = complete(ORDERS, [stale], path="proj/orders.py")
    assert result.snippets == ()


def test_an_imported_module_ranks_above_an_equally_relevant_one() -> None:
    # Same text; "billing" is what orders.py imports, "aaa_billing" sorts first by path.
    result = complete(
        ORDERS, [python("proj/aaa_billing.py", BILLING), python("billing.py", BILLING)]
    )
    assert result.snippets[0].path == "billing.py"
    scores = {s.path: s.score for s in result.snippets if s.text == PARSE_INVOICE}
    assert scores["billing.py"] > scores["proj/aaa_billing.py"]


def test_a_document_in_the_same_language_ranks_above_one_in_another() -> None:
    others = [
        OpenDocument("proj/a_invoices.rb", BILLING, "ruby"),
        OpenDocument("proj/z_invoices.py", BILLING, "python"),
    ]
    result = complete(ORDERS, others)
    assert result.snippets[0].path == "proj/z_invoices.py"


@pytest.mark.parametrize(
    ("language_id", "definition"),
    [
        pytest.param(
            "python", "async def parse_invoice(raw_text):\n    return Invoice(raw_text)", id="py"
        ),
        pytest.param(
            "javascript",
            "export function parse_invoice(raw_text) {\n  return new Invoice(raw_text);\n}",
            id="js-function",
        ),
        pytest.param(
            "typescript",
            "export const parse_invoice = (raw_text: string): Invoice => {\n"
            "  return new Invoice(raw_text);\n};",
            id="ts-const",
        ),
        pytest.param(
            "go",
            "func (s *Store) parse_invoice(raw_text string) Invoice {\n"
            "\treturn Invoice{raw_text}\n}",
            id="go-method",
        ),
        pytest.param(
            "rust",
            "pub fn parse_invoice(raw_text: &str) -> Invoice {\n    Invoice::new(raw_text)\n}",
            id="rust-fn",
        ),
        pytest.param(
            "python",
            "class parse_invoice:\n    def __init__(self, raw_text):\n        self.raw = raw_text",
            id="py-class",
        ),
    ],
)
def test_definitions_are_found_in_each_language(language_id: str, definition: str) -> None:
    filler = "\n".join(f"unrelated_{i} = {i}" for i in range(30))
    text = f"{filler}\n\n{definition}\n\n{filler.replace('unrelated', 'other')}\n"
    # Any language: the same language is only preferred, never required.
    result = complete(ORDERS, [OpenDocument("lib/invoices.src", text, language_id)])
    assert result.snippets[0].text == definition


def test_a_python_signature_over_several_lines_keeps_its_body() -> None:
    definition = (
        "def parse_invoice(\n    raw_text,\n    strict=False,\n):\n"
        '    """Parse it."""\n    return Invoice(raw_text)'
    )
    result = complete(
        ORDERS, [python("proj/billing.py", f"import os\n\n\n{definition}\n\n\nX = 1\n")]
    )
    assert result.snippets[0].text == definition


def test_a_local_variable_is_not_taken_for_a_definition() -> None:
    text = "function unrelated() {\n  let parse_invoice = 3;\n  return parse_invoice;\n}\n"
    result = complete(ORDERS, [OpenDocument("lib/x.js", text, "javascript")])
    assert result.snippets == ()


def test_snippet_order_does_not_depend_on_the_order_of_open_documents() -> None:
    others = [
        python("proj/billing.py", BILLING),
        python("proj/copy_of_billing.py", BILLING),
        python("proj/weather.py", WEATHER),
        OpenDocument("proj/billing.rb", BILLING, "ruby"),
    ]
    results = {complete(ORDERS, list(order)) for order in itertools.permutations(others)}
    assert len(results) == 1
    (result,) = results
    keys = [(-s.score, s.path) for s in result.snippets]
    assert keys == sorted(keys)


def test_windows_sharing_many_identifiers_with_the_cursor_are_included() -> None:
    # No definition of anything near the cursor, but code that works on the same things.
    related = (
        "def summarise(invoice):\n"
        "    subtotal = order_total(invoice.order_lines)\n"
        "    for entry in invoice.order_lines:\n"
        "        print(entry.price, entry.quantity, invoice.customer)\n"
        "    return subtotal\n"
    )
    result = complete(ORDERS, [python("proj/report.py", related)])
    assert [s.text for s in result.snippets] == [related.rstrip("\n")]
    assert result.snippets[0].score < 1  # below any definition


# -- snippets: what is cut -------------------------------------------------------------------------


def test_a_snippet_is_cut_at_whole_lines_to_fit_the_budget() -> None:
    body = "\n".join(f"    step_{i} = transform_{i}(raw_text, step_{i - 1})" for i in range(1, 40))
    definition = f"def parse_invoice(raw_text):\n{body}\n    return step_39"
    result = complete(ORDERS, [python("proj/billing.py", definition + "\n")], budget=300)
    assert result.estimated_tokens <= 300
    (snippet,) = result.snippets
    kept = snippet.text.split("\n")
    assert 1 < len(kept) < definition.count("\n") + 1
    assert kept == definition.split("\n")[: len(kept)]


def test_a_huge_line_in_another_document_never_reaches_the_prompt() -> None:
    # A bundled file: the definition's body is one 55,000-character line, which the budget could
    # hold; the snippet stops before it.
    minified = "var parse_invoice=function(raw_text){return raw_text};" * 1_000
    text = f"function parse_invoice(raw_text) {{\n  {minified}\n}}\n"
    result = complete(ORDERS, [OpenDocument("dist/app.js", text, "javascript")], budget=100_000)
    assert [s.text for s in result.snippets] == ["function parse_invoice(raw_text) {"]


def test_a_huge_document_is_read_only_up_to_the_cap() -> None:
    # Past MAX_INDEXED_CHARS nothing is read: a definition there is not found.
    filler = "".join(f"record_{i} = load_record({i})\n" for i in range(20_000))
    assert len(filler) > MAX_INDEXED_CHARS
    late = python("proj/billing.py", filler + PARSE_INVOICE + "\n")
    early = python("proj/billing.py", PARSE_INVOICE + "\n" + filler)
    assert complete(ORDERS, [late]).snippets == ()
    assert complete(ORDERS, [early]).snippets[0].text == PARSE_INVOICE


def test_snippets_never_exceed_the_budget_left_to_them() -> None:
    others = [python(f"proj/billing_{i}.py", BILLING) for i in range(20)]
    result = complete(ORDERS, others, budget=400)
    assert result.snippets
    assert result.estimated_tokens == total_tokens(result) <= 400


# -- prefix and suffix -----------------------------------------------------------------------------


def numbered(count: int) -> str:
    return "".join(f"value_{i} = combine(value_{i - 1}, {i})\n" for i in range(count))


def test_without_other_documents_prefix_and_suffix_share_the_budget_three_to_one() -> None:
    lines = numbered(1_000).split("\n")
    marked = "\n".join([*lines[:500], CURSOR + lines[500], *lines[501:]])
    result = complete(marked, [], budget=800)
    line_cost = estimate_tokens(lines[500] + "\n")
    prefix, suffix = estimate_tokens(result.prefix), estimate_tokens(result.suffix)
    assert result.truncated
    assert result.estimated_tokens > 800 - 2 * line_cost
    assert prefix >= 0.75 * 800 - line_cost
    assert suffix >= 0.25 * 800 - 2 * line_cost
    assert prefix > 2 * suffix


def test_with_related_documents_the_snippets_get_their_share() -> None:
    lines = numbered(1_000).split("\n")
    marked = "\n".join([*lines[:500], "invoice = parse_invoice(raw_text)", CURSOR, *lines[500:]])
    others = [python(f"proj/billing_{i}.py", BILLING) for i in range(10)]
    result = complete(marked, others, budget=1_000)
    line_cost = estimate_tokens(lines[500] + "\n")
    snippets = sum(snippet_tokens(s) for s in result.snippets)
    assert result.snippets
    assert estimate_tokens(result.prefix) >= 600 - line_cost
    assert estimate_tokens(result.suffix) >= 200 - line_cost
    assert snippets <= 1_000 - estimate_tokens(result.prefix) - estimate_tokens(result.suffix)


def test_a_short_suffix_leaves_its_share_to_the_prefix() -> None:
    text = numbered(1_000)
    result = complete(text + CURSOR, [], budget=500)
    assert result.suffix == ""
    assert estimate_tokens(result.prefix) > 500 - estimate_tokens("value_999 = combine(a, b)\n")


def test_a_short_prefix_leaves_its_share_to_the_suffix() -> None:
    result = complete(CURSOR + numbered(1_000), [], budget=500)
    assert result.prefix == ""
    assert estimate_tokens(result.suffix) > 500 - estimate_tokens("value_999 = combine(a, b)\n")


def test_a_short_document_leaves_its_share_to_the_snippets() -> None:
    big_definition = "def parse_invoice(raw_text):\n" + "".join(
        f"    part_{i} = raw_text[{i}]\n" for i in range(55)
    )
    result = complete(ORDERS, [python("proj/billing.py", big_definition)], budget=600)
    snippets = sum(snippet_tokens(s) for s in result.snippets)
    assert not result.truncated
    assert snippets > 0.2 * 600
    # Everything the document did not need went to the snippet, up to one line of it.
    assert result.estimated_tokens > 600 - estimate_tokens("\n    part_54 = raw_text[54]")


def test_prefix_and_suffix_are_whole_lines_next_to_the_cursor() -> None:
    lines = numbered(200).split("\n")
    marked = "\n".join([*lines[:100], "head_of_line" + CURSOR + "tail_of_line", *lines[100:]])
    result = complete(marked, [], budget=120)
    before, after = normalised(marked).split(CURSOR)
    assert result.truncated
    assert before.endswith(result.prefix) and after.startswith(result.suffix)
    assert result.prefix.endswith("\nhead_of_line")
    assert result.suffix.startswith("tail_of_line\n")
    # Whole lines: the prefix starts at a line start, the suffix ends at a line end.
    assert before[: len(before) - len(result.prefix)].endswith("\n")
    assert after[len(result.suffix) :].startswith("\n")


def test_the_cursor_line_is_kept_when_no_other_line_fits() -> None:
    long_line = "x = 1  # " + "padding " * 40
    marked = f"{long_line}\nresult = compute(first_argument, {CURSOR}second_argument)\n{long_line}"
    result = complete(marked, [], budget=30)
    assert result.prefix == "result = compute(first_argument, "
    assert result.suffix == "second_argument)"
    assert result.truncated


def test_a_crlf_document_gives_the_context_of_its_lf_twin() -> None:
    marked = ORDERS.replace("\n", "\r\n")
    crlf = complete(marked, [python("proj/billing.py", BILLING.replace("\n", "\r\n"))])
    lf = complete(ORDERS, [python("proj/billing.py", BILLING)])
    assert "\r" not in everything_sent(crlf)
    assert crlf == lf
    assert crlf.prefix.endswith("return invoice.customer, ")


def test_an_empty_document() -> None:
    result = build(
        Document("file:///e.py", "", language_id="python"),
        Point(0, 0),
        path="e.py",
        others=[python("proj/billing.py", BILLING)],
        budget_tokens=500,
        exclude=DEFAULT_EXCLUDE,
    )
    assert (result.prefix, result.suffix, result.snippets) == ("", "", ())
    assert not result.truncated
    assert result.estimated_tokens == 0


def test_the_cursor_at_the_start_of_the_document() -> None:
    result = complete(CURSOR + ORDERS.replace(CURSOR, ""), [])
    assert result.prefix == ""
    assert result.suffix == ORDERS.replace(CURSOR, "")
    assert not result.truncated


def test_the_cursor_at_the_end_of_the_document() -> None:
    text = ORDERS.replace(CURSOR, "")
    result = complete(text + CURSOR, [])
    assert result.prefix == text
    assert result.suffix == ""
    assert not result.truncated


def test_a_cursor_outside_the_document_is_clamped_to_its_end() -> None:
    text = ORDERS.replace(CURSOR, "")
    document = Document("file:///o.py", text, language_id="python")
    result = build(
        document, Point(999, 999), path="o.py", others=[], budget_tokens=2_000, exclude=()
    )
    assert (result.prefix, result.suffix) == (text, "")


def test_a_five_megabyte_single_line_document_gives_a_bounded_context() -> None:
    text = "x=[1,2,3];" * 500_000
    middle = len(text) // 2
    document = Document("file:///min.js", text, language_id="javascript")
    result = build(
        document,
        Point(0, middle),
        path="min.js",
        others=[OpenDocument("lib.js", text, "javascript")],
        budget_tokens=100_000,
        exclude=DEFAULT_EXCLUDE,
    )
    assert result.prefix == text[middle - MAX_HEAD_CHARS : middle]
    assert result.suffix == text[middle : middle + MAX_TAIL_CHARS]
    assert result.truncated
    assert result.estimated_tokens <= 100_000
    assert all(
        len(line) <= MAX_SNIPPET_LINE_CHARS for s in result.snippets for line in s.text.split("\n")
    )


def test_an_excluded_current_document_yields_an_empty_context() -> None:
    document = Document("file:///proj/.env", f"API_KEY={SECRET}\n", language_id="dotenv")
    result = build(
        document,
        Point(1, 0),
        path="proj/.env",
        others=[python("proj/billing.py", BILLING)],
        budget_tokens=2_000,
        exclude=DEFAULT_EXCLUDE,
    )
    assert result.excluded_by == ".env"
    assert (result.prefix, result.suffix, result.snippets) == ("", "", ())
    assert result.estimated_tokens == 0


def test_a_zero_budget_sends_nothing() -> None:
    result = complete(ORDERS, [python("proj/billing.py", BILLING)], budget=0)
    assert (result.prefix, result.suffix, result.snippets) == ("", "", ())
    assert result.truncated


def test_an_other_document_indexed_once_gives_the_same_snippets_as_a_fresh_one() -> None:
    kept = python("proj/billing.py", BILLING)
    first = complete(ORDERS, [kept])
    again = complete(ORDERS.replace(CURSOR, "invoice." + CURSOR), [kept])
    fresh = complete(
        ORDERS.replace(CURSOR, "invoice." + CURSOR), [python("proj/billing.py", BILLING)]
    )
    assert again == fresh
    assert first.snippets[0] == again.snippets[0]


# -- the budget, whatever the input ----------------------------------------------------------------

_LINE_TEXT = st.text(alphabet=st.sampled_from(list("abcxyz_ =():\t é名😀")), max_size=40)
_DOC_TEXT = st.lists(
    st.one_of(_LINE_TEXT, st.sampled_from(["def parse_invoice(raw_text):", "    return total"])),
    max_size=30,
).flatmap(
    lambda lines: st.lists(
        st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines), max_size=len(lines)
    ).map(lambda ends: "".join(line + end for line, end in zip(lines, ends, strict=True)))
)
_PATHS = st.sampled_from(
    ["proj/billing.py", "proj/orders.py", "proj/.env", "secrets.yaml", "lib/x.js"]
)


@settings(max_examples=150, deadline=None)
@given(
    text=_DOC_TEXT,
    line=st.integers(-2, 40),
    col=st.integers(-2, 60),
    budget=st.integers(-5, 400),
    others=st.lists(st.tuples(_PATHS, _DOC_TEXT), max_size=4),
    model=st.sampled_from([None, "gpt-4o", "codellama", "mistral-small"]),
)
def test_any_context_respects_the_budget_and_is_taken_from_the_documents(
    text: str,
    line: int,
    col: int,
    budget: int,
    others: list[tuple[str, str]],
    model: str | None,
) -> None:
    # utf-32: the client's columns are code points, as the cursor's are.
    document = Document("file:///proj/orders.py", text, language_id="python", encoding="utf-32")
    result = build(
        document,
        Point(line, col),
        path="proj/orders.py",
        others=[python(path, other) for path, other in others],
        budget_tokens=budget,
        exclude=DEFAULT_EXCLUDE,
        model=model,
    )
    assert result.estimated_tokens <= max(budget, 0)
    assert result.estimated_tokens == total_tokens(result, model)
    cursor = document.to_point(line, col)
    before = normalised(document.get_text(Point(0, 0), cursor))
    after = normalised(document.get_text(cursor, document.end))
    assert before.endswith(result.prefix)
    assert after.startswith(result.suffix)
    if not result.truncated:
        assert (result.prefix, result.suffix) == (before, after)
    for snippet in result.snippets:
        assert snippet.path in {"proj/billing.py", "lib/x.js"}
        assert "\r" not in snippet.text
        sources = [
            "\n" + normalised(other) + "\n" for path, other in others if path == snippet.path
        ]
        assert any("\n" + snippet.text + "\n" in source for source in sources)
