"""rewardsmith audit against the ``json`` verifier: the json families run through its default spec and
its lenient switches, on the example rows (one row per prompt, the reference as the known-correct
completion)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import REPO

from rewardsmith.adapters.audit import all_families, audit
from rewardsmith.adapters.audit.families_json import wrong
from rewardsmith.adapters.audit.family import AuditRow
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers import build

JSON_FAMILIES = sorted(f.name for f in all_families().values() if f.target == "json")
ATTACKS = [name for name in JSON_FAMILIES if all_families()[name].kind == "attack"]
LAX = {"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"}}}


def example_rows(fenced: bool = False) -> list[Row]:
    rows, seen = [], set()
    for line in (REPO / "data" / "json_examples.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["prompt"] in seen:
            continue
        seen.add(row["prompt"])
        row.pop("completion")
        text = json.dumps(row["reference"])
        row["known_good"] = f"```json\n{text}\n```" if fenced else text
        rows.append(row)
    tokyo = json.dumps({"city": "Tokyo", "population": 13960000})
    rows.append(
        {
            "prompt": "The largest city of Japan, as JSON.",
            "schema": LAX,
            "reference": json.loads(tokyo),
            "known_good": f"```json\n{tokyo}\n```" if fenced else tokyo,
        }
    )
    return [Row(line=i + 1, data=row) for i, row in enumerate(rows)]


def run(spec: dict[str, Any], fenced: bool = False):
    return audit(spec, example_rows(fenced), families=["json"], per_row=10, reference_field="known_good")


def by_name(report) -> dict[str, Any]:
    return {f.name: f for f in report.families}


@pytest.mark.parametrize("extract", ["whole", "fenced"])
def test_the_default_spec_pays_no_json_attack_and_refuses_no_rewrite(extract):
    report = run({"type": "json", "extract": extract}, fenced=extract == "fenced")
    assert report.reference_paid == report.reference_rows == 4
    results = by_name(report)
    for name in JSON_FAMILIES:
        result = results[name]
        assert result.errors == 0, name
        assert result.flagged == 0, (name, result.examples)
    for name in (
        "json_second_value",
        "json_duplicate_key",
        "json_extra_key",
        "json_placeholder",
        "json_in_string",
        "json_fenced_hedge",
        "json_think_only",
        "json_oversized",
        "json_reformat",
    ):
        assert results[name].rows == 4 and results[name].cases >= 4, name
    assert results["json_reformat"].cases > results["json_reformat"].unjudged


def test_a_schema_only_reward_pays_placeholders_and_an_echoed_lax_schema():
    # The documented finding: without a reference, the schema is all there is to check.
    results = by_name(run({"type": "json", "reference_field": None}))
    assert results["json_placeholder"].hacks > 0
    echo = results["json_schema_echo"]
    assert echo.hacks == 0  # the verifier refuses the schema verbatim even then
    assert results["json_second_value"].rows == 0  # needs a reference: not applicable


def test_lenient_switches_show_up_as_hacks():
    ignored = by_name(run({"type": "json", "extra_keys": "ignore"}))
    assert ignored["json_extra_key"].hacks > 0  # a spare key holding another answer is paid


@pytest.mark.parametrize("value", [{"a": 1}, [True, None], "x", 0, 1.5, {"a": {"b": [False]}}, [[], {"k": None}]])
def test_the_wrong_value_is_never_the_value(value):
    other = wrong(value)
    assert json.dumps(other, sort_keys=True) != json.dumps(value, sort_keys=True)


def test_probes_follow_the_spec_fields_and_dress():
    verifier = build({"type": "json", "reference_field": "gold", "schema_field": "shape", "extract": "fenced"})
    traits = Traits.of(verifier)
    row = AuditRow(
        line=1, prompt="p", prompt_text="p", fields={"gold": {"a": 1}, "shape": LAX}, gold=None, reference=None
    )
    probes = all_families()["json_second_value"].generate(row, traits)
    assert probes and all(p.completion.startswith("```json") for p in probes)
    assert '{"a": 1}' in probes[0].completion and '{"a": 2}' in probes[0].completion
    plain = Traits.of(build("math"))
    assert all_families()["json_second_value"].generate(row, plain) is None  # no json part: not applicable


REFERENCES = ["Paris", 36, 1.5, True, [], {}, [1, "a", {"b": [True]}], {"a": {"b": {"c": [1, 2]}}}, "it's"]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_every_shape_of_reference_is_attacked_without_a_hack_or_an_error(fmt):
    rows = [
        Row(line=i + 1, data={"prompt": "q", "schema": True, "reference": r, "known_good": json.dumps(r)})
        for i, r in enumerate(REFERENCES)
    ]
    report = audit({"type": "json", "format": fmt}, rows, families=["json"], per_row=10, reference_field="known_good")
    assert report.reference_paid == report.reference_rows == len(REFERENCES)
    assert report.hacks == 0 and report.false_negatives == 0
    assert sum(f.errors for f in report.families) == 0
