"""The ``json`` verifier reads a completion the way a reader sees it and compares values exactly (issue 36):
numbers are the decimals they are written as, an answer document has no comments, a code block is the
document a reader sees and a second document beside it is a hedge unless it is the same value, and a
look-alike letter is another key or value."""

from __future__ import annotations

import json

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.structured.parse import Limits, Unreadable, parse


def verdict(completion, reference, schema=None, **spec):
    options = {"type": "json", "workers": 0, "schema_field": None if schema is None else "schema", **spec}
    fields = {"reference": reference}
    if schema is not None:
        fields["schema"] = schema
    return build(options).verify(Sample(completion=completion, fields=fields))


def score(completion, reference, schema=None, **spec):
    return verdict(completion, reference, schema, **spec).score


# ------------------------------------------------------------------ numbers: exact decimals


@pytest.mark.parametrize(
    ("completion", "reference"),
    [
        ('{"x": 2.0000000000000004}', {"x": 2}),  # the double nearest it is 2.0000000000000004, not 2: still not 2
        ('{"x": 1.0000000000000001}', {"x": 1}),  # reads as the double 1.0: exact reading refuses it
        ('{"x": 1e-500}', {"x": 0}),  # a double underflows to 0
        ('{"x": 0.30000000000000004}', {"x": 0.3}),  # 0.1 + 0.2 in doubles
        ('{"x": 100000000000000000001}', {"x": 1e20}),  # an integer one past a float reference
        ('{"x": 1e400}', {"x": 1e308}),  # not infinity, not refused: 10**400
        ('{"x": 9007199254740993.0}', {"x": 9007199254740992}),  # as a double this is 2**53
    ],
)
def test_a_number_equal_only_as_a_double_scores_zero(completion, reference):
    assert score(completion, reference) == 0.0


@pytest.mark.parametrize(
    ("completion", "reference"),
    [
        ('{"x": 2.0}', {"x": 2}),  # one number type: 2.0 is 2 (and JSON Schema's integer)
        ('{"x": 2.00}', {"x": 2.0}),
        ('{"x": 2e0}', {"x": 2}),
        ('{"x": 1.5e3}', {"x": 1500}),
        ('{"x": 0.1}', {"x": 0.1}),  # a float reference is the decimal it prints
        ('{"x": -0.0}', {"x": 0}),
        ('{"x": 1.2345678901234568e+29}', {"x": 123456789012345678901234567890.5}),  # what the row's double prints
    ],
)
def test_the_same_number_in_another_notation_pays(completion, reference):
    assert score(completion, reference) == 1.0


@pytest.mark.parametrize(
    ("fmt", "wrong", "right"),
    [
        ("yaml", "x: 2.0000000000000004", "x: 2.0"),
        ("yaml", "x: 0.30000000000000004", "x: 0.3"),
        ("toml", "x = 2.0000000000000004", "x = 2.0"),
        ("toml", "x = 1e-500", "x = 0.0"),
    ],
)
def test_yaml_and_toml_numbers_are_exact_too(fmt, wrong, right):
    reference = {"x": 0.3} if "0.3" in right else {"x": 2} if "2" in right else {"x": 0}
    assert score(wrong, reference, format=fmt) == 0.0
    assert score(right, reference, format=fmt) == 1.0


@pytest.mark.parametrize(
    ("fmt", "wrong", "right"),
    [
        ("yaml", "x: 2.0000000000000004", "x: 2.0"),
        ("yaml", "x: -0.30000000000000004", "x: -0.3"),
        ("yaml", "x: 1:30.0000000001", "x: 90"),  # sexagesimal: the sum is exact too
        ("toml", "x = 2.0000000000000004", "x = 2.0"),
        ("json", '{"x": 2.0000000000000004}', '{"x": 2.0}'),
    ],
)
def test_numbers_are_exact_under_a_narrowed_decimal_context(fmt, wrong, right):
    """A library in the same process may narrow the global decimal context (reasoning-gym's generators
    set its precision): a number's reading must not depend on it."""
    import decimal

    reference = {"x": -0.3} if "-0.3" in right else {"x": 90} if "90" in right else {"x": 2}
    saved = decimal.getcontext().copy()
    decimal.getcontext().prec = 6
    try:
        assert score(wrong, reference, format=fmt) == 0.0
        assert score(right, reference, format=fmt) == 1.0
    finally:
        decimal.setcontext(saved)


