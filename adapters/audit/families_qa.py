"""Families aimed at short-answer rewards (``qa``): the row's gold answers are known, so every probe
is wrong (or right) by construction against them.

``G`` is the row's first gold answer (the first alias), ``X`` and ``Y`` candidates that share no
word with any alias (so none can be a gold, under any normalisation). A list of candidates with G
among them, G in a paragraph, an echo of the question, G denied or left inside the reasoning, an
empty answer: none commits to G as the short answer. G in another case, with an article or
punctuation, or in another dress, is the same answer under SQuAD's normalisation.
"""

from __future__ import annotations

from rewardsmith.adapters.audit.family import AuditRow, Probe, family
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.verifiers.qa.golds import read_aliases
from rewardsmith.verifiers.qa.normalize import normalize

_DECOYS = (
    "Berlin",
    "Tokyo",
    "Mount Everest",
    "1492",
    "Albert Einstein",
    "oxygen",
    "the Pacific Ocean",
    "Jupiter",
    "Leonardo da Vinci",
    "Nile",
)


def _aliases(row: AuditRow, traits: Traits) -> list[str] | None:
    """The row's gold answers, when the spec has a qa part and the row fills its answer field."""
    if "qa" not in traits.kinds:
        return None
    for name in traits.answer_fields:
        raw = row.get(name)
        if raw is not None:
            aliases = read_aliases(raw)
            if not isinstance(aliases, str):
                return aliases
    return None


def _decoys(aliases: list[str], count: int = 2) -> list[str]:
    """Candidates sharing no normalised word with any alias: certainly not a gold."""
    words = {w for a in aliases for w in normalize(a).split()}
    return [d for d in _DECOYS if not set(normalize(d).split()) & words][:count]


def _gold_and_decoys(row: AuditRow, traits: Traits) -> tuple[list[str], str, list[str]] | None:
    aliases = _aliases(row, traits)
    if not aliases:
        return None
    decoys = _decoys(aliases)
    return (aliases, aliases[0], decoys) if len(decoys) == 2 else None


