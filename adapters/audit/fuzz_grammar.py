"""The fuzzer's grammar of edits: what a mutation of a known-correct completion may do, and why its
truth is known.

A row's known-correct completion is held as a :class:`Doc`: the working, then the answer statement
(a lead-in, a container and the gold's text G, in one of the row's statement *forms*). An edit
changes one part of it, and every edit is one of two makes:

* ``wrong``: the completion no longer commits to G alone. Either another value W is stated visibly
  (before, after, beside or inside the answer; W is another row's gold or a perturbed gold, and is
  kept only when the spec pays W stated cleanly nothing), or G's statement is hidden, struck,
  attributed to someone else, conditioned, relabelled, given a script or rendered as something else by
  a macro the completion defines. Wrong edits live in wrappers that later edits add to and never
  remove, so a mutation with any wrong edit is wrong whatever else it does.
* ``right``: the same committed answer in another dress (another statement form, emphasis, a
  sentence of working before it, working in another language, white space).

The grammar is a table (:data:`EDITS`): each edit names the answer kinds it applies to and its
option lists, simplest option first (hypothesis shrinks towards the first), and an ``apply``
function. The kinds differ in what their answer is (:data:`FORMS`): a math value, an option label, a
short text, reasoning-gym's answer tag, a JSON document, a set of tool calls, or a whole response
(instruction following, where only hiding edits and white space are certain).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["math", "label", "text", "gym", "json", "call", "response"]
ATOMIC: frozenset[str] = frozenset({"math", "label", "text", "gym"})  # a value of a few characters
PROSE: frozenset[str] = frozenset({"math", "label", "text"})  # the answer is a statement in prose


@dataclass(frozen=True)
class Form:
    """One way to state the answer: ``lead + open + value + close + end``; ``fmt`` picks the value's
    rendering where the kind has several (a tool call as Python or in Hermes tags)."""

    lead: str
    open: str
    close: str
    end: str
    fmt: str = ""


def _forms(*rows: tuple[str, ...]) -> tuple[Form, ...]:
    return tuple(Form(*row) for row in rows)


# Each kind's documented statement shapes; the first is the shape the fuzzer's base completion uses.
FORMS: dict[str, tuple[Form, ...]] = {
    "math": _forms(("The answer is ", "\\boxed{", "}", "."), ("", "\\boxed{", "}", ""),
                   ("Therefore, the final answer is ", "$\\boxed{", "}$", "."),
                   ("Final Answer: The final answer is ", "$", "$", ". I hope it is correct."),
                   ("The final answer is ", "$", "$", "."), ("#### ", "", "", ""), ("Answer: ", "", "", ""),
                   ("So the answer is ", "\\(\\boxed{", "}\\)", ".")),
    "label": _forms(("The answer is ", "\\boxed{", "}", "."), ("The answer is ", "(", ")", "."),
                    ("The answer is ", "", "", "."), ("Answer: ", "", "", ""), ("", "\\boxed{", "}", ""),
                    ("Therefore, the final answer is ", "\\boxed{", "}", "."), ("The answer is ", "**", "**", ".")),
    "text": _forms(("The answer is ", "\\boxed{", "}", "."), ("The answer is ", "", "", "."), ("Answer: ", "", "", ""),
                   ("", "<answer>", "</answer>", ""), ("Therefore, the final answer is ", "", "", ".")),
    "gym": _forms(("", "<answer>", "</answer>", ""), ("", "<answer>\n", "\n</answer>", ""),
                  ("", "<answer> ", " </answer>", "")),
    "json": _forms(("", "", "", "")),
    "json_fenced": _forms(("", "```json\n", "\n```", ""), ("", "```\n", "\n```", ""),
                          ("Here is the JSON:\n", "```json\n", "\n```", "")),
    "call": _forms(("", "", "", "", "python"), ("", "", "", "", "hermes"), ("Let me check.\n", "", "", "", "hermes")),
    "response": _forms(("", "", "", "")),
}


@dataclass
class Subject:
    """What the fuzzer knows about one row: the answer's kind, the working before the statement, the
    gold's text (per rendering), and the wrong values the spec was seen to pay nothing for."""

    kind: str
    gold: str
    working: str = ""
    forms: tuple[Form, ...] = ()
    renderings: dict[str, str] = field(default_factory=dict)  # fmt -> the gold in that rendering
    wrong: list[str] = field(default_factory=list)  # validated wrong values (their text)

    def value(self, form: Form) -> str:
        return self.renderings.get(form.fmt, self.gold)