def test_every_reader_gives_decimals_and_refuses_what_is_not_a_finite_number():
    limits = Limits()
    assert parse('{"a": 0.1, "b": 2}', "json", limits) == {"a": parse("a: 0.1", "yaml", limits)["a"], "b": 2}
    assert str(parse("a = 1_000.5", "toml", limits)["a"]) == "1000.5"
    assert str(parse("a: 1:30.5", "yaml", limits)["a"]) == "90.5"  # YAML 1.1 base 60, in decimals
    for text, fmt in [("a: .inf", "yaml"), ("a = nan", "toml"), ('{"a": 1e5000}', "json"), ("a = 1e-5000", "toml")]:
        with pytest.raises(Unreadable):
            parse(text, fmt, limits)


@pytest.mark.parametrize(
    ("schema", "right", "wrong"),
    [
        ({"type": "integer"}, "36.0", "36.5"),  # JSON Schema (draft 6 on): 36.0 is an integer
        ({"multipleOf": 0.1}, "0.3", "0.35"),  # doubles say 0.3 is not a multiple of 0.1
        ({"enum": [0.1, 0.2]}, "0.1", "0.10000000000000001"),  # doubles say these are equal
        ({"minimum": 0.1}, "0.1", "0.09999999999999999"),
        ({"type": "number", "exclusiveMaximum": 1}, "0.9999999999999999999", "1.0"),
    ],
)
def test_schema_numbers_are_checked_as_decimals(schema, right, wrong):
    assert score(right, None, schema, reference_field=None) == 1.0
    refused = verdict(wrong, None, schema, reference_field=None)
    assert refused.score == 0.0 and refused.details["valid"] is False
    assert "Decimal(" not in refused.feedback  # numbers shown as written


def test_draft_4_keeps_its_own_integer_rule():
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}
    assert score("36", None, schema, reference_field=None) == 1.0
    assert score("36.0", None, schema, reference_field=None) == 0.0  # draft 4: 36.0 is not an integer


# ------------------------------------------------------------------ comments: not part of an answer document


@pytest.mark.parametrize(
    ("fmt", "completion", "without", "reference"),
    [
        ("yaml", "x: 5  # or 7", "x: 5", {"x": 5}),
        ("yaml", "# actually x = 7\nx: 5", "x: 5", {"x": 5}),
        ("yaml", "x: 5\n# x: 7", "x: 5", {"x": 5}),
        ("yaml", "x: 5  # five", "x: 5", {"x": 5}),  # a comment holding no value: the cost of the rule
        ("yaml", "x: |  # or 7\n  five", "x: |\n  five", {"x": "five"}),
        ("yaml", "x: [5, # 7\n  ]", "x: [5,\n  ]", {"x": [5]}),
        ("yaml", "%YAML 1.1 # or 7\n---\nx: 5", "%YAML 1.1\n---\nx: 5", {"x": 5}),
        ("toml", "x = 5  # or 7", "x = 5", {"x": 5}),
        ("toml", "# actually x = 7\nx = 5", "x = 5", {"x": 5}),
        ("toml", "x = [5, # 7\n]", "x = [5,\n]", {"x": [5]}),
    ],
)
def test_a_comment_in_an_answer_scores_zero(fmt, completion, without, reference):
    found = verdict(completion, reference, format=fmt)
    assert (found.score, found.status) == (0.0, "no_answer")
    assert "comment" in found.feedback
    assert score(without, reference, format=fmt) == 1.0  # the same document without its comment pays


@pytest.mark.parametrize(
    ("fmt", "completion", "reference"),
    [
        ("yaml", 'note: "a # b"\nurl: http://x.org/#top\nx: 5', {"note": "a # b", "url": "http://x.org/#top", "x": 5}),
        ("yaml", "note: 'it''s # one'", {"note": "it's # one"}),
        ("yaml", "note: |\n  line # kept\n", {"note": "line # kept"}),  # the answer is stripped: clip keeps no break
        ("toml", 'note = "a # b"\nlit = \'c # d\'', {"note": "a # b", "lit": "c # d"}),
        ("toml", 'note = """q "#" """\nx = 1', {"note": 'q "#" ', "x": 1}),
        ("toml", "[t]\nx = 'p#'", {"t": {"x": "p#"}}),
    ],
)
def test_a_hash_inside_a_string_is_content_not_a_comment(fmt, completion, reference):
    assert score(completion, reference, format=fmt) == 1.0


