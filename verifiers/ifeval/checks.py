"""The 25 verifiable instructions of IFEval: each reads its kwargs (checked first) and judges a response.

A check is ``(kwargs, text, strict) -> (followed, why)``. ``text`` is the response as its reader sees
it (:func:`rewardsmith.verifiers.reading.document.shown`: hidden text gone, code kept, invisible characters
removed); a check that compares letters also folds look-alikes on both sides when ``strict``
(:func:`looks`: a Cyrillic ``а`` is an ``a``, a fullwidth ``Ｋ`` a ``K``). The semantics are lm-eval's
(``tasks/ifeval/instructions.py``) rewritten with linear scans where the reference's regexes can go
quadratic on crafted text (``[[[[``, long runs of white space). ``strict`` is this verifier's default;
``False`` (the ``parity`` option) reproduces the reference's lenient corners: a text langdetect cannot
read counts as any language, a bare JSON scalar counts as JSON, a constrained response may give
several of the allowed answers, only "," is a comma (strict: whatever looks like one or is one in its
script, :func:`is_comma`), text is compared as written (strict: look-alikes folded), the nth paragraph
is counted in the raw split on blank lines (strict: among the paragraphs, so leading blank lines do not
shift it), and two responses differ when their text does (strict: when their words do, case and
punctuation aside). Keywords, markers and splitters are matched literally (the reference compiles them
as regexes; IFEval's data holds none with regex syntax, so the figures are the same).

:func:`parse_kwargs` turns a row's kwargs into the checker's arguments: ``None`` means "not given"
(HF's IFEval rows carry every key of every instruction, ``None`` where unused); a missing required
argument or a value of the wrong type is a :class:`KwargsError` naming it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rewardsmith.verifiers.ifeval import text as T
from rewardsmith.verifiers.reading import fold
from rewardsmith.verifiers.reading.structure import bullet_items, dividers, emphasized
from rewardsmith.verifiers.reading.unicode import prototype, unpaired_case

RELATIONS = ("less than", "at least")
LANGDETECT_CHARS = 10_000  # langdetect's own Detector reads at most this many characters
CONSTRAINED_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
Result = tuple[bool, str]


class KwargsError(ValueError):
    """An instruction's kwargs cannot be used: ``arg`` names the argument."""

    def __init__(self, arg: str, problem: str) -> None:
        self.arg = arg
        super().__init__(f"{arg}: {problem}")


@dataclass(frozen=True)
class Check:
    """One instruction: its arguments (name → type; required ones) and its judge."""

    args: Mapping[str, type | tuple[type, ...]]
    required: tuple[str, ...]
    judge: Callable[[dict[str, Any], str, bool], Result]


def parse_kwargs(check: Check, kwargs: Any) -> dict[str, Any]:
    """The arguments a check reads, typed; ``None`` values dropped; unknown keys ignored (HF rows
    carry every instruction's keys)."""
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, Mapping):
        raise KwargsError("kwargs", f"expected an object, got {type(kwargs).__name__}")
    out: dict[str, Any] = {}
    for name, kind in check.args.items():
        value = kwargs.get(name)
        if value is None:
            continue
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise KwargsError(name, f"expected an integer, got {value!r}")
        elif kind is list:
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
                raise KwargsError(name, f"expected a list of non-empty strings, got {value!r}")
            value = list(value)
        elif kind is str and (not isinstance(value, str) or not value.strip()):
            raise KwargsError(name, f"expected a non-empty string, got {value!r}")
        if kind is int and value < 0:
            raise KwargsError(name, f"must not be negative, got {value}")
        if name == "letter" and len(value.strip()) != 1:
            raise KwargsError(name, f"expected one character, got {value!r}")
        if name.endswith("relation") and value not in RELATIONS:
            raise KwargsError(name, f"must be one of {', '.join(map(repr, RELATIONS))}, got {value!r}")
        out[name] = value
    for name in check.required:
        if name not in out:
            raise KwargsError(name, "is required")
    return out


