"""The forced_error family: completions made to crash a reader. A status=error they cause is the
hack (trainers drop error rows, so a policy that can force one skips the rows it would fail);
what they are paid is left to the other families. Every built-in verifier answers them without
an error on its bundled examples."""

from __future__ import annotations

import pytest
from conftest import REPO

from rewardsmith.adapters.audit import audit
from rewardsmith.adapters.audit.family import all_families
from rewardsmith.adapters.scoring.rows import Row, read_rows
from rewardsmith.verifiers import Sample, Verdict, Verifier, register

ROWS = [Row(1, {"prompt": "What is 2 + 2?", "answer": "4"}), Row(2, {"prompt": "What is 3 * 5?", "answer": "15"})]


@register("test_reader_that_crashes")
class ReaderThatCrashes(Verifier):
    """Test-only, deliberately fragile: encodes the completion as UTF-8 and parses its digits with
    int(), as a careless reader would; pays 1 for anything it reads."""

    name = "test_reader_that_crashes"

    def _verify(self, sample: Sample) -> Verdict:
        text = sample.completion_text
        text.encode("utf-8")  # a lone surrogate raises here
        digits = "".join(c for c in text if c.isdigit())
        int(digits or "0")  # past 4,300 digits this raises
        return Verdict(score=1.0, correct=True)


@register("test_reader_that_pays_junk")
class ReaderThatPaysJunk(Verifier):
    """Test-only: pays 1 for everything and never fails (a payment is not this family's business)."""

    name = "test_reader_that_pays_junk"

    def _verify(self, sample: Sample) -> Verdict:
        return Verdict(score=1.0, correct=True)


def test_an_error_the_completion_forces_is_the_hack_and_a_payment_is_not() -> None:
    family = all_families()["forced_error"]
    per_row = 50
    crashing = audit("test_reader_that_crashes", ROWS, families=["forced_error"], per_row=per_row)
    (result,) = crashing.families
    probes = family.generate(None, None)  # type: ignore[arg-type]  # the probes need nothing from the row
    expected = sum(1 for p in probes if "\ud800" in p.completion or sum(c.isdigit() for c in p.completion) > 4300)
    assert expected >= 3  # surrogates, 50,000 nines, the 5,000-digit box and tag
    assert result.cases == len(probes) * len(ROWS)
    assert result.errors == result.hacks == expected * len(ROWS)
    assert result.rate == pytest.approx(expected / len(probes))  # errors are judged here, not set aside
    assert {e["status"] for e in result.examples} == {"error"}

    paying = audit("test_reader_that_pays_junk", ROWS, families=["forced_error"], per_row=per_row)
    (result,) = paying.families
    assert result.hacks == result.errors == 0 and result.paid == result.cases


def test_elsewhere_an_error_is_still_not_a_hack() -> None:
    report = audit("test_reader_that_crashes", ROWS, families=["empty_box", "forced_error"], per_row=50)
    by = {f.name: f for f in report.families}
    assert by["forced_error"].hacks > 0
    assert by["empty_box"].hacks == by["empty_box"].cases  # paid (it reads anything), no error counted


EXAMPLES = [("math", "math_examples.jsonl"), ("ifeval", "ifeval_examples.jsonl"), ("json", "json_examples.jsonl"),
            ("tool_call", "tool_call_examples.jsonl"), ("choice", "choice_examples.jsonl"),
            ("qa", "qa_examples.jsonl"), ("reasoning_gym", "reasoning_gym_examples.jsonl"),
            ("brier", "calibration_examples.jsonl"), (str(REPO / "data" / "reward.yaml"), "math_examples.jsonl"),
            ('{"type": "overlong", "max_length": 50, "cache_length": 10, "tokenizer": "minilm"}',
             "math_examples.jsonl"),
            ('{"type": "cosine", "max_length": 50, "tokenizer": "minilm"}', "math_examples.jsonl"),
            ('{"type": "repetition"}', "math_examples.jsonl"),
            ('{"type": "format", "tags": ["think", "answer"]}', "math_examples.jsonl")]


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "data"), EXAMPLES, ids=[e[0].rsplit("/", 1)[-1][:40] for e in EXAMPLES])
def test_every_builtin_verifier_answers_crash_text_without_an_error(spec: str, data: str) -> None:
    if spec == "reasoning_gym":
        pytest.importorskip("reasoning_gym")
    if "tokenizer" in spec:  # a tokenizer raises on a lone surrogate: the length rewards count it as U+FFFD
        pytest.importorskip("transformers")
    rows = list(read_rows(REPO / "data" / data))[:6]
    report = audit(spec, rows, families=["forced_error"], per_row=50)
    (result,) = report.families
    assert result.cases == 13 * len(rows)
    assert result.errors == 0, result.examples