# ------------------------------------------------------------------ what a reader sees: the block and around it


R = '{"name": "Ada", "age": 36}'
REF = {"name": "Ada", "age": 36}


@pytest.mark.parametrize(
    "completion",
    [
        f"<!--\n```json\n{R}\n```\n-->",  # a fence inside a comment renders as no block
        f"```json\n{R}\n```\n<!-- {{\"name\": \"Bob\", \"age\": 3}} -->",  # hiding a second document keeps it one
        f"```json\n{R}\n```\nOr maybe `{{\"name\": \"Ada\", \"age\": 37}}`.",  # inline, in a code span
        f"```json\n{R}\n```\n```json\n{{\"name\": \"Ada\", \"age\": 37}}\n```",  # another fence, another value
        f"```json\n{R}\n```\n```yaml\nname: Ada\nage: 37\n```",  # another notation beside the answer
        f"```json\n{R}\n```\n\n    {{\"name\": \"Ada\", \"age\": 37}}\n",  # an indented code block
        f"> ```json\n> {{\"age\": 37, \"name\": \"Ada\"}}\n> ```\n\n```json\n{R}\n```",  # a block in a quote
        f"```json\n{R}\n```\n```json\n{R[:-1]},\n```",  # the second block does not read as the same value
        f"```json\n{R}\n",  # never closed
    ],
)
def test_a_second_document_or_a_hidden_block_scores_zero(completion):
    assert score(completion, REF, extract="fenced") == 0.0


@pytest.mark.parametrize(
    "completion",
    [
        f"Here is the record:\n```json\n{R}\n```\n",
        f"```json\n{json.dumps(REF, indent=2)}\n```",
        f"```json\n{R}\n```\nThe same, compact: {json.dumps(REF, separators=(',', ':'))}.",  # repeated
        f"```json\n{R}\n```\n```\n{{\"age\": 36.0, \"name\": \"Ada\"}}\n```",  # repeated, reordered, 36.0
        f"> ```json\n> {R}\n> ```",  # a block in a quote is a block a reader sees
        f"1. The record:\n\n   ```json\n   {R}\n   ```\n",  # and in a list item
        f"~~~json\n{R}\n~~~",
        f"Here:\r\n```json\r\n{R}\r\n```\r\n",  # CRLF line ends
        f"```json\r{R}\r```",  # lone CR line ends (CommonMark reads them as line ends)
        f"<think>draft: {{\"age\": 35}}</think>\n```json\n{R}\n```",  # reasoning is not the answer region
    ],
)
def test_a_block_a_reader_sees_pays(completion):
    assert score(completion, REF, extract="fenced") == 1.0


# ------------------------------------------------------------------ look-alike characters


@pytest.mark.parametrize(
    "completion",
    [
        '{"n\u0430me": "Ada", "age": 36}',  # Cyrillic а in the key
        '{"name": "\u0410da", "age": 36}',  # Cyrillic А in the value
        '{"name": "\uff21da", "age": 36}',  # a fullwidth Ａ
        '{"name": "Ada", "\u0430ge": 36}',
        '{"name": "A\u200bda", "age": 36}',  # a zero-width space: another string
    ],
)
def test_a_look_alike_key_or_value_is_another_key_or_value(completion):
    assert score(completion, REF) == 0.0


@pytest.mark.parametrize(
    ("completion", "reference"),
    [
        ('{"name": "Jos\\u00e9"}', {"name": "José"}),  # an escape is the character it escapes
        ('{"name": "José"}', {"name": "Jos\u00e9"}),
        ('{"city": "\u041c\u043e\u0441\u043a\u0432\u0430"}', {"city": "Москва"}),  # Cyrillic when the gold is
        ('{"name": "Ada"}\n', {"name": "Ada"}),  # a trailing newline
    ],
)
def test_the_same_characters_however_escaped_pay(completion, reference):
    assert score(completion, reference) == 1.0
