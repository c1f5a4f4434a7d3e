"""Each of IFEval's 25 instructions: a response that follows it pays, one that breaks it does not;
kwargs are read as IFEval's data gives them and bad ones are ``invalid_input`` naming the field."""

from __future__ import annotations

import json

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.ifeval import CHECKS, loose_variants

BODY = "This is a short reply that talks about the weather today"


def judge(iid: str, kwargs: dict | None, completion: str, prompt: str = "Tell me something.", **options) -> object:
    verifier = build({"type": "ifeval", **options})
    row = {"instruction_id_list": [iid], "kwargs": [kwargs or {}]}
    return verifier.verify(Sample(prompt=prompt, completion=completion, fields=row))


# (instruction, kwargs, a response that follows it, a response that does not)
CASES = [
    ("keywords:existence", {"keywords": ["river", "stone"]}, "The river carried a stone downhill.",
     "The river carried a rock downhill."),
    ("keywords:frequency", {"keyword": "tea", "frequency": 3, "relation": "at least"},
     "Tea first, then tea again, and tea at night.", "Tea first, then coffee, then tea at night."),
    ("keywords:frequency", {"keyword": "tea", "frequency": 2, "relation": "less than"},
     "One cup of tea is plenty for me.", "Tea first, then tea again for me."),
    ("keywords:forbidden_words", {"forbidden_words": ["bad"]}, "Badger is a fine word for an animal here.",
     "That was a bad idea from the start."),
    ("keywords:letter_frequency", {"letter": "z", "let_frequency": 3, "let_relation": "at least"},
     "Zebras zigzag through the hazy zone.", "Horses walk through the misty field."),
    ("keywords:letter_frequency", {"letter": "#", "let_frequency": 2, "let_relation": "at least"},
     "Great day at the beach #sun #sea", "Great day at the beach #sun and sea"),
    ("language:response_language", {"language": "de"},
     "Das Wetter ist heute sehr schön und wir gehen in den Park spazieren.",
     "The weather is very nice today and we are going for a walk in the park."),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": "at least"},
     "It rained. We stayed in. Then the sun came out.", "It rained. We stayed in all day long"),
    ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "less than"},
     "Mr. Smith went to Washington on Monday morning.", "Mr. Smith went to Washington. He came back."),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "First part here.\n***\nSecond part here.",
     "First part here.\n***\n***\nSecond part here."),
    ("length_constraints:number_words", {"num_words": 5, "relation": "less than"}, "Short and sweet answer",
     "This answer has far too many words in it"),
    ("length_constraints:nth_paragraph_first_word", {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
     "It began quietly.\n\nThen, everything changed.", "It began quietly.\n\nAfter that, everything changed."),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name], meet me at [address] today.",
     "Dear [name], meet me at the office today."),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "See you soon.\n\nP.S. Bring snacks.",
     "See you soon. Bring snacks."),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "See you soon.\nP.P.S Bring snacks.",
     "See you soon.\nP.S. Bring snacks."),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "Two points:\n* first point\n- second point",
     "Three points:\n* first\n* second\n* third"),
    ("detectable_format:constrained_response", None, "My answer is yes. It is bigger.", "Yes, it is bigger."),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2},
     "Some *important part* and *another part* here.", "Some *important part* and another part here."),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2},
     "Section 1\nIntro words.\nSection 2\nMore words.", "Section 1\nIntro words and more words."),
    ("detectable_format:json_format", None, '```json\n{"city": "Paris", "rank": 1}\n```', "city: Paris, rank: 1"),
    ("detectable_format:title", None, "<<A Day Out>>\nWe went to the sea.", "A Day Out\nWe went to the sea."),
    ("combination:two_responses", None, "Paris is lovely.\n******\nRome is lovely.",
     "Paris is lovely.\n******\nParis is lovely."),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Name a fruit."}, "Name a fruit. A mango is a fruit.",
     "A mango is a fruit. Name a fruit."),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Here is the plan. Any other questions?",
     "Any other questions? Here is the plan."),
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"},
     "This is VERY IMPORTANT to know.", "This is Very important to know."),
    ("change_case:english_capital", None, "THE WEATHER IS VERY NICE TODAY AND WE WILL GO FOR A WALK.",
     "The weather is very nice today and we will go for a walk."),
    ("change_case:english_lowercase", None, "the weather is very nice today and we will go for a walk.",
     "The weather is very nice today and we will go for a walk."),
    ("punctuation:no_comma", None, "No commas appear in this sentence at all.", "Well, a comma appears here."),
    ("startend:quotation", None, '"Wrapped in quotes from start to end."', 'Wrapped in quotes "only here".'),
]


