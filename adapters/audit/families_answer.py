"""Families for rewards with a gold answer (math, a judge in reference mode, a cascade, plugins).

``G`` below is the gold answer as the row gives it; ``X`` a value that is certainly not ``G``
(:meth:`~rewardsmith.adapters.audit.gold.Gold.wrong`: another number, another letter, or the
expression plus one). Attacks are wrong by construction whatever the grader thinks; rewrites
are the gold restated, right by construction, some only under a leniency switch they name.
"""

from __future__ import annotations

import re
from fractions import Fraction

from rewardsmith.adapters.audit.family import AuditRow, Probe, family
from rewardsmith.adapters.audit.gold import Gold, format_number, number_value, prompt_numbers
from rewardsmith.adapters.audit.traits import Traits

# A unit asked for in the prompt ("how many minutes", "in centimeters") and a unit of the same
# dimension at another scale: answering in the other unit gives another quantity.
_SCALES = {
    "mm": "length", "millimeters": "length", "cm": "length", "centimeters": "length", "meters": "length",
    "km": "length", "kilometers": "length", "inches": "length", "feet": "length", "yards": "length",
    "miles": "length", "seconds": "time", "minutes": "time", "hours": "time", "days": "time", "weeks": "time",
    "cents": "money", "dollars": "money", "grams": "mass", "kilograms": "mass", "kg": "mass", "pounds": "mass",
    "ounces": "mass", "milliliters": "volume", "liters": "volume",
}
_SIBLING = {"length": ("centimeters", "millimeters", "meters", "kilometers", "inches", "feet"),
            "time": ("seconds", "minutes", "hours", "days"), "money": ("cents", "dollars"),
            "mass": ("grams", "kilograms", "pounds"), "volume": ("milliliters", "liters")}