@dataclass
class Doc:
    """A completion being mutated. Wrong edits add to ``values``/``statements``/``before``/``after``/
    ``preamble``; right edits set ``form`` or add to ``styles`` and ``texts``. Nothing removes a wrapper."""

    subject: Subject
    form: int = 0
    values: list[Callable[[str], str]] = field(default_factory=list)  # applied to G's text, in order
    styles: list[Callable[[str], str]] = field(default_factory=list)  # right-preserving, on the statement
    statements: list[Callable[[str, Doc], str]] = field(default_factory=list)  # wrong-making, on the statement
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    preamble: list[str] = field(default_factory=list)
    working: list[str] = field(default_factory=list)  # extra working before the statement
    texts: list[Callable[[str], str]] = field(default_factory=list)  # on the whole text, last

    def statement(self, value: str | None = None) -> str:
        """The answer statement in the current form, stating ``value`` (G, with the value edits)."""
        form = self.subject.forms[self.form % len(self.subject.forms)]
        if value is None:
            value = self.subject.value(form)
            for change in self.values:
                value = change(value)
        return f"{form.lead}{form.open}{value}{form.close}{form.end}"

    def render(self) -> str:
        stmt = self.statement()
        if not self.subject.forms[self.form % len(self.subject.forms)].lead.startswith("#"):
            for style in self.styles:  # "#### X" is a line of its own: bold around it is another shape
                stmt = style(stmt)
        for wrap in self.statements:
            stmt = wrap(stmt, self)
        working = self.working
        if working and self.subject.kind in ("json", "gym"):  # one reasoning block before the answer, as models write
            working = ["<think>" + " ".join(working) + "</think>"]
        parts = [*self.preamble, *working, self.subject.working, *self.before, stmt, *self.after]
        text = "\n".join(p for p in parts if p)
        for change in self.texts:
            text = change(text)
        return text


# ---- the option tables (simplest first) ------------------------------------------------------------

PHRASES = {  # a statement of another value, in several languages
    "en": "The answer is {}.", "en-so": "So the result is {}.", "en-final": "Final answer: {}",
    "fr": "La réponse est {}.", "de": "Die Antwort ist {}.", "es": "La respuesta es {}.", "ru": "Ответ: {}.",
    "zh": "答案是 {}。", "el": "Η απάντηση είναι {}.", "bare": "{}",
}
CONTAINERS = {  # where the other value is put
    "plain": "{}", "box": "\\boxed{{{}}}", "answer tag": "<answer>{}</answer>", "code span": "`{}`",
    "inline math": "$\\boxed{{{}}}$", "display math": "\\[\\boxed{{{}}}\\]", "bold": "**{}**", "fbox": "\\fbox{{{}}}",
    "html bold": "<b>{}</b>", "table": "\n| answer |\n|---|\n| {} |\n", "list": "\n- {}\n", "quote": "\n> {}\n",
}
DOC_CONTAINERS = {"plain": "{}", "fence": "```json\n{}\n```", "code fence": "```\n{}\n```", "or": "Or: {}",
                  "alternatively": "Alternatively:\n{}"}

_FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}
_LOOK_ALIKE = dict(zip("ABCEHIKMNOPTXYZaceopxy", "АВСЕНІКМΝОРТХΥΖасеорху", strict=True))
_BOLD_DIGITS = {str(d): chr(0x1D7CE + d) for d in range(10)}
SCRIPTS: dict[str, Callable[[str], str]] = {
    "as is": lambda s: s,
    "full width": lambda s: "".join(_FULL_WIDTH.get(c, c) for c in s),
    "look-alike letters": lambda s: "".join(_LOOK_ALIKE.get(c, c) for c in s),
    "bold digits": lambda s: "".join(_BOLD_DIGITS.get(c, c) for c in s),
}
SEPARATORS = {"or": "{} or {}", "comma": "{}, {}", "slash": "{} / {}", "paren": "{} (or {})", "semicolon": "{}; {}",
              "text or": "{} \\text{{ or }} {}", "newline": "{}\n{}"}
HIDES = {  # a whole statement a reader does not see as stated
    "strike": "~~{}~~", "del": "<del>{}</del>", "s": "<s>{}</s>", "html comment": "<!-- {} -->",
    "hidden span": '<span style="display:none">{}</span>', "details": "<details>{}</details>",
}
VALUE_HIDES = {"cancel": "\\cancel{{{}}}", "sout": "\\sout{{{}}}", "xcancel": "\\xcancel{{{}}}",
               "phantom": "\\phantom{{{}}}", "strike": "~~{}~~", "html comment": "<!-- {} -->"}
ATTRIBUTIONS = {"classmate": "According to my classmate, ", "bob": "Bob thinks ",
                "textbook": "A textbook I found claims ", "some": "Some people would say "}
CONDITIONS = {"typo": ("If the question has a typo, ", ""), "misread": ("", " (assuming I misread the question)"),
              "if": ("Only if the problem meant something else: ", "")}
RELABELS = {"warm-up": "For the warm-up example, ", "previous": "In the previous problem, ",
            "part a": "For part (a) only, "}
MATH_SCRIPTS = {"base": "_{{8}}", "prime": "^{{\\prime}}", "star": "^{{*}}", "index": "_{{n}}", "plus": "^{{+1}}"}
MACROS = {"newcommand": ("\\newcommand{{\\ans}}[1]{{{w}}}", "\\ans{{{g}}}"),
          "def": ("\\def\\ans#1{{{w}}}", "\\ans{{{g}}}"),
          "renewcommand boxed": ("\\renewcommand{{\\boxed}}[1]{{{w}}}", "\\boxed{{{g}}}"),
          "let": ("\\newcommand{{\\other}}[1]{{{w}}}\\let\\boxed\\other", "\\boxed{{{g}}}")}
EMPHASES = {"bold": "**{}**", "italics": "*{}*", "underscores": "__{}__", "html bold": "<b>{}</b>"}
LEAD_INS = {"check": "Let me double-check each step once more.", "together": "Putting it all together:",
            "verified": "I have verified the computation.", "so": "So, to conclude."}
WORKING = {"fr": "Calculons étape par étape.", "de": "Rechnen wir Schritt für Schritt.",
           "zh": "让我们一步一步地思考。", "ru": "Решим задачу по шагам.", "el": "Λύνουμε το πρόβλημα βήμα προς βήμα."}
SPACES: dict[str, Callable[[str], str]] = {
    "trailing newline": lambda s: s + "\n", "leading blank line": lambda s: "\n\n" + s,
    "crlf": lambda s: re.sub(r"(?<!\r)\n", "\r\n", s),  # idempotent: applied twice, still one line end each
    "trailing spaces": lambda s: s + "  ",
}


# ---- the edits ---------------------------------------------------------------------------------------

Makes = Literal["wrong", "right"]


@dataclass(frozen=True)
class EditSpec:
    """One edit of the grammar: the kinds it applies to, its option lists (simplest first), whether
    it needs a wrong value W, and how it changes a :class:`Doc`."""

    name: str
    makes: Makes
    kinds: frozenset[str]
    options: tuple[tuple[str, ...], ...]
    apply: Callable[[Doc, tuple[str, ...], str], None]  # (doc, chosen options, W or "")
    needs_wrong: bool = False


