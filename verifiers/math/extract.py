"""Find what a completion states as its final answer: pure string work, no sympy.

Splitting extraction from parsing (as Math-Verify does) keeps each testable alone and
means only short answer spans ever reach the LaTeX parser, never a whole solution.

**Where.** Only the answer region is read (:func:`~rewardsmith.verifiers.reading.answer_region`):
what a reader sees (a completion that redefines commands states nothing), without its reasoning
blocks.

**Which form** (the strongest present decides; ``Extraction.method`` names it):

1. ``answer_tag``: ``<answer>…</answer>``; inside a tag a box or phrase is read, else the
   whole tag. Other forms outside the tags are ignored.
2. ``boxed``: ``\\boxed{}`` / ``\\fbox{}`` (outermost ones).
3. ``phrase``: "final answer is …", "the answer is …", "Answer: …", "the solution is …",
   "… is the answer/solution", and ``gsm8k``: GSM8K's ``#### N``.
4. ``last_number``: the last number in the text, only when it stands alone (not the 5 of
   ``\\sqrt{5}``, ``x < 5``, ``5 thousand`` or "3 or 5").

**Hedging.** Every statement of the deciding form counts, and once a completion has boxed
an answer, every phrase or ``####`` after its first box counts too (phrases before the first
box are working, superseded by the box). ``Extraction.spans`` holds the distinct statements;
when they name different values the grader reads them as one multi-valued answer, which
matches only a gold that lists exactly those values: "\\boxed{3} or \\boxed{4}" earns
nothing for gold 4.

Everything here is linear in the completion's length: braces are matched in one pass, and
every phrase is read from a bounded window.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import pairwise

from rewardsmith.verifiers.math.prompt import NOTHING_ASKED, Asked, number_value
from rewardsmith.verifiers.math.units import QUANTITY_WORDS, changes_value, words
from rewardsmith.verifiers.reading import Region, answer_region
from rewardsmith.verifiers.reading.answer_tags import answer_tags
from rewardsmith.verifiers.reading.boxes import boxes, brace_pairs, in_formula, wrapper
from rewardsmith.verifiers.reading.commitment import denied_before, withdrawn_after
from rewardsmith.verifiers.reading.frame import unclosed
from rewardsmith.verifiers.reading.markdown import math_spans

METHODS = ("answer_tag", "boxed", "phrase", "gsm8k", "conclusion", "last_number")
DEFAULT_METHODS = METHODS[:-1]  # the last-number fallback is opt-in: a number the text mentions is not an answer

GSM8K_MARK = re.compile(r"####[ \t]*([^\n]*)")
# Markdown emphasis may wrap the phrase: "**Final Answer:** 5", "**Answer**: 5".
PHRASE = re.compile(
    r"(?:final\s+answer[*_\s]{0,8}(?:is|:)|the\s+(?:final\s+|correct\s+)?answer\s+"
    r"(?:is|(?:might|could|may|must|should|would|will)\s+be)|(?:^|(?<=[.!?] ))[ \t>#*_]*answer[*_ \t]{0,8}:"
    r"|^[ \t>#*_]*(?-i:A)[*_ \t]{0,4}:[*_]{0,4}(?=[ \t])"  # GSM8K-style "A: 18" at a line start
    r"|the\s+solutions?\s+(?:is|are|set\s+is)(?!\s+(?:to|as|that|this|given|found|follows)\b))[*_\s:]{0,8}",
    re.IGNORECASE | re.MULTILINE,
)
# An answer phrase that names the answer (not a step's "the solution is"): "The answer is", "Answer:", GSM8K's "A:".
_NAMES_ANSWER = re.compile(r"(?i:.*answer)|[ \t>#*_]*A[*_ \t]*:", re.DOTALL)
# "$x \geq 5$ is the solution.", "$\frac{3}{4}$ is our final answer." (ending its clause: not "are the solutions to")
_TRAILING_PHRASE = re.compile(
    r"(?:(?:\$\$?|\\\(|\\\[)([^$]{1,400}?)(?:\$\$?|\\\)|\\\])|(?<![\w.,])(-?\d[\d,]*(?:\.\d+)?(?:/\d+)?))"
    r"[ \t]*(?:is|are)[ \t]+(?:the|our|my)[ \t]+(?:(?:final|correct|right|true|exact)[ \t]+)?"
    r"(?:answer|solution|solution[ \t]+set)s?\b(?=[ \t]*(?:[.!,;:)]|$))",
    re.IGNORECASE | re.MULTILINE,
)
# A clause that gives a reason after the answer: "the answer is 25, since 5 * 5 = 25".
_REASON = re.compile(r",\s+(?:since|because|as|which|given|where|when|for)\b", re.IGNORECASE)
# Thousands groups only as groups of three ("1,000"), so "5, so" ends at the 5; a LaTeX
# fraction is one number ("$-\\frac{24}{25}$." ends with -24/25, not with 25).
NUMBER = re.compile(
    r"-?\\[dt]?frac\s*\{\s*\d+\s*\}\s*\{\s*\d+\s*\}"
    r"|-?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:\s*/\s*\d+)?|-?\.\d+"
)
# An escaped dollar ("$\\$36$") is currency inside the math, not its closing delimiter.
MATH_DELIMITED = re.compile(r"^\s*(\$\$?|\\\(|\\\[)(.*?)((?<!\\)\$\$?|\\\)|\\\])", re.DOTALL)
_MATH_SEGMENT = re.compile(r"(?<!\\)(\$\$?)(.+?)(?<!\\)\1|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_WINDOW = 600  # characters after a phrase that may hold its answer
_LONGEST_SPAN = 6000  # a tag's or a line's content longer than this is not searched for math delimiters
MAX_STATEMENTS = 16  # distinct statements read; a completion with more is graded wrong unread
_MAX_PHRASES = 4 * MAX_STATEMENTS  # phrases examined


@dataclass(frozen=True)
class Extraction:
    """The final answer a completion states: one span per distinct statement of it."""

    spans: tuple[str, ...]
    method: str  # answer_tag, boxed, phrase, gsm8k, last_number
    unclosed: str = ""  # why the last statement is not the completion's last one (reading.frame.unclosed)

    @property
    def text(self) -> str:
        return " | ".join(self.spans)

    @property
    def hedged(self) -> bool:
        return len(self.spans) > 1

    @property
    def overflow(self) -> bool:
        """More distinct statements than are worth reading: wrong, whatever they say."""
        return len(self.spans) > MAX_STATEMENTS


@dataclass(frozen=True)
class _Statement:
    text: str
    method: str
    start: int
    end: int = -1  # where the statement's own text ends (-1: unknown, nothing after it is read)


def strip_math_delimiters(span: str) -> str:
    span = span.strip()
    if len(span) > _LONGEST_SPAN:
        return span  # not an answer: the parser refuses it; searching it for math would be quadratic
    match = MATH_DELIMITED.match(span)
    if match and not span[match.end():].strip(" .,;"):
        return match.group(2).strip()
    if _MATH_SEGMENT.search(span):
        return _unwrap_segments(span)
    return span.strip("$ ").strip()


def _unwrap_segments(span: str) -> str:
    """``$x = 5$ or $x = 6$`` → ``x = 5 or x = 6``: the math of every segment, the words between kept."""
    return _MATH_SEGMENT.sub(lambda m: " " + (m.group(2) or m.group(3) or m.group(4) or "").strip() + " ", span).strip()


def _trim(span: str) -> str:
    """Drop sentence punctuation and markdown emphasis around a span ("**5**.", "5;").

    A "!" right after a digit, ")" or "}" stays: in a math answer it is a factorial (``1/2004!``).
    """
    previous = None
    while span != previous:
        previous = span
        span = span.strip().strip("*").rstrip(".;,").strip()
        if span.endswith("!") and (len(span) < 2 or span[-2] not in "0123456789)}!"):
            span = span[:-1]
    return span


_SENTENCE_TOKEN = re.compile(r"\\[()\[\]$]|\$|\n|\.(?=\s|$)")


def _sentence(window: str) -> str:
    """The first sentence of ``window``: up to a line end or a full stop outside math, but a
    display-math block that opens it is read whole."""
    opening = MATH_DELIMITED.match(window)
    if opening and opening.group(1) in ("$$", "\\["):
        return window[: opening.end()]
    in_math = ""
    for token in _SENTENCE_TOKEN.finditer(window):
        mark = token.group(0)
        if mark == "\\$":
            continue  # an escaped dollar is currency
        if mark in ("\\(", "\\["):
            in_math = mark
        elif mark in ("\\)", "\\]"):
            in_math = ""
        elif mark == "$":
            in_math = "" if in_math == "$" else (in_math or "$")
        elif not in_math:
            return window[: token.start()]
    return window


_COPULA = re.compile(r"\s(?:is|are|equals|=|be|was|of)\s", re.IGNORECASE)
_PROSE_START = re.compile(r"^(?:the|a|an|our|its|their|this|that|we|it|there|so|thus|hence|therefore)\b", re.I)


def _phrase_span(text: str, start: int) -> tuple[str, bool, int]:
    """The answer a phrase introduces, whether it is written in a box, and where its sentence ends."""
    window = text[start : start + _WINDOW]
    lead = len(window) - len(window.lstrip(" \t\n*_:"))
    sentence = _sentence(window[lead:])
    end = start + lead + len(sentence)
    inner = boxes(sentence)
    if inner:
        return _trim(inner[-1][2]), True, end
    plain = _MATH_SEGMENT.sub(lambda m: "\0" * len(m.group(0)), sentence)
    reason = _REASON.search(plain)
    sentence = _trim(sentence[: reason.start()] if reason else sentence)
    if _PROSE_START.match(sentence):
        # "The largest $n$ is 34": the value follows the last copula outside math.
        plain = _MATH_SEGMENT.sub(lambda m: "\0" * len(m.group(0)), sentence)
        copulas = list(_COPULA.finditer(plain))
        if copulas:
            sentence = sentence[copulas[-1].end():]
    sentence = _trim(sentence)
    number = _only_number(sentence)  # "Answer: Verna received $7.00 in change." states 7.00
    return (number if number is not None else _trim(strip_math_delimiters(sentence))), False, end


def _only_number(sentence: str) -> str | None:
    """The one value a prose sentence states, when it is a sentence (words, not a formula) with a single
    number that stands alone and no negation, condition or alternative in it."""
    if _MATH_SEGMENT.search(sentence) or len(re.findall(r"[A-Za-z]{2,}", sentence)) < 3:
        return None
    numbers = list(NUMBER.finditer(sentence))
    if len(numbers) != 1 or not _stands_alone(sentence, numbers[0]) or _NOT_AN_ANSWER.search(sentence):
        return None
    return numbers[0].group(0).strip()


_NUMBER_WORD = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|thousand|or)\b", re.I
)


def _has_math(span: str) -> bool:
    """Whether a phrase states a value (not "the answer is to factor it as follows")."""
    if re.search(r"[\d\\^=<>()\[\]{}+*/|]", span) or _NUMBER_WORD.search(span):
        return True
    return 0 < len(span.split()) <= 3


def _statements(text: str, methods: Iterable[str], committed: int | None = None,
                asked: Asked = NOTHING_ASKED) -> list[_Statement]:
    """Every statement of a final answer: all boxes, ``####`` marks and answer phrases; before the first box
    (or ``committed``, where an answer tag was) only phrases that name the answer ("the answer is 16"), not a
    step's "the solution is x = 3"."""
    methods = set(methods)
    found: list[_Statement] = []
    if "boxed" in methods:
        for start, end, content in boxes(text):
            statement = _Statement(content.strip(), "boxed", start, end)
            if _committed(text, statement):
                found.append(statement)
    starts = [s.start for s in found] + ([committed] if committed is not None else [])
    first = min(starts) if starts else None
    if "phrase" in methods:
        for n, match in enumerate(PHRASE.finditer(text)):
            if n == _MAX_PHRASES:
                # Spam: keep the count of statements over the limit without reading every one.
                found.extend(_Statement(f"\0{i}", "phrase", match.start()) for i in range(MAX_STATEMENTS + 1))
                break
            span, in_box, end = _phrase_span(text, match.end())
            if in_box and "boxed" in methods:
                continue  # "The final answer is $\boxed{4}$": the box already counts
            statement = _Statement(span, "phrase", match.start(), end)
            if first is not None and match.start() < first and not _NAMES_ANSWER.match(match.group(0)):
                continue  # before the box, "the solution is x = 3" may be a step's; "the answer is 16" is not
            if span and _has_math(span) and _committed(text, statement, value_first=False):
                found.append(statement)
        for match in _TRAILING_PHRASE.finditer(text):
            if boxes(match.group(0)):
                continue  # "$\boxed{5}$ is our answer": the box already counts
            statement = _Statement((match.group(1) or match.group(2)).strip(), "phrase", match.start(), match.end())
            if _committed(text, statement):  # "$4$ and not $5$ is the answer": 5 is not what it states
                found.append(statement)
    if "gsm8k" in methods:
        for match in GSM8K_MARK.finditer(text):
            span = _trim(strip_math_delimiters(_trim(match.group(1))))
            if span:
                found.append(_Statement(span, "gsm8k", match.start(), match.end()))
    if found:
        found += _alternatives(text, min(s.start for s in found))
    return sorted(found, key=lambda s: s.start)




