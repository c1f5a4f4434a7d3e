"""Tests for the ``format``, ``overlong``, ``cosine`` and ``repetition`` verifiers."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import types
from collections.abc import Sequence

import pytest

from rewardsmith.verifiers import Sample, SpecError, Verdict, Verifier, available, build, register

MATH = {"type": "math", "workers": 0}
RIGHT = "<think>2 + 2 = 4</think>\n<answer>4</answer>"


def word_lengths(text: str) -> list[int]:
    """A toy tokenizer: one token per whitespace word, its id the word's length."""
    return [len(word) for word in text.split()]


# A correctness verifier whose verdicts the test dictates through the ``fake_status`` field;
# it records each batch so the tests can check that cosine uses the batch path once.
BATCHES: list[int] = []


@register("_test_format_length_fake")
class FakeCorrectness(Verifier):
    name = "fake"

    def verify_batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        BATCHES.append(len(samples))
        out = []
        for sample in samples:
            status = sample.get("fake_status", "ok")
            if status == "raise":
                raise RuntimeError("judge unreachable")
            right = sample.get("fake_correct", False)
            out.append(Verdict(score=1.0 if right else 0.0, correct=right, status=status, feedback=f"fake {status}"))
        return out


def score(spec: dict, completion, **fields) -> Verdict:
    return build(spec).verify(Sample(prompt="p", completion=completion, fields=fields))


def cos_expected(length: float, max_length: float, at_zero: float, at_max: float) -> float:
    # Written out from the paper's formula: r_min + ½(r_max − r_min)(1 + cos(πL/L_max)).
    r_max, r_min = at_zero, at_max
    return r_min + 0.5 * (r_max - r_min) * (1 + math.cos(math.pi * length / max_length))


# --- registry ------------------------------------------------------------------------------


def test_registered_names():
    assert {"format", "overlong", "cosine", "repetition"} <= set(available())


def test_import_stays_light():
    code = (
        "import sys\n"
        "from rewardsmith.verifiers import build\n"
        "build({'type': 'overlong', 'max_length': 10, 'cache_length': 2, 'tokenizer': 'some/model'})\n"
        "build({'type': 'repetition', 'tokenizer': 'some/model'})\n"
        "build('format')\n"
        "heavy = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"type": "overlong", "max_length": 100, "cache_length": 200}, "must not exceed"),
        ({"type": "overlong", "max_length": 0, "cache_length": 0}, "overlong.max_length: must be > 0"),
        ({"type": "overlong", "max_length": 100, "cache_length": -1}, "cache_length: must be >= 0"),
        ({"type": "overlong", "max_length": "100", "cache_length": 10}, "max_length: expected a number"),
        ({"type": "overlong", "cache_length": 10}, "max_length"),
        ({"type": "overlong", "max_length": 100, "cache_length": 10, "tokenizer": 5}, "tokenizer"),
        ({"type": "cosine", "max_length": -5, "correctness": MATH}, "must be > 0"),
        ({"type": "cosine", "max_length": 10, "correctness": "no_such_verifier"}, "unknown verifier"),
        ({"type": "cosine", "max_length": 10, "exceed": float("nan")}, "finite"),
        ({"type": "repetition", "max_penalty": 0.5}, "<= 0"),
        ({"type": "repetition", "ngram_size": 0}, "ngram_size: must be >= 1"),
        ({"type": "format", "mode": "loose"}, "'strict', 'soft'"),
        ({"type": "format", "tags": "think"}, "format.tags: expected a list"),
        ({"type": "format", "tags": ["think", "think"]}, "duplicates"),
        ({"type": "format", "tags": ["<think>"]}, "not a tag name"),
        ({"type": "format", "colour": "red"}, "unknown option 'colour'"),
    ],
)
def test_bad_options_are_spec_errors(spec, message):
    with pytest.raises(SpecError, match=message):
        build(spec)


# --- format --------------------------------------------------------------------------------

STRICT = {"type": "format"}
SOFT = {"type": "format", "mode": "soft"}


