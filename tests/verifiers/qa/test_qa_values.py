"""``qa`` reads the value a statement states exactly (issue 36): numbers as numbers, look-alikes as what
they look like, a name not as a longer one that starts with it, a statement naming two candidates as a
hedge; and the honest look-alikes (articles, punctuation, case, ``1,000``) keep paying."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.qa.match import f1, is_number, key, same

EM = build("qa")
F1 = build({"type": "qa", "metric": "f1"})


def paid(completion: str, gold, verifier=EM) -> float:
    return verifier.verify(Sample(prompt="Q?", completion=completion, fields={"answer": gold})).score


def score(answer: str, gold, verifier=EM, form: str = "The answer is {}.") -> float:
    return paid(form.format(answer), gold, verifier)


# ------------------------------------------------------------------ numbers compared as numbers


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("25", "2.5"),
        ("2.5", "25"),
        ("-7", "7"),
        ("7", "-7"),
        ("7", "\u22127"),  # gold with a Unicode minus
        ("\u22127", "7"),
        ("\u20137", "7"),  # an en dash before the digit is a minus sign
        ("(-7)", "7"),
        ("1.000", "1000"),  # a point is a decimal point: 1.000 is 1
        ("1,5", "15"),  # not a thousands group: no number 15
        ("10,00", "1000"),
        ("1-7", "-17"),
        ("1-7", "17"),
        ("007", "7"),  # a leading zero is a code, not the number
        ("7 km", "7"),  # a unit word stays a word
        ("٢٫٥", "25"),  # Arabic-Indic 2, decimal separator, 5: not twenty-five
        ("3.14", "314"),
        ("0.5", "5"),
    ],
)
def test_a_different_number_scores_0(answer, gold):
    assert score(answer, gold) == 0.0
    assert score(answer, gold, F1) == 0.0


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("1,000", "1000"),
        ("1000", "1,000"),
        ("1,000,000", "1000000"),
        ("2.50", "2.5"),
        ("+7", "7"),
        ("\u22127", "-7"),  # a Unicode minus is a minus
        ("-7", "\u22127"),
        ("－７", "-7"),  # fullwidth
        ("٢.٥", "2.5"),  # Arabic-Indic digits with a full stop
        ("7%", "7"),  # a symbol is dropped, as SQuAD does
        ("$5", "5"),
        ("1066", ["1066"]),
        ("1066", 1066),
        ("the year 1066", "year 1066"),
    ],
)
def test_the_same_number_keeps_paying(answer, gold):
    assert score(answer, gold) == 1.0
    assert score(answer, gold, F1) == 1.0


def test_number_words_stay_words():
    assert score("seven", "7") == 0.0  # not widened: a number word is a word
    assert score("seven", "seven") == 1.0


def test_a_numeric_gold_gets_no_partial_credit_under_f1():
    assert score("7 km", "7", F1) == 0.0
    assert score("7 apples", "7", F1) == 0.0
    assert score("7 apples", "7 apples", F1) == 1.0
    assert 0 < score("7 red apples", "7 apples", F1) < 1  # a gold with words keeps F1's partial credit


@pytest.mark.parametrize("form", ["\\boxed{{{}}}", "<answer>{}</answer>", "{}", "Final answer: {}"])
def test_numbers_in_every_form(form):
    assert score("2.5", "2.5", form=form) == 1.0
    assert score("25", "2.5", form=form) == 0.0


def test_two_statements_of_numbers_that_differ_only_in_sign_are_a_hedge():
    assert paid("\\boxed{7} \\boxed{-7}", "7") == 0.0
    assert paid("\\boxed{2.5} \\boxed{25}", "2.5") == 0.0
    assert paid("\\boxed{1000} \\boxed{1,000}", "1000") == 1.0  # the same value twice


def test_match_reads_numbers_apart_from_words():
    assert key("The 2.50 km!") == "#2.5# km"
    assert key("COVID-19") == key("covid19")  # digits inside a word stay SQuAD's
    assert is_number("1,000") and is_number("-2.5") and is_number("$5")
    assert not is_number("7 km") and not is_number("007") and not is_number("seven")
    assert same("-0", "0") and not same("", "")
    assert f1("2.5", "25") == 0.0


# ------------------------------------------------------------------ a name is not a longer one


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Norwegian Bokmål", "Norwegian"),
        ("Norwegian", "Norwegian Bokmål"),
        ("JavaScript", "Java"),
        ("Java", "JavaScript"),
        ("Java Script", "Java"),
        ("Swahili-Arabic", "Swahili"),
        ("Swahili\u2013Arabic", "Swahili"),
        ("Old Norse", "Norse"),
        ("Persian", "Old Persian"),
    ],
)
def test_a_longer_or_shorter_name_scores_0_by_default(answer, gold):
    assert score(answer, gold) == 0.0


def test_f1_stays_the_opt_in_for_partial_names():
    assert 0 < score("Norwegian Bokmål", "Norwegian", F1) < 1


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("J\u0430va", "Java"),  # Cyrillic a: looks like Java, is Java
        ("Ｊａｖａ", "Java"),
        ("Java", "Ｊａｖａ"),
        ("the Norwegian", "Norwegian"),
        ("NORWEGIAN", "Norwegian"),
        ("Norwegian!", "Norwegian"),
        ("Norwegian Bokmål", "Norwegian Bokmål"),
    ],
)
def test_a_name_as_it_looks_keeps_paying(answer, gold):
    assert score(answer, gold) == 1.0


# ------------------------------------------------------------------ a second answer in the statement


@pytest.mark.parametrize(
    "answer",
    ["Paris / London", "Paris | London", "Paris; London", "Paris, London", "Paris or London", "Paris (London)"],
)
def test_a_statement_naming_two_candidates_scores_0(answer):
    assert score(answer, "Paris") == 0.0
    assert score(answer, "Paris", F1) == 0.0


@pytest.mark.parametrize(
    "completion",
    ["<answer>Paris / London</answer>", "\\boxed{Paris / London}", "Paris / London", "| Paris | London |"],
)
def test_two_candidates_in_any_form_score_0(completion):
    assert paid(completion, "Paris") == 0.0


@pytest.mark.parametrize("answer", ["Paris", "the city of Paris", "PARIS!", "'Paris'"])
def test_one_candidate_keeps_paying(answer):
    assert score(answer, {"text": ["Paris", "the city of Paris"], "answer_start": [0, 0]}) == 1.0


@pytest.fixture
def narrowed_decimal_context():
    """A library in the same process may narrow the global decimal context (reasoning-gym's generators
    set its precision): a number's reading must not depend on it."""
    import decimal

    saved = decimal.getcontext().copy()
    decimal.getcontext().prec = 6
    yield
    decimal.setcontext(saved)