def _value(span: str) -> Fraction | None:
    """The number a span writes, LaTeX spacing and dress dropped (``11,\\! 111`` is 11111); None otherwise."""
    return number_value(_LATEX_SPACE.sub("", strip_math_delimiters(_trim(span))))


_LATEX_SPACE = re.compile(r"\\[!,;: ]|\s")


def _committed(text: str, statement: _Statement, value_first: bool = True) -> bool:
    """Whether the text commits to a statement (:mod:`~rewardsmith.verifiers.reading.commitment`): not denied
    just before it where the value opens the statement (a box, "$5$ is the answer"), not a question, not
    retracted."""
    if value_first and denied_before(text, statement.start):
        return False
    return statement.end < 0 or not withdrawn_after(text, statement.end)


# Words after a stated answer that offer another value: "\boxed{8}, or maybe 9", "Answer: 14. On second
# thought, the right value is 15", "x = 5 also works". What they offer is one more statement, so the
# completion states several values (a hedge) unless they name the same one.
_OFFERS = re.compile(
    r"\b(?:or(?!\s+(?:equivalently|simply|in\s+other\s+words|so|more|less|fewer|greater|smaller)\b)"
    r"(?:\s+(?:possibly|maybe|perhaps|else|even|rather|also))?"
    r"|maybe|possibly|perhaps|alternatively|otherwise|instead|on\s+second\s+thought|actually|correction"
    r"|corrected(?:\s+(?:answer|value|result))?|(?:could|might|may)\s+(?:also\s+)?be"
    r"|(?:right|true|real|actual)\s+(?:value|answer|result|number)\s+(?:is|would\s+be|was))\b",
    re.IGNORECASE,
)
# ... or praise a value written just before them: "x = 5 also works", "9 is also a solution".
_ALSO = re.compile(r"\s+(?:also\s+(?:works?|fits|satisfies|holds)|(?:is|are)\s+also\s+(?:valid|possible|correct|"
                   r"a\s+solution|an\s+answer|right))\b", re.IGNORECASE)
