"""SQuAD v1.1's answer normalisation and its two metrics, exact match and token F1.

Written to the rules of the official v1.1 evaluation script: lower case, drop every ASCII
punctuation character, replace the articles ``a``/``an``/``the`` (whole words) with a space,
collapse whitespace. F1 is the harmonic mean of token precision and recall over the bag of
normalised tokens, 0 when no token is shared (so an empty side scores 0; SQuAD v2.0's rule that
two empty answers agree is not v1.1's). ``benchmarks/qa_parity.py`` checks both against
torchmetrics' SQuAD metric on the same rows.
"""

from __future__ import annotations

import re
import string
from collections import Counter

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalize(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (SQuAD v1.1)."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize(prediction) == normalize(gold))


def f1(prediction: str, gold: str) -> float:
    """Token F1 of the normalised answers (SQuAD v1.1)."""
    predicted, expected = tokens(prediction), tokens(gold)
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(expected)
    return 2 * precision * recall / (precision + recall)