def _compare(actual: int, relation: str, threshold: int, what: str) -> Result:
    ok = actual < threshold if relation == "less than" else actual >= threshold
    return ok, f"{actual} {what} ({relation} {threshold} wanted)"


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def looks(text: str, strict: bool) -> str:
    """``text`` as its letters look (strict): look-alikes folded, so that a check comparing letters compares
    what a reader sees; as written otherwise (parity). Only runs of non-ASCII characters are folded: ASCII is
    what it looks like already, and ``fold`` on a whole non-ASCII text also rewrites ASCII (``"`` becomes
    ``''``), which would make a quoted prompt differ from its own repetition."""
    if not strict or text.isascii():
        return text
    return _NON_ASCII.sub(lambda run: fold(run.group()), text)


# --------------------------------------------------------------------------- keywords


def _keywords(kw: dict[str, Any], text: str, strict: bool) -> Result:
    seen = looks(text, strict).lower()
    missing = [k for k in kw["keywords"] if looks(k, strict).lower() not in seen]
    return not missing, f"missing {missing}" if missing else "all keywords present"


def _frequency(kw: dict[str, Any], text: str, strict: bool) -> Result:
    keyword = kw["keyword"].strip()
    n = len(re.findall(re.escape(looks(keyword, strict)), looks(text, strict), flags=re.IGNORECASE))
    return _compare(n, kw["relation"], kw["frequency"], f"x {keyword!r}")


def _forbidden(kw: dict[str, Any], text: str, strict: bool) -> Result:
    seen = looks(text, strict)
    found = [w for w in kw["forbidden_words"]
             if re.search(r"\b" + re.escape(looks(w, strict)) + r"\b", seen, flags=re.IGNORECASE)]
    return not found, f"uses {found}" if found else "no forbidden word"


def _letters(kw: dict[str, Any], text: str, strict: bool) -> Result:
    letter = kw["letter"].strip().lower()
    n = looks(text, strict).lower().count(looks(letter, strict))
    return _compare(n, kw["let_relation"], kw["let_frequency"], f"x {letter!r}")


# --------------------------------------------------------------------------- language and case


def detect_language(text: str) -> str | None:
    """langdetect's language code for ``text`` (first characters only), seeded so that the same text
    always gets the same answer; ``None`` when it finds nothing to go on (digits, symbols)."""
    from langdetect import DetectorFactory, LangDetectException, detect  # ~0.5 s to load its profiles

    DetectorFactory.seed = 0
    try:
        return detect(text[:LANGDETECT_CHARS])
    except LangDetectException:
        return None


def _is_language(text: str, language: str, strict: bool) -> Result:
    found = detect_language(text)
    if found is None:
        return not strict, "no language detected"
    return found == language, f"detected {found!r}"


def _language(kw: dict[str, Any], text: str, strict: bool) -> Result:
    return _is_language(text, kw["language"], strict)


def _case_unseen(text: str, strict: bool) -> str:
    letter = unpaired_case(text) if strict else ""
    return f"{letter!r} has no other case: a reader cannot tell its case" if letter else ""


def _all_capitals(kw: dict[str, Any], text: str, strict: bool) -> Result:
    unseen = _case_unseen(text, strict)
    if unseen:
        return False, unseen
    if not looks(text, strict).isupper():
        return False, "not all capitals"
    return _is_language(text, "en", strict)


def _all_lowercase(kw: dict[str, Any], text: str, strict: bool) -> Result:
    unseen = _case_unseen(text, strict)
    if unseen:
        return False, unseen
    if not looks(text, strict).islower():
        return False, "not all lowercase"
    return _is_language(text, "en", strict)


def _capital_words(kw: dict[str, Any], text: str, strict: bool) -> Result:
    unseen = _case_unseen(text, strict)
    if unseen:
        return False, unseen
    n = T.capital_words(looks(text, strict))
    return _compare(n, kw["capital_relation"], kw["capital_frequency"], "capitalised words")


# --------------------------------------------------------------------------- length


def _sentences(kw: dict[str, Any], text: str, strict: bool) -> Result:
    return _compare(T.count_sentences(text), kw["relation"], kw["num_sentences"], "sentences")


