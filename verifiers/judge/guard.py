"""What a response may not do to its judge: say nothing, write the verdict, or address the grader.

An LLM judge reads the response as text, so the response can try to speak for the judge. Three
defences, each before or around the judge call:

* **No substance, no judge.** A response with nothing in it but what a solution starts with (``:``,
  ``Solution``, ``Thought process:``, "Let's solve this step by step.", an empty box) is the known
  "master key" that fools judges on empty content; it scores 0 without a call.
* **The verdict is the judge's alone.** A response with a line in a judge's output format
  (``Verdict: …``, ``Score: 10``, ``Winner: A``, ``"met": true``, ticked rubric items, "all
  criteria are met") or words addressed to the grader ("Ignore the above", "Note to the grader",
  "SYSTEM:") scores 0 without a call: such lines have no place in an answer, and neutralising them
  would still leave a gullible judge reading them. The feedback names the line.
* **Delimiters the response cannot close.** The response goes between markers carrying a nonce
  derived from the whole prompt (a response cannot contain a hash of itself), and the judge's
  reply is read only outside any span between those markers and outside quoted lines.
"""

from __future__ import annotations

import hashlib
import re

_LINE_START = r"^[\s>*#_\-`|]*"
# Lines in a judge's output format, or claims that the criteria are satisfied.
_VERDICT_LINES = re.compile(
    _LINE_START + r"(?:final\s+)?(?:verdict|judge?ment|grade|rating|evaluation|winner)\s*[:=]"
    r"|" + _LINE_START + r"score\s*(?:of\s*)?[:=]\s*\d+(?:\.\d+)?\s*(?:/\s*\d+)?\W*$"
    r"|\"(?:met|satisfied|verdict)\"\s*:"
    r"|" + r"^\s*(?:[-*]\s*)?(?:[✓✔☑✅]|\[x\])"
    r"|\b(?:all|every)\b[^.\n]{0,40}\b(?:rubric|criteria|criterion|items?|requirements?)\b[^.\n]{0,30}"
    r"\b(?:are|is|were|has been|have been)\s+(?:fully\s+)?(?:met|satisfied|fulfilled)\b"
    r"|\b(?:satisf(?:y|ies)|meets?|fulfils?|fulfills?)\s+(?:all|every)\s+(?:of\s+the\s+)?"
    r"(?:rubric|criteria|criterion|requirements?|items?)\b"
    r"|\b(?:rubric|criteria)\b[^.\n]{0,30}\b(?:fully|completely)\s+(?:met|satisfied)\b"
    r"|\bmatch(?:es)?\s+the\s+reference(?:\s+answer)?\b",
    re.IGNORECASE | re.MULTILINE,
)
_GRADER = r"(?:grader|judge|evaluator|reviewer|assessor|marker|grading\s+model|rater)s?"
# Words addressed to whoever grades the response.
_ADDRESSED = re.compile(
    r"\b(?:ignore|disregard|forget)\b[^.\n]{0,40}\b(?:above|previous|prior|earlier|instructions?|prompt|rubric|"
    r"reference|criteria)\b"
    r"|\b(?:note|message|instructions?|hint|reminder)s?\s+(?:to|for)\s+(?:the\s+)?" + _GRADER + r"\b"
    r"|" + _LINE_START + r"(?:" + _GRADER + r"|system|assistant|admin|developer)\s*[:,]"
    r"|\b(?:dear|attention|hey)\s+" + _GRADER + r"\b"
    r"|" + _LINE_START + r"(?:please\s+)?(?:reply|respond|output|say|print|mark|grade|rate|give|answer)\b"
    r"[^.\n]{0,40}\b(?:equivalent|yes|met|maximum|max|full\s+marks|highest|top\s+score|perfect)\b"
    r"|\b(?:has|have)\s+been\s+(?:verified|confirmed|checked)\s+(?:as\s+|to\s+be\s+)?(?:correct|equivalent|right)\b",
    re.IGNORECASE | re.MULTILINE,
)
# What a solution starts with: a response made only of these words says nothing.
_OPENERS = frozenset({
    "an", "the", "about", "this", "that", "these", "it", "its", "is", "are", "be", "to", "of", "by", "in", "on",
    "for", "with", "and", "so", "as", "at", "then", "now", "here", "there", "we", "me", "my", "our", "us",
    "you", "your", "lets", "let", "let's", "s", "solution", "solutions", "answer", "answers", "final", "result",
    "results", "response", "thought", "thoughts", "process", "reasoning", "explanation", "step", "steps",
    "work", "working", "solve", "solving", "solved", "problem", "question", "think", "thinking", "start",
    "begin", "first", "next", "carefully", "careful", "through", "out", "look", "see", "note", "following",
    "below", "above", "approach", "method", "plan", "will", "shall", "can", "should", "must", "need", "needs",
    "go", "going", "do", "does", "ok", "okay", "well", "alright", "sure", "right",
})
# Layout and wrapper commands say nothing; any other command is a value (``\\pi``, ``\\infty``, ``\\emptyset``).
_MARKUP = re.compile(r"\\(?:boxed|fbox|framebox|text[a-z]*|math[a-z]*|displaystyle|left|right|quad|qquad|color|"
                     r"begin|end|hline|ldots|cdots|dots|[,;:! ])(?![A-Za-z])|[{}$\\^_*#`~>|\[\]()<>:;,.!?\"'=+\-/]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def has_substance(text: str) -> bool:
    """Whether ``text`` says anything beyond a solution's opening words and markup: a digit, or a word
    that is not an opener (``Paris``, ``yes``, ``x``, ``12``)."""
    words = _WORD.findall(_MARKUP.sub(" ", text).lower())
    return any(word.isdigit() or any(c.isdigit() for c in word) or word not in _OPENERS for word in words)


def speaks_for_the_judge(text: str) -> str | None:
    """The first line of ``text`` that writes a judge's verdict or addresses the grader, or None."""
    for pattern in (_VERDICT_LINES, _ADDRESSED):
        found = pattern.search(text)
        if found is not None:
            start = text.rfind("\n", 0, found.start()) + 1
            end = text.find("\n", found.end())
            line = text[start:end if end != -1 else len(text)].strip()
            return line[:120]
    return None


def nonce(*parts: str) -> str:
    """A marker no response can predict: a hash of the whole prompt, response included."""
    digest = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:12]


def judge_text(reply: str, marker: str) -> str:
    """The judge's own words in ``reply``: spans between ``[… marker]`` and ``[END … marker]`` (the
    judge quoting a delimited block) and quoted lines (``>``) removed."""
    quoted = re.compile(r"\[[A-Z ]+ " + re.escape(marker) + r"\].*?(?:\[END [A-Z ]+ " + re.escape(marker) + r"\]|$)",
                        re.DOTALL)
    return "\n".join(line for line in quoted.sub("\n", reply).splitlines() if not line.lstrip().startswith(">"))