@pytest.mark.parametrize(
    "completion, strict_ok, soft_ok, feedback",
    [
        (RIGHT, True, True, ""),
        ("  \n<think>\nreason\n</think>\n\n<answer> 4 </answer>\n", True, True, ""),
        ("<think>a</think><answer>4</answer>", True, True, ""),
        ("Sure! <think>a</think><answer>4</answer>", False, True, "text outside the tags before <think>: 'Sure!'"),
        ("<think>a</think> so <answer>4</answer>", False, True, "between </think> and <answer>: 'so'"),
        ("<think>a</think><answer>4</answer> done", False, True, "after </answer>: 'done'"),
        ("<think>a</think>", False, False, "missing <answer>; missing </answer>"),
        ("<think>a</think><answer>4", False, False, "missing </answer>"),
        ("<answer>4</answer><think>a</think>", False, False, "wrong order: <answer> comes before </think>"),
        ("</think>a<think><answer>4</answer>", False, False, "wrong order: </think> comes before <think>"),
        ("<think>a</think><think>b</think><answer>4</answer>", False, False, "<think> appears 2 times"),
        ("<think>a <answer>x</answer></think><answer>4</answer>", False, False, "<answer> appears 2 times"),
        ("", False, False, "missing <think>"),
        ("<THINK>a</THINK><ANSWER>4</ANSWER>", False, False, "missing <think>"),
    ],
)
def test_format_strict_and_soft(completion, strict_ok, soft_ok, feedback):
    strict = score(STRICT, completion)
    soft = score(SOFT, completion)
    assert (strict.score, strict.correct, strict.status) == (float(strict_ok), strict_ok, "ok")
    assert (soft.score, soft.correct, soft.status) == (float(soft_ok), soft_ok, "ok")
    assert feedback in strict.feedback
    assert (strict.feedback == "") == strict_ok
    assert strict.details["counts"]["<think>"] == completion.count("<think>")


def test_format_custom_tags_and_prefix():
    spec = {"type": "format", "tags": ["reasoning", "answer"]}
    assert score(spec, "<reasoning>r</reasoning><answer>4</answer>").score == 1.0
    assert score(spec, RIGHT).score == 0.0
    # Chat templates that open <think> in the prompt: the completion starts inside it.
    opened = "let me see</think><answer>4</answer>"
    assert score(STRICT, opened).score == 0.0
    assert score({"type": "format", "prefix": "<think>"}, opened).score == 1.0


def test_format_allow_empty():
    empty = "<think>a</think><answer>  </answer>"
    assert score(STRICT, empty).score == 1.0
    verdict = score({"type": "format", "allow_empty": False}, empty)
    assert verdict.score == 0.0
    assert "empty <answer></answer>" in verdict.feedback


def test_format_chat_messages():
    messages = [{"role": "assistant", "content": RIGHT}]
    assert score(STRICT, messages).score == 1.0
    # The last assistant turn is what counts.
    turns = [
        {"role": "assistant", "content": RIGHT},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": [{"type": "text", "text": "just 4"}]},
    ]
    assert score(STRICT, turns).score == 0.0
    content = [{"type": "text", "text": "<think>a</think>"}, {"text": "<answer>4</answer>"}]
    parts = [{"role": "assistant", "content": content}]
    assert score(STRICT, parts).score == 1.0


@pytest.mark.parametrize(
    "completion, expected",
    [
        (RIGHT, 1.0),
        ("", 0.0),
        ("<think>a", 0.25),
        ("<think>a</think>", 0.5),
        ("<think>a</think><answer>4", 0.75),
        ("<answer>4</answer><think>a</think>", 0.75),  # every tag once, wrong order: capped below 1
        ("x <think>a</think><answer>4</answer>", 0.75),  # strict: text outside
        ("<think>a</think><think>b</think><answer>4</answer>", 0.5),  # duplicated tags earn nothing
    ],
)
def test_format_partial_credit(completion, expected):
    verdict = score({"type": "format", "partial": True}, completion)
    assert verdict.score == pytest.approx(expected)
    assert verdict.correct is (expected == 1.0)