def _words(kw: dict[str, Any], text: str, strict: bool) -> Result:
    return _compare(T.count_words(text), kw["relation"], kw["num_words"], "words")


def _paragraphs(kw: dict[str, Any], text: str, strict: bool) -> Result:
    if strict:  # the dividers a reader sees: rules (***, * * *, ---) and *** shown as text; not emphasis or code
        cuts = [0, *(x for r in dividers(text) for x in r), len(text)]
        parts = [text[cuts[i] : cuts[i + 1]] for i in range(0, len(cuts), 2)]
    else:
        parts = re.split(r"\s?\*\*\*\s?", text)
    inner = [i for i, p in enumerate(parts) if not p.strip() and 0 < i < len(parts) - 1]
    if inner:
        return False, "an empty paragraph between *** dividers"
    n = sum(1 for p in parts if p.strip())
    return n == kw["num_paragraphs"], f"{n} paragraphs ({kw['num_paragraphs']} wanted)"


_PUNCT_STOP = set(".,?!'\"")


def _first_word(paragraph: str) -> str:
    word = paragraph.split()[0].lstrip("'").lstrip('"')
    out = []
    for ch in word:
        if ch in _PUNCT_STOP:
            break
        out.append(ch.lower())
    return "".join(out)


def _nth_first_word(kw: dict[str, Any], text: str, strict: bool) -> Result:
    parts = text.split("\n\n")
    n = sum(1 for p in parts if p.strip())
    if strict:  # the nth paragraph a reader sees; the reference indexes the raw split, blank parts included
        parts = [p for p in parts if p.strip()]
    nth, wanted = kw["nth_paragraph"], looks(kw["first_word"], strict).lower()
    if nth < 1 or nth > n or not parts[nth - 1].strip():
        return False, f"no paragraph {nth} (of {n})"
    first = _first_word(looks(parts[nth - 1].strip(), strict))
    ok = n == kw["num_paragraphs"] and first == wanted
    return ok, f"{n} paragraphs ({kw['num_paragraphs']} wanted), paragraph {nth} starts with {first!r}"


# --------------------------------------------------------------------------- content


def count_placeholders(text: str) -> int:
    """Non-overlapping ``[...]`` within a line (the reference's ``\\[.*?\\]``), in one pass."""
    count = 0
    for line in text.split("\n"):
        start = line.find("[")
        while start != -1:
            end = line.find("]", start + 1)
            if end == -1:
                break
            count += 1
            start = line.find("[", end + 1)
    return count


def _placeholders(kw: dict[str, Any], text: str, strict: bool) -> Result:
    n = count_placeholders(text)
    return n >= kw["num_placeholders"], f"{n} placeholders ({kw['num_placeholders']} wanted)"


def _postscript(kw: dict[str, Any], text: str, strict: bool) -> Result:
    marker = looks(kw["postscript_marker"].strip(), strict)
    lowered = looks(text, strict).lower()
    if marker == "P.P.S":
        found = re.search(r"p\.\s?p\.\s?s", lowered)
    elif marker == "P.S.":
        found = re.search(r"p\.\s?s\.", lowered)
    else:
        found = marker.lower() in lowered
    return bool(found), f"{marker!r} {'found' if found else 'not found'}"


# --------------------------------------------------------------------------- format


def count_bullets(text: str) -> int:
    """Lines starting (after white space) with ``* `` or ``-``: the reference's two multi-line regexes,
    counted line by line (a lone ``*`` line takes the next line as its text, as the regex does)."""
    lines = text.split("\n")
    count, i = 0, 0
    while i < len(lines):
        s = lines[i].lstrip()
        if s.startswith("-"):
            count += 1
        elif s.startswith("*") and not s.startswith("**"):
            if len(s) > 1:
                count += 1
            elif i + 1 < len(lines):  # "*" then the newline as its [^*] and the next line as its text
                count += 1
                nxt = lines[i + 1].lstrip()
                count += nxt.startswith("-")  # the dash pattern still sees the next line
                i += 1
        i += 1
    return count


def _bullets(kw: dict[str, Any], text: str, strict: bool) -> Result:
    n = bullet_items(text) if strict else count_bullets(text)  # strict: the list items a reader sees
    return n == kw["num_bullets"], f"{n} bullet points ({kw['num_bullets']} wanted)"