# ... or name it after "also": "Also, x = 13 works."
_ALSO_BEFORE = re.compile(r"\balso\b[,:]?\s+(?:[a-z]\s*=\s*)?\$?([^\s$][^\n$]{0,40}?)\$?\s+(?:works|fits|holds|"
                          r"satisfies|is\s+valid|is\s+a\s+solution)\b", re.IGNORECASE)
_OFFER_WINDOW = 80
_UNIT_TEXT = re.compile(r"\\(?:text|mbox|mathrm)\s*\{[^{}]*\}")


def _alternatives(text: str, after: int) -> list[_Statement]:
    """The values offered after the first stated answer (from ``after`` on) as alternatives to it."""
    found: list[_Statement] = []
    for cue in _OFFERS.finditer(text, after):
        if cue.group(0)[:2].lower() == "or" and re.search(r"\d\s*,?\s*$", text[max(0, cue.start() - 20) : cue.start()]):
            continue  # "divisible by 2, 3, 4, or 6": a list in the working, not an offer
        value = _as_value(_offered_value(text[cue.end() : cue.end() + _OFFER_WINDOW]))
        if value:
            found.append(_Statement(value, "alternative", cue.start()))
        if len(found) > MAX_STATEMENTS:
            break
    for cue in _ALSO.finditer(text, after):
        before = text[max(after, cue.start() - 40) : cue.start()]
        numbers = list(NUMBER.finditer(before))
        if numbers:
            found.append(_Statement(numbers[-1].group(0).strip(), "alternative", cue.start()))
    found += [_Statement(value, "alternative", m.start()) for m in _ALSO_BEFORE.finditer(text, after)
              if (value := _as_value(_trim(m.group(1)))) and re.search(r"[\d\\]|^\(?[A-E]\)?$", value)]
    return found


