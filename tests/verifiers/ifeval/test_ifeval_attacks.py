"""Thinking like the policy: ways to earn the ``ifeval`` reward without doing what was asked.

The default spec refuses what it can recognise without knowing the task (empty, placeholder-only,
padded, echoed responses; hedged constrained answers; text no language can be read from; a bare JSON
scalar), and the ``parity`` switch and the guard options bring the reference's leniency back only when
asked for. Every crafted input scores 0 with status ok/no_answer, never error, and in linear time.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

PROMPT = "Write a short story about a lighthouse keeper. Do not use any commas. Include the keywords storm and lamp."
ROW = {"instruction_id_list": ["punctuation:no_comma", "change_case:english_lowercase"], "kwargs": [{}, {}]}
OFF = {"min_words": 0, "max_repeated": 1.0, "reject_echo": False}


def verdict(completion: str, row: dict | None = None, prompt: str = PROMPT, **options):
    return build({"type": "ifeval", **options}).verify(Sample(prompt=prompt, completion=completion,
                                                              fields=row or ROW))


@pytest.mark.parametrize("completion", ["", "   \n\t ", "...", "!!! ???", "* * *", "[a] [b] [c] [d]"])
def test_nothing_said_earns_nothing(completion):
    v = verdict(completion, {"instruction_id_list": ["punctuation:no_comma", "detectable_content:number_placeholders"],
                             "kwargs": [{}, {"num_placeholders": 4}]})
    assert (v.score, v.status) == (0.0, "no_answer"), v.to_dict()
    assert all(item["followed"] is False for item in v.details["instructions"])


def test_placeholders_only_pay_when_the_guard_is_turned_off():
    row = {"instruction_id_list": ["detectable_content:number_placeholders"], "kwargs": [{"num_placeholders": 4}]}
    assert verdict("[a] [b] [c] [d]", row).score == 0.0
    assert verdict("[a] [b] [c] [d]", row, **OFF).score == 1.0
    assert verdict("Dear [name], your order [id] ships from [city] on [date].", row).score == 1.0


WORDS = {"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 300,
                                                                                 "relation": "at least"}]}
SENTENCES = {"instruction_id_list": ["length_constraints:number_sentences"], "kwargs": [{"num_sentences": 20,
                                                                                        "relation": "at least"}]}


@pytest.mark.parametrize(("padding", "row"), [
    (" ".join(["word"] * 400), WORDS),
    (" ".join(["the storm hit the lamp"] * 80), WORDS),
    ("the storm came. " * 100, SENTENCES),
    ("Yes. " * 50, SENTENCES),
], ids=["one word", "one phrase", "one sentence", "one word sentences"])
def test_padding_to_a_word_or_sentence_count_earns_nothing(padding, row):
    v = verdict(padding, row)
    assert (v.score, v.status, v.details["guard"]) == (0.0, "ok", "padding"), v.to_dict()
    assert verdict(padding, row, **OFF).score == 1.0  # what the guard is there for


def test_echoing_the_prompt_earns_nothing():
    row = {"instruction_id_list": ["keywords:existence", "punctuation:no_comma"],
           "kwargs": [{"keywords": ["storm", "lamp"]}, {}]}
    echo = "Write a short story about a lighthouse keeper. Do not use any commas. Include the keywords storm and lamp."
    v = verdict(echo.replace(",", ""), row)
    assert (v.score, v.details["guard"]) == (0.0, "echo")
    story = "the storm raged all night and the old keeper trimmed the lamp until dawn broke over the cliffs"
    assert verdict(story, row).score == 1.0


def test_repeating_the_request_without_answering_earns_nothing():
    request = "Write a poem about the sea that mentions gulls and salt and waves."
    row = {"instruction_id_list": ["combination:repeat_prompt"], "kwargs": [{"prompt_to_repeat": request}]}
    prompt = request + "\nFirst repeat the request word for word without change, then give your answer."
    assert verdict(request, row, prompt=prompt).score == 0.0
    assert verdict(request, row, prompt=prompt, **OFF).score == 1.0  # the reference pays it
    answer = request + "\n\nGulls wheel over salt and spray,\nwaves roll in at the end of day."
    assert verdict(answer, row, prompt=prompt).score == 1.0


def test_hedging_between_constrained_answers_earns_nothing():
    row = {"instruction_id_list": ["detectable_format:constrained_response"], "kwargs": [{}]}
    hedge = "My answer is yes. My answer is no. My answer is maybe."
    assert verdict(hedge, row).score == 0.0
    assert verdict(hedge, row, parity=True).score == 1.0
    assert verdict("My answer is no. Poodles are usually smaller.", row).score == 1.0


@pytest.mark.parametrize("text", ["12345 67890 !!! 2024", "??? ### 42 ___"])
def test_text_no_language_can_be_read_from_is_no_language(text):
    row = {"instruction_id_list": ["language:response_language"], "kwargs": [{"language": "fr"}]}
    assert verdict(text, row).score == 0.0
    assert verdict(text, row, parity=True).score == 1.0  # lm-eval counts an undetectable language as followed


def test_a_bare_json_scalar_is_not_wrapped_in_json():
    row = {"instruction_id_list": ["detectable_format:json_format"], "kwargs": [{}]}
    for scalar in ('"ok"', "42", "true"):
        assert verdict(scalar, row).score == 0.0
        assert verdict(scalar, row, parity=True).score == 1.0
    assert verdict('{"answer": "Paris"}', row).score == 1.0


def test_two_responses_must_differ_and_be_two():
    row = {"instruction_id_list": ["combination:two_responses"], "kwargs": [{}]}
    assert verdict("Same answer here.\n******\nSame answer here.", row).score == 0.0
    assert verdict("One.\n******\nTwo.\n******\nThree.", row).score == 0.0
    assert verdict("Answer one is here.\n******\n\n******\nAnswer two.", row).score == 0.0
    near = "Paris is the capital of France.\n******\nparis is the capital of france!"
    assert verdict(near, row).score == 0.0
    assert verdict(near, row, parity=True).score == 1.0  # the reference compares the strings
    assert verdict("Paris is the capital.\n******\nLyon is the largest city in the south.", row).score == 1.0


def test_keyword_existence_needs_every_keyword():
    row = {"instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": ["storm", "lamp"]}]}
    assert verdict("the storm was long and cold that winter", row).score == 0.0


@pytest.mark.parametrize("crafted", [
    "[" * 60_000,
    "<<" * 30_000 + "x",
    "\n" * 60_000 + "x",
    " " * 60_000 + "p",
    "*" * 60_000,
    "[" * 100 + "]" * 100 + "{" * 50_000,
    '{"a":' * 20_000 + "1" + "}" * 20_000,
    "Section" * 10_000,
    "." * 60_000,
    "a." * 30_000,
], ids=range(10))
def test_crafted_text_is_judged_not_crashed(crafted):
    row = {"instruction_id_list": sorted(_ALL), "kwargs": [_ALL[i] for i in sorted(_ALL)]}
    v = verdict(crafted, row, **OFF)
    assert v.status in ("ok", "no_answer") and v.score == 0.0, v.to_dict()


def test_a_response_over_max_chars_is_not_judged():
    row = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    text = "a real reply with no commas that goes on for a while and then stops right here"
    assert verdict(text, row, max_chars=len(text)).score == 1.0
    over = verdict(text + "x", row, max_chars=len(text))
    assert (over.score, over.status, over.details["guard"]) == (0.0, "ok", "too_long")


_ALL = {
    "keywords:existence": {"keywords": ["x"]},
    "keywords:frequency": {"keyword": "a", "frequency": 1, "relation": "less than"},
    "keywords:forbidden_words": {"forbidden_words": ["a"]},
    "keywords:letter_frequency": {"letter": "z", "let_frequency": 1, "let_relation": "at least"},
    "language:response_language": {"language": "en"},
    "length_constraints:number_sentences": {"num_sentences": 1, "relation": "less than"},
    "length_constraints:number_paragraphs": {"num_paragraphs": 3},
    "length_constraints:number_words": {"num_words": 1, "relation": "less than"},
    "length_constraints:nth_paragraph_first_word": {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "x"},
    "detectable_content:number_placeholders": {"num_placeholders": 70_000},
    "detectable_content:postscript": {"postscript_marker": "P.P.S"},
    "detectable_format:number_bullet_lists": {"num_bullets": 3},
    "detectable_format:constrained_response": {},
    "detectable_format:number_highlighted_sections": {"num_highlights": 70_000},
    "detectable_format:multiple_sections": {"section_spliter": "Section", "num_sections": 20_000},
    "detectable_format:json_format": {},
    "detectable_format:title": {},
    "combination:two_responses": {},
    "combination:repeat_prompt": {"prompt_to_repeat": "Write a story"},
    "startend:end_checker": {"end_phrase": "The end."},
    "change_case:capital_word_frequency": {"capital_frequency": 1, "capital_relation": "less than"},
    "change_case:english_capital": {},
    "change_case:english_lowercase": {},
    "punctuation:no_comma": {},
    "startend:quotation": {},
}


def test_invisible_characters_hide_nothing():
    forbidden = {"instruction_id_list": ["keywords:forbidden_words"], "kwargs": [{"forbidden_words": ["bad"]}]}
    text = "That was a b\u200bad idea from the very start of the trip."
    assert verdict(text, forbidden).score == 0.0
    assert verdict(text, forbidden, parity=True).score == 1.0  # the reference is fooled
    words = {"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 12,
                                                                                     "relation": "at least"}]}
    split = "a\u200bb c\u200bd e\u200bf g\u200bh i\u200bj k\u200bl"  # 6 words shown, 12 runs of \w for the reference
    assert verdict(split, words, **OFF).score == 0.0
    assert verdict(split, words, parity=True, **OFF).score == 1.0


@pytest.mark.parametrize("comma", ["\uff0c", "\u201a", "\ufe50", "\u060c", "\u3001"])
def test_a_comma_by_another_name_is_a_comma(comma):
    row = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    text = f"Well{comma} this sentence has a comma that looks like one."
    assert verdict(text, row).score == 0.0
    assert verdict(text.replace(comma, ""), row).score == 1.0