def test_format_partial_credit_three_tags():
    spec = {"type": "format", "tags": ["plan", "think", "answer"], "partial": True}
    assert score(spec, "<plan>p</plan><think>t</think>").score == pytest.approx(4 / 6)
    assert score(spec, "<plan>p</plan><think>t</think><answer>4</answer>").score == 1.0
    assert score({**spec, "mode": "soft"}, "x<answer>4</answer><plan>p</plan><think>t</think>").score == pytest.approx(
        5 / 6
    )


# --- overlong ------------------------------------------------------------------------------

OVERLONG = {"type": "overlong", "max_length": 100, "cache_length": 20}


@pytest.mark.parametrize("length", [0, 1, 79, 80, 81, 90, 99, 100, 101, 500])
def test_overlong_formula(length):
    verdict = score(OVERLONG, "x" * length)
    if length <= 80:
        expected = 0.0
    elif length <= 100:
        expected = (80 - length) / 20
    else:
        expected = -1.0
    assert verdict.score == pytest.approx(expected)
    assert verdict.status == "ok"
    assert verdict.correct is None
    assert verdict.details["length"] == length
    assert verdict.details["length_unit"] == "chars"
    assert (verdict.feedback == "") == (length <= 80)


def test_overlong_boundary_values_exact():
    assert score(OVERLONG, "x" * 81).score == pytest.approx(-0.05)
    assert score(OVERLONG, "x" * 90).score == pytest.approx(-0.5)
    assert score(OVERLONG, "x" * 100).score == pytest.approx(-1.0)


def test_overlong_zero_cache_is_a_hard_cutoff():
    spec = {**OVERLONG, "cache_length": 0}
    assert score(spec, "x" * 100).score == 0.0
    assert score(spec, "x" * 101).score == -1.0


def test_overlong_counts_tokens_with_a_tokenizer():
    spec = {**OVERLONG, "tokenizer": word_lengths}
    verdict = score(spec, "word " * 90)  # 450 characters, 90 tokens
    assert verdict.details["length_unit"] == "tokens"
    assert verdict.details["length"] == 90
    assert verdict.score == pytest.approx(-0.5)


def test_overlong_ids_field():
    spec = {**OVERLONG, "ids_field": "completion_ids"}
    verdict = score(spec, "short", completion_ids=list(range(85)))
    assert (verdict.details["length"], verdict.details["length_unit"]) == (85, "tokens")
    assert verdict.score == pytest.approx(-0.25)
    missing = score(spec, "short")
    assert missing.status == "invalid_input"
    assert "completion_ids" in missing.feedback
    # With a tokenizer as well, a row without ids is tokenized: the unit stays tokens.
    both = score({**spec, "tokenizer": word_lengths}, "a b c")
    assert (both.details["length"], both.details["length_unit"], both.status) == (3, "tokens", "ok")
    assert score(spec, "short", completion_ids="1 2 3").status == "invalid_input"


def test_overlong_chat_completion_measures_last_assistant_turn():
    messages = [{"role": "assistant", "content": "x" * 90}]
    verdict = score(OVERLONG, messages)
    assert verdict.details["length"] == 90
    assert verdict.score == pytest.approx(-0.5)


@pytest.mark.parametrize(
    "spec",
    [OVERLONG, {"type": "repetition"}, {"type": "format"}, {"type": "cosine", "max_length": 10, "correctness": MATH}],
)
@pytest.mark.parametrize("completion", [None, 42, [], ["not a message"]])
def test_missing_or_bad_completion_is_invalid_input(spec, completion):
    verdict = score(spec, completion, answer="4")
    assert verdict.status == "invalid_input"
    assert verdict.score == 0.0
    assert "completion" in verdict.feedback


# --- repetition ----------------------------------------------------------------------------