def test_every_instruction_of_ifeval_has_a_case():
    assert {case[0] for case in CASES} == set(CHECKS)
    assert len(CHECKS) == 25


@pytest.mark.parametrize(("iid", "kwargs", "good", "bad"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_followed_instruction_pays_and_a_broken_one_does_not(iid, kwargs, good, bad):
    followed = judge(iid, kwargs, good)
    assert (followed.score, followed.status, followed.correct) == (1.0, "ok", True), followed.to_dict()
    broken = judge(iid, kwargs, bad)
    assert (broken.score, broken.status, broken.correct) == (0.0, "ok", False), broken.to_dict()
    item = broken.details["instructions"][0]
    assert item["id"] == iid and item["followed"] is False and item["why"]
    assert iid in broken.feedback


def test_hf_rows_carry_every_key_with_none_for_not_given():
    kwargs = {"num_highlights": None, "relation": None, "num_words": None, "keywords": None, "language": None}
    assert judge("punctuation:no_comma", kwargs, "No commas at all in here.").score == 1.0
    kwargs = {"num_highlights": 1, "relation": None, "keywords": None}
    assert judge("detectable_format:number_highlighted_sections", kwargs, "One *bright* spot here.").score == 1.0


def test_json_encoded_fields_are_read():
    verifier = build("ifeval")
    row = {"instruction_id_list": json.dumps(["keywords:existence"]), "kwargs": json.dumps([{"keywords": ["sun"]}])}
    assert verifier.verify(Sample(completion="The sun is out today.", fields=row)).score == 1.0


def test_level_instruction_pays_the_fraction_followed_and_prompt_level_all_or_nothing():
    row = {"instruction_id_list": ["punctuation:no_comma", "detectable_format:title", "startend:quotation"],
           "kwargs": [{}, {}, {}]}
    sample = Sample(completion="<<Plan>> A plan without commas for the day.", fields=row)
    prompt = build("ifeval").verify(sample)
    inst = build({"type": "ifeval", "level": "instruction"}).verify(sample)
    assert prompt.score == 0.0 and prompt.correct is False
    assert inst.score == pytest.approx(2 / 3) and inst.correct is False
    assert [i["followed"] for i in inst.details["instructions"]] == [True, True, False]
    assert inst.details["followed"] == 2 and inst.details["total"] == 3


def test_loose_mode_forgives_a_preamble_line_and_asterisks_but_strict_does_not():
    text = "Sure, here you go:\nmy whole reply is in lowercase letters only"
    strict = judge("change_case:english_lowercase", None, text)
    loose = judge("change_case:english_lowercase", None, text, mode="loose")
    assert strict.score == 0.0 and loose.score == 1.0
    bold = '**"A quoted answer that is bold."**'
    assert judge("startend:quotation", None, bold).score == 0.0
    assert judge("startend:quotation", None, bold, mode="loose").score == 1.0


def test_loose_variants_are_ifevals_eight():
    variants = loose_variants("first\n*mid*\nlast")
    assert variants == ["first\n*mid*\nlast", "first\nmid\nlast", "*mid*\nlast", "first\n*mid*", "*mid*",
                        "mid\nlast", "first\nmid", "mid"]


@pytest.mark.parametrize(("row", "field"), [
    ({"kwargs": [{}]}, "instruction_id_list"),
    ({"instruction_id_list": [], "kwargs": []}, "instruction_id_list"),
    ({"instruction_id_list": ["punctuation:no_semicolon"], "kwargs": [{}]}, "instruction_id_list"),
    ({"instruction_id_list": "punctuation:no_comma", "kwargs": [{}]}, "instruction_id_list"),
    ({"instruction_id_list": ["punctuation:no_comma", "startend:quotation"], "kwargs": [{}]}, "kwargs"),
    ({"instruction_id_list": ["detectable_format:title"], "kwargs": ["oops"]}, "kwargs"),
    ({"instruction_id_list": ["keywords:existence"], "kwargs": [{}]}, "kwargs"),
    ({"instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": "sun"}]}, "kwargs"),
    ({"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": "ten",
                                                                              "relation": "at least"}]}, "kwargs"),
    ({"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 10,
                                                                              "relation": "at most"}]}, "kwargs"),
    ({"instruction_id_list": ["keywords:letter_frequency"], "kwargs": [{"letter": "ab", "let_frequency": 2,
                                                                        "let_relation": "at least"}]}, "kwargs"),
    ({"instruction_id_list": ["combination:repeat_prompt"], "kwargs": [{"prompt_to_repeat": None}]}, "kwargs"),
    ({"instruction_id_list": ["detectable_content:number_placeholders"], "kwargs": [{"num_placeholders": -1}]},
     "kwargs"),
])
def test_a_row_without_usable_instructions_is_invalid_input_naming_the_field(row, field):
    verdict = build("ifeval").verify(Sample(completion="A perfectly fine reply with several words.", fields=row))
    assert verdict.status == "invalid_input" and verdict.score == 0.0
    assert verdict.details["missing_field"] == field


