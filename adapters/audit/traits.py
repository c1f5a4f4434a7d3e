"""What a built reward is made of, as far as the audit needs to know.

Families do not ask the verifier whether an answer is right, but some must know what the spec
allows: a rewrite that is right only under a leniency switch (``x = 5`` for 5 needs
``equation_rhs``) is tried only when every math part has the switch on, and an attack that a
switch makes right (``(7, 6)`` for ``(6, 7)`` under ``set_order``) is skipped when any part has it on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from rewardsmith.verifiers.core import Verifier

if TYPE_CHECKING:
    from rewardsmith.adapters.audit.family import Family

LENGTH_KINDS = ("overlong", "cosine", "repetition")


def parts(verifier: Verifier) -> Iterator[Verifier]:
    """``verifier`` and every verifier inside it (:meth:`Verifier.walk`), each once."""
    seen: set[int] = set()
    for _, part in verifier.walk():
        if id(part) not in seen:
            seen.add(id(part))
            yield part


@dataclass(frozen=True)
class Traits:
    """The facts about a spec that decide which probes are fair."""

    kinds: frozenset[str]  # the registry names inside (math, judge, code, format, overlong, ...)
    answer_fields: tuple[str, ...]  # where the gold answer is read (math, judge reference mode, ...)
    switches_all: frozenset[str]  # leniency switches every math part has on
    switches_any: frozenset[str]  # leniency switches some math part has on
    methods_all: frozenset[str]  # extraction methods every math part uses
    format_tags: tuple[tuple[str, ...], ...]  # the tags of each format part
    call_formats: frozenset[str] = frozenset()  # the ``format`` of each tool_call part (auto, openai, hermes, python)
    # (choices_field, answer_field, accept_text) of each choice part: where a row's options and gold are
    choice_parts: tuple[tuple[str, str, bool], ...] = ()
    # every part, for families that read a part's options (where a json part finds its schema)
    verifiers: tuple[Verifier, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def of(cls, verifier: Verifier) -> Traits:
        found = list(parts(verifier))
        kinds = frozenset(getattr(v, "name", type(v).__name__) for v in found)
        answer_fields = tuple(dict.fromkeys(
            str(v.answer_field) for v in found if isinstance(getattr(v, "answer_field", None), str)))
        maths = [v for v in found if v.name == "math"]
        switch_sets = [_switches(v) for v in maths]
        method_sets = [frozenset(getattr(v, "methods", ())) for v in maths]
        return cls(
            kinds=kinds,
            answer_fields=answer_fields or ("answer",),
            switches_all=frozenset.intersection(*switch_sets) if switch_sets else frozenset(),
            switches_any=frozenset().union(*switch_sets),
            methods_all=frozenset.intersection(*method_sets) if method_sets else frozenset(),
            format_tags=tuple(dict.fromkeys(tuple(v.tags) for v in found if v.name == "format")),
            call_formats=frozenset(str(getattr(v, "format", "auto")) for v in found if v.name == "tool_call"),
            choice_parts=tuple(dict.fromkeys((str(v.choices_field), str(v.answer_field), bool(v.accept_text))
                                             for v in found if v.name == "choice")),
            verifiers=tuple(found),
        )

    def of_kind(self, kind: str) -> list[Verifier]:
        """The parts registered as ``kind`` (``json``), in the order the spec walks them."""
        return [v for v in self.verifiers if getattr(v, "name", None) == kind]

    @property
    def has_math(self) -> bool:
        return "math" in self.kinds

    @property
    def has_length(self) -> bool:
        return bool(self.kinds & set(LENGTH_KINDS))

    def on_everywhere(self, need: str) -> bool:
        """Whether every math part has the leniency switch or extraction method ``need`` on (False
        without a math part: the audit cannot know what an unknown verifier allows)."""
        return self.has_math and (need in self.switches_all or need in self.methods_all)

    def allows(self, family: Family) -> bool:
        """A family applies unless it needs a switch the spec lacks, or is an attack that some switch
        turns into a right answer (``needs`` on an attack names the switches that would)."""
        if family.kind == "rewrite":
            return all(self.on_everywhere(need) for need in family.needs)
        return not any(need in self.switches_any for need in family.needs)


def _switches(math_verifier: Verifier) -> frozenset[str]:
    leniency = getattr(math_verifier, "leniency", None)
    if leniency is None:
        return frozenset()
    return frozenset(f.name for f in fields(leniency) if getattr(leniency, f.name) is True)