def test_repetition_repeated_vs_varied():
    repeated = score({"type": "repetition"}, "a b c a b c a b c")
    # 9 words → 7 trigrams, of which 3 are distinct.
    assert repeated.score == pytest.approx(-1.0 * (1 - 3 / 7))
    assert (repeated.details["unique_ngrams"], repeated.details["total_ngrams"]) == (3, 7)
    assert repeated.details["length_unit"] == "words"
    assert repeated.details["length"] == 9
    varied = score({"type": "repetition"}, "the quick brown fox jumps over the lazy dog")
    assert varied.score == 0.0
    assert varied.feedback == ""
    loop = score({"type": "repetition", "max_penalty": -2.0}, "go " * 50)
    assert loop.score == pytest.approx(-2.0 * (1 - 1 / 48))
    assert loop.score < repeated.score < varied.score


def test_repetition_short_text_scores_zero():
    assert score({"type": "repetition"}, "a a").score == 0.0
    assert score({"type": "repetition"}, "").score == 0.0
    assert score({"type": "repetition", "ngram_size": 2}, "a a").score == pytest.approx(0.0)
    assert score({"type": "repetition", "ngram_size": 1}, "a a").score == pytest.approx(-0.5)


def test_repetition_over_tokens():
    # Distinct words, but the toy tokenizer maps them all to id 2: the token n-grams repeat.
    text = "aa bb cc dd"
    assert score({"type": "repetition", "ngram_size": 1}, text).score == 0.0
    tokens = score({"type": "repetition", "ngram_size": 1, "tokenizer": word_lengths}, text)
    assert tokens.details["length_unit"] == "tokens"
    assert tokens.score == pytest.approx(-(1 - 1 / 4))


# --- cosine --------------------------------------------------------------------------------

COSINE = {"type": "cosine", "max_length": 100, "correctness": MATH}
# Completions are padded after the box: four leading spaces would make the box an indented code
# block, which a reader sees as code, not as a stated answer.


@pytest.mark.parametrize("length", [9, 25, 50, 75, 100])
def test_cosine_correct_and_wrong_math_answers(length):
    right = score(COSINE, r"\boxed{4}".ljust(length), answer="4")
    wrong = score(COSINE, r"\boxed{5}".ljust(length), answer="4")
    assert right.details["length"] == wrong.details["length"] == length
    assert (right.correct, right.status) == (True, "ok")
    assert (wrong.correct, wrong.status) == (False, "ok")
    assert right.score == pytest.approx(cos_expected(length, 100, 2.0, 1.0))
    assert wrong.score == pytest.approx(cos_expected(length, 100, -10.0, 0.0))
    assert right.components["correctness"] == 1.0
    assert right.parts["correctness"].status == "ok"


def test_cosine_boundaries():
    assert score(COSINE, r"\boxed{4}".ljust(50), answer="4").score == pytest.approx(1.5)
    assert score(COSINE, r"\boxed{5}".ljust(50), answer="4").score == pytest.approx(-5.0)
    assert score(COSINE, r"\boxed{4}".ljust(100), answer="4").score == pytest.approx(1.0)
    assert score(COSINE, r"\boxed{5}".ljust(100), answer="4").score == pytest.approx(0.0)
    over = score(COSINE, r"\boxed{4}".ljust(101), answer="4")
    assert (over.score, over.correct, over.status) == (-10.0, None, "ok")
    assert "exceeds" in over.feedback
    # Length 0: no answer at all, which counts as wrong: the harshest reward.
    empty = score(COSINE, "", answer="4")
    assert (empty.score, empty.correct, empty.status) == (-10.0, False, "no_answer")


def test_cosine_custom_rewards_and_tokens():
    spec = {
        **COSINE,
        "max_length": 4,
        "tokenizer": word_lengths,
        "correct_short": 3.0,
        "correct_long": 0.5,
        "wrong_short": -3.0,
        "wrong_long": -1.0,
        "exceed": -7.0,
    }
    right = score(spec, r"so \boxed{4}", answer="4")
    assert (right.details["length"], right.details["length_unit"]) == (2, "tokens")
    assert right.score == pytest.approx(cos_expected(2, 4, 3.0, 0.5))
    wrong = score(spec, r"I think \boxed{7}", answer="4")
    assert wrong.score == pytest.approx(cos_expected(3, 4, -3.0, -1.0))
    assert score(spec, r"a b c d \boxed{4}", answer="4").score == -7.0