_RELATION = re.compile(r"<|>|≤|≥|≠|\\(?:le|ge|leq|geq|neq|ne|lt|gt)(?![A-Za-z])")


def _as_value(offered: str | None) -> str | None:
    """An offered value, or None for a relation restated in the working ("or $108n(n-1)=6^n$");
    ``x = 5`` offers 5."""
    if not offered or _RELATION.search(offered):
        return None
    if "=" in offered:
        lhs, _, rhs = offered.rpartition("=")
        return rhs.strip() if re.fullmatch(r"\s*[A-Za-z]\s*", lhs) and rhs.strip() else None
    return offered


def _offered_value(window: str) -> str | None:
    """The value a cue offers: a box, a math segment, a parenthesised or plain formula up to the end of
    its clause, or a number that stands alone; None when the cue offers words only ("or not")."""
    window = _sentence(window.lstrip(" \t,:;-—–*"))
    inner = boxes(window)
    if inner:
        return _trim(inner[0][2]) or None
    segment = _MATH_SEGMENT.search(window)
    if segment and not window[: segment.start()].strip(" ,:;()"):
        return _trim(segment.group(2) or segment.group(3) or segment.group(4) or "") or None
    clause = re.split(r"[,;]|\s(?:and|but|so|since|because|which)\s", window, maxsplit=1)[0].strip()
    while clause[-1:] in (")", "}") and clause.count(clause[-1]) > clause.count("(" if clause[-1] == ")" else "{"):
        clause = clause[:-1].rstrip()  # the end of "\text{(or 12)}": closers the clause did not open
    clause = _trim(re.sub(r"^(?:the\s+(?:\w+\s+)?(?:answer|value|result)\s+(?:is|would\s+be)|it\s+is|x\s*=)\s*", "",
                          clause.strip(), flags=re.IGNORECASE))
    if re.fullmatch(r"\(?[A-E]\)?", clause):
        return clause  # a multiple-choice letter: "or possibly (A)", "Corrected answer: A"
    formula = _UNIT_TEXT.sub("", clause)  # "864 \mbox{ inches}^2 + 1": the unit is not words
    if clause and re.fullmatch(r"[-+\d\s.,/^*()\\{}a-zA-Z=_!]{1,80}", clause) and re.search(r"\d", clause) \
            and not re.search(r"(?<![\\A-Za-z])[A-Za-z]{2,}", formula):  # a formula, not words ("12 in all")
        return clause
    for number in NUMBER.finditer(window):
        if _stands_alone(window, number):
            return number.group(0).strip()
    return None