@pytest.mark.parametrize(("answer", "gold"), [("2.5000000001", "2.5"), ("-7.00000001", "-7"), ("1234567.5", "1234568")])
def test_numbers_are_exact_under_a_narrowed_decimal_context(narrowed_decimal_context, answer, gold):
    assert score(answer, gold) == 0.0
    assert score(gold, gold) == 1.0


@pytest.mark.parametrize(
    ("completion", "gold"),
    [("The answer is <8.", "8"), ("Answer: >8", "8"), ("Answer: ~8", "8"), ("Answer: \u22488", "8"),
     ("The answer is 2\u2075.", "25"), ("The answer is 10\u2076\u2076.", "1066"), ("The answer is \u09ea.", "4"),
     ("The answer is \u09ea.", "8"), ("The answer is !France.", "France")],
)
def test_a_mark_or_a_script_that_changes_the_value_matches_nothing(completion, gold):
    """SQuAD drops every punctuation mark and NFKC lowers every superscript: <8 and 2^5 would read as 8 and 25."""
    for metric in ("em", "f1"):
        verdict = build({"type": "qa", "metric": metric}).verify(Sample(completion=completion, fields={"answer": gold}))
        assert verdict.score == 0.0, (completion, gold, metric, verdict.feedback)


@pytest.mark.parametrize(
    ("completion", "gold"),
    [("The answer is $8.", "8"), ("The answer is (8).", "8"), ("Answer: 1,000", "1000"),
     ("Answer: Washington, D.C.", "Washington, D.C."), ("Answer: Simon & Garfunkel", "Simon & Garfunkel")],
)
def test_neutral_marks_and_the_golds_own_marks_still_match(completion, gold):
    assert build("qa").verify(Sample(completion=completion, fields={"answer": gold})).score == 1.0


@pytest.mark.parametrize(("prediction", "gold"), [
    ("O+", "O-"), ("C", "C++"), ("C++", "C"), ("C", "C#"), ("B", "B+"), ("7+", "7"),
])
def test_a_mark_glued_to_a_word_is_part_of_it(prediction, gold):
    assert not same(prediction, gold) and f1(prediction, gold) == 0.0
    assert same(gold, gold) and same("+7", "7") and same("(France).", "France")  # a sign, brackets, punctuation