def test_cosine_uses_one_correctness_batch_and_propagates_statuses():
    spec = {"type": "cosine", "max_length": 100, "correctness": {"type": "_test_format_length_fake"}}
    rows = [
        ("ok", True),
        ("ok", False),
        ("no_answer", False),
        ("error", None),
        ("timeout", None),
        ("invalid_input", None),
    ]
    samples = [Sample(completion="x" * 50, fields={"fake_status": s, "fake_correct": c}) for s, c in rows]
    samples.append(Sample(completion="x" * 150, fields={"fake_status": "error"}))  # too long: never judged
    BATCHES.clear()
    verdicts = build(spec).verify_batch(samples)
    assert BATCHES == [6]
    assert [v.status for v in verdicts] == ["ok", "ok", "no_answer", "error", "timeout", "invalid_input", "ok"]
    assert [v.score for v in verdicts] == pytest.approx([1.5, -5.0, -5.0, 0.0, 0.0, 0.0, -10.0])
    assert [v.correct for v in verdicts] == [True, False, False, None, None, None, None]
    assert verdicts[3].reward is None
    assert "correctness error" in verdicts[3].feedback
    assert verdicts[3].components["correctness"] is None


def test_cosine_correctness_exception_is_an_error():
    spec = {"type": "cosine", "max_length": 100, "correctness": {"type": "_test_format_length_fake"}}
    verdicts = build(spec).verify_batch([Sample(completion="x", fields={"fake_status": "raise"})] * 2)
    assert [v.status for v in verdicts] == ["error", "error"]
    assert "judge unreachable" in verdicts[0].feedback


# --- tokenizers by name --------------------------------------------------------------------


class FakeHFTokenizer:
    """Stands in for a Hugging Face tokenizer: calling it would add a BOS token."""

    def __call__(self, text):
        return {"input_ids": [0, *self.encode(text, add_special_tokens=False)]}

    def encode(self, text, add_special_tokens=True):
        ids = [len(word) for word in text.split()]
        return [0, *ids] if add_special_tokens else ids

    def convert_ids_to_tokens(self, ids):
        return [str(i) for i in ids]

    def __reduce__(self):
        raise TypeError("a loaded tokenizer must not be pickled")


@pytest.fixture
def fake_transformers(monkeypatch):
    loads: list[str] = []

    class AutoTokenizer:
        @staticmethod
        def from_pretrained(name):
            loads.append(name)
            if name == "missing/model":
                raise OSError(f"{name} is not a local folder")
            return FakeHFTokenizer()

    module = types.ModuleType("transformers")
    module.AutoTokenizer = AutoTokenizer
    monkeypatch.setitem(sys.modules, "transformers", module)
    # as if each name were a hub id in the local cache: resolving it (a path, an alias, the cache, one
    # hub call) is tests/reward_models/test_model_names.py's business; here what matters is the load
    from rewardsmith.reward_models import loading

    monkeypatch.setattr(loading, "resolve", lambda name: name)
    return loads


def test_tokenizer_by_name_loads_lazily_and_is_not_pickled(fake_transformers):
    verifier = build({**OVERLONG, "tokenizer": "org/model"})
    assert fake_transformers == []
    verdict = verifier.verify(Sample(completion="word " * 90))
    assert (verdict.details["length"], verdict.details["length_unit"]) == (90, "tokens")  # no BOS counted
    assert verdict.score == pytest.approx(-0.5)
    verifier.verify(Sample(completion="again"))
    assert fake_transformers == ["org/model"]
    copy = pickle.loads(pickle.dumps(verifier))  # FakeHFTokenizer refuses pickling
    assert copy.verify(Sample(completion="word " * 90)).score == pytest.approx(-0.5)
    assert fake_transformers == ["org/model", "org/model"]


def test_tokenizer_object_excludes_special_tokens():
    verdict = score({**OVERLONG, "tokenizer": FakeHFTokenizer()}, "a b c")
    assert verdict.details["length"] == 3


