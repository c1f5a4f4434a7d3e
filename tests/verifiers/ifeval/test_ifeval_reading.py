"""Instruction following judges what the reader sees (verifiers/reading, issue 36).

For each family of checks: a completion that meets the instruction only in source (a keyword in an HTML
comment, a link target, white or phantom text; a forbidden word or comma in look-alike characters or split
by zero-width ones; words counted that nobody sees) scores 0, and honest look-alikes (Markdown emphasis, a
keyword as link text, other scripts when a language is asked, code shown on the page) keep scoring 1.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.ifeval import reading_of
from rewardsmith.verifiers.ifeval.checks import is_comma
from rewardsmith.verifiers.reading.document import code_ranges, shown

BODY = "The harbour was quiet that night and the keeper walked the long stone pier alone."


def score(completion: str, ids: list[str], kwargs: list[dict] | None = None, **options) -> float:
    row = {"instruction_id_list": ids, "kwargs": kwargs or [{}] * len(ids)}
    verdict = build({"type": "ifeval", **options}).verify(Sample(prompt="Write.", completion=completion, fields=row))
    return verdict.score


def keywords(*words: str) -> tuple[list[str], list[dict]]:
    return ["keywords:existence"], [{"keywords": list(words)}]


def forbidden(*words: str) -> tuple[list[str], list[dict]]:
    return ["keywords:forbidden_words"], [{"forbidden_words": list(words)}]


NO_COMMA = (["punctuation:no_comma"], [{}])
LOWER = (["change_case:english_lowercase"], [{}])
UPPER = (["change_case:english_capital"], [{}])


# --------------------------------------------------------------------------- keywords that must be seen

@pytest.mark.parametrize("completion", [
    f"{BODY} <!-- lighthouse -->",
    f"{BODY} See [the pier](https://example.org/lighthouse).",
    f'{BODY} See [the pier](https://example.org/ "lighthouse").',
    f"{BODY} ![lighthouse](lighthouse.png)",
    f"{BODY} ~~lighthouse~~",
    f"{BODY} <del>lighthouse</del>",
    f'{BODY} <span style="color:white">lighthouse</span>',
    f'{BODY} <span style="display:none">lighthouse</span>',
    f"{BODY} $\\phantom{{lighthouse}}$",
    f"{BODY} $\\textcolor{{white}}{{lighthouse}}$",
    f"{BODY}\n\n[r]: https://example.org/lighthouse",
])
def test_a_keyword_the_reader_never_sees_is_not_included(completion):
    assert score(f"{BODY} lighthouse", *keywords("lighthouse")) == 1.0  # the same body, keyword shown
    assert score(completion, *keywords("lighthouse")) == 0.0


@pytest.mark.parametrize("completion", [
    f"{BODY} The **lighthouse** stood tall.",
    f"{BODY} The *lighthouse* stood tall.",
    f"{BODY} The __Lighthouse__ stood tall.",
    f"{BODY} See [the lighthouse](https://example.org/pier).",
    f"{BODY} The <b>lighthouse</b> stood tall.",
    f"{BODY} Run `lighthouse --on` to light it.",
    f"{BODY} The light\u200bhouse stood tall.",  # renders as the word
    f"{BODY} The ｌｉｇｈｔｈｏｕｓｅ stood tall.",  # full width: the same letters
])
def test_a_keyword_the_reader_sees_is_included(completion):
    assert score(completion, *keywords("lighthouse")) == 1.0


def test_keyword_frequency_counts_only_what_is_shown():
    ids, kw = ["keywords:frequency"], [{"keyword": "storm", "frequency": 3, "relation": "at least"}]
    assert score(f"{BODY} A storm came. The storm grew. The storm passed.", ids, kw) == 1.0
    assert score(f"{BODY} A storm came. <!-- storm storm -->", ids, kw) == 0.0
    assert score(f"{BODY} A storm came. [x](storm) [y](storm)", ids, kw) == 0.0
    assert score(f"{BODY} A storm came. The st\u043erm grew. The ѕtorm passed.", ids, kw) == 1.0  # look-alikes


# --------------------------------------------------------------------------- forbidden words rendered visibly

@pytest.mark.parametrize("completion", [
    f"{BODY} It was a bad night.",
    f"{BODY} It was a b\u200bad night.",  # zero-width space: shows "bad"
    f"{BODY} It was a b\u00adad night.",  # soft hyphen
    f"{BODY} It was a b\u0430d night.",  # Cyrillic a
    f"{BODY} It was a ｂａｄ night.",  # full width
    f"{BODY} It was a 𝐛𝐚𝐝 night.",  # mathematical bold
    f"{BODY} It was a **bad** night.",
    f"{BODY} It was a [bad](https://example.org) night.",
    f"{BODY} It was a b&#97;d night.",  # an entity renders as the letter
    f"{BODY}\n\n```\nbad = True\n```",  # code is on the page
    f"{BODY} Set `bad` to true.",
])
def test_a_forbidden_word_shown_in_any_spelling_is_used(completion):
    assert score(completion, *forbidden("bad")) == 0.0


@pytest.mark.parametrize("completion", [
    f"{BODY} It was a fine night.",
    f"{BODY} It was a badge of honour.",  # a longer word is not the forbidden one
    f"{BODY} <!-- bad --> It was a fine night.",  # hidden from the reader: not said
    f"{BODY} See [the pier](https://example.org/bad).",
])
def test_no_forbidden_word_on_the_page_passes(completion):
    assert score(completion, *forbidden("bad")) == 1.0


# --------------------------------------------------------------------------- commas

@pytest.mark.parametrize("comma", ["\uff0c", "\ufe50", "\u060c", "\u3001", "\u201a", "\u055d", "\u1363", "\ufe10"])
def test_a_comma_of_any_script_or_look_is_a_comma(comma):
    assert is_comma(comma)
    assert score(f"The keeper{comma} tired and cold{comma} climbed the stairs.", *NO_COMMA) == 0.0


@pytest.mark.parametrize("completion", [
    "The keeper climbed the stairs and lit the lamp and watched the sea.",
    "We packed bread and cheese and apples and a flask of tea.",  # a list with commas replaced by words
    "The keeper climbed the stairs. <!-- a, b, c --> He lit the lamp.",  # a hidden comma is not on the page
    "The keeper wrote a note in Hawaiian: ʻae.",  # the okina is a letter, not a comma
    "Le gardien monte l'escalier et allume la lampe.",
])
def test_text_without_a_visible_comma_passes(completion):
    assert score(completion, *NO_COMMA) == 1.0


@pytest.mark.parametrize("completion", [
    "The keeper climbed the stairs and called `f(a, b)` to light the lamp.",
    "The keeper climbed the stairs.\n\n```\nlight(lamp, now)\n```",
    "The keeper climbed the stairs and lit the lamp&#44; then slept.",
])
def test_a_comma_in_code_or_an_entity_is_on_the_page(completion):
    assert score(completion, *NO_COMMA) == 0.0


def test_look_alike_commas_are_only_commas_by_default():
    assert not is_comma("ʻ") and not is_comma("'") and not is_comma("\u0313")  # okina, apostrophe, a diacritic
    text = "The keeper\u060c tired\u060c climbed the stairs."
    assert score(text, *NO_COMMA, parity=True) == 1.0  # the reference counts "," only


# --------------------------------------------------------------------------- letter case

@pytest.mark.parametrize("completion", [
    "the keeper climbed the stairs and lit the lamp \u0412EFORE dawn.",  # Cyrillic capital Ve looks like B
    "the keeper climbed the stairs and lit the lamp ＢEFORE dawn.",
    "the keeper climbed the stairs and lit the lamp.\n\n```\nLAMP = ON\n```",
])
def test_a_capital_the_reader_sees_breaks_all_lowercase(completion):
    assert score(completion, *LOWER) == 0.0


@pytest.mark.parametrize("completion", [
    "the keeper climbed the stairs and lit the lamp before dawn.",
    "the keeper climbed the **stairs** and lit the lamp before dawn.",
    "the keeper climbed the stairs <!-- Draft 2 --> and lit the lamp before dawn.",
])
def test_all_lowercase_as_shown_passes(completion):
    assert score(completion, *LOWER) == 1.0


def test_all_capitals_sees_look_alike_lower_case():
    assert score("THE KEEPER CLIMBED THE STAIRS AND LIT THE LAMP BEFORE DAWN.", *UPPER) == 1.0
    assert score("THE KEEPER CLIMBED THE STAIRS AND LIT THE LAMP BEF\u043eRE DAWN.", *UPPER) == 0.0  # Cyrillic o


# --------------------------------------------------------------------------- counts: only what is seen

def test_hidden_or_invisible_text_does_not_count_toward_length():
    ids, kw = ["length_constraints:number_words"], [{"num_words": 20, "relation": "at least"}]
    assert score(BODY + " And then the sun came up over the sea.", ids, kw) == 1.0
    assert score("The keeper slept. <!-- " + "word " * 30 + "-->", ids, kw) == 0.0
    assert score("The keeper slept. ~~" + "word " * 30 + "~~", ids, kw) == 0.0
    assert score("The keeper slept. " + "a\u200bb " * 10, ids, kw) == 0.0  # 13 words shown, 23 runs of \w


def test_sentences_hidden_from_the_reader_do_not_count():
    ids, kw = ["length_constraints:number_sentences"], [{"num_sentences": 4, "relation": "at least"}]
    assert score("It rained. The sea rose. The lamp burned. The keeper waited.", ids, kw) == 1.0
    assert score("It rained. <!-- The sea rose. The lamp burned. The keeper waited. -->", ids, kw) == 0.0


def test_less_than_counts_see_code_and_hidden_text_as_the_reader_does():
    ids, kw = ["length_constraints:number_words"], [{"num_words": 12, "relation": "less than"}]
    assert score("The keeper slept. <!-- " + "word " * 30 + "-->", ids, kw) == 1.0  # not on the page
    assert score("The keeper slept.\n\n```\n" + "word " * 30 + "\n```", ids, kw) == 0.0  # on the page


# --------------------------------------------------------------------------- format markers

@pytest.mark.parametrize(("ids", "kwargs", "shown_ok", "hidden"), [
    (["detectable_content:postscript"], [{"postscript_marker": "P.S."}],
     f"{BODY}\n\nP.S. Bring a lamp.", f"{BODY}\n\n<!-- P.S. Bring a lamp. -->"),
    (["detectable_format:title"], [{}], f"<<The Pier>>\n\n{BODY}", f"<!-- <<The Pier>> -->\n\n{BODY}"),
    (["detectable_format:multiple_sections"], [{"section_spliter": "SECTION", "num_sections": 2}],
     f"SECTION 1\n{BODY}\nSECTION 2\n{BODY}", f"SECTION 1\n{BODY}\n~~SECTION 2~~\n{BODY}"),
    (["detectable_format:number_highlighted_sections"], [{"num_highlights": 2}],
     f"*First part* {BODY} *Second part*", f"*First part* {BODY} <!-- *Second part* -->"),
    (["detectable_format:number_bullet_lists"], [{"num_bullets": 2}],
     f"{BODY}\n* one\n* two", f"{BODY}\n* one\n<!--\n* two\n-->"),
    (["startend:end_checker"], [{"end_phrase": "Any other questions?"}],
     f"{BODY} Any other questions?", f"{BODY} <!-- Any other questions? -->"),
    (["detectable_content:number_placeholders"], [{"num_placeholders": 2}],
     f"{BODY} Dear [name] at [address].", f"{BODY} Dear [name] at <!-- [address] -->."),
    (["detectable_format:constrained_response"], [{}],
     "My answer is yes. The keeper was right.", "~~My answer is yes.~~ The keeper was right."),
])
def test_a_format_marker_counts_only_where_it_is_shown(ids, kwargs, shown_ok, hidden):
    assert score(shown_ok, ids, kwargs) == 1.0
    assert score(hidden, ids, kwargs) == 0.0


def test_markers_in_look_alike_letters_are_the_markers():
    ids, kw = ["startend:end_checker"], [{"end_phrase": "Any other questions?"}]
    assert score(f"{BODY} \u0410ny other questions?", ids, kw) == 1.0  # Cyrillic A: reads as the phrase
    ids, kw = ["detectable_content:postscript"], [{"postscript_marker": "P.S."}]
    assert score(f"{BODY}\n\n\u0420.S. Bring a lamp.", ids, kw) == 1.0  # Cyrillic Er


def test_json_in_a_fence_is_still_json_and_a_comment_in_it_is_not():
    ids = ["detectable_format:json_format"]
    assert score('```json\n{"keeper": "Ada", "lamp": "lit"}\n```', ids, [{}]) == 1.0
    assert score('{"keeper": "Ada", "lamp": "lit"}', ids, [{}]) == 1.0
    assert score('Here it is: <!-- -->{"keeper": "Ada"}', ids, [{}]) == 0.0


# --------------------------------------------------------------------------- language

@pytest.mark.parametrize(("language", "completion"), [
    ("ru", "Смотритель маяка поднялся по лестнице и зажёг лампу перед рассветом, когда море было спокойным."),
    ("el", "Ο φύλακας του φάρου ανέβηκε τις σκάλες και άναψε τη λάμπα πριν από την αυγή."),
    ("ar", "صعد حارس المنارة الدرج وأشعل المصباح قبل الفجر عندما كان البحر هادئا."),
])
def test_text_in_another_script_keeps_its_language(language, completion):
    ids, kw = ["language:response_language"], [{"language": language}]
    assert score(completion, ids, kw) == 1.0
    assert score(completion, ids, [{"language": "en"}]) == 0.0


def test_a_language_shown_only_in_hidden_text_is_not_the_response_language():
    ids, kw = ["language:response_language"], [{"language": "fr"}]
    french = "Le gardien du phare monta l'escalier et alluma la lampe avant l'aube."
    assert score(french, ids, kw) == 1.0
    assert score(f"<!-- {french} --> The keeper climbed the stairs and lit the lamp before dawn.", ids, kw) == 0.0


# --------------------------------------------------------------------------- the reading itself

def test_a_response_that_redefines_commands_has_no_reading():
    assert reading_of(r"\def\x{storm} The \x came.").unreadable.startswith("the response redefines \\x")
    v = build("ifeval").verify(Sample(prompt="p", completion=r"\def\x{storm} The \x came.",
                                      fields={"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}))
    assert (v.score, v.status, v.details["guard"]) == (0.0, "no_answer", "unreadable")


def test_shown_keeps_code_unless_it_is_itself_hidden():
    assert shown("use `a, b` here") == "use `a, b` here"
    assert shown("x\n\n```\nf(1, 2)\n```\ny") == "x\n\n```\nf(1, 2)\n```\ny"
    assert "a, b" not in shown("~~`a, b`~~ shown")
    assert "a, b" not in shown("<!-- `a, b` --> shown")
    assert shown("$x, y$ and `c`") == "x, y and `c`"  # math as it renders; a backtick in math opens no code span
    assert code_ranges("$`a`$ plain") == []
    assert reading_of("one\r\ntwo").text == "one\ntwo"
    assert reading_of("one\rtwo\r\r\nthree").text == "one\ntwo\n\nthree"  # CommonMark: \r alone ends a line too


def test_paragraphs_split_by_any_line_ending():
    ids = ["length_constraints:nth_paragraph_first_word"]
    kw = [{"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "then"}]
    for end in ("\n", "\r\n", "\r", "\r\r\n"):
        text = end.join(["It rained all day.", "", "Then the sea rose.", "", "At last the lamp burned."])
        assert score(text, ids, kw) == 1.0, repr(end)
    assert score("It rained all day.\n\nSo the sea rose.\n\nAt last the lamp burned.", ids, kw) == 0.0


def test_folding_look_alikes_leaves_ascii_as_written():
    # IFEval key 3305: the request (with ASCII quotes) repeated, then the essay in Hindi
    request = 'Write an essay. Include the keywords: "climate" and "energy".'
    ids, kw = ["combination:repeat_prompt"], [{"prompt_to_repeat": request}]
    assert score(f"{request}\n\nवर्तमान आर्थिक संकट ने पर्यावरण को गहरे प्रभाव में डाला है।", ids, kw) == 1.0
    assert score(f"{request[:-1]}!\n\nवर्तमान आर्थिक संकट ने पर्यावरण को गहरे प्रभाव में डाला है।", ids, kw) == 0.0


# --------------------------------------------------------------------------- HTML rendered, structure as laid out

@pytest.mark.parametrize("split", ["l<wbr>ost", "l<!---->ost", "lo<span>st</span>", "l<b>os</b>t"])
def test_a_word_split_by_tags_that_render_as_nothing_is_the_word(split):
    assert score("Our cat Milo is safe. Please help us find him soon.", *forbidden("lost")) == 1.0
    assert score(f"Our cat Milo is {split}. Please help us find him soon.", *forbidden("lost")) == 0.0


@pytest.mark.parametrize("completion", [
    f'{BODY} <span title="lighthouse">the pier</span>',  # a tooltip is not on the page
    f"{BODY} <x-pad lighthouse></x-pad>",  # an attribute name: outside the grammar, unreadable
    f'{BODY} <span data-k="lighthouse">the pier</span>',
])
def test_a_keyword_only_in_a_tag_is_not_included(completion):
    assert score(completion, *keywords("lighthouse")) == 0.0


def test_words_in_attributes_do_not_count_and_a_style_leaves_nothing_readable():
    ids, kw = ["length_constraints:number_words"], [{"num_words": 10, "relation": "at least"}]
    assert score("The keeper lit the lamp at dusk and slept well.", ids, kw) == 1.0
    assert score('The keeper lit the lamp. <abbr title="at dusk and slept well tonight">x</abbr>', ids, kw) == 0.0
    verdict = build("ifeval").verify(Sample(prompt="p", fields={"instruction_id_list": ["change_case:english_capital"],
                                                                "kwargs": [{}]},
                                            completion='<span style="text-transform:uppercase">the keeper</span>'))
    assert (verdict.score, verdict.status, verdict.details["guard"]) == (0.0, "no_answer", "unreadable")
    assert "outside the readable set" in verdict.feedback


def test_a_title_in_ifevals_notation_is_text_not_a_tag():
    assert reading_of("<<The Pier>>\n\nThe keeper walked.").text == "<<The Pier>>\n\nThe keeper walked."
    assert score(f"<<The Pier of Lights>>\n\n{BODY}", ["detectable_format:title"], [{}]) == 1.0


BULLETS3 = (["detectable_format:number_bullet_lists"], [{"num_bullets": 3}])


@pytest.mark.parametrize("completion", [
    "Packing list:\n\n- tent\n- stove\n- rope",
    "Packing list:\n\n* tent\n* stove\n* rope",
    "Packing list:\n\n+ tent\n+ stove\n+ rope",
    "Packing list:\n- tent\n- stove\n- rope\n\n---\n\n1. not a bullet",
])
def test_bullets_are_the_list_items_a_reader_sees(completion):
    assert score(completion, *BULLETS3) == 1.0


@pytest.mark.parametrize("completion", [
    "Packing list:\n\n- tent\n- stove\n\n---\n\nThat is all.",  # a rule, not a bullet
    "Packing list:\n\n- tent\n- stove\n\n* * *\n\nThat is all.",
    "<div>\n- tent\n- stove\n- rope\n</div>",  # Markdown is not read inside an HTML block
    "Packing list:\n\n- tent\n- stove\n\n```\n- rope\n```",  # code
    "Packing list:\n\n- tent\n- stove\n\n\\- rope",  # an escaped dash is a dash
])
def test_what_only_starts_like_a_bullet_is_not_one(completion):
    assert score(completion, *BULLETS3) == 0.0


HIGHLIGHTS2 = (["detectable_format:number_highlighted_sections"], [{"num_highlights": 2}])


def test_highlights_are_the_emphasis_a_reader_sees():
    assert score("Two parts: *alpha part* and _beta part_ are highlighted.", *HIGHLIGHTS2) == 1.0
    assert score("Two parts: *alpha part\nspans a line* and **beta**.", *HIGHLIGHTS2) == 1.0
    assert score("Two parts: `*alpha part*` and `*beta part*` are code.", *HIGHLIGHTS2) == 0.0
    assert score("Two parts: \\*alpha part\\* and \\*beta part\\* are plain.", *HIGHLIGHTS2) == 0.0
    assert score("One part: **alpha part** only.", *HIGHLIGHTS2) == 0.0  # one bold span is one highlight
    assert score("Parts: *alpha* and *beta*.\n\nMore: **gamma**.", *HIGHLIGHTS2) == 1.0


PARAGRAPHS2 = (["length_constraints:number_paragraphs"], [{"num_paragraphs": 2}])


@pytest.mark.parametrize(("completion", "expected"), [
    ("The tide came in.\n\n***\n\nThe gulls went quiet.", 1.0),
    ("The tide came in.\n\n* * *\n\nThe gulls went quiet.", 1.0),  # renders as *** does
    ("The tide came in. ***\n\nThe gulls went quiet.", 1.0),  # three asterisks shown between them
    ("The tide came in. ***bold italic*** The gulls went quiet.", 0.0),  # emphasis, not a divider
    ("The tide came in. `***` The gulls went quiet.", 0.0),  # code
])
def test_paragraph_dividers_are_the_ones_a_reader_sees(completion, expected):
    assert score(completion, *PARAGRAPHS2) == expected


def test_case_a_reader_cannot_see_is_no_case():
    assert score("our grey cat milo slipped out on tuesday night and has not come home yet.", *LOWER) == 1.0
    small_capitals = "our grey cat milo slipped out on \u1d1b\u1d1c\u1d07s\u1d05\u1d00\u028f night, not home."
    assert score(small_capitals, *LOWER) == 0.0  # ᴛᴜᴇsᴅᴀʏ looks like capitals, has no capital form


@pytest.mark.parametrize("mark", ["\u0375", "\u02cf", "\u00b8"])
def test_a_spacing_mark_ending_a_word_reads_as_a_comma(mark):
    assert score(f"Our grey cat Milo slipped out on Tuesday night{mark} and he has not come home.", *NO_COMMA) == 0.0
    assert score("Our grey cat Milo slipped out to Hawai\u02bbi and has not come home.", *NO_COMMA) == 1.0


def test_typographic_quotes_wrap_a_response_and_closing_emphasis_is_style():
    quoted = "\u201cThe tide came in slowly and the gulls went quiet over the harbour.\u201d"
    assert score(quoted, ["startend:quotation"], [{}]) == 1.0
    assert score(quoted, ["startend:quotation"], [{}], parity=True) == 0.0
    ids, kw = ["startend:end_checker"], [{"end_phrase": "Is there anything else I can help with?"}]
    assert score("Here is my answer.\n\n**Is there anything else I can help with?**", ids, kw) == 1.0


def test_an_echo_of_a_prompt_holding_html_is_still_an_echo():
    prompt = "Write a funny note to McQueen, using <br> to separate lines. Start with a funny greeting."
    verdict = build("ifeval").verify(Sample(prompt=prompt, completion=prompt, fields={
        "instruction_id_list": ["detectable_content:number_placeholders"], "kwargs": [{"num_placeholders": 0}]}))
    assert (verdict.score, verdict.details["guard"]) == (0.0, "echo")



@pytest.mark.parametrize(("completion", "ids", "kwargs", "expected"), [
    ("It was $b{}a{}d$ luck for the keeper that night.", *forbidden("bad"), 0.0),  # renders "bad"
    ("It was $\\mathrm{b}\\mathrm{ad}$ luck for the keeper that night.", *forbidden("bad"), 0.0),
    ("The room measured $3\\times4$ metres.", *keywords("times"), 0.0),  # renders ×, not "times"
    ("We have $\\left( a+b \\right)$ in the formula.", *forbidden("right"), 1.0),  # renders ( a+b )
    ("it follows: $a \\Rightarrow b$ in every case.", *LOWER, 1.0),  # renders ⇒, no capital
    ("The keeper counted $10\\,000$ waves in a single night.", *NO_COMMA, 1.0),  # a thin space, no comma
])
def test_math_is_judged_as_it_renders(completion, ids, kwargs, expected):
    assert score(completion, ids, kwargs) == expected
