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
