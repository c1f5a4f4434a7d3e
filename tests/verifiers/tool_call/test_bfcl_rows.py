"""BFCL's question and possible-answer files load as tool_call rows (issue 26: reference sets load directly)."""

from __future__ import annotations

import json

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.tool_call.bfcl import bfcl_rows

FUNCTION = [{"name": "area", "parameters": {"type": "dict", "required": ["base"],
                                            "properties": {"base": {"type": "integer"}}}}]


def _write(path, items):
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def _question(id_, turns=1):
    return {"id": id_, "question": [[{"role": "user", "content": f"q {id_}"}]] * turns, "function": FUNCTION}


def test_questions_join_their_answers_by_id_and_score(tmp_path):
    questions = _write(tmp_path / "q.json", [_question("a"), _question("b")])
    answers = _write(tmp_path / "a.json", [{"id": "b", "ground_truth": [{"area": {"base": [7]}}]},
                                            {"id": "a", "ground_truth": [{"area": {"base": [3]}}]}])
    rows = bfcl_rows(questions, answers)
    assert [r["id"] for r in rows] == ["a", "b"]
    assert rows[0]["prompt"] == [{"role": "user", "content": "q a"}]
    assert rows[1]["ground_truth"] == [{"area": {"base": [7]}}]
    verifier = build("tool_call")
    scores = [verifier.verify(Sample.from_row({**rows[0], "completion": text})).score
              for text in ("area(base=3)", "area(base=7)")]
    assert scores == [1.0, 0.0]


def test_a_category_without_answers_expects_no_call(tmp_path):
    rows = bfcl_rows(_write(tmp_path / "q.json", [_question("irr")]))
    assert rows[0]["ground_truth"] == []
    assert build("tool_call").verify(Sample.from_row({**rows[0], "completion": "area(base=3)"})).score == 0.0


def test_a_question_without_its_answer_is_refused_not_read_as_no_call(tmp_path):
    questions = _write(tmp_path / "q.json", [_question("a"), _question("lost")])
    answers = _write(tmp_path / "a.json", [{"id": "a", "ground_truth": [{"area": {"base": [3]}}]}])
    with pytest.raises(ValueError, match="lost: no possible answer"):
        bfcl_rows(questions, answers)


def test_multi_turn_questions_are_refused(tmp_path):
    with pytest.raises(ValueError, match="multi-turn"):
        bfcl_rows(_write(tmp_path / "q.json", [_question("m", turns=3)]))