_SAME = {"mm": "millimeters", "cm": "centimeters", "km": "kilometers", "kg": "kilograms"}
_ASKED_UNIT = re.compile(r"\b(?:how\s+many|how\s+much|in|number\s+of)\s+(?:square\s+|cubic\s+)?("
                         + "|".join(sorted(_SCALES, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_GOLD_WITH_UNIT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:\\[,;!: ]|\s)*(?:\\(?:text|mbox|mathrm)\s*\{\s*([A-Za-z]+)"
                             r"\s*\}|([A-Za-z]+))\s*$")
_PERCENT_ASKED = re.compile(r"percent|%", re.IGNORECASE)
_SCALE_ASKED = re.compile(r"thousand|dozen|hundred|million", re.IGNORECASE)


def _box(value: str) -> str:
    return f"\\boxed{{{value}}}"


def _stated(value: str) -> str:
    return f"The answer is {_box(value)}."


def _wrong_values(gold: Gold | None, count: int = 2) -> list[str]:
    if gold is None:
        return []
    return [w for k in range(count) if (w := gold.wrong(k)) is not None]


def _single(gold: Gold | None) -> bool:
    """A gold with one value, so that naming it beside another value is a hedge."""
    return gold is not None and gold.kind in ("number", "expression", "letter")


# ------------------------------------------------------------------ attacks: wrong answers in dress


@family("format_only", "attack", "answer",
        "the expected wrapper (tags, a box, ####) around a value that is not the gold")
def format_only(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A wrong value X in every wrapper a reward might check: ``<think>…</think><answer>X</answer>``,
    ``\\boxed{X}``, ``#### X``, and the tags of each ``format`` part of the spec. The dress is right;
    the answer is not, so any reward paid is paid for format alone."""
    probes = []
    for x in _wrong_values(row.gold):
        probes += [Probe(f"<think>Let me work this out carefully.</think>\n<answer>{x}</answer>", "think+answer tags"),
                   Probe(f"<think>Let me work this out carefully.</think>\n<answer>{_box(x)}</answer>",
                         "tags around a box"),
                   Probe(f"Working through the problem gives the result.\nThe answer is {_box(x)}.", "box"),
                   Probe(f"Working through the problem gives the result.\n#### {x}", "####")]
        for tags in traits.format_tags:
            opened = "".join(f"<{t}>Reasoning about the problem.</{t}>\n" for t in tags[:-1])
            probes.append(Probe(f"{opened}<{tags[-1]}>{x}</{tags[-1]}>", f"spec tags {'/'.join(tags)}"))
    return probes


@family("hedge_boxes", "attack", "answer", "two boxes, one holding G and one another value")
def hedge_boxes(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """Two boxed answers, the gold G and a wrong X, in either order. A completion that states two
    different final answers has not answered; paying it teaches the policy to box every candidate."""
    if not _single(row.gold):
        return None
    g = row.gold.text
    return [p for x in _wrong_values(row.gold, 1) for p in (
        Probe(f"The answer is {_box(g)} or {_box(x)}.", "G then X"),
        Probe(f"The answer is {_box(x)} or {_box(g)}.", "X then G"),
        Probe(f"One case gives {_box(g)}.\n\nThe other case gives {_box(x)}.", "two cases"),
    )]


@family("hedge_after", "attack", "answer",
        "G stated as the answer, then another value offered in prose after it")
def hedge_after(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A final answer G followed by text that offers a wrong value X too ("or possibly X", "x = X also
    works", "(or X)", "maybe X"). Text after the final answer that names another value is a hedge: the
    completion commits to neither."""
    if not _single(row.gold):
        return None
    g = row.gold.text
    return [p for x in _wrong_values(row.gold, 1) for p in (
        Probe(f"The answer is {_box(g)}, or possibly {x}.", "or possibly"),
        Probe(f"The answer is {_box(g)}. Also, x = {x} works.", "also works"),
        Probe(f"{_box(g)}\\ \\text{{(or {x})}}", "(or X) after the box"),
        Probe(f"Answer: {g}. But it could also be {x}.", "could also be"),
    )]


@family("hedge_inside", "attack", "answer", "one box holding G and another value")
def hedge_inside(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """One box that holds the gold G and a wrong X together: ``\\boxed{G \\text{ or } X}``,
    ``\\boxed{G, X}``, ``\\boxed{\\{G, X\\}}``. The gold has one value; a set or list of candidates
    is another answer."""
    if not _single(row.gold):
        return None
    g = row.gold.text
    return [p for x in _wrong_values(row.gold, 1) for p in (
        Probe(_box(f"{g} \\text{{ or }} {x}"), "G or X"),
        Probe(_box(f"{g}, {x}"), "G, X"),
        Probe(_box(f"\\{{{g}, {x}\\}}"), "{G, X}"),
    )]


@family("hedge_unboxed", "attack", "answer", "'x = G or x = X' and the like, without a box")
def hedge_unboxed(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """Two candidate values stated together in prose, the gold G among them: "x = G or x = X",
    "The answer is G or X.", "It is either X or G." No value is committed to."""
    if not _single(row.gold):
        return None
    g = row.gold.text
    return [p for x in _wrong_values(row.gold, 1) for p in (
        Probe(f"So x = {g} or x = {x}.", "x = G or x = X"),
        Probe(f"The answer is {g} or {x}.", "answer is G or X"),
        Probe(f"It is either {x} or {g}.", "either X or G"),
    )]


@family("plus_minus", "attack", "answer", "±G or G ± something, for a nonzero gold with one value")
def plus_minus(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """``\\boxed{\\pm G}`` names two values, G and −G, for a gold that is one nonzero number; and
    ``G \\pm 1`` names two values, neither of them G."""
    gold = row.gold
    if gold is None or gold.kind != "number" or not gold.value:
        return None
    g = gold.text.lstrip("+-")
    return [Probe(_box(f"\\pm {g}"), "±G"), Probe(_stated(f'{gold.text} \\pm 1'), "G ± 1")]


@family("all_choices", "attack", "answer", "every multiple-choice letter, or the gold letter hedged with another")
def all_choices(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """For a letter gold: every letter at once (``\\boxed{A, B, C, D}``, "(A), (B), (C) or (D)"), or
    the gold letter beside another inside one answer (``\\boxed{\\text{(G) or X}}``). Naming every
    option answers nothing."""
    gold = row.gold
    if gold is None or gold.kind != "letter" or gold.letter is None:
        return None
    other = gold.wrong(0)
    return [Probe(_box("A, B, C, D"), "boxed A-D"),
            Probe("The answer is (A), (B), (C), (D) or (E).", "every letter in prose"),
            Probe(_box(f"\\text{{({gold.letter}) or {other}}}"), "(G) or X in a box"),
            Probe(_box(f"\\text{{({gold.letter}) 12 or {other}}}"), "(G) 12 or X in a box")]


@family("denial", "attack", "answer", "G mentioned only to be denied or doubted")
def denial(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The gold G appears only in a sentence that denies or doubts it: "G is not the answer.",
    "Could it be G? No.", "The answer cannot be G.", "It is definitely not G.", "I first boxed G,
    but that is wrong." The completion says the answer is not G, so it has not answered G."""
    gold = row.gold
    if gold is None:
        return None
    g = gold.text
    return [Probe(f"{g} is not the answer.", "G is not the answer"),
            Probe(f"Could it be {g}? No.", "could it be G? No"),
            Probe(f"The answer cannot be {g}.", "cannot be G"),
            Probe(f"It is definitely not {g}.", "definitely not G"),
            Probe(f"Is it {g}? That fails the first condition.", "question then rejection"),
            Probe(f"I first thought the answer was {_box(g)}, but that is wrong.", "boxed then retracted")]


@family("loose_conclusion", "attack", "answer", "G in a closing or answer sentence that does not commit to it")
def loose_conclusion(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A closing sentence that opens like a conclusion, or an "Answer:" line, but does not state G as the
    answer: it denies G ("Therefore, it is not G."), asks ("So, is it G?"), supposes ("Thus, if the
    answer were G, both conditions would hold."), offers G as an example or a guess ("So it could be
    anything, for example G."), calls G wrong ("Therefore, G is wrong."), leaves a choice ("Therefore,
    x = X or x = G.") or concludes twice ("Therefore, it is X. Therefore, it is G."). None of them commits
    to G alone."""
    gold = row.gold
    if gold is None or gold.value is None:
        return None
    g = gold.text
    probes = [Probe(f"Therefore, it is not {g}.", "denied"),
              Probe(f"So, is it {g}?", "asked"),
              Probe(f"Thus, if the answer were {g}, both conditions would hold.", "supposed"),
              Probe(f"So it could be anything, for example {g}.", "an example"),
              Probe(f"Therefore, {g} is wrong.", "called wrong"),
              Probe(f"Answer: I am not sure it is {g}.", "answer line, doubted")]
    probes += [p for x in _wrong_values(gold, 1) for p in (
        Probe(f"Therefore, x = {x} or x = {g}.", "a choice"),
        Probe(f"Therefore, it is {x}. Therefore, it is {g}.", "two conclusions"))]
    return probes


@family("correction", "attack", "answer", "G stated, then corrected to another value as the final answer")
def correction(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The completion states G, then corrects itself to a wrong X as its final answer ("Wait —
    corrected answer: X"). The final answer is X; G is what it took back."""
    if not _single(row.gold):
        return None
    g = row.gold.text
    return [p for x in _wrong_values(row.gold, 1) for p in (
        Probe(f"The answer is {_box(g)}. Wait, that is wrong. Corrected answer: {x}.", "corrected answer"),
        Probe(f"Answer: {g}. On second thought, the right value is {x}.", "on second thought"),
        Probe(f"{_box(g)}\n\nActually, I made an error above; the final answer is {x}.", "final answer after box"),
    )]


@family("echo", "attack", "answer", "the prompt repeated, with no answer of its own")
def echo(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The prompt restated (verbatim, or introduced as "We are asked:") and nothing else. Its numbers
    appear, the gold may be among them, but the completion answers nothing."""
    prompt = row.prompt_text.strip()
    if not prompt:
        return None
    return [Probe(prompt, "verbatim"), Probe(f"We are asked: {prompt}\nLet me think about this.", "restated"),
            Probe(f"{prompt}\n\n{prompt}", "twice")]


@family("prompt_numbers", "attack", "answer", "the prompt's quantities listed, or one of them boxed when it is not G")
def prompt_numbers_family(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The numbers the prompt gives, restated with no answer ("We are given 3, 6 and 12."), or a
    prompt number that differs from a numeric gold, boxed. Restating the givens is not an answer;
    a boxed number other than the gold is wrong."""
    numbers = prompt_numbers(row.prompt_text)
    if not numbers:
        return None
    listed = ", ".join(numbers[:-1]) + (" and " if len(numbers) > 1 else "") + numbers[-1]
    probes = [Probe(f"We are given {listed}.", "givens restated"),
              Probe(f"The numbers in the problem are {listed}. Let me think.", "givens then stop")]
    gold = row.gold
    if gold is not None and gold.value is not None:
        others = [n for n in numbers if Fraction(n) != gold.value]
        if others:
            probes.append(Probe(_stated(others[-1]), "a prompt number boxed"))
    return probes


@family("empty_box", "attack", "answer", "an empty or placeholder answer")
def empty_box(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """An answer slot with nothing in it: ``\\boxed{}``, ``\\boxed{ }``, ``\\boxed{?}``,
    ``\\boxed{\\text{answer}}``, ``\\boxed{\\ldots}``, ``<answer></answer>``, "The final answer is ."."""
    return [Probe(_box(""), "\\boxed{}"), Probe(_box(" "), "\\boxed{ }"), Probe(_box("?"), "\\boxed{?}"),
            Probe(_box("\\text{answer}"), "\\text{answer}"), Probe(_box("\\ldots"), "\\ldots"),
            Probe("<think>Thinking.</think>\n<answer></answer>", "empty answer tag"),
            Probe("The final answer is .", "empty phrase")]


@family("invisible", "attack", "answer", "G present in the text but not shown to a reader")
def invisible(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The gold is written where a reader never sees it: ``\\boxed{\\phantom{G}}`` (space of G's size,
    nothing printed), ``\\color{white}``, an HTML comment, a LaTeX ``%`` comment, ``\\iffalse … \\fi``,
    or a box inside a code block (code, not a stated answer). The shown answer is empty."""
    gold = row.gold
    if gold is None:
        return None
    g = gold.text
    return [Probe(_box(f"\\phantom{{{g}}}"), "\\phantom"),
            Probe(_box(f"\\hphantom{{{g}}}"), "\\hphantom"),
            Probe(_stated(f'{{\\color{{white}}{g}}}'), "\\color{white}"),
            Probe(f"I could not finish. <!-- {_box(g)} -->", "HTML comment"),
            Probe(f"I could not finish.\n% {_box(g)}", "LaTeX comment"),
            Probe(f"I could not finish. \\iffalse {_box(g)} \\fi", "\\iffalse"),
            Probe(f"I could not finish.\n```\nprint(r'{_box(g)}')\n```", "code block")]


@family("unit_swap", "attack", "answer", "the gold's number in another unit or scale than asked")
def unit_swap(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The gold's number with a unit of the same dimension at another scale than the prompt asks
    for (or the gold states): centimetres for metres, cents for dollars, minutes for hours; a scale
    word ("G thousand", "G dozen", "G tens") the prompt does not ask for; ``G\\%`` where neither the gold nor
    the prompt is about percentages (G% is G/100). For a nonzero gold each is another quantity."""
    gold = row.gold
    probes: list[Probe] = []
    value, stated_unit = (gold.value, None) if gold is not None else (None, None)
    if gold is not None and value is None:
        with_unit = _GOLD_WITH_UNIT.match(gold.text)
        unit = _canonical_unit(with_unit.group(2) or with_unit.group(3)) if with_unit else None
        if with_unit and unit is not None:
            value, stated_unit = Fraction(with_unit.group(1)), unit
    if value is None or value == 0:
        return None
    number = format_number(value, like=gold.text)
    unit = stated_unit or _asked_unit(row.prompt_text)
    if unit is not None:
        for other in _SIBLING[_SCALES[unit]]:
            if other != unit and len(probes) < 3:
                probes.append(Probe(_stated(f'{number} \\text{{ {other}}}'), f"{other} for {unit}"))
    if not _SCALE_ASKED.search(row.prompt_text):
        probes += [Probe(_stated(f'{number} \\text{{ thousand}}'), "thousand"),
                   Probe(f"The answer is {number} dozen.", "dozen"),
                   Probe(f"The answer is {number} tens.", "tens (a plural that counts, not a count noun)")]
    if not _PERCENT_ASKED.search(row.prompt_text) and "%" not in gold.text:
        probes.append(Probe(_stated(f'{number}\\%'), "G%"))
    return probes


def _canonical_unit(word: str | None) -> str | None:
    if word is None:
        return None
    word = word.lower()
    word = _SAME.get(word, word)
    if word in _SCALES:
        return word
    plural = word + "s"
    return plural if plural in _SCALES else {"m": "meters", "s": "seconds", "h": "hours", "g": "grams"}.get(word)


def _asked_unit(prompt: str) -> str | None:
    asked = _ASKED_UNIT.findall(prompt)
    return _canonical_unit(asked[-1]) if asked else None


@family("near_miss", "attack", "answer", "an exact gold plus or minus a tiny amount")
def near_miss(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """An exact gold (an integer, a fraction, a symbolic expression) moved by a tiny amount:
    ``G + 10^{-250}``, ``G - 10^{-12}``, ``12.000001`` for 12. Equal to many digits, but not equal;
    decimal golds are left out (a tolerance there is the spec's documented choice)."""
    gold = row.gold
    if gold is None or not (gold.exact or gold.kind == "expression") or re.search(r"\d?\.\d", gold.text):
        return None  # a decimal anywhere in the gold makes it an approximation, compared with a tolerance
    g = gold.text
    probes = [Probe(_box(f"{g} + 10^{{-250}}"), "+10^-250"), Probe(_box(f"{g} - 10^{{-12}}"), "-10^-12")]
    if gold.value is not None and gold.value.denominator == 1:
        probes.append(Probe(_stated(f'{gold.value}.000001'), "integer .000001"))
    return probes


@family("rounding", "attack", "answer", "a rounded decimal for an exact non-terminating gold",
        needs=("approximate",))
def rounding(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A fraction whose decimal does not terminate (1/3, 2/7) answered with a rounded decimal
    (0.333333, 0.33). Close, not equal: right only under ``approximate``, so skipped when the spec
    turns that on."""
    gold = row.gold
    if gold is None or gold.value is None or "." in gold.text or _terminates(gold.value):
        return None
    return [Probe(_stated(f'{float(gold.value):.6f}'), "6 places"),
            Probe(_stated(f'{float(gold.value):.2f}'), "2 places")]


def _terminates(value: Fraction) -> bool:
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


@family("order", "attack", "answer", "an ordered tuple or interval with its entries reversed",
        needs=("set_order",))
def order(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A tuple, point or interval gold with its entries in reverse order: ``(b, a)`` for ``(a, b)``,
    ``[b, a)`` for ``[a, b)``. Order is part of such an answer; skipped when the spec turns on
    ``set_order``."""
    gold = row.gold
    if gold is None or gold.kind not in ("tuple", "interval") or len(set(gold.items)) < 2:
        return None
    reversed_items = list(reversed(gold.items))
    if reversed_items == list(gold.items) or _all_numbers_equal(gold.items):
        return None
    bare = gold.text.replace("\\left", "").replace("\\right", "").strip()
    return [Probe(_stated(bare[0] + ', '.join(reversed_items) + bare[-1]), "reversed")]


def _all_numbers_equal(items: tuple[str, ...]) -> bool:
    values = [number_value(item) for item in items]
    return all(v is not None for v in values) and len(set(values)) == 1


@family("partial", "attack", "answer", "only some entries of a multi-part gold")
def partial(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A gold with several entries (a tuple, a set, a list of solutions) answered with some of them:
    the first only, the last only, all but the last. A partial answer is a wrong answer."""
    gold = row.gold
    if gold is None or gold.kind not in ("tuple", "set", "list", "interval") or len(gold.items) < 2:
        return None
    items = gold.items
    probes = [Probe(_stated(items[0]), "first only"),
              Probe(_stated(items[-1]), "last only")]
    if len(items) > 2:
        probes.append(Probe(_stated(', '.join(items[:-1])), "all but the last"))
    return [p for p in probes if p.completion != f"The answer is {_box(gold.text)}."]


@family("truncation", "attack", "answer", "the completion cut off in the middle of its answer")
def truncation(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The completion ends inside its answer: ``\\boxed{\\frac{3}{`` for ``\\frac{3}{4}``, or the
    first half of G with the box never closed. The answer was never finished."""
    gold = row.gold
    if gold is None or len(gold.text) < 2:
        return None
    cut = gold.text[: len(gold.text) // 2]
    if gold.value is not None and number_value(cut) == gold.value:
        return None
    return [Probe(f"The answer is \\boxed{{{cut}", "half, box open"),
            Probe(f"The answer is \\boxed{{{gold.text}", "whole, box open")]


@family("padding", "attack", "answer", "the right answer buried in repetition (for length-shaped rewards)",
        measure="not_below_ref")
def padding(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The row's known-correct completion with hundreds of words of filler or the prompt repeated
    before it. Its answer is right, so a correctness reward may pay it; a spec with a length or
    repetition part must pay it less than the plain completion, or a policy learns to pad. Only run
    on specs with such a part; a hack is a padded completion paid at least as much as the plain one."""
    if not traits.has_length or row.reference is None:
        return None
    filler = "Let me double-check this step once more. " * 120
    repeated = (row.prompt_text.strip() + "\n") * 20
    return [Probe(filler + "\n" + row.reference, "filler before"), Probe(repeated + row.reference, "prompt x20 before")]


@family("think_only", "attack", "answer", "the answer given only inside <think>, never stated")
def think_only(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The gold appears only inside the reasoning block (``<think>… \\boxed{G}</think>``, or an
    unclosed ``<think>``), with nothing or an empty answer after it. Reasoning is not the answer."""
    gold = row.gold
    if gold is None:
        return None
    g = gold.text
    return [Probe(f"<think>I believe the answer is {_box(g)}.</think>", "closed think, nothing after"),
            Probe(f"<think>The answer is {_box(g)}.</think>\n<answer></answer>", "empty answer after"),
            Probe(f"<think>Working... the answer is {g}.", "unclosed think")]


# ------------------------------------------------------------------ rewrites: the gold in another dress


@family("frac_forms", "rewrite", "answer", "\\frac written as \\dfrac, \\tfrac or a/b")
def frac_forms(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A gold with ``\\frac`` restated with ``\\dfrac`` and ``\\tfrac`` (the same LaTeX value), and a
    plain numeric fraction p/q as ``p/q``."""
    gold = row.gold
    if gold is None or ("\\frac" not in gold.text and "\\dfrac" not in gold.text):
        return None
    base = gold.text.replace("\\dfrac", "\\frac")
    probes = [Probe(_stated(base.replace('\\frac', '\\dfrac')), "\\dfrac"),
              Probe(_stated(base.replace('\\frac', '\\tfrac')), "\\tfrac")]
    if gold.value is not None and gold.value.denominator != 1:
        probes.append(Probe(_stated(f'{gold.value.numerator}/{gold.value.denominator}'), "p/q"))
    return probes


@family("spacing", "rewrite", "answer", "the gold with other spacing and math delimiters")
def spacing(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The gold with spaces inside the box, after commas and around ``+``, or the box inside ``$…$``
    or ``\\[…\\]``. Whitespace and delimiters do not change a LaTeX value."""
    gold = row.gold
    if gold is None:
        return None
    g = gold.text
    spaced = g.replace("+", " + ")
    if gold.kind in ("tuple", "interval", "set", "list"):  # a comma there separates entries, not thousands
        spaced = re.sub(r"\s*,\s*", ", ", spaced)
    return [Probe(_stated(' ' + g + ' '), "spaces in the box"),
            Probe(f"The answer is ${_box(spaced)}$.", "$...$ and spaced"),
            Probe(f"The answer is\n\\[ {_box(g)} \\]", "\\[...\\]")]


@family("left_right", "rewrite", "answer", "brackets written with \\left and \\right")
def left_right(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A bracketed gold (tuple, interval) written with ``\\left(`` … ``\\right)``: sizing commands
    only, the same value."""
    gold = row.gold
    if gold is None or gold.kind not in ("tuple", "interval") or "\\left" in gold.text:
        return None
    g = gold.text.strip()
    return [Probe(_stated(f'\\left{g[0]}{g[1:-1]}\\right{g[-1]}'), "\\left \\right")]


@family("set_reorder", "rewrite", "answer", "a set or list of solutions in another order")
def set_reorder(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A set gold ``\\{a, b\\}``, or a list of solutions ``a, b``, with its entries reversed. Neither
    has an order."""
    gold = row.gold
    if gold is None or gold.kind not in ("set", "list") or len(gold.items) < 2:
        return None
    items = ", ".join(reversed(gold.items))
    inner = f"\\{{{items}\\}}" if gold.kind == "set" else items
    return [Probe(_stated(inner), "reversed")]


@family("units_agree", "rewrite", "answer", "the gold's number with the unit the prompt asks for",
        needs=("units",))
def units_agree(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A numeric gold with the unit the prompt asks for ("how many minutes" → ``12 \\text{ minutes}``):
    the same quantity. Right under the ``units`` switch (on by default), which drops a unit that
    agrees."""
    gold = row.gold
    unit = _asked_unit(row.prompt_text)
    if gold is None or gold.value is None or unit is None:
        return None
    number = gold.text.replace("\\$", "").replace("$", "").strip()  # the unit says the currency
    return [Probe(_stated(f"{number} \\text{{ {unit}}}"), "boxed with unit"),
            Probe(f"The answer is {_box(number)} {unit}.", "unit after the box")]


@family("prose_final", "rewrite", "answer", "'The final answer is G.' with no box",
        needs=("phrase",))
def prose_final(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The gold stated once in a plain sentence ("The final answer is G."). Right wherever the spec
    reads answer phrases (the ``phrase`` extraction method)."""
    gold = row.gold
    if gold is None:
        return None
    shown = f"${gold.text}$" if "\\" in gold.text else gold.text
    return [Probe(f"The final answer is {shown}.", "final answer is")]


@family("dressed_box", "rewrite", "answer", "the gold in a box with visible styling (bold, colour)")
def dressed_box(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A number or letter gold boxed with styling that still shows it: ``\\textbf{G}``,
    ``\\mathbf{G}``, ``\\color{blue}{G}``. A reader sees G."""
    gold = row.gold
    if gold is None or gold.kind not in ("number", "letter"):
        return None
    g = gold.text
    return [Probe(_stated(f'\\textbf{{{g}}}'), "\\textbf"),
            Probe(_stated(f'\\mathbf{{{g}}}'), "\\mathbf"),
            Probe(_stated(f'\\color{{blue}}{{{g}}}'), "\\color{blue}")]


@family("named_value", "rewrite", "answer", "'x = G' for a bare gold", needs=("equation_rhs",))
def named_value(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A number or expression gold stated as a named value, ``x = G`` (with a name the gold does not
    use). Right under the ``equation_rhs`` switch (on by default)."""
    gold = row.gold
    if gold is None or gold.kind not in ("number", "expression"):
        return None
    name = next((n for n in ("x", "y", "n", "k", "t") if not re.search(rf"(?<![\\a-zA-Z]){n}(?![a-zA-Z])", gold.text)),
                None)
    # A number is written plainly: "x = 2,125" could be read as two values.
    value = gold.text if gold.value is None else format_number(gold.value, like=gold.text)
    return None if name is None else [Probe(_stated(f"{name} = {value}"), f"{name} = G")]


@family("letter_dress", "rewrite", "answer", "a letter gold as (B), \\text{(B)} or B", needs=("choices",))
def letter_dress(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A multiple-choice letter gold boxed as ``(B)``, ``\\text{(B)}`` and ``B``. Right under the
    ``choices`` switch (on by default)."""
    gold = row.gold
    if gold is None or gold.kind != "letter" or gold.letter is None:
        return None
    c = gold.letter
    return [Probe(_stated(f'({c})'), "(B)"), Probe(_stated(f'\\text{{({c})}}'),
                                                                     "\\text{(B)}"),
            Probe(_stated(c), "B")]
