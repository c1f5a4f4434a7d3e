"""Sample and Verdict: the contracts every verifier and adapter share."""

from __future__ import annotations

import asyncio
import pickle
import subprocess
import sys

from rewardsmith.verifiers import Sample, Verdict, as_samples, build
from rewardsmith.verifiers.core import message_text


def test_sample_from_row_keeps_every_other_column_as_a_field():
    s = Sample.from_row({"prompt": "q", "completion": "a", "answer": "4", "data_source": "gsm8k"})
    assert (s.prompt, s.completion) == ("q", "a")
    assert s.fields == {"answer": "4", "data_source": "gsm8k"}
    assert s.get("answer") == "4" and s.get("missing", 7) == 7


def test_chat_completion_text_is_the_last_assistant_turn():
    chat = [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "thinking"},
        {"role": "assistant", "content": [{"type": "text", "text": "\\boxed{4}"}]},
    ]
    assert message_text(chat) == "\\boxed{4}"
    assert Sample(completion=chat).completion_text == "\\boxed{4}"
    assert message_text(None) == "" and message_text("plain") == "plain"


def test_chat_completion_is_graded_like_text():
    math = build({"type": "math", "workers": 0})
    chat = [{"role": "assistant", "content": "so \\boxed{4}"}]
    assert math.verify(Sample(completion=chat, fields={"answer": "4"})).correct is True


def test_verdict_reward_is_none_only_on_error():
    assert Verdict(score=0.0, status="error").reward is None
    assert Verdict(score=0.0, status="timeout").reward == 0.0
    assert Verdict(score=1.0).reward == 1.0


def test_verdict_dict_round_trip():
    v = Verdict(score=0.5, correct=False, status="no_answer", feedback="f", details={"x": 1}, components={"a": 1.0})
    assert Verdict.from_dict(v.to_dict()) == Verdict(**{**v.__dict__, "elapsed_s": 0.0})


def test_as_samples_accepts_rows_and_samples():
    s = Sample(completion="x")
    out = as_samples([s, {"completion": "y", "answer": "1"}])
    assert out[0] is s and out[1].completion == "y" and out[1].get("answer") == "1"


def test_verifier_bug_becomes_an_error_verdict_not_an_exception():
    from rewardsmith.verifiers import Verifier

    class Broken(Verifier):
        def _verify(self, sample):
            raise KeyError("boom")

    verdict = Broken().verify(Sample())
    assert verdict.status == "error" and "boom" in verdict.feedback and verdict.reward is None


def test_async_batch_matches_sync_batch():
    math = build({"type": "math", "workers": 0})
    samples = [Sample(completion="\\boxed{3}", fields={"answer": "3"}), Sample(completion="7", fields={"answer": "3"})]
    sync = [v.correct for v in math.verify_batch(samples)]
    asynchronous = [v.correct for v in asyncio.run(math.averify_batch(samples))]
    assert sync == asynchronous == [True, False]


def test_verifiers_pickle_and_still_work():
    spec = {"type": "gate", "when": {"type": "math", "workers": 0}, "then": {"type": "math", "workers": 0}}
    verifier = pickle.loads(pickle.dumps(build(spec)))
    assert verifier.verify(Sample(completion="\\boxed{2}", fields={"answer": "2"})).score == 1.0


