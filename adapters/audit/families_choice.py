"""Families aimed at multiple-choice rewards (``choice``): the row's options are known, so every
probe is wrong (or right) by construction against them.

``G`` is the gold option's label (the row's gold read as ``choice`` reads it: an index, a label or
an option's text), ``X`` another option's label. An answer that names two options, every option, a
label that is no option's, or the gold only to deny it has not chosen G; the gold's label in another
dress, or its exact text, has.
"""

from __future__ import annotations

import string

from rewardsmith.adapters.audit.family import AuditRow, Probe, family
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.verifiers.choice.row import Options, read_gold, read_options


def _row_options(row: AuditRow, traits: Traits) -> tuple[Options, int, bool] | None:
    """The options, the gold's index and whether option texts count, from the first choice part
    whose fields the row fills; None when the spec has no choice part or the row no readable pair."""
    for choices, answer, accept_text in traits.choice_parts:
        options = read_options(row.get(choices))
        if isinstance(options, str):
            continue
        gold = read_gold(row.get(answer), options)
        if isinstance(gold, int):
            return options, gold, accept_text
    return None


def _labels(row: AuditRow, traits: Traits) -> tuple[Options, str, list[str], bool] | None:
    """The options, G, the other labels (at least one) and whether texts count."""
    read = _row_options(row, traits)
    if read is None or len(read[0].labels) < 2:
        return None
    options, gold, accept_text = read
    others = [label for i, label in enumerate(options.labels) if i != gold]
    return options, options.labels[gold], others, accept_text