def test_tokenizer_that_cannot_load_is_an_error(fake_transformers):
    for spec in ({**OVERLONG, "tokenizer": "missing/model"}, {**COSINE, "tokenizer": "missing/model"}):
        verdicts = build(spec).verify_batch([Sample(completion="a", fields={"answer": "4"})] * 3)
        assert [v.status for v in verdicts] == ["error"] * 3
        assert "cannot load tokenizer 'missing/model'" in verdicts[0].feedback
    assert fake_transformers == ["missing/model", "missing/model"]  # one attempt per batch


# --- pickling and composition --------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, completion",
    [
        ({"type": "format", "mode": "soft", "partial": True}, "<think>a</think>"),
        ({**OVERLONG, "tokenizer": word_lengths}, "word " * 90),
        ({"type": "repetition", "ngram_size": 2}, "a b a b a b"),
        (COSINE, r"\boxed{4}".ljust(50)),
    ],
)
def test_pickle_round_trip(spec, completion):
    verifier = build(spec)
    sample = Sample(completion=completion, fields={"answer": "4"})
    before = verifier.verify(sample)
    copy = pickle.loads(pickle.dumps(verifier))
    after = copy.verify(sample)
    assert type(copy) is type(verifier)
    assert (after.score, after.status, after.correct) == (before.score, before.status, before.correct)


def test_gate_format_then_math():
    gate = build({"type": "gate", "when": {"type": "format"}, "then": MATH})
    samples = [
        Sample(completion=RIGHT, fields={"answer": "4"}),
        Sample(completion="<think>hmm</think><answer>5</answer>", fields={"answer": "4"}),
        Sample(completion=r"it is \boxed{4}", fields={"answer": "4"}),
    ]
    right, wrong, unformatted = gate.verify_batch(samples)
    assert (right.score, right.correct, right.details["gate_passed"]) == (1.0, True, True)
    assert (wrong.score, wrong.correct, wrong.details["gate_passed"]) == (0.0, False, True)
    assert (unformatted.score, unformatted.correct, unformatted.details["gate_passed"]) == (0.0, False, False)
    assert "missing <think>" in unformatted.feedback
    assert unformatted.components == {"format": 0.0, "math": None}


def test_weighted_format_overlong_repetition():
    body = "<think>x</think><answer>4</answer>"
    text = body + "y" * (90 - len(body))
    weighted = build(
        {
            "type": "weighted",
            "parts": [{"type": "format", "mode": "soft"}, OVERLONG, {"type": "repetition"}],
            "weights": [0.5, 1.0, 1.0],
        }
    )
    verdict = weighted.verify(Sample(completion=text))
    assert verdict.score == pytest.approx(0.5 * 1.0 + (80 - 90) / 20 + 0.0)
    assert verdict.components == {"format": 1.0, "overlong": pytest.approx(-0.5), "repetition": 0.0}
    assert verdict.status == "ok"


def test_cosine_inside_weighted_logs_its_correctness():
    weighted = build({"type": "weighted", "parts": [COSINE, {"type": "format"}]})
    verdict = weighted.verify(Sample(completion="<think>t</think><answer>4</answer>", fields={"answer": "4"}))
    length = len("<think>t</think><answer>4</answer>")
    assert verdict.score == pytest.approx(cos_expected(length, 100, 2.0, 1.0) + 1.0)
    assert verdict.components["cosine.correctness"] == 1.0


def test_build_from_yaml(tmp_path):
    path = tmp_path / "reward.yaml"
    path.write_text(
        "type: weighted\n"
        "parts:\n"
        "  - {type: gate, when: {type: format, tags: [think, answer]}, then: {type: math, workers: 0}}\n"
        "  - {type: overlong, max_length: 100, cache_length: 20}\n"
    )
    verdict = build(str(path)).verify(Sample(completion=RIGHT, fields={"answer": "4"}))
    assert verdict.score == pytest.approx(1.0)
    assert verdict.components["overlong"] == 0.0
