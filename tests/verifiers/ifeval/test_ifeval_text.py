"""Counting as IFEval counts: words (nltk's ``\\w+`` tokenizer, exactly), sentences (the trained Punkt model
where installed; the fallback splitter runs Punkt's rules: checked against nltk's Punkt given the same
parameters) and capitalised words."""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers.ifeval.checks import count_bullets, count_highlights, count_placeholders
from rewardsmith.verifiers.ifeval.text import (
    ABBREVIATIONS,
    SENTENCE_STARTERS,
    capital_words,
    count_sentences,
    count_sentences_by_rules,
    count_words,
)


@pytest.mark.parametrize(("text", "n"), [
    ("", 0), ("   ", 0), ("Hello world.", 1), ("Hello world", 1), ("Hi. Bye.", 2), ("Really?! Yes.", 2),
    ("Mr. Smith went to Washington. He left.", 2), ("It costs 3.50 dollars. Cheap.", 2),
    ("Lines\nwithout\nperiods", 1), ('He said "Stop." Then he left.', 2), ("Wait... and then it ended.", 1),
    ("Wait... Then it ended.", 2), ("See e.g. the report. Done.", 2), ("1. the first item", 1),
    ("**Title.** Body text here.", 2), ("J. R. R. Tolkien wrote books.", 1), ("“Happy Birthday.” Next one.", 2),
])
def test_sentences(text, n):
    assert count_sentences_by_rules(text) == n


# Where the trained model's statistics decide and a fixed list cannot: abbreviations it learned that the
# fallback lacks ("Gov." is listed, "Calif." is not), and collocations it keeps together.
@pytest.mark.parametrize(("text", "trained", "rules"), [
    ("They moved to Calif. Later they left.", 1, 2),
    ("The plan was approved. It worked.", 2, 2),
    ("He met Gov. Brown there. It went well.", 3, 2),
    ("Wait... Then it ended.", 1, 2),
])
def test_count_sentences_uses_the_trained_model_where_installed(text, trained, rules):
    pytest.importorskip("punkt")
    assert count_sentences_by_rules(text) == rules
    assert count_sentences(text) == trained


def _punkt():
    punkt = pytest.importorskip("nltk.tokenize.punkt")
    params = punkt.PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    params.sent_starters = set(SENTENCE_STARTERS)
    for word in SENTENCE_STARTERS:
        params.ortho_context[word] = 2 | 4 | 8 | 16 | 32
    return punkt.PunktSentenceTokenizer(params)


# One shape is left out, a quirk of nltk's Punkt we do not copy (docs/verifiers/ifeval.md): a "?!" standing
# alone, with no word before it (Punkt makes "?" and "!" two sentences).
PIECES = ["The", "cat", "sat", "Mr.", "Dr.", "e.g.", "U.S.", "J.", "1.", "2013.", "end.", "end!", "why?", "wait...",
          "(see", '"quoted."', "“curly.”", "**bold.**", "-", "*", "etc.", "a.m.", "So,", "it", "But", "x.", "Then",
          "said:", "[note]", "3.5", "well-known.", "'single.'", "...", "The.", "i.e.", "no.", "Really?!", "«ça».",
          "ok.)", "this).", "Dr.)"]


def test_our_splitter_runs_punkts_rules_on_random_text():
    tokenizer = _punkt()
    rng = random.Random(26)
    for _ in range(3000):
        words = [rng.choice(PIECES) for _ in range(rng.randint(1, 14))]
        text = "".join(w + rng.choice([" ", " ", " ", "\n", "\n\n", "  "]) for w in words)
        assert count_sentences_by_rules(text) == len(tokenizer.tokenize(text)), repr(text)


@pytest.mark.parametrize(("text", "n"), [("", 0), ("one two-three four_five", 4), ("don't stop", 3),
                                         ("ünïcödé wörds 123", 3), ("a.b.c", 3)])
def test_words_are_runs_of_word_characters(text, n):
    assert count_words(text) == n


def test_capital_words_match_nltk_word_tokenize_on_the_whole_text():
    nltk = pytest.importorskip("nltk")
    samples = ["HELLO WORLD", "I DON'T KNOW.", "THE U.S. AND U.K. AGREED", "(BIG) [DEAL] {NOW}", "Mixed CASE Words",
               "WELL-KNOWN FACT!", "I'M HERE, YOU'RE THERE", "A B C", "NASA's rover", "Wow... SUCH TEXT", "123 ABC"]
    for text in samples:
        expected = sum(1 for tok in nltk.word_tokenize(text, preserve_line=True) if tok.isupper())
        assert capital_words(text) == expected, text


def test_counting_helpers_are_linear_and_match_their_regexes():
    import re

    rng = random.Random(5)
    alphabet = "ab[]*-\n <>"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert count_placeholders(text) == len(re.findall(r"\[.*?\]", text)), repr(text)
        stars, dashes = re.findall(r"^\s*\*[^\*].*$", text, flags=re.M), re.findall(r"^\s*-.*$", text, flags=re.M)
        expected = len(stars) + len(dashes)
        assert count_bullets(text) == expected, repr(text)
        highlights = [h for h in re.findall(r"\*[^\n\*]*\*", text) if h.strip("*").strip()]
        doubles = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", text) if h.removeprefix("**").removesuffix("**").strip()]
        assert count_highlights(text) == len(highlights) + len(doubles), repr(text)
