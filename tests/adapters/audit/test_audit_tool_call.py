"""rewardsmith audit against the tool_call reward: the tool-call families on the project's example rows
and, when the reference is installed, on BFCL's own rows (each with its right calls as the reference).

The default spec (``format: auto``) must pay no attack and refuse no rewrite; an explicit format still
pays nothing, and the families that mix formats stand aside there (an explicit format reads only its
own calls, so prose beside them is prose). A deliberately lenient stand-in checks the families are not
vacuous: a reward that pays any completion naming the expected function pays every attack.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import REPO

import rewardsmith.verifiers.tool_call  # noqa: F401  (runs @register("tool_call"))
from rewardsmith.adapters.audit import all_families, audit
from rewardsmith.adapters.audit.report import format_table
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers import Sample, Verdict, Verifier, register
from rewardsmith.verifiers.core import message_text
from rewardsmith.verifiers.tool_call.expected import example_call, read_expected
from rewardsmith.verifiers.tool_call.render import python_text

EXAMPLES = REPO / "data" / "tool_call_examples.jsonl"
BFCL = Path(os.path.expanduser("~/.cache/rewardsmith/bfcl-eval-2026.3.23"))
FAMILIES = sorted(f.name for f in all_families().values() if f.target == "tool_call")
ATTACKS = [n for n in FAMILIES if all_families()[n].kind == "attack"]
MIXING = {"two_formats", "prose_hedge", "any_format"}  # only against auto
NO_CALL = "None of the available functions can answer this."
PER_ROW = 40  # above every family's probe count: no seeded draw


def example_rows() -> list[Row]:
    rows, seen = [], set()
    for i, line in enumerate(EXAMPLES.read_text(encoding="utf-8").splitlines()):
        data = json.loads(line)
        if data["prompt"] not in seen:  # one row per question: the probes replace the completion
            seen.add(data["prompt"])
            rows.append(Row(i + 1, {k: v for k, v in data.items() if k not in ("completion", "expect")}))
    return rows


def test_the_families_are_registered():  # test_audit.py checks docs/audit.md describes each
    assert set(FAMILIES) == {
        "every_tool",
        "hedge_calls",
        "string_numbers",
        "extra_argument",
        "call_when_none",
        "two_formats",
        "prose_hedge",
        "reordered_calls",
        "other_acceptable",
        "any_format",
    }


def test_the_default_spec_pays_no_attack_and_keeps_every_rewrite_on_the_examples(capsys):
    report = audit("tool_call", example_rows(), families=["tool_call"], per_row=PER_ROW)
    with capsys.disabled():
        print(f"\n== tool_call on data/tool_call_examples.jsonl\n{format_table(report)}")
    assert report.reference_rows == report.reference_paid == 3
    results = {f.name: f for f in report.families}
    for name in FAMILIES:
        assert results[name].cases > 0, name
    assert report.hacks == 0 and report.false_negatives == 0
    assert all(f.errors == 0 for f in report.families)


@pytest.mark.parametrize("fmt", ["hermes", "python", "openai"])
def test_an_explicit_format_pays_no_attack_either(fmt):
    report = audit({"type": "tool_call", "format": fmt}, example_rows(), families=["tool_call"], per_row=PER_ROW)
    results = {f.name: f for f in report.families}
    assert report.hacks == 0
    for name in MIXING:
        assert results[name].cases == 0  # not applicable: they mix formats
    assert results["hedge_calls"].cases > 0 and results["string_numbers"].cases > 0


@register("_test_lenient_tool_call")
class NamesTheFunction(Verifier):
    """Test-only: pays any completion that mentions the first expected function's name (a lenient reward)."""

    name = "tool_call"  # so the audit's traits see a tool_call part
    format = "auto"

    def _verify(self, sample: Sample) -> Verdict:
        expected = sample.get("ground_truth") or []
        completion = sample.completion
        text = message_text(completion) + (json.dumps(completion) if not isinstance(completion, str) else "")
        if not expected:
            return Verdict(score=1.0, correct=True)
        paid = next(iter(expected[0])) in text
        return Verdict(score=float(paid), correct=paid)


def test_a_lenient_reward_is_caught_by_every_attack_family():
    report = audit("_test_lenient_tool_call", example_rows(), families=["tool_call"], per_row=PER_ROW)
    results = {f.name: f for f in report.families}
    for name in ATTACKS:
        if name == "call_when_none":
            continue  # the stand-in pays every no-call row whatever it says: caught below
        assert results[name].cases > 0 and results[name].hacks == results[name].cases, name
    assert results["call_when_none"].hacks == results["call_when_none"].cases > 0


def bfcl_rows(per_category: int) -> list[Row]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from tool_call_parity import CATEGORIES, load_rows

    rows = []
    for category in CATEGORIES:
        for row in load_rows(BFCL / "bfcl_eval" / "data", category)[:per_category]:
            expected, _ = read_expected(row["ground_truth"], row["function"])
            # irrelevance rows (BFCL offers functions that do not fit the question) expect no call
            reference = python_text([example_call(call) for call in expected]) if expected else NO_CALL
            prompt = row["prompt"][-1]["content"]
            rows.append(
                Row(
                    len(rows) + 1,
                    {
                        "prompt": prompt,
                        "ground_truth": row["ground_truth"],
                        "function": row["function"],
                        "reference": reference,
                    },
                )
            )
    return rows


def test_the_default_spec_on_bfcl_rows(capsys):
    if not (BFCL / "bfcl_eval" / "data").is_dir():
        pytest.skip(f"bfcl-eval is not installed at {BFCL}")
    report = audit("tool_call", bfcl_rows(50), families=["tool_call"], per_row=PER_ROW)
    with capsys.disabled():
        print(f"\n== tool_call on BFCL (50 rows of each category and of irrelevance)\n{format_table(report)}")
    assert report.rows == 250 and report.reference_paid == report.reference_rows == 250
    assert {f.name: f for f in report.families}["call_when_none"].cases >= 50
    assert report.hacks == 0 and report.false_negatives == 0


def test_chat_message_probes_dedupe_and_traits_know_the_call_format():
    from rewardsmith.adapters.audit.family import Family, Probe
    from rewardsmith.adapters.audit.traits import Traits
    from rewardsmith.verifiers import build

    message = [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]
    twice = Family(
        "t",
        "attack",
        "tool_call",
        "",
        lambda row, traits: [Probe(message, "a"), Probe(list(message), "a"), Probe(message, "b")],
    )
    traits = Traits.of(build({"type": "tool_call", "format": "hermes"}))
    assert traits.call_formats == {"hermes"} and "tool_call" in traits.kinds
    assert [p.variant for p in twice.probes(example_rows()[0], traits, per_row=10, seed=0)] == ["a", "b"]
    assert Traits.of(build("tool_call")).call_formats == {"auto"}
    assert Traits.of(build("format")).call_formats == frozenset()
