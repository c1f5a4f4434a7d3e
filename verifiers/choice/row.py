"""The options a multiple-choice row offers and the one its gold names, in the shapes datasets use.

``choices`` (the field is configurable):

* a list of option texts (MMLU, lm-eval's multiple-choice sets): labelled ``A``, ``B``, … in order;
* ARC's ``{"text": [...], "label": ["A", "B", ...]}`` (labels may be digits: ``["1", "2", ...]``);
* a mapping label → text (``{"A": "Paris", "B": "London"}``).

``answer``: an index (an int, 0-based, as MMLU and HellaSwag give it; a digit string where the labels
are not digits), a label (``"B"``, ``"(B)"``, ``"b"``), or the exact text of one option.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rewardsmith.verifiers.reading import fold

MAX_OPTIONS = 26
_DRESSED_LABEL = re.compile(r"^\s*(?:option\s+|choice\s+)?[(\[]?\s*([A-Za-z0-9]{1,2})\s*[)\].:]?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Options:
    """The row's options: each label and its text, in order."""

    labels: tuple[str, ...]
    texts: tuple[str, ...]

    def index_of_label(self, label: str) -> int | None:
        if label in self.labels:
            return self.labels.index(label)
        upper = label.upper()
        return self.labels.index(upper) if upper in self.labels else None

    def indices_of_text(self, text: str) -> list[int]:
        """The options whose text is ``text`` (case and spacing aside)."""
        key = squash(text)
        return [i for i, option in enumerate(self.texts) if key and squash(option) == key]

    @property
    def letters(self) -> bool:
        """Whether the labels are letters (``A``…), so a lone digit cannot be one."""
        return all(label.isalpha() for label in self.labels)


def looks(text: str) -> str:
    """``text`` as it looks (:func:`~rewardsmith.verifiers.reading.fold`: a Cyrillic ``В``, a fullwidth ``Ｂ``, a
    mathematical ``𝐁`` and a circled ``Ⓑ`` are ``B``), without combining marks (``C\u0301`` is ``C``): a label
    that only looks different is that label, never a different one that goes unread."""
    text = fold(text)
    if text.isascii():
        return text
    return unicodedata.normalize(
        "NFC", "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    )


@lru_cache(maxsize=256)
def seen(options: Options) -> Options:
    """The options as they look (:func:`looks` on every label and text), to read a statement read the same way."""
    return Options(tuple(looks(label) for label in options.labels), tuple(looks(text) for text in options.texts))


def squash(text: str) -> str:
    """Text compared as a reader would: look-alikes folded, case, outer punctuation and runs of spaces aside."""
    return " ".join(looks(str(text)).split()).strip(" .").casefold()


def read_options(value: Any) -> Options | str:
    """The row's options, or a message saying why they cannot be read."""
    if isinstance(value, Mapping) and "text" in value:
        texts, labels = value.get("text"), value.get("label")
        if not _strings(texts) or not texts:
            return "choices.text must be a non-empty list of strings"
        if labels is None:
            labels = list(string.ascii_uppercase[: len(texts)])
        if not _strings(labels) or len(labels) != len(texts):
            return "choices.label must be a list of strings, one per choices.text"
        return _checked([str(lab).strip() for lab in labels], list(texts))
    if isinstance(value, Mapping):
        if not value or not _strings(list(value.values())):
            return "choices given as a mapping must map each label to its text"
        return _checked([str(k).strip() for k in value], list(value.values()))
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if not value or not _strings(value):
            return "choices must be a non-empty list of option texts"
        if len(value) > MAX_OPTIONS:
            return f"more than {MAX_OPTIONS} options: label them with {{'text': [...], 'label': [...]}}"
        return _checked(list(string.ascii_uppercase[: len(value)]), list(value))
    return f"choices must be a list of option texts or {{'text': [...], 'label': [...]}}, got {type(value).__name__}"


def _strings(values: Any) -> bool:
    return (
        isinstance(values, Sequence)
        and not isinstance(values, str)
        and all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in values)
    )


def _checked(labels: list[str], texts: list[Any]) -> Options | str:
    if any(not label for label in labels) or len(set(labels)) != len(labels):
        return f"choice labels must be distinct and non-empty, got {labels}"
    return Options(tuple(labels), tuple(str(t) for t in texts))


def read_gold(value: Any, options: Options) -> int | str:
    """The index of the option the gold names, or a message saying why it names none."""
    if isinstance(value, bool) or value is None:
        return f"the gold must be an index, a label or an option's text, got {value!r}"
    if isinstance(value, int):
        if 0 <= value < len(options.labels):
            return value
        return f"gold index {value} is outside the {len(options.labels)} options"
    if not isinstance(value, str):
        return f"the gold must be an index, a label or an option's text, got {type(value).__name__}"
    text = value.strip()
    if text in options.labels:
        return options.labels.index(text)
    dressed = _DRESSED_LABEL.match(text)
    if dressed:
        found = options.index_of_label(dressed.group(1))
        if found is not None:
            return found
        if dressed.group(1).isdigit() and options.letters and int(dressed.group(1)) < len(options.labels):
            return int(dressed.group(1))  # HellaSwag's "label": "2"
    matches = options.indices_of_text(text)
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        return f"the gold {text[:60]!r} is the text of several options"
    return f"the gold {text[:60]!r} is neither a label ({', '.join(options.labels)}) nor an option's text"
