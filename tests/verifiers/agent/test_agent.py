"""The agent reward: an outcome read at the final answer, capped per-call terms, a per-turn term that repeating
does not raise, each placed at its turn, and one scalar that is the vector's reduction."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import build
from rewardsmith.verifiers.agent.turns import consistent, reduce
from rewardsmith.verifiers.core import Sample, Verdict, Verifier
from rewardsmith.verifiers.options import SpecError


def call(name: str = "calc", arguments: str = '{"expr": "2+3"}', call_id: str = "c1") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def calling(*calls: dict, content: str = "") -> dict:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def result(content: str, call_id: str = "c1", status: str | None = "ok") -> dict:
    message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if status is not None:
        message["status"] = status
    return message


def say(content: str) -> dict:
    return {"role": "assistant", "content": content}


ANSWER = say("The answer is \\boxed{5}.")


def score(spec: dict, completion, **fields):
    return build({"type": "agent", **spec}).verify(
        Sample(prompt="What is 2+3?", completion=completion, fields={"answer": "5", **fields}))


def loop(n: int, status: str = "ok", arguments: str = '{"expr": "2+3"}') -> list[dict]:
    out = []
    for i in range(n):
        out += [calling(call(arguments=arguments, call_id=f"c{i}")), result("5", f"c{i}", status)]
    return out


def test_the_outcome_is_the_answer_specs_reward_on_the_final_answer():
    v = score({"answer": "math"}, [*loop(1), ANSWER], stop_reason="done")
    assert (v.score, v.correct, v.status) == (1.0, True, "ok")
    assert v.details["turns"] == {"rewards": [0.0, 1.0], "reduction": "sum", "gamma": 1.0}
    # a string completion is a rollout of one turn, and the agent pays exactly the answer spec's reward
    for text in ("The answer is \\boxed{5}.", "The answer is \\boxed{4}.", "no idea"):
        agent = score({"answer": "math"}, text)
        plain = build("math").verify(Sample(prompt="What is 2+3?", completion=text, fields={"answer": "5"}))
        assert (agent.score, agent.status, agent.correct) == (plain.score, plain.status, plain.correct)


class Always(Verifier):
    """Pays 1.0 whatever the sample: an answer spec that reads no rollout record."""

    name = "always"

    def _verify(self, sample: Sample) -> Verdict:
        return Verdict(score=1.0, correct=True)


def test_no_positive_outcome_unless_the_rollout_stopped_as_done():
    for reason in ("max_turns", "max_length", "tool_limit", "error"):
        v = score({"answer": "math"}, [*loop(1), ANSWER], stop_reason=reason)
        assert v.score == 0.0, reason
    # the guard is the agent's own, whatever the answer spec reads
    v = score({"answer": Always()}, [ANSWER], stop_reason="max_length")
    assert (v.score, v.correct) == (0.0, False) and "max_length" in v.feedback
    assert score({"answer": Always()}, [ANSWER], stop_reason="done").score == 1.0


def test_per_call_rewards_are_capped_per_rollout_and_need_a_recorded_ok():
    spec = {"answer": "math", "call_reward": 0.1, "call_cap": 0.2}
    assert score(spec, [*loop(1), ANSWER]).score == pytest.approx(1.1)
    farmed = score(spec, [*loop(10), ANSWER])
    assert farmed.score == pytest.approx(1.2)  # ten calls earn what two do
    assert farmed.components["calls"] == pytest.approx(0.2)
    # nobody recorded the calls' outcome, or they failed: nothing earned
    assert score(spec, [*loop(3, status=None), ANSWER]).score == pytest.approx(1.0)
    assert score(spec, [*loop(3, status="error"), ANSWER]).score == pytest.approx(1.0)
    with pytest.raises(SpecError, match="call_cap"):
        build({"type": "agent", "answer": "math", "call_reward": 0.1})


def test_invalid_calls_cost_more_the_longer_the_loop_and_a_cap_bounds_it():
    spec = {"answer": "math", "invalid_penalty": 0.1}
    assert score(spec, [*loop(2, status="bad_arguments"), ANSWER]).score == pytest.approx(0.8)
    assert score(spec, [*loop(8, status="unknown_tool"), ANSWER]).score == pytest.approx(0.2)
    assert score(spec, [*loop(2, arguments="{expr: 2+3}"), ANSWER]).score == pytest.approx(0.8)  # malformed
    assert score(spec, [*loop(2, status="truncated"), ANSWER]).score == pytest.approx(1.0)  # the tool's limit
    capped = score({**spec, "invalid_cap": 0.3}, [*loop(8, status="timeout"), ANSWER])
    assert capped.score == pytest.approx(0.7) and capped.feedback.endswith("8 invalid calls")


def test_a_per_turn_format_term_is_not_earned_by_repeating_it():
    spec = {"turn": {"type": "format", "tags": ["think"], "mode": "soft"}, "turn_weight": 0.5}
    formatted = calling(call(), content="<think>use the tool</think>")
    once = score(spec, "<think>x</think> 5")
    every = score(spec, [formatted, result("5"), formatted, result("5"), say("<think>done</think> 5")])
    assert once.score == every.score == pytest.approx(0.5)
    half = score(spec, [formatted, result("5"), say("5")])
    assert half.score == pytest.approx(0.25)
    assert half.details["turns"]["rewards"] == pytest.approx([0.25, 0.0])


@pytest.mark.parametrize(("reduction", "gamma", "expected"), [("sum", 1.0, 1.2), ("last", 1.0, 1.0),
                                                              ("discounted", 0.5, 0.1 + 0.05 + 0.25)])
def test_the_scalar_is_the_declared_reduction_of_the_turn_vector(reduction, gamma, expected):
    spec = {"answer": "math", "call_reward": 0.1, "call_cap": 1.0, "reduction": reduction, "gamma": gamma}
    v = score(spec, [*loop(2), ANSWER])
    assert v.details["turns"]["rewards"] == pytest.approx([0.1, 0.1, 1.0])
    assert v.score == pytest.approx(expected)
    assert consistent(v.score, v.details["turns"])
    assert not consistent(v.score + 0.01, v.details["turns"])
    assert reduce([1.0], reduction, gamma) == 1.0  # one turn: the outcome itself, under every reduction


def test_an_outage_is_an_error_and_an_unreadable_record_is_invalid_input():
    judge = {"type": "judge", "mode": "reference", "cache": False, "parse_retries": 0,
             "backend": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "retries": 0,
                         "timeout_s": 2}}  # nothing listens on port 9: an outage
    v = score({"answer": judge}, [ANSWER])
    assert v.status == "error"
    v = score({"answer": "math"}, [{"role": "robot", "content": "x"}])
    assert v.status == "invalid_input" and "role" in v.feedback


def test_every_bundled_rollout_gets_the_verdict_it_expects():
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parents[3] / "data"
    rows = [json.loads(line) for line in (data / "agent_examples.jsonl").read_text(encoding="utf-8").splitlines()]
    reward = build(str(data / "agent.yaml"))
    verdicts = reward.verify_batch([Sample.from_row(r) for r in rows])
    assert len(rows) >= 10
    for r, v in zip(rows, verdicts, strict=True):
        assert (round(v.score, 6), v.status) == (r["expect"]["score"], r["expect"]["status"]), (r["case"], v.feedback)