def test_field_names_are_options():
    verifier = build({"type": "ifeval", "instructions_field": "ids", "kwargs_field": "args"})
    row = {"ids": ["keywords:existence"], "args": [{"keywords": ["moon"]}]}
    assert verifier.verify(Sample(completion="The moon rose over the hills.", fields=row)).score == 1.0
    missing = verifier.verify(Sample(completion="The moon rose.", fields={"instruction_id_list": ["x"]}))
    assert missing.status == "invalid_input" and missing.details["missing_field"] == "ids"


def test_kwargs_may_be_left_out_for_instructions_that_take_none():
    verdict = build("ifeval").verify(Sample(completion="No commas in this reply at all.",
                                            fields={"instruction_id_list": ["punctuation:no_comma"]}))
    assert verdict.score == 1.0


def test_the_cli_lists_the_options():
    import contextlib
    import io

    from rewardsmith.adapters.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["verifiers", "ifeval"]) == 0
    for name in ("instructions_field", "kwargs_field", "mode", "level", "parity", "min_words", "max_repeated",
                 "reject_echo", "max_chars"):
        assert name in out.getvalue()


def test_a_chat_completion_is_judged_on_its_last_assistant_turn_and_the_verifier_pickles():
    import pickle

    verifier = pickle.loads(pickle.dumps(build({"type": "ifeval", "mode": "loose"})))
    messages = [{"role": "assistant", "content": "First, a draft, with commas."},
                {"role": "user", "content": "again please"},
                {"role": "assistant", "content": "A calm reply without any commas at all."}]
    row = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    assert verifier.verify(Sample(completion=messages, fields=row)).score == 1.0


def test_the_example_rows_score_as_their_notes_say():
    from conftest import REPO

    rows = [json.loads(line) for line in (REPO / "data" / "ifeval_examples.jsonl").read_text().splitlines()]
    verdicts = build("ifeval").verify_batch([Sample.from_row(row) for row in rows])
    assert [v.score for v in verdicts] == [1.0 if row["note"].startswith("right") else 0.0 for row in rows]
    assert {v.status for v in verdicts} <= {"ok", "no_answer"}