def _extraction(statements: list[_Statement], method: str | None = None) -> Extraction | None:
    spans: list[str] = []
    seen: set[str] = set()
    for statement in statements:
        key = re.sub(r"\s+", "", statement.text)
        if key and key not in seen:
            seen.add(key)
            spans.append(statement.text)
            if len(spans) > MAX_STATEMENTS:
                break  # a completion this undecided is wrong whatever it says; parsing all of it costs
    if not spans:
        return None
    if method is None:
        method = "boxed" if any(s.method == "boxed" for s in statements) else statements[-1].method
    return Extraction(tuple(spans), method)


def _complement(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """``spans`` and the gaps between them, in order, covering ``range(length)``."""
    out, cursor = [], 0
    for start, end in spans:
        out.append((cursor, start))
        out.append((start, end))
        cursor = end
    out.append((cursor, length))
    return out


def extract_answer(text: str | Region, last_number: bool = False, methods: Iterable[str] = METHODS,
                   asked: Asked = NOTHING_ASKED, prompt_opens_think: bool = False) -> Extraction | None:
    """The final answer a completion states, or None when it states none. The last-number fallback
    runs only with ``last_number`` (and never takes a number ``asked`` says the prompt gives). A
    :class:`Region` already read is taken as it is."""
    methods = tuple(m for m in methods if last_number or m != "last_number")
    region = text.text if isinstance(text, Region) else answer_region(text, prompt_opens_think).text
    if "answer_tag" in methods:
        tags = answer_tags(region)
        if tags:
            inner_methods = [m for m in methods if m not in ("answer_tag", "last_number")]
            statements = []
            for start, end in tags:
                inner = region[start:end]
                nested = extract_answer(Region(inner), methods=inner_methods)
                spans = nested.spans if nested is not None else (strip_math_delimiters(_trim(inner)),)
                statements.extend(_Statement(span, "answer_tag", start, end) for span in spans if span.strip())
            # A box or a stated answer outside the tags is a statement too: "\boxed{5} <answer>4</answer>" hedges.
            inside = set(tags)
            outside = "".join(" " * (end - start) if (start, end) in inside else region[start:end]
                              for start, end in _complement(tags, len(region)))
            statements += _statements(outside, inner_methods, committed=tags[0][0], asked=asked)
            return _closed(region, _extraction(sorted(statements, key=lambda s: s.start), "answer_tag"), statements,
                           asked)
    statements = _statements(region, methods, asked=asked)
    found = _extraction(statements)
    if found is not None:
        return _closed(region, found, statements, asked)
    if "conclusion" in methods:
        concluded = _conclusion(region)
        if concluded:
            return Extraction(concluded, "conclusion")
    if "last_number" in methods:
        number = _last_number(region, asked)
        if number is not None:
            return Extraction((number,), "last_number")
    return None


def _closed(region: str, found: Extraction | None, statements: list[_Statement], asked: Asked) -> Extraction | None:
    """``found``, saying why it is no final answer when anything but a description of the quantity or a closing
    sentence follows its last statement (:func:`~rewardsmith.verifiers.reading.frame.unclosed`); numbers the
    prompt gave, or the answer's own, may stand in the description ("\\boxed{12} bags for the 3 horses")."""
    ends = [s.end for s in statements if s.end >= 0]
    if found is None or found.overflow or not ends:
        return found
    boxed = [s for s in statements if s.method == "boxed"]
    if boxed:
        pairs = brace_pairs(region)
        inside = next((w for s in boxed[: MAX_STATEMENTS + 1] if (w := wrapper(region, s.start, pairs))), "")
        if inside:
            return replace(found, unclosed=f"the final answer stands inside {inside}: part of a formula or under an "
                                           "annotation, not stated on its own")
        formulas = math_spans(region)
        around = next((f for s in boxed[: MAX_STATEMENTS + 1] if (f := in_formula(region, s.start, s.end, formulas))),
                      "")
        if around:
            return replace(found, unclosed=f"the final answer is part of a formula ({around!r} beside the box): the "
                                           "value a reader sees is not the box's")
    stated = {_value(s.text) for s in statements} - {None}

    def plain_word(word: str) -> bool:  # "percent", "squared", "at most": only where the prompt says it too
        return word.lower() not in QUANTITY_WORDS or word.lower() in asked.words

    last = max(statements, key=lambda s: s.start)
    line = re.split(r"[.!?:;=\n]", region[max(0, last.start - 60) : last.start])[-1] if last.method == "boxed" else ""
    lead = re.findall(r"(?<![\\\w])[^\W\d_]+", line)[-2:]  # words, not LaTeX commands (\approx)
    lead = lead if lead[-1:] == ["than"] else lead[-1:]  # the word right before it: "at most", "negative"; "more than"
    hedged = next((word for word in lead if not plain_word(word)), None)
    if hedged is not None:
        return replace(found, unclosed=f"the final answer is not stated on its own: {hedged!r} before it changes or "
                                       "hedges the quantity")
    why = unclosed(region, max(ends), lambda number: (value := _value(number)) in asked.numbers or value in stated,
                   plain_word)
    return replace(found, unclosed=why) if why else found


# Around a last number, words that make it something other than an answer: a negation, a condition,
# a choice ("x = 3 or x = 5"), a guess or an example, a verdict against it ("12 is wrong").
_NOT_AN_ANSWER = re.compile(
    r"(?:\b(?:not|never|no|cannot|if|suppose|supposing|assume|assuming|unless|whether|or|nor|maybe|perhaps|possibly"
    r"|probably|might|could|guess|example|instance|e\.g|such\s+as|wrong|incorrect|false|impossible|invalid"
    r"|mistake|error)\b|n't)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[?!]|\.(?!\d)|\n")


# The closing sentence of a worked solution states its result: "Therefore, the tables have 310 legs.",
# "Thus, \\( b = 3 \\).", "So the least possible sum is **14**."
_CONCLUSION = re.compile(
    r"^[\s*_#>]*(?:therefore|thus|hence|so|in\s+total|in\s+conclusion|in\s+all|altogether|consequently|finally)\b",
    re.IGNORECASE,
)
_LAST_SENTENCE = re.compile(r"(?:^|(?<=[.!?])\s+|(?<=\\\])\s*|(?<=\$\$)\s*|\n)(?=\S)")


def _conclusion(text: str) -> tuple[str, ...]:
    """The value the completion's last sentence concludes with, when that sentence opens as a conclusion;
    with the values of the other conclusions in its final paragraph ("Therefore, 12. Therefore, 13." states
    two values: a hedge). Empty when the last sentence concludes nothing."""
    tail = text[-_WINDOW:].rstrip()
    paragraph_start = tail.rfind("\n\n") + 1
    starts = [m.end() for m in _LAST_SENTENCE.finditer(tail.rstrip(".!*_ \t"))]
    if not starts:
        return ()
    sentences = [tail[a:b] for a, b in pairwise([*starts, len(tail)]) if a >= paragraph_start]
    last = _concluded(sentences[-1]) if sentences else None
    if last is None:
        return ()
    others = [value for sentence in sentences[:-1] if (value := _concluded(sentence)) is not None]
    return tuple(dict.fromkeys([*others, last]))


def _concluded(sentence: str) -> str | None:
    if not _CONCLUSION.match(sentence) or sentence.rstrip(" .*_").endswith("?"):
        return None
    return _last_number(sentence)


def _last_number(text: str, asked: Asked = NOTHING_ASKED) -> str | None:
    """The last number, when it stands alone in a plain statement and is not one the prompt gave."""
    last = None
    for last in NUMBER.finditer(text):  # noqa: B007 - only the last match is wanted
        pass
    if last is None or not _stands_alone(text, last):
        return None
    value = number_value(last.group(0))
    if value is not None and value in asked.numbers:
        return None  # the prompt's own number, repeated
    before = text[max(0, last.start() - 300) : last.start()]
    starts = [m.end() for m in _SENTENCE_END.finditer(before)]
    sentence_start = before[starts[-1] :] if starts else before
    ending = _SENTENCE_END.search(text, last.end())
    sentence_end = text[last.end() : ending.end() if ending else len(text)]
    if (ending and ending.group(0) == "?") or _NOT_AN_ANSWER.search(sentence_start + " " + sentence_end):
        return None
    return last.group(0).strip()


def _stands_alone(text: str, number: re.Match[str]) -> bool:
    """Whether the last number is a value of its own, not a piece of a formula or a hedge.

    In ``$r = \\sqrt{5}$``, ``12\\pi``, ``x^2 + x + 1``, ``(-1, 6)``, ``3 \\pmod 9``, ``x < 5``,
    ``5 thousand`` or "3 or 5" the last number is not the answer, and grading it would call
    ``5`` right: no answer is better than that. ``= 16``, ``is 5``, ``$18``, ``**5**``,
    ``\\(40\\)``, ``40 \\text{ inches}`` and ``\\textbf{5}`` stand alone.
    """
    start, end = number.span()
    if number.group(0).startswith("-") and start > 0 and (text[start - 1].isalnum() or text[start - 1] in ")}"):
        return False  # "3x-6": a binary minus, the number is a term
    before, after = text[max(0, start - 200) : start].rstrip(" *$"), text[end : end + 200]
    wrapper = _TEXT_WRAPPER.search(before)
    if wrapper and after.startswith("}"):  # \textbf{5}: emphasis, not a formula
        before, after = before[: wrapper.start()].rstrip(" *$"), after[1:]
    before = re.sub(r"(?:\\[,;:! ]|~|\\quad)+$", "", before).rstrip()
    if before.endswith(("{", "^", "_", "+", "-", "/", "<", ">", "!=", "<=", ">=", "≤", "≥", "≠", "≈", "~", "±")):
        return False  # after an operator or a relation: "+ 1", "x < 5", "x != 5"
    if before[-1:].isdigit() or before.endswith(("–", "—", ";")):
        return False  # another number just before it: "3 4", "3 – 4", "3; 4"
    if before.endswith(",") and not before[:-1].rstrip()[-1:].isalpha():
        return False  # the end of a list or a point: "(-1, 6)", "1, 2, 9" ("in total, 9" is prose)
    if re.search(r"\\[A-Za-z]+$", before) and not re.search(r"\\(?:text|mathrm|mbox|quad|qquad)$", before):
        return False  # after a command: "\\sqrt{5", "\\cdot 3", "\\pmod 9", "\\le 2", "\\approx 3"
    previous_word = re.search(r"([A-Za-z]+(?:n't)?)\W*$", before)
    if previous_word and (previous_word.group(1).lower() in _HEDGE_BEFORE or previous_word.group(1).endswith("n't")):
        return False  # "3 or 5", "at least 5", "approximately 5", "not 5"
    if re.match(r"\^\s*\{?\s*\\circ", after):
        return True  # degrees: "= 120^\\circ."
    if after[:1].isalpha() or after[:1] in ("}", "^", "_", "(", "!", "%"):
        return False  # glued to what follows: "5x", "2}", "3^", "5!", "5%"
    rest = after.lstrip(" *$")
    if rest.startswith("\\") and not _ENDS_A_VALUE.match(rest):
        return False  # "12\\pi", "11 \\sqrt{5}", "3 \\cdot x"
    following = re.match(r"(?:\\(?:text|mathrm|mbox)\s*\{\s*)?([A-Za-z]+)", rest)
    if following and changes_value(following.group(1)):
        return False  # "5 thousand", "3 or 4", "2 dozen"
    return not rest[:1] or rest[:1] not in "}^_+-*/=×·<>≤≥"


_HEDGE_BEFORE = words(
    "or and to between not except than least most approximately approx about around roughly nearly "
    "almost maybe perhaps possibly probably either circa exceeds exceed exceeding over under below above beyond "
    "within from until past near like unlike nor"
)
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|mathbf|mathrm|mbox)\s*\{$")
# What may follow a value: a unit in \text, the end of the math, spacing, a percent sign.
_ENDS_A_VALUE = re.compile(r"\\(?:text|textbf|mathrm|mbox|quad|qquad|[\])$%,;:! ]|\\)")


def extract_gold(gold: str) -> str:
    """A gold answer as datasets write it, read whole: bare (``1/3``), in ``$…$``, boxed,
    ``#### 18``, or in several pieces (``$8$, $4$``, ``\\boxed{1} and \\boxed{2}``), which are
    joined into one list (``8, 4``) so that a part of the answer is not the answer."""
    text = str(gold).strip()
    found = boxes(text)
    if found:
        return ", ".join(content.strip() for _, _, content in found)
    marks = GSM8K_MARK.findall(text)
    if marks and marks[-1].strip():
        return marks[-1].strip()
    segments = list(_MATH_SEGMENT.finditer(text))
    if len(segments) > 1 and _only_separators_between(text, segments):
        return ", ".join((m.group(2) or m.group(3) or m.group(4) or "").strip() for m in segments)
    return strip_math_delimiters(text)


_SEPARATOR = re.compile(r"^\s*(?:,|;|and|or|,\s*and|\\text\{\s*(?:and|or|,)\s*\}|\\quad|\\qquad)?\s*$", re.I)


def _only_separators_between(text: str, segments: list[re.Match[str]]) -> bool:
    gaps = [text[a.end() : b.start()] for a, b in pairwise(segments)]
    edges = text[: segments[0].start()] + text[segments[-1].end() :]
    return all(_SEPARATOR.match(gap) for gap in gaps) and not edges.strip(" .")