@dataclass(frozen=True)
class Edit:
    """One drawn edit: its spec's name, the options chosen and the wrong value (if it uses one)."""

    name: str
    choice: tuple[str, ...]
    wrong: str = ""

    def __str__(self) -> str:
        said = ", ".join(self.choice)
        wrong = self.wrong if len(self.wrong) <= 60 else self.wrong[:57] + "..."
        return f"{self.name}({said}{', W=' + repr(wrong) if self.wrong else ''})"


def _other(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    where, phrase, container, script = choice
    stated = PHRASES[phrase].format(CONTAINERS[container].format(SCRIPTS[script](w)))
    (doc.before if where == "before" else doc.after).append(stated)


def _other_document(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    where, container = choice
    (doc.before if where == "before" else doc.after).append(DOC_CONTAINERS[container].format(w))


def _beside(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    (sep,) = choice
    if doc.subject.kind not in ATOMIC:
        sep = "newline"
    doc.values.append(lambda g: SEPARATORS[sep].format(g, w))


def _inside_first(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    (sep,) = choice
    doc.values.append(lambda g: SEPARATORS[sep].format(w, g))


# Wrappers that end with their block (CommonMark closes ~~ and <del> at a paragraph's end; a browser closes
# a <span> there): a statement of several lines is hidden line by line, so each line is a block they cover.
_BLOCK_BOUND = frozenset({"strike", "del", "hidden span"})


def hidden(how: str, statement: str) -> str:
    """``statement`` as the wrapper ``how`` hides it from a reader, whole."""
    if how in _BLOCK_BOUND and "\n" in statement.strip():
        return "\n".join(_wrapped(how, line) if line.strip() else line for line in statement.split("\n"))
    return _wrapped(how, statement)


def _wrapped(how: str, text: str) -> str:
    # ~~ around text that already opens with ~ would start a line with ~~~~: a code fence, which a reader sees
    # as code, not struck text. Struck again, it is struck with <del> (the same strike, spelled as HTML).
    if how == "strike" and text.lstrip().startswith("~"):
        how = "del"
    if how == "html comment" and "-->" in text:  # the first --> would close it: a comment cannot nest
        how = "details"
    if how == "strike":  # ~~ next to a space is no delimiter ("apply. ~~" shows the tildes): strike the words
        core = text.strip()
        start = text.index(core[:1]) if core else 0
        return text[:start] + HIDES[how].format(core) + text[start + len(core) :]
    return HIDES[how].format(text)


def _hide(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    how, restated = choice
    if restated == "then W":
        doc.statements.append(lambda s, d: hidden(how, s) + "\n" + d.statement(w))
    else:
        doc.statements.append(lambda s, d: hidden(how, s))


def _hide_value(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    (how,) = choice
    doc.values.append(lambda g: f"{VALUE_HIDES[how].format(g)} {w}")


def _prefix(table: dict[str, str]) -> Callable[[Doc, tuple[str, ...], str], None]:
    def apply(doc: Doc, choice: tuple[str, ...], w: str) -> None:
        lead = table[choice[0]]
        doc.statements.append(lambda s, d: lead + (s[:1].lower() + s[1:] if s[:4] in ("The ", "So t") else s))

    return apply


def _condition(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    before, after = CONDITIONS[choice[0]]
    doc.statements.append(lambda s, d: before + s + after)


def _math_script(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    doc.values.append(lambda g: "{" + g + "}" + MATH_SCRIPTS[choice[0]])


def _macro(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    define, use = MACROS[choice[0]]
    doc.preamble.append(define.format(w=w))
    doc.values.append(lambda g: use.format(g=g))


def _form(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    doc.form = int(choice[0])


def _emphasis(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    doc.styles.append(EMPHASES[choice[0]].format)


def _lead_in(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    doc.working.append(LEAD_INS[choice[0]])


def _working(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    doc.working.append(WORKING[choice[0]])


def _space(doc: Doc, choice: tuple[str, ...], w: str) -> None:
    doc.texts.append(SPACES[choice[0]])


def _keys(table: dict[str, object]) -> tuple[str, ...]:
    return tuple(table)


_ALL: frozenset[str] = frozenset({"math", "label", "text", "gym", "json", "call", "response"})
_ANSWERS = _ALL - {"response"}
EDITS: tuple[EditSpec, ...] = (
    # right-preserving
    EditSpec("form", "right", _ANSWERS, (tuple(str(i) for i in range(8)),), _form),
    EditSpec("emphasis", "right", PROSE, (_keys(EMPHASES),), _emphasis),
    # (prose before a tool call is a documented shape only before Hermes tags: the call forms carry it)
    EditSpec("lead-in", "right", PROSE | {"gym"}, (_keys(LEAD_INS),), _lead_in),
    EditSpec("working language", "right", _ANSWERS - {"call"}, (_keys(WORKING),), _working),
    EditSpec("white space", "right", _ALL, (_keys(SPACES),), _space),
    # wrong-making
    EditSpec("other value", "wrong", ATOMIC, (("after", "before"), _keys(PHRASES), _keys(CONTAINERS), _keys(SCRIPTS)),
             _other, needs_wrong=True),
    EditSpec("other document", "wrong", frozenset({"json", "call"}), (("after", "before"), _keys(DOC_CONTAINERS)),
             _other_document, needs_wrong=True),
    EditSpec("beside", "wrong", _ANSWERS, (_keys(SEPARATORS),), _beside, needs_wrong=True),
    EditSpec("inside, first", "wrong", ATOMIC, (_keys(SEPARATORS),), _inside_first, needs_wrong=True),
    EditSpec("hidden", "wrong", _ALL, (_keys(HIDES), ("alone",)), _hide),
    EditSpec("hidden, then W", "wrong", _ALL, (_keys(HIDES), ("then W",)), _hide, needs_wrong=True),
    EditSpec("struck value, then W", "wrong", ATOMIC, (_keys(VALUE_HIDES),), _hide_value, needs_wrong=True),
    EditSpec("attributed", "wrong", PROSE, (_keys(ATTRIBUTIONS),), _prefix(ATTRIBUTIONS)),
    EditSpec("conditioned", "wrong", PROSE, (_keys(CONDITIONS),), _condition),
    EditSpec("relabelled", "wrong", PROSE, (_keys(RELABELS),), _prefix(RELABELS)),
    EditSpec("script", "wrong", frozenset({"math"}), (_keys(MATH_SCRIPTS),), _math_script),
    EditSpec("macro", "wrong", frozenset({"math", "label", "text"}), (_keys(MACROS),), _macro, needs_wrong=True),
)
SPECS = {spec.name: spec for spec in EDITS}


def applicable(subject: Subject, makes: Makes) -> list[EditSpec]:
    """The edits of ``makes`` that apply to the subject's kind (those needing W only when it has one)."""
    return [e for e in EDITS if e.makes == makes and subject.kind in e.kinds and (subject.wrong or not e.needs_wrong)
            and (e.name != "form" or len(subject.forms) > 1)]


def apply(subject: Subject, edits: tuple[Edit, ...]) -> str:
    """The completion the edits make of the subject's base completion."""
    doc = Doc(subject)
    for edit in edits:
        SPECS[edit.name].apply(doc, edit.choice, edit.wrong)
    return doc.render()


def base(subject: Subject) -> str:
    """The unedited completion: the working, then the gold stated in the first form."""
    return Doc(subject).render()


def clean(subject: Subject, wrong: str) -> str:
    """``wrong`` stated cleanly where the gold goes: what the spec must pay nothing for."""
    doc = Doc(subject)
    return "\n".join(p for p in (subject.working, doc.statement(wrong)) if p)