def test_core_import_pulls_no_heavy_dependency():
    code = (
        "import sys, rewardsmith.verifiers as v; v.available(); v.build('math');"
        "heavy = [m for m in ('torch', 'transformers', 'docker', 'fastapi') if m in sys.modules];"
        "print(heavy); sys.exit(1 if heavy else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


# --------------------------------------------------------------------------- the verify_batch template (item 13)


def test_every_verifier_gets_the_template_exception_becomes_error_for_the_batch():
    from rewardsmith.verifiers import Verifier

    class Explodes(Verifier):
        name = "explodes"

        def _verify_batch(self, samples):
            raise RuntimeError("pool died")

    verdicts = Explodes().verify_batch([Sample(completion="a"), Sample(completion="b")])
    assert [v.status for v in verdicts] == ["error", "error"]
    assert all("pool died" in v.feedback for v in verdicts)
    assert verdicts[0] is not verdicts[1]  # independent verdicts: an adapter may edit one


def test_a_subclass_overriding_verify_batch_is_adopted_as_the_hook():
    """Plugins written against the old API (override verify_batch) still get the guarantees."""
    from rewardsmith.verifiers import Verifier

    class OldStyle(Verifier):
        def verify_batch(self, samples):
            return [Verdict(score=1.0)]  # one verdict, whatever the batch size: a bug

    old = OldStyle()
    assert "verify_batch" not in OldStyle.__dict__
    out = old.verify_batch([Sample(), Sample(), Sample()])
    assert len(out) == 3 and {v.status for v in out} == {"error"}
    assert "returned 1 verdicts for 3 samples" in out[0].feedback
    assert old.verify_batch([Sample()])[0].score == 1.0


def test_a_gap_in_a_batch_is_an_error_for_that_sample_only():
    from rewardsmith.verifiers import Verifier

    class Gappy(Verifier):
        def _verify_batch(self, samples):
            return [Verdict(score=1.0), None, Verdict(score=0.5)]

    out = Gappy().verify_batch([Sample()] * 3)
    assert [v.status for v in out] == ["ok", "error", "ok"] and [out[0].score, out[2].score] == [1.0, 0.5]


def test_composites_and_brier_turn_a_raising_part_into_error_verdicts():
    """Before the template, a part raising inside brier's or weighted's batch path took the batch down."""
    from conftest import FieldScore

    class Raising(FieldScore):
        def _verify_batch(self, samples):
            raise ValueError("backend gone")

    for spec in ({"type": "weighted", "parts": [Raising(), "test_field_score"]},
                 {"type": "brier", "correctness": Raising()},
                 {"type": "gate", "when": Raising(), "then": "test_field_score"},
                 {"type": "min", "parts": [Raising(), "test_field_score"]}):
        verdicts = build(spec).verify_batch([Sample(completion="x", fields={"s": 1.0})] * 2)
        assert [v.status for v in verdicts] == ["error", "error"], spec["type"]
        assert all(v.reward is None for v in verdicts)


def test_verify_batch_of_nothing_is_nothing():
    from conftest import FieldScore

    probe = FieldScore()
    assert probe.verify_batch([]) == [] and probe.calls == 0


def test_verdict_is_keyword_only():
    import pytest

    with pytest.raises(TypeError):
        Verdict(1.0, True, "ok")  # type: ignore[misc]


# --------------------------------------------------------------------------- parts, walk, detail (item 12)


def test_walk_visits_every_nested_part_with_its_path_and_round_trips():
    spec = {"type": "route", "field": "kind", "routes": {
        "a": {"type": "weighted", "parts": [{"type": "test_field_score", "name": "x"},
                                            {"type": "gate", "when": {"type": "test_field_score", "name": "w"},
                                             "then": {"type": "test_field_score", "name": "t"}}]}}}
    verdict = build(spec).verify(Sample(fields={"kind": "a", "s": 1.0}))
    paths = [path for path, _ in verdict.walk()]
    assert paths == ["", "a", "a.x", "a.gate", "a.gate.w", "a.gate.t"]
    again = Verdict.from_dict(verdict.to_dict())
    assert [p for p, _ in again.walk()] == paths
    assert again.parts["a"].parts["gate"].parts["t"].score == 1.0


def test_detail_finds_the_first_nested_value():
    inner = Verdict(score=1.0, details={"extracted": "4"})
    outer = Verdict(score=1.0, details={"route": "gsm8k"}, parts={"gsm8k": Verdict(parts={"math": inner})})
    assert outer.detail("extracted") == "4" and outer.detail("route") == "gsm8k"
    assert outer.detail("nothing", "d") == "d"


# --------------------------------------------------------------------------- dotted field paths


def test_sample_get_reaches_nested_fields_by_dotted_path_but_literal_keys_win():
    s = Sample(fields={"reward_model": {"ground_truth": "42", "style": "rule"}, "a.b": "literal",
                       "a": {"b": "nested"}, "tests": [{"x": 1}, {"x": 2}]})
    assert s.get("reward_model.ground_truth") == "42"
    assert s.get("a.b") == "literal"
    assert s.get("tests.1.x") == 2 and s.get("tests.-1.x") == 2
    assert s.get("reward_model.missing", "d") == "d" and s.get("tests.9.x") is None


def test_math_answer_field_may_be_a_dotted_path():
    math = build({"type": "math", "workers": 0, "answer_field": "reward_model.ground_truth"})
    row = Sample(completion=r"\boxed{72}", fields={"reward_model": {"ground_truth": "72"}})
    assert math.verify(row).correct is True
    missing = math.verify(Sample(completion=r"\boxed{72}", fields={"reward_model": {}}))
    assert missing.status == "invalid_input" and missing.details["missing_field"] == "reward_model.ground_truth"


def test_plugin_helpers_are_exported():
    import rewardsmith.verifiers as v

    assert v.invalid_input("x", missing_field="answer").details == {"missing_field": "answer"}
    assert v.error("down").status == "error"
    assert v.read_completion(Sample(completion=None)).status == "invalid_input"


def test_a_row_without_a_completion_is_invalid_input_not_an_empty_answer():
    """from_row used to fill a missing completion with "", which a verifier scores as an unanswered
    (no_answer) generation; a missing one is the row's fault, and adapters must be told."""
    sample = Sample.from_row({"prompt": "q", "answer": "4"})
    verdict = build({"type": "math", "workers": 0}).verify(sample)
    assert verdict.status == "invalid_input" and verdict.details["missing_field"] == "completion"
    assert build("format").verify(sample).status == "invalid_input"


def test_a_prompt_of_any_type_reads_as_text():
    assert Sample(prompt=12).prompt_text == "12" and Sample(prompt=None).prompt_text == ""
    assert Sample(prompt=[{"role": "user", "content": "hi"}]).prompt_text == "hi"