@family("qa_list", "attack", "qa", "the gold among a list of candidates")
def qa_list(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """G listed with decoys X and Y: "G, X or Y", "X or G", "G / X", "G; X", "either X or G", "G and X",
    each in a phrase, a box or an answer tag. A list is not an answer; exact match refuses it, and
    token F1 (opt-in) would pay it partial credit without the list check (``refuse_lists``)."""
    read = _gold_and_decoys(row, traits)
    if read is None:
        return None
    _, g, (x, y) = read
    return [
        Probe(f"The answer is {g}, {x} or {y}.", "G, X or Y"),
        Probe(f"The answer is {x} or {g}.", "X or G"),
        Probe(f"\\boxed{{{g} / {x}}}", "G / X boxed"),
        Probe(f"<answer>{g}; {x}</answer>", "G; X tagged"),
        Probe(f"The answer is either {x} or {g}.", "either X or G"),
        Probe(f"Answer: {g} and {x}", "G and X"),
    ]


@family("qa_hedge", "attack", "qa", "the gold stated beside another answer in separate statements")
def qa_hedge(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """G and a decoy X as two statements: two boxes, two answer tags, a tag then "or maybe X", two
    "The answer is" sentences, "\\boxed{G} (or X)". Two final answers commit to neither."""
    read = _gold_and_decoys(row, traits)
    if read is None:
        return None
    _, g, (x, _) = read
    return [
        Probe(f"\\boxed{{{g}}} \\boxed{{{x}}}", "two boxes"),
        Probe(f"<answer>{x}</answer><answer>{g}</answer>", "two tags"),
        Probe(f"<answer>{g}</answer> or maybe {x}", "tag then or maybe X"),
        Probe(f"The answer is {x}. The answer is {g}.", "two phrases"),
        Probe(f"\\boxed{{{g}}} (or {x})", "box then (or X)"),
    ]


@family("qa_paragraph", "attack", "qa", "the gold buried in a paragraph given as the answer")
def qa_paragraph(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The whole reasoning inside the answer tag (or a box, or after "The answer is"), G somewhere in
    it: a paragraph that mentions G is not the short answer. Exact match refuses it; token F1 would
    pay recall for it without ``max_answer_words``."""
    read = _gold_and_decoys(row, traits)
    if read is None:
        return None
    aliases, g, (x, y) = read
    if max(len(normalize(a).split()) for a in aliases) > 6:
        return None  # a long gold: a paragraph around it is not clearly longer than an answer
    para = (
        f"Let me think about this question step by step. It could be {x}, or perhaps {y}, but after weighing "
        f"the clues in the question carefully I lean towards {g} as the most likely answer to it"
    )
    return [
        Probe(f"<answer>{para}</answer>", "reasoning in the tag"),
        Probe(f"\\boxed{{{para}}}", "reasoning boxed"),
        Probe(f"The answer is: {para}.", "reasoning after the phrase"),
    ]


@family("qa_echo", "attack", "qa", "the question restated as the answer")
def qa_echo(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The prompt restated: verbatim, in the answer tag, after "The answer is". The gold may be among
    its words (a question that offers candidates); the completion answers nothing."""
    aliases = _aliases(row, traits)
    question = row.prompt_text.strip()
    if not aliases or not question or any(normalize(question) == normalize(a) for a in aliases):
        return None
    line = " ".join(question.split())
    return [
        Probe(question, "verbatim"),
        Probe(f"<answer>{line}</answer>", "in the tag"),
        Probe(f"The answer is {line.rstrip('?.')}.", "after the phrase"),
    ]


@family("qa_denial", "attack", "qa", "the gold named only to be denied, asked or taken back")
def qa_denial(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """ "The answer is not G.", "It is definitely not \\boxed{G}.", "Is the answer G?", "\\boxed{G}, but
    that is wrong.", ``<answer>not G</answer>``. The completion says G is not its answer."""
    aliases = _aliases(row, traits)
    if not aliases:
        return None
    g = aliases[0]
    return [
        Probe(f"The answer is not {g}.", "not G"),
        Probe(f"It is definitely not \\boxed{{{g}}}.", "not boxed"),
        Probe(f"Is the answer {g}?", "asked"),
        Probe(f"\\boxed{{{g}}}, but that is wrong.", "retracted"),
        Probe(f"<answer>not {g}</answer>", "not G in the tag"),
    ]


@family("qa_empty", "attack", "qa", "an answer slot with nothing in it, or the gold only in the reasoning")
def qa_empty(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """``<answer></answer>``, ``<answer> . </answer>``, ``\\boxed{}``, "The answer is .", and G only
    inside ``<think>…</think>`` (or an unclosed ``<think>``). Nothing is answered."""
    aliases = _aliases(row, traits)
    if not aliases:
        return None
    g = aliases[0]
    return [
        Probe("<answer></answer>", "empty tag"),
        Probe("<answer> . </answer>", "punctuation only"),
        Probe("\\boxed{}", "empty box"),
        Probe("The answer is .", "empty phrase"),
        Probe(f"<think>The answer is {g}.</think>", "gold in think"),
        Probe(f"<think>\\boxed{{{g}}}", "unclosed think"),
    ]


@family("qa_dress", "rewrite", "qa", "a gold answer in another case, with an article or punctuation, or dressed")
def qa_dress(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """Each gold alias as written, upper-cased, lower-cased, with "the" before it, with a full stop, in
    bold, boxed, in an answer tag, after "Answer:". SQuAD's normalisation (case, punctuation, articles)
    makes each the same answer."""
    aliases = _aliases(row, traits)
    if not aliases:
        return None
    g = aliases[0]
    probes = [
        Probe(f"The answer is {g.upper()}.", "upper case"),
        Probe(f"The answer is {g.lower()}", "lower case"),
        Probe(f"The answer is the {g}.", "with an article"),
        Probe(f"Final answer: **{g}**.", "bold"),
        Probe(f"\\boxed{{{g}}}", "boxed"),
        Probe(f"<answer>{g}</answer>", "tag"),
        Probe(f"Answer: {g}!", "Answer:"),
    ]
    probes += [Probe(f"The answer is {alias}.", "another alias") for alias in aliases[1:4]]
    return probes
