"""The ``json`` verifier: right answers pay, and every way to earn reward without the right value scores 0."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest
from conftest import REPO

from rewardsmith.verifiers import Sample, SpecError, build

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "tags": {"type": "array"}},
    "required": ["name", "age"],
}
REFERENCE = {"name": "Ada", "age": 36, "tags": ["math", "code"]}
RIGHT = json.dumps(REFERENCE)


def score(completion, spec=None, schema=SCHEMA, reference=REFERENCE, **fields):
    spec = {"type": "json", "workers": 0, **(spec or {})}
    row = {**fields}
    if schema is not None:
        row["schema"] = schema
    if reference is not None:
        row["reference"] = reference
    return build(spec).verify(Sample(completion=completion, fields=row))


# ------------------------------------------------------------------ what pays


@pytest.mark.parametrize(
    "completion",
    [
        RIGHT,
        "  \n" + RIGHT + "\n\n",
        '{"tags": ["math", "code"], "age": 36, "name": "Ada"}',  # key order is not content
        '{"name": "Ada", "age": 36.0, "tags": ["math", "code"]}',  # JSON has one number type
        "<think>The user wants Ada's record.</think>\n" + RIGHT,
        json.dumps(REFERENCE, indent=2),
    ],
)
def test_the_right_value_pays(completion):
    verdict = score(completion)
    assert (verdict.score, verdict.correct, verdict.status) == (1.0, True, "ok"), verdict.feedback
    assert verdict.details["valid"] is True


def test_a_stray_close_is_reasoning_only_when_the_spec_says_the_template_opened_it():
    opened = score("she is 36</think>" + RIGHT, {"prompt_opens_think": True})
    assert (opened.score, opened.correct) == (1.0, True), opened.feedback
    stray = score("she is 36</think>" + RIGHT)  # default: the text before the stray close is part of the answer
    assert stray.score == 0.0 and "prompt_opens_think: true" in stray.feedback
    assert stray.details["stray_think_close"] is True
    assert score(RIGHT, {"prompt_opens_think": True}).status == "no_answer"  # opened and never closed


def test_a_fenced_block_pays_under_extract_fenced_and_only_there():
    text = f"Here is the record:\n```json\n{RIGHT}\n```\nHope this helps."
    assert score(text, {"extract": "fenced"}).score == 1.0
    assert score(f"```\n{RIGHT}\n```", {"extract": "fenced"}).score == 1.0
    assert score(text).score == 0.0  # whole: prose around the value is not JSON


# ------------------------------------------------------------------ hedges: two answers for one


@pytest.mark.parametrize(
    "completion",
    [
        RIGHT + '{"name": "Bob", "age": 3}',  # a second top-level value
        RIGHT + "\n" + RIGHT,
        RIGHT + "\nThis is the answer.",  # JSON followed by prose
        "The answer:\n" + RIGHT,  # prose before: never searched for "some" JSON
        '{"name": "Bob", "name": "Ada", "age": 36, "tags": ["math", "code"]}',  # duplicate key, either order
        '{"name": "Ada", "age": 36, "tags": ["math", "code"], "name": "Bob"}',
        '[{"name": "Ada", "age": 36, "tags": ["math", "code"]}, {"name": "Bob", "age": 1}]',  # a list of candidates
    ],
)
def test_two_answers_in_one_completion_score_zero(completion):
    verdict = score(completion)
    assert verdict.score == 0.0 and verdict.correct is False
    assert verdict.status in ("ok", "no_answer")


def test_two_fenced_blocks_are_a_hedge():
    text = f'```json\n{RIGHT}\n```\nor maybe\n```json\n{{"name": "Bob", "age": 3}}\n```'
    verdict = score(text, {"extract": "fenced"})
    assert (verdict.score, verdict.status) == (0.0, "ok")
    assert "2 fenced code blocks" in verdict.feedback
    python_beside = f"```python\nprint(1)\n```\n```json\n{RIGHT}\n```"
    assert score(python_beside, {"extract": "fenced"}).score == 0.0


@pytest.mark.parametrize(
    "prose",
    [
        'Or, if that is wrong: {"name": "Bob", "age": 3}',
        'Alternatively `{"name": "Bob", "age": 3}` also fits.',
        "Other ages: [35, 37]",
        "[" * 65,  # too many brackets to check: refused unread
    ],
)
def test_a_value_in_the_prose_around_the_fenced_block_is_a_hedge(prose):
    verdict = score(f"```json\n{RIGHT}\n```\n{prose}", {"extract": "fenced"})
    assert (verdict.score, verdict.status) == (0.0, "ok")
    assert "outside the fenced block" in verdict.feedback


def test_prose_without_a_value_around_the_fenced_block_is_fine():
    text = f"Here is {{name}}'s record [see above]:\n```json\n{RIGHT}\n```\nAll fields come from the text {{}} []."
    assert score(text, {"extract": "fenced"}).score == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        f"```python\n{RIGHT}\n```",  # another language
        f"```json\n{RIGHT}",  # never closed
        "no block at all " + RIGHT,
        f"<think>```json\n{RIGHT}\n```</think>",  # only in the reasoning
    ],
)
def test_fenced_extraction_refuses_what_is_not_one_closed_json_block(completion):
    assert score(completion, {"extract": "fenced"}).score == 0.0


# ------------------------------------------------------------------ extra keys, placeholders, echoes


def test_extra_keys_are_rejected_by_default_penalized_or_ignored_on_request():
    extra = json.dumps({**REFERENCE, "name_alt": "Bob"})  # a hedge a lax schema allows
    assert score(extra).score == 0.0
    assert score(extra, {"compare": "fields"}).score == 0.0
    penalized = score(extra, {"compare": "fields", "extra_keys": "penalize"})
    assert penalized.score == pytest.approx(4 / 5) and penalized.correct is False
    assert score(extra, {"extra_keys": "ignore"}).score == 1.0


@pytest.mark.parametrize(
    "placeholder",
    [
        {"name": "string", "age": 0, "tags": []},
        {"name": "", "age": 0, "tags": ["", ""]},
        {"name": "TODO", "age": 1, "tags": ["..."]},
        {"name": "...", "age": 36, "tags": ["string", "string"]},
    ],
)
def test_placeholders_that_satisfy_the_schema_earn_nothing_against_a_reference(placeholder):
    verdict = score(json.dumps(placeholder))
    assert verdict.details["valid"] is True  # the schema alone would have paid
    assert verdict.score == 0.0


def test_schema_only_rewards_pay_placeholders_as_documented():
    # The finding the docs warn about: without a reference, any schema-valid value is paid.
    verdict = score('{"name": "string", "age": 0}', {"reference_field": None}, reference=None)
    assert verdict.score == 1.0


def test_the_schema_echoed_back_is_not_an_answer():
    lax = {"type": "object"}
    verdict = score(json.dumps(lax), {"reference_field": None}, schema=lax, reference=None)
    assert verdict.score == 0.0 and "schema itself" in verdict.feedback
    assert score(json.dumps(SCHEMA)).score == 0.0  # against a reference: simply wrong


@pytest.mark.parametrize(
    "value, expected",
    [
        ({"name": "Ada", "age": True, "tags": ["math", "code"]}, 0.0),  # true is not 1 (schema: not an integer)
        ({"name": "Ada", "age": "36", "tags": ["math", "code"]}, 0.0),  # a number as a string
        ({"name": "Ada", "age": 36, "tags": ["code", "math"]}, 0.0),  # order matters by default
        ({"name": "Ada", "age": 36}, 0.0),  # a missing field
    ],
)
def test_type_and_order_strictness(value, expected):
    assert score(json.dumps(value)).score == expected


def test_bool_is_not_a_number_in_the_comparison_itself():
    verdict = score("[true, 1]", {}, schema=True, reference=[1, True])
    assert verdict.score == 0.0
    assert score("[1.0, true]", {}, schema=True, reference=[1, True]).score == 1.0


def test_list_order_any_compares_multisets():
    spec = {"list_order": "any"}
    assert score('{"name": "Ada", "age": 36, "tags": ["code", "math"]}', spec).score == 1.0
    assert score('{"name": "Ada", "age": 36, "tags": ["code", "code"]}', spec).score == 0.0
    assert score('{"name": "Ada", "age": 36, "tags": ["code", "math", "math"]}', spec).score == 0.0


def test_fields_partial_credit_is_the_matched_fraction_and_never_full_for_a_wrong_value():
    nested = {"a": 1, "b": {"c": "x", "d": [1, 2]}}
    spec = {"compare": "fields"}
    assert score('{"a": 1, "b": {"c": "x", "d": [1, 2]}}', spec, schema=True, reference=nested).score == 1.0
    half = score('{"a": 1, "b": {"c": "y", "d": [1, 3]}}', spec, schema=True, reference=nested)
    assert half.score == pytest.approx(2 / 4) and half.correct is False
    assert half.details["matched"] == 2 and half.details["leaves"] == 4
    missing = score('{"a": 1}', spec, schema=True, reference=nested)
    assert missing.score == pytest.approx(1 / 4)
    wrong_type = score('{"a": 1, "b": "x"}', spec, schema=True, reference=nested)
    assert wrong_type.score == pytest.approx(1 / 4)


def test_a_schema_violation_scores_zero_whatever_the_comparison_says():
    strict = {**SCHEMA, "additionalProperties": False}
    extra = json.dumps({**REFERENCE, "x": 1})
    assert score(extra, {"compare": "fields", "extra_keys": "ignore"}, schema=strict).score == 0.0


# ------------------------------------------------------------------ what the parser refuses


@pytest.mark.parametrize(
    "completion, reason",
    [
        ('{"name": "Ada", "age": 36, "tags": ["math", "code"],}', "Expecting"),  # trailing comma (JSON5)
        ('// the record\n{"name": "Ada", "age": 36, "tags": ["math", "code"]}', "Expecting"),  # a comment
        ("{'name': 'Ada', 'age': 36, 'tags': ['math', 'code']}", "Expecting"),  # single quotes
        ('{"name": "Ada", "age": NaN, "tags": []}', "NaN"),
        ('{"name": "Ada", "age": Infinity, "tags": []}', "Infinity"),
        ('{"name": "Ada", "age": 1e400, "tags": []}', "got 1E+400"),  # read exactly: 10**400, not infinity
        ("\ufeff" + RIGHT, "BOM"),
        ('{"name": "Ada", "age": ' + "9" * 5000 + "}", "digits"),
        ("[" * 100_000 + "]" * 100_000, "characters"),  # over max_chars
        ("[" * 5000 + "]" * 5000, "nested"),  # RecursionError in the parser: the completion's doing
        ("[" * 70 + "]" * 70, "nested"),
        ('"{\\"name\\": \\"Ada\\", \\"age\\": 36, \\"tags\\": [\\"math\\", \\"code\\"]}"', "type"),  # JSON in a string
    ],
)
def test_malformed_or_unbounded_answers_score_zero_never_error(completion, reason):
    verdict = score(completion)
    assert verdict.score == 0.0 and verdict.status in ("ok", "no_answer"), verdict.feedback
    assert reason in verdict.feedback


def test_unclosed_reasoning_hides_everything():
    verdict = score("<think>" + RIGHT)
    assert (verdict.score, verdict.status) == (0.0, "no_answer")
    assert score("<think>" + RIGHT + "</think>").status == "no_answer"  # the value only in the reasoning
    assert score("").status == "no_answer"


def test_the_answer_is_the_source_without_its_reasoning_blocks():
    assert score(" <think>a</think>" + RIGHT).score == 1.0
    assert score("<think>a").status == "no_answer"  # never closed: all reasoning
    # reasoning comes first: a block opened after the document hides nothing, it is text after the document
    assert score(RIGHT + "<think>second thoughts: age 37").score == 0.0
    assert score(RIGHT + "<think>second thoughts: age 37</think>").score == 0.0
    assert score("<!-- <think> -->" + RIGHT).score == 0.0  # a tag in a comment is no tag: the comment stays, not JSON
    # The same rule as every family: a block is reasoning wherever it stands, even inside a string.
    assert score('{"a": "<think>b</think>"}', schema=None, reference={"a": "<think>b</think>"}).score == 0.0


# ------------------------------------------------------------------ YAML and TOML


def test_yaml_answers_pay_and_yaml_tricks_do_not():
    spec = {"format": "yaml"}
    assert score("name: Ada\nage: 36\ntags: [math, code]\n", spec).score == 1.0
    assert score("name: Ada\nage: 36\nname: Bob\ntags: [math, code]", spec).score == 0.0  # duplicate key
    bomb = 'a: &a ["x","x"]\nb: &b [*a,*a]\nc: &c [*b,*b]\nd: [*c,*c]\n'  # billion laughs, small
    verdict = score(bomb, spec, schema=True, reference={"a": 1})
    assert (verdict.score, verdict.status) == (0.0, "no_answer") and "aliases" in verdict.feedback
    assert score("name: Ada\nage: .nan\ntags: []", spec).score == 0.0
    assert score("---\nname: Bob\nage: 1\n---\nname: Ada\nage: 36\ntags: [math, code]", spec).score == 0.0
    assert score("!!binary aGVsbG8=", spec, schema=True, reference="hello").score == 0.0
    dated = score(
        "when: 2024-01-02", spec, schema={"properties": {"when": {"type": "string"}}}, reference={"when": "2024-01-02"}
    )
    assert dated.score == 1.0  # a timestamp stays the text it is


def test_toml_answers_pay_and_toml_tricks_do_not():
    spec = {"format": "toml"}
    assert score('name = "Ada"\nage = 36\ntags = ["math", "code"]\n', spec).score == 1.0
    assert score('name = "Ada"\nage = 36\nname = "Bob"', spec).score == 0.0
    assert score('name = "Ada"\nage = nan\ntags = []', spec).score == 0.0
    when = score("when = 1979-05-27T07:32:00Z", spec, schema=True, reference={"when": "1979-05-27T07:32:00+00:00"})
    assert when.score == 1.0


# ------------------------------------------------------------------ schemas: where from, and when bad


def test_schema_from_an_inline_spec_or_a_json_text_field():
    inline = {"schema": SCHEMA}
    assert score(RIGHT, inline, schema=None).score == 1.0
    assert score(RIGHT, {"schema": json.dumps(SCHEMA)}, schema=None).score == 1.0
    assert score(RIGHT, inline, schema={"type": "string"}).score == 1.0  # the inline schema wins
    assert score(RIGHT, {}, schema=json.dumps(SCHEMA)).score == 1.0


def test_a_row_without_what_it_needs_is_invalid_input():
    no_schema = score(RIGHT, schema=None)
    assert (no_schema.status, no_schema.details["missing_field"]) == ("invalid_input", "schema")
    no_reference = score(RIGHT, reference=None)
    assert (no_reference.status, no_reference.details["missing_field"]) == ("invalid_input", "reference")
    assert score(RIGHT, schema={"type": "nope"}).status == "invalid_input"
    assert score(RIGHT, schema="{not json").status == "invalid_input"
    assert score(RIGHT, schema=[1, 2]).status == "invalid_input"
    assert build({"type": "json", "workers": 0}).verify(Sample(completion=None, fields={})).status == "invalid_input"


def test_an_unresolvable_ref_is_the_rows_fault():
    broken = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/nowhere"}]}
    verdict = score("5", {"reference_field": None}, schema=broken, reference=None)
    assert verdict.status == "invalid_input" and "$ref" in verdict.feedback


def test_a_malformed_inline_schema_is_a_spec_error():
    with pytest.raises(SpecError, match="schema"):
        build({"type": "json", "schema": {"type": 5}})
    with pytest.raises(SpecError):
        build({"type": "json", "compare": "loose"})


def test_formats_are_asserted_by_default():
    dated = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}}
    spec = {"reference_field": None}
    assert score('{"day": "2024-02-30"}', spec, schema=dated, reference=None).score == 0.0
    assert score('{"day": "tomorrow"}', spec, schema=dated, reference=None).score == 0.0
    assert score('{"day": "2024-02-28"}', spec, schema=dated, reference=None).score == 1.0
    assert score('{"day": "tomorrow"}', {**spec, "check_formats": False}, schema=dated, reference=None).score == 1.0


def test_reference_text_parses_a_json_text_reference():
    assert score(RIGHT, {"reference_text": True}, reference=json.dumps(REFERENCE)).score == 1.0
    assert score(RIGHT, {"reference_text": True}, reference="{oops").status == "invalid_input"


def test_a_string_reference_is_a_string_value_by_default():
    assert score('"Ada"', schema=True, reference="Ada").score == 1.0
    assert score("Ada", schema=True, reference="Ada").score == 0.0  # not JSON


# ------------------------------------------------------------------ time: the pool


CATASTROPHIC = {"type": "object", "properties": {"id": {"type": "string", "pattern": "^(a+)+$"}}}


@pytest.mark.slow
def test_a_pattern_the_answer_makes_backtrack_times_out_and_scores_zero():
    verifier = build({"type": "json", "schema": CATASTROPHIC, "reference_field": None, "timeout_s": 1.0, "workers": 1})
    rows = ['{"id": "' + "a" * 40 + '!"}', '{"id": "aaa"}', '{"id": "b"}']
    slow, fine, wrong = verifier.verify_batch([Sample(completion=c) for c in rows])
    assert (slow.score, slow.status) == (0.0, "timeout")
    assert (fine.score, fine.status) == (1.0, "ok")
    assert (wrong.score, wrong.status) == (0.0, "ok")


ITEM_DEFS = {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}}}
NODE_DEFS = {"Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}


@pytest.mark.parametrize(
    "schema, costly",
    [
        (CATASTROPHIC, True),
        ({"items": {"uniqueItems": True}}, True),
        ({"properties": {"code": {"format": "regex"}}}, True),
        ({"properties": {"enum": {"pattern": "^(a+)+$"}}}, True),  # a property named like a data keyword
        ({"$defs": {"n": {"anyOf": [{"$ref": "#/$defs/n"}]}}}, True),  # a reference cycle
        ({"$defs": NODE_DEFS, "$ref": "#/$defs/Node"}, True),
        ({"anyOf": [{"type": "string"}, {"items": {"$ref": "#"}}]}, True),
        ({"$ref": "https://example.com/schema"}, True),  # not a local pointer
        ({"$dynamicRef": "#meta"}, True),
        (SCHEMA, False),
        ({"uniqueItems": False, "format": "date", "default": {"pattern": "x"}}, False),  # data, not keywords
        ({"$defs": ITEM_DEFS, "type": "array", "items": {"$ref": "#/$defs/Item"}}, False),  # pydantic-style $defs
    ],
)
def test_only_schemas_whose_cost_the_answer_controls_need_the_pool(schema, costly):
    from rewardsmith.verifiers.structured.schema import needs_isolation

    assert needs_isolation(schema) is costly


@pytest.mark.slow
def test_a_recursive_ref_that_branches_at_every_level_times_out_and_scores_zero():
    branching = {
        "$defs": {"n": {"anyOf": [{"items": {"$ref": "#/$defs/n"}, "minItems": 2}, {"items": {"$ref": "#/$defs/n"}}]}},
        "$ref": "#/$defs/n",
    }
    verifier = build({"type": "json", "schema": branching, "reference_field": None, "timeout_s": 1.0, "workers": 1})
    deep, shallow = verifier.verify_batch([Sample(completion="[" * 60 + "]" * 60), Sample(completion="[[]]")])
    assert (deep.score, deep.status) == (0.0, "timeout")
    assert (shallow.score, shallow.status) == (1.0, "ok")


def test_unique_items_on_a_long_array_is_graded_in_the_pool():
    verifier = build(
        {
            "type": "json",
            "schema": {"type": "array", "uniqueItems": True},
            "reference_field": None,
            "timeout_s": 20.0,
            "workers": 1,
        }
    )
    many = json.dumps([{"k": i} for i in range(200)])
    verdict = verifier.verify(Sample(completion=many))
    assert (verdict.score, verdict.status) == (1.0, "ok")


# ------------------------------------------------------------------ the contract


def test_the_verifier_pickles_and_lists_its_options():
    verifier = build({"type": "json", "schema": SCHEMA, "reference_field": None})
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone.verify(Sample(completion=RIGHT)).score == 1.0
    listed = subprocess.run(
        [sys.executable, "-m", "rewardsmith.adapters.cli", "verifiers", "json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    for name in (
        "format",
        "extract",
        "schema_field",
        "reference_field",
        "compare",
        "extra_keys",
        "list_order",
        "max_depth",
        "timeout_s",
    ):
        assert name in listed.stdout


def test_importing_the_verifiers_does_not_import_jsonschema():
    code = (
        "import sys, rewardsmith.verifiers; from rewardsmith.verifiers import build; build('json'); "
        "print('jsonschema' in sys.modules, 'yaml' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "False"


def test_the_example_rows_score_as_labelled():
    rows = [json.loads(line) for line in (REPO / "data" / "json_examples.jsonl").read_text().splitlines()]
    verdicts = build("json").verify_batch([Sample.from_row(row) for row in rows])
    for row, verdict in zip(rows, verdicts, strict=True):
        expected = {"right": (1.0, "ok"), "wrong": (0.0, "ok"), "no_answer": (0.0, "no_answer")}[row["expect"]]
        assert (verdict.score, verdict.status) == expected, (row["id"], verdict.feedback)
    assert {row["expect"] for row in rows} == {"right", "wrong", "no_answer"}


def test_start_warms_the_pool_only_for_a_costly_inline_schema():
    from rewardsmith.verifiers.pool import started_workers

    before = started_workers()
    build({"type": "json", "schema": json.dumps(SCHEMA), "workers": 1}).start(wait=True)
    assert started_workers() == before  # a cheap schema: graded in-process, nothing to start
    costly = build({"type": "json", "schema": CATASTROPHIC, "reference_field": None, "workers": 1})
    costly.start(wait=True)
    assert started_workers() >= 1
    assert costly.verify(Sample(completion='{"id": "aa"}')).score == 1.0


def test_a_reference_its_own_schema_refuses_makes_the_row_invalid():
    # A reference stored as JSON text (verl's ground_truth) without reference_text: no answer could match.
    verdict = score(RIGHT, reference=json.dumps(REFERENCE))
    assert verdict.status == "invalid_input" and "reference_text" in verdict.feedback
    assert score('{"name": "Bob", "age": 1}').status == "ok"  # a consistent row: a wrong answer is just wrong


def _deep_schema(levels: int) -> dict:
    deep: dict = {}
    node = deep
    for _ in range(levels):
        node["not"] = {}
        node = node["not"]
    return deep


@pytest.mark.parametrize("schema", [{"$schema": ["x"]}, "[" * 3000, _deep_schema(3000)])
def test_a_schema_jsonschema_chokes_on_is_the_rows_fault(schema):
    verdict = score(RIGHT, schema=schema)
    assert verdict.status == "invalid_input", verdict.feedback


def test_yaml_answers_are_read_in_the_pool_with_its_time_limit():
    verifier = build(
        {"type": "json", "format": "yaml", "schema": True, "reference_field": None, "workers": 1, "timeout_s": 0.05}
    )
    huge = "- " + "\n- ".join(["abc"] * 24_000)  # about 1.5 s to read in pure Python
    verdict = verifier.verify(Sample(completion=huge[:99_000]))
    assert (verdict.score, verdict.status) == (0.0, "timeout")


def test_repeated_completions_are_graded_once_and_each_gets_its_own_verdict():
    verifier = build({"type": "json", "workers": 0})
    rows = [Sample(completion=c, fields={"schema": SCHEMA, "reference": REFERENCE}) for c in (RIGHT, "{}", RIGHT)]
    rows.append(Sample(completion=RIGHT, fields={"schema": SCHEMA, "reference": {**REFERENCE, "age": 37}}))
    verdicts = verifier.verify_batch(rows)
    assert [v.score for v in verdicts] == [1.0, 0.0, 1.0, 0.0]
    assert verdicts[0] is not verdicts[2] and verdicts[0].details is not verdicts[2].details