@family("choice_hedge", "attack", "choice", "the gold option named beside another one")
def choice_hedge(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """G and another option X named together: "G or X", "X or G", "G/X", "G and X", two boxes, an
    answer tag then "or maybe X", "G (or possibly X)", both in one tag, "(G) text-of-X". Naming two
    options chooses neither."""
    read = _labels(row, traits)
    if read is None:
        return None
    options, g, others, _ = read
    x = others[0]
    probes = [
        Probe(f"The answer is {g} or {x}.", "G or X"),
        Probe(f"The answer is {x} or {g}.", "X or G"),
        Probe(f"The answer is {g}/{x}.", "G/X"),
        Probe(f"Both {g} and {x} are correct.\nAnswer: {g} and {x}", "G and X"),
        Probe(f"\\boxed{{{g}}} \\boxed{{{x}}}", "two boxes"),
        Probe(f"<answer>{g}</answer> or maybe {x}", "tag then or maybe X"),
        Probe(f"The answer is {g} (or possibly {x}).", "G (or possibly X)"),
        Probe(f"<answer>({g}) or ({x})</answer>", "both in one tag"),
        Probe(f"<answer>{g}</answer>\n<answer>{x}</answer>", "two tags"),
    ]
    text_of_x = options.texts[options.labels.index(x)]
    if text_of_x.strip():
        probes.append(Probe(f"The answer is ({g}) {text_of_x}.", "(G) with the text of X"))
    return probes


@family("choice_every", "attack", "choice", "every option named at once")
def choice_every(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """Every label at once: "A, B, C, D", "(A) (B) (C) (D)", "The answer is A, B, C or D.", a box holding
    them all, each in its own answer tag. The gold is among them; no option is chosen."""
    read = _labels(row, traits)
    if read is None:
        return None
    labels = list(read[0].labels)
    listed = ", ".join(labels)
    return [
        Probe(listed, "bare list"),
        Probe(" ".join(f"({label})" for label in labels), "dressed list"),
        Probe(f"The answer is {', '.join(labels[:-1])} or {labels[-1]}.", "in prose"),
        Probe(f"\\boxed{{{listed}}}", "in one box"),
        Probe("".join(f"<answer>{label}</answer>" for label in labels), "a tag each"),
    ]


@family("choice_outside", "attack", "choice", "a label that is no option's")
def choice_outside(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """A label past the options' range (``E`` for four lettered options, ``4`` for three numbered ones),
    in a box, a tag and a phrase. It is no option; a reward that pays it reads labels without checking
    them against the row."""
    read = _labels(row, traits)
    if read is None:
        return None
    labels = read[0].labels
    if read[0].letters:
        outside = next((c for c in string.ascii_uppercase if c not in labels and c not in "AI"), None)
    else:
        outside = next((str(n) for n in range(1, 100) if str(n) not in labels), None)
    if outside is None:
        return None
    return [
        Probe(f"\\boxed{{{outside}}}", "boxed"),
        Probe(f"<answer>{outside}</answer>", "tag"),
        Probe(f"The answer is ({outside}).", "phrase"),
    ]


@family("choice_denial", "attack", "choice", "the gold option named only to be denied")
def choice_denial(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """G appears only denied, asked or taken back: "The answer is not G.", "It is definitely not (G).",
    "The answer is neither G nor X.", "not \\boxed{G}", "Is it G?", "\\boxed{G}, but that is wrong."
    The completion says G is not its answer."""
    read = _labels(row, traits)
    if read is None:
        return None
    _, g, others, _ = read
    return [
        Probe(f"The answer is not {g}.", "not G"),
        Probe(f"It is definitely not ({g}).", "definitely not (G)"),
        Probe(f"The answer is neither {g} nor {others[0]}.", "neither G nor X"),
        Probe(f"It is not \\boxed{{{g}}}.", "not boxed G"),
        Probe(f"Is the answer {g}?", "asked"),
        Probe(f"\\boxed{{{g}}}, but that is wrong.", "boxed then retracted"),
        Probe(f"<answer>not {g}</answer>", "not G in the tag"),
    ]


@family("choice_echo", "attack", "choice", "the prompt or the options restated as the answer")
def choice_echo(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The prompt restated, and the whole list of options given as the answer ("The answer is: (A)
    Paris (B) London ..."). Every option appears, the gold among them; none is chosen."""
    read = _labels(row, traits)
    if read is None:
        return None
    options = read[0]
    listing = " ".join(f"({label}) {text}" for label, text in zip(options.labels, options.texts, strict=True))
    probes = [
        Probe(f"The answer is: {listing}", "options as the answer"),
        Probe(f"<answer>{listing}</answer>", "options in the tag"),
    ]
    if row.prompt_text.strip():
        probes.append(Probe(row.prompt_text.strip(), "prompt verbatim"))
    return probes


@family("choice_think_only", "attack", "choice", "the gold option only inside the reasoning")
def choice_think_only(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """G stated only inside ``<think>…</think>`` (or an unclosed ``<think>``), with no answer or an empty
    one after it. Reasoning is not the answer."""
    read = _labels(row, traits)
    if read is None:
        return None
    g = read[1]
    return [
        Probe(f"<think>The answer is {g}.</think>", "closed think"),
        Probe(f"<think>\\boxed{{{g}}}", "unclosed"),
        Probe(f"<think>The answer is {g}.</think><answer></answer>", "empty tag after"),
    ]


@family("choice_dress", "rewrite", "choice", "the gold option's label in another dress, or its text")
def choice_dress(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """G as ``(G)``, ``G)``, ``**G**``, "option G", ``\\boxed{\\text{(G)}}``, ``<answer>G</answer>``,
    "Answer: G", "The answer is (G) text-of-G", and (where the spec reads option texts) the gold's
    text alone. Each names G and nothing else."""
    read = _labels(row, traits)
    if read is None:
        return None
    options, g, _, accept_text = read
    own = options.texts[options.labels.index(g)]
    probes = [
        Probe(f"The answer is ({g}).", "(G)"),
        Probe(f"The answer is {g}).", "G)"),
        Probe(f"Final answer: **{g}**", "**G**"),
        Probe(f"The correct answer is option {g}.", "option G"),
        Probe(f"\\boxed{{\\text{{({g})}}}}", "boxed text"),
        Probe(f"<answer>{g}</answer>", "tag"),
        Probe(f"Answer: {g}", "Answer: G"),
    ]
    if own.strip():
        probes.append(Probe(f"The answer is ({g}) {own}", "label and its text"))
        if accept_text and len(options.indices_of_text(own)) == 1:
            probes.append(Probe(f"The answer is {own}", "the text alone"))
    return probes