def _constrained(kw: dict[str, Any], text: str, strict: bool) -> Result:
    seen = looks(text, strict)
    found = [o for o in CONSTRAINED_OPTIONS if o in seen]
    if strict and len(found) > 1:  # the reference pays a response that gives every option
        return False, f"hedges between {found}"
    return bool(found), f"says {found[0]!r}" if found else "none of the allowed answers"


def count_highlights(text: str) -> int:
    """``*text*`` and ``**text**`` spans with non-blank text on one line, counted as the reference does
    (a ``**bold**`` span counts twice: once as ``**`` pairs, once through the inner single stars)."""
    single = sum(1 for h in re.findall(r"\*[^\n*]*\*", text) if h.strip("*").strip())
    double = sum(1 for h in re.findall(r"\*\*[^\n*]*\*\*", text) if h[2:-2].strip())
    return single + double


def _highlights(kw: dict[str, Any], text: str, strict: bool) -> Result:
    n = emphasized(text) if strict else count_highlights(text)  # strict: the emphasised spans a reader sees
    return n >= kw["num_highlights"], f"{n} highlighted sections ({kw['num_highlights']} wanted)"


def _sections(kw: dict[str, Any], text: str, strict: bool) -> Result:
    splitter = kw["section_spliter"].strip()
    n = len(re.findall(re.escape(looks(splitter, strict)) + r"\s?\d+", looks(text, strict)))
    return n >= kw["num_sections"], f"{n} sections marked {splitter!r} ({kw['num_sections']} wanted)"


