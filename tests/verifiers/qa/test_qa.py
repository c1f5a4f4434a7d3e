"""The ``qa`` verifier: SQuAD v1.1 normalisation, both metrics, every gold shape, and the attacks
(several candidates, the reasoning in the answer tag, an echo of the question, an empty answer)."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.qa.golds import read_aliases
from rewardsmith.verifiers.qa.normalize import exact_match, f1, normalize
from rewardsmith.verifiers.reading.statements import final_answer

QUESTION = "Which city is the capital of France?"
SQUAD_GOLD = {"text": ["Paris", "the city of Paris"], "answer_start": [10, 3]}
EM = build("qa")
F1 = build({"type": "qa", "metric": "f1"})


def judge(completion, answer=SQUAD_GOLD, verifier=EM, prompt=QUESTION):
    return verifier.verify(Sample(prompt=prompt, completion=completion, fields={"answer": answer}))


# ------------------------------------------------------------------ normalisation and metrics


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  A   cat,  an apple ", "cat apple"),
        ("U.S.A.", "usa"),
        ("theater", "theater"),
        ("Rock 'n' Roll", "rock n roll"),
        ("an", ""),
        ("ÉCOLE", "école"),
    ],
)
def test_normalize_follows_squad_v1_1(text, expected):
    assert normalize(text) == expected


def test_metrics_follow_squad_v1_1():
    assert exact_match("the Paris.", "paris") == 1.0
    assert f1("the city of Paris", "Paris") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert f1("Paris Paris", "Paris") == pytest.approx(2 * 0.5 * 1 / 1.5)  # bags, not sets
    assert f1("London", "Paris") == 0.0
    assert f1("", "") == 0.0  # v1.1: no shared token is 0 (v2.0 would say 1)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Paris", ["Paris"]),
        (["Paris", "paris ", "City of Paris"], ["Paris", "paris", "City of Paris"]),
        (SQUAD_GOLD, ["Paris", "the city of Paris"]),
        ([{"text": "Paris", "answer_start": 1}, {"text": "Paris", "answer_start": 9}], ["Paris"]),
        (
            {"value": "Paris", "aliases": ["Paris", "Paree"], "normalized_aliases": ["paris", "paree"]},
            ["Paris", "Paree", "paris", "paree"],
        ),
        (1066, ["1066"]),
    ],
)
def test_gold_shapes(raw, expected):
    assert read_aliases(raw) == expected


@pytest.mark.parametrize("raw", ["", "  the ", [], {"text": [], "answer_start": []}, {"foo": "bar"}, True])
def test_no_gold_is_a_message(raw):
    assert isinstance(read_aliases(raw), str)


# ------------------------------------------------------------------ right answers pay


@pytest.mark.parametrize(
    "completion",
    [
        "Paris",
        "paris.",
        "The answer is Paris.",
        "Answer: PARIS",
        "\\boxed{Paris}",
        "\\boxed{\\text{Paris}}",
        "<answer>Paris</answer>",
        "<think>Lyon? No, the capital is Paris.</think><answer>Paris</answer>",
        "<answer>The answer is the city of Paris.</answer>",
        "The government sits there. The final answer is **Paris**.",
        "France's capital has been Paris for centuries.\nFinal answer: Paris",
    ],
)
def test_a_committed_right_answer_pays_under_both_metrics(completion):
    for verifier in (EM, F1):
        verdict = judge(completion, verifier=verifier)
        assert (verdict.score, verdict.correct, verdict.status) == (1.0, True, "ok"), (completion, verdict.feedback)


def test_triviaqa_aliases_and_plain_lists():
    trivia = {"value": "Sun", "aliases": ["Sun", "The Sun", "Sol"], "normalized_aliases": ["sun", "sol"]}
    assert judge("The answer is Sol.", answer=trivia).score == 1.0
    assert judge("The answer is the moon.", answer=trivia).score == 0.0
    assert judge("\\boxed{1066}", answer=[1066, "1066 AD"]).score == 1.0


def test_names_with_initials_and_abbreviations_are_read_whole():
    assert judge("Answer: John F. Kennedy.", answer="John F. Kennedy").score == 1.0
    assert judge("The answer is St. Louis.", answer="St. Louis").score == 1.0
    assert judge("The answer is F. Scott Fitzgerald.", answer="F. Scott Fitzgerald").score == 1.0
    assert judge("Answer: J. K. Rowling.", answer="J. K. Rowling").score == 1.0
    # the statement ends where its sentence does: what follows is a sentence of its own (and, after the final
    # statement, makes it no commitment: reading.frame)
    for completion, said in [
        ("Answer: John F. Kennedy. He was the 35th president.", "John F. Kennedy"),
        ("Answer: J. K. Rowling. She wrote it.", "J. K. Rowling"),
        ("The answer is no. The reason is simple.", "no"),
    ]:
        answer = final_answer(completion)
        assert answer.texts == [said] and "follows it" in answer.unframed


def test_aliases_written_as_lists_are_not_refused():
    assert judge("The answer is Washington, D.C.", answer="Washington, D.C.").score == 1.0
    assert judge("The answer is Simon and Garfunkel.", answer=["Simon & Garfunkel", "Simon and Garfunkel"]).score == 1.0
    assert judge("The answer is 1,000.", answer="1000").score == 1.0


# ------------------------------------------------------------------ partial and wrong answers


def test_f1_pays_partial_credit_and_em_does_not():
    verdict = judge("Answer: Paris city", answer="Paris", verifier=F1)
    assert verdict.score == pytest.approx(2 / 3) and verdict.correct is False and "F1 0.67" in verdict.feedback
    assert judge("Answer: Paris city", answer="Paris").score == 0.0


@pytest.mark.parametrize("completion", ["The answer is London.", "\\boxed{Lyon}", "<answer>Marseille</answer>"])
def test_a_wrong_answer_scores_zero(completion):
    for verifier in (EM, F1):
        verdict = judge(completion, verifier=verifier)
        assert (verdict.score, verdict.correct, verdict.status) == (0.0, False, "ok")


# ------------------------------------------------------------------ attacks


@pytest.mark.parametrize(
    "completion",
    [
        "Paris, London or Berlin",
        "The answer is Paris, London or Berlin.",
        "The answer is Paris or London.",
        "\\boxed{Paris / London}",
        "<answer>Paris; Lyon</answer>",
        "The answer is Paris and London.",
        "The answer is either Paris or Lyon.",
        "\\boxed{Paris} \\boxed{London}",
        "<answer>Paris</answer>\\boxed{London}",
        "\\boxed{Paris}, or maybe London",
        "<answer>Paris</answer> (or Lyon)",
        "The answer is Paris. The answer is Lyon.",
    ],
)
def test_several_candidates_score_zero_under_both_metrics(completion):
    for verifier in (EM, F1):
        verdict = judge(completion, verifier=verifier)
        assert verdict.score == 0.0 and verdict.correct is False, (completion, verdict.feedback)
        assert "hedge" in verdict.feedback


def test_f1_without_the_list_check_pays_a_list_what_the_docs_say():
    lenient = build({"type": "qa", "metric": "f1", "refuse_lists": False})
    verdict = judge("The answer is Paris, London or Berlin.", answer="Paris", verifier=lenient)
    assert verdict.score == pytest.approx(0.4)  # precision 1/4, recall 1: documented in docs/verifiers/qa.md


def test_the_whole_reasoning_in_the_answer_tag_scores_zero():
    reasoning = (
        "<answer>France is a country in Europe and its capital, where the government and the president "
        "sit, is Paris and it is also its largest city</answer>"
    )
    for verifier in (EM, F1):
        verdict = judge(reasoning, answer="Paris", verifier=verifier)
        assert verdict.score == 0.0 and "words" in verdict.feedback
    uncapped = build({"type": "qa", "metric": "f1", "max_answer_words": 0, "refuse_lists": False})
    assert 0 < judge(reasoning, answer="Paris", verifier=uncapped).score < 0.2


def test_the_cap_rises_to_the_longest_alias():
    long_gold = "the treaty of peace and friendship between the two kingdoms signed at the old castle"
    assert judge(f"<answer>{long_gold}</answer>", answer=long_gold).score == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        QUESTION,
        f"<answer>{QUESTION}</answer>",
        "The answer is which city is the capital of France.",
    ],
)
def test_an_echo_of_the_question_scores_zero(completion):
    for verifier in (EM, F1):
        assert judge(completion, answer="Paris", verifier=verifier).score == 0.0


def test_f1_refuses_an_echo_that_shares_words_with_the_gold():
    prompt = "Is the capital of France Paris or Lyon, the city on the Rhone?"
    verdict = judge("<answer>capital of France Paris</answer>", answer="Paris", verifier=F1, prompt=prompt)
    assert verdict.score == 0.0 and "prompt" in verdict.feedback


@pytest.mark.parametrize(
    "completion",
    [
        "",
        "<answer></answer>",
        "<answer> . </answer>",
        "\\boxed{}",
        "The answer is .",
        "<think>Paris</think>",
        "<think>The answer is Paris",
        "The answer is not Paris.",
        "It is definitely not \\boxed{Paris}.",
        "The answer is Paris?",
        "\\boxed{Paris}, but that is wrong.",
        "<!-- Answer: Paris -->",
        "I do not know, it might be Paris.",
    ],
)
def test_empty_denied_or_hidden_answers_score_zero(completion):
    for verifier in (EM, F1):
        verdict = judge(completion, verifier=verifier)
        assert verdict.score == 0.0 and verdict.correct is not True, (completion, verdict.feedback)
        assert verdict.status in ("ok", "no_answer")


def test_rows_without_a_gold_are_invalid_input():
    verdict = EM.verify(Sample(completion="Paris", fields={}))
    assert verdict.status == "invalid_input" and verdict.details["missing_field"] == "answer"
    assert EM.verify(Sample(completion="Paris", fields={"answer": ""})).status == "invalid_input"
    assert EM.verify(Sample(completion=None, fields={"answer": "Paris"})).status == "invalid_input"


@pytest.mark.parametrize("completion", ["\\boxed{" * 5000, "The answer is " * 5000, "Paris " * 50_000, "\0" * 1000])
def test_adversarial_completions_never_error(completion):
    verdict = judge(completion)
    assert verdict.status in ("ok", "no_answer") and verdict.score == 0.0


def test_configurable_field_details_and_pickling():
    verifier = build({"type": "qa", "answer_field": "reward_model.ground_truth"})
    row = {"reward_model": {"ground_truth": ["Paris"]}}
    verdict = verifier.verify(Sample(completion="The answer is Paris.", fields=row))
    assert verdict.score == 1.0 and verdict.details["answer"] == "Paris" and verdict.details["form"] == "phrase"
    assert pickle.loads(pickle.dumps(verifier)).verify(Sample(completion="Paris", fields=row)).score == 1.0


def test_the_cli_lists_the_options(capsys):
    from rewardsmith.adapters.cli import main

    assert main(["verifiers", "qa"]) == 0
    out = capsys.readouterr().out
    for name in ("answer_field", "metric", "answer_from", "max_answer_words", "refuse_lists"):
        assert name in out


def test_the_example_rows_score_as_they_say():
    import json

    from conftest import REPO

    rows = [json.loads(line) for line in (REPO / "data" / "qa_examples.jsonl").read_text().splitlines()]
    verdicts = build("qa").verify_batch([Sample.from_row(row) for row in rows])
    for row, verdict in zip(rows, verdicts, strict=True):
        expected = {"right": (1.0, "ok"), "wrong": (0.0, "ok"), "hedge": (0.0, "ok"), "no_answer": (0.0, "no_answer")}
        assert (verdict.score, verdict.status) == expected[row["expect"]], (row["id"], verdict.feedback)
        assert row["expect"] != "hedge" or "hedge" in verdict.feedback
    assert {row["expect"] for row in rows} == {"right", "wrong", "hedge", "no_answer"}