def strip_fence(text: str) -> str:
    text = text.strip()
    for prefix in ("```json", "```Json", "```JSON", "```"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    return text.removesuffix("```").strip()


def _json(kw: dict[str, Any], text: str, strict: bool) -> Result:
    try:
        value = json.loads(strip_fence(text))
    except (ValueError, RecursionError):
        return False, "not valid JSON"
    if strict and not isinstance(value, dict | list):
        return False, f"a bare JSON {type(value).__name__}, not an object or array"
    return True, "valid JSON"


def _title(kw: dict[str, Any], text: str, strict: bool) -> Result:
    for line in looks(text, strict).split("\n"):
        start, end = line.find("<<"), line.rfind(">>")
        title = line[start : end + 2].lstrip("<").rstrip(">")
        if start != -1 and end >= start + 3 and (any(c.isalnum() for c in title) if strict else title.strip()):
            return True, "has a <<title>>"
    return False, "no <<title>>"


# --------------------------------------------------------------------------- combination, start/end, punctuation


def _two_responses(kw: dict[str, Any], text: str, strict: bool) -> Result:
    parts = text.split("******")
    for i, part in enumerate(parts):
        if not part.strip() and 0 < i < len(parts) - 1:
            return False, "an empty response between ****** separators"
    answers = [p.strip() for p in parts if p.strip()]
    if len(answers) != 2:
        return False, f"{len(answers)} responses separated by ******"
    if strict:  # the same words with another case or punctuation are the same response
        answers = [T.words(a.lower()) for a in answers]
    return answers[0] != answers[1], "two different responses" if answers[0] != answers[1] else "the same twice"


def _repeat_prompt(kw: dict[str, Any], text: str, strict: bool) -> Result:
    ok = looks(text, strict).strip().lower().startswith(looks(kw["prompt_to_repeat"], strict).strip().lower())
    return ok, "starts with the request" if ok else "does not start with the request word for word"


def _end(kw: dict[str, Any], text: str, strict: bool) -> Result:
    phrase = looks(kw["end_phrase"], strict).strip().lower()
    end = looks(text, strict).strip().strip('"')
    if strict:  # closing emphasis markers are a style: "**Any questions?**" ends with the phrase
        end = end.rstrip("*_").rstrip()
    ok = end.lower().endswith(phrase)
    return ok, "ends with the phrase" if ok else "does not end with the phrase"


@lru_cache(maxsize=1024)
def is_comma(char: str) -> bool:
    """Whether a reader takes ``char`` for a comma: it looks like one (folds to ``,``: fullwidth, small,
    U+201A, ...) or is its script's comma (punctuation Unicode names a comma: Arabic ``،``, ideographic
    ``、``, Armenian, Ethiopic, ...)."""
    if char == ",":
        return True
    if char.isascii():
        return False
    return fold(char) == "," or prototype(char) == "," or (
        unicodedata.category(char) == "Po" and "COMMA" in unicodedata.name(char, ""))


def count_commas(text: str) -> int:
    """Commas as a reader may see them: :func:`is_comma`'s, and a spacing mark that ends a word (a modifier
    symbol or letter with no letter after it: ``nightˏ and``, ``night͵ and``): a diacritic drawn on its own
    modifies nothing there, and a reader takes a low one for a comma (``Hawaiʻi``'s okina, inside a word,
    is a letter)."""
    count = 0
    for i, char in enumerate(text):
        if is_comma(char):
            count += 1
        elif not char.isascii() and unicodedata.category(char) in ("Sk", "Lm"):
            after = text[i + 1 : i + 2]
            count += not (after.isalpha() or (after and unicodedata.category(after) in ("Sk", "Lm", "Mn")))
    return count


def _no_comma(kw: dict[str, Any], text: str, strict: bool) -> Result:
    n = count_commas(text) if strict else text.count(",")
    return n == 0, f"{n} commas"


# Double quotation marks as a reader knows them: a pair of ASCII quotes, or a typographic opening and closing pair
# (English “…”, German „…“, French «…»).
QUOTE_PAIRS = ('""', "\u201c\u201d", "\u201e\u201c", "\u00ab\u00bb")


def _quotation(kw: dict[str, Any], text: str, strict: bool) -> Result:
    s = text.strip()
    ok = len(s) > 1 and s[0] + s[-1] in (QUOTE_PAIRS if strict else QUOTE_PAIRS[:1])
    return ok, "wrapped in double quotes" if ok else "not wrapped in double quotes"


def _check(judge: Callable[[dict[str, Any], str, bool], Result], **args: type) -> Check:
    return Check(args=args, required=tuple(args), judge=judge)


CHECKS: dict[str, Check] = {
    "keywords:existence": _check(_keywords, keywords=list),
    "keywords:frequency": _check(_frequency, keyword=str, frequency=int, relation=str),
    "keywords:forbidden_words": _check(_forbidden, forbidden_words=list),
    "keywords:letter_frequency": _check(_letters, letter=str, let_frequency=int, let_relation=str),
    "language:response_language": _check(_language, language=str),
    "length_constraints:number_sentences": _check(_sentences, num_sentences=int, relation=str),
    "length_constraints:number_paragraphs": _check(_paragraphs, num_paragraphs=int),
    "length_constraints:number_words": _check(_words, num_words=int, relation=str),
    "length_constraints:nth_paragraph_first_word": _check(_nth_first_word, num_paragraphs=int, nth_paragraph=int,
                                                          first_word=str),
    "detectable_content:number_placeholders": _check(_placeholders, num_placeholders=int),
    "detectable_content:postscript": _check(_postscript, postscript_marker=str),
    "detectable_format:number_bullet_lists": _check(_bullets, num_bullets=int),
    "detectable_format:constrained_response": _check(_constrained),
    "detectable_format:number_highlighted_sections": _check(_highlights, num_highlights=int),
    "detectable_format:multiple_sections": _check(_sections, section_spliter=str, num_sections=int),
    "detectable_format:json_format": _check(_json),
    "detectable_format:title": _check(_title),
    "combination:two_responses": _check(_two_responses),
    "combination:repeat_prompt": _check(_repeat_prompt, prompt_to_repeat=str),
    "startend:end_checker": _check(_end, end_phrase=str),
    "change_case:capital_word_frequency": _check(_capital_words, capital_frequency=int, capital_relation=str),
    "change_case:english_capital": _check(_all_capitals),
    "change_case:english_lowercase": _check(_all_lowercase),
    "punctuation:no_comma": _check(_no_comma),
    "startend:quotation": _check(_quotation),
}
