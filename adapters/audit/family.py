"""What an audit family is: a named generator of completions that are wrong (or right) by construction.

A family never asks the verifier what is right: it builds completions whose truth follows from
how they are made (a wrong value put where the answer goes, the gold restated in another dress),
so that a reward paying for an attack, or refusing a rewrite, is the reward's fault. Each family
says why in its docstring, which ``rewardsmith audit --list-families`` prints.
"""

from __future__ import annotations

import inspect
import json
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.adapters.audit.gold import Gold
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.verifiers.core import MISSING, Text, lookup

Kind = Literal["attack", "rewrite"]
# What makes a probe count against the reward:
#   paid            an attack earned more than the threshold (default: any reward at all)
#   not_below_ref   an attack scored at least what the row's known-correct completion scored
#                   (padding: the reward did not charge for burying the answer)
#   below_ref       a rewrite scored less than the known-correct completion (a false negative)
#   error           an attack answered status=error, which trainers drop: a completion that can force
#                   one skips the rows it would fail (what it is paid is other families' business)
#   executed        an attack's marker file exists on this host after it was scored (some layer ran the
#                   answer outside the sandbox), or the row's controls scored otherwise after the probes
Measure = Literal["paid", "not_below_ref", "below_ref", "error", "executed"]


@dataclass(frozen=True)
class AuditRow:
    """One input row as the families see it."""

    line: int
    prompt: Text
    prompt_text: str
    fields: dict[str, Any]
    gold: Gold | None  # the gold answer read from the spec's answer field, when the row has one
    reference: str | None  # a known-correct completion: the row's ``reference`` column, or built from the gold

    def get(self, name: str, default: Any = None) -> Any:
        value = lookup(self.fields, name)
        return default if value is MISSING else value


@dataclass(frozen=True)
class Probe:
    """One generated completion. ``variant`` names the trick within the family (for the report)."""

    completion: Text
    variant: str
    marker: str | None = None  # measure executed: the file the probe creates if something runs it


@dataclass(frozen=True)
class Family:
    name: str
    kind: Kind
    target: str  # answer, judge, code, compose: which rewards it is aimed at (for the listing)
    why: str  # one line: why the result is wrong (attack) or right (rewrite) by construction
    generate: Callable[[AuditRow, Traits], list[Probe] | None] = field(repr=False)
    measure: Measure = "paid"
    needs: tuple[str, ...] = ()  # leniency switches or extraction methods a rewrite is right only under

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.generate) or ""

    def probes(self, row: AuditRow, traits: Traits, per_row: int, seed: int) -> list[Probe] | None:
        """At most ``per_row`` of the family's probes for ``row``, picked by a seeded draw; None when
        the family does not apply (to this row, or to a spec without what it needs)."""
        if not traits.allows(self):
            return None
        made = self.generate(row, traits)
        if not made:
            return None
        made = list({_key(p): p for p in reversed(made)}.values())[::-1]  # the same completion twice is one probe
        if len(made) <= per_row:
            return made
        return random.Random(f"{seed}:{row.line}:{self.name}").sample(made, per_row)


def _key(probe: Probe) -> tuple[str, str]:
    """A probe as a hashable key (chat-message completions are lists)."""
    completion = probe.completion
    text = completion if isinstance(completion, str) else json.dumps(completion, sort_keys=True, default=str)
    return probe.variant, text


FAMILIES: dict[str, Family] = {}


def family(name: str, kind: Kind, target: str, why: str, measure: Measure | None = None,
           needs: Iterable[str] = ()) -> Callable[[Callable[[AuditRow, Traits], list[Probe] | None]], Family]:
    """Register a generator as a family (``@family("denial", "attack", "answer", "...")``)."""

    def decorator(generate: Callable[[AuditRow, Traits], list[Probe] | None]) -> Family:
        if name in FAMILIES:
            raise ValueError(f"audit family {name!r} is registered twice")
        chosen = measure or ("paid" if kind == "attack" else "below_ref")
        made = Family(name, kind, target, why, generate, chosen, tuple(needs))
        FAMILIES[name] = made
        return made

    return decorator


def all_families() -> dict[str, Family]:
    """Every registered family, its modules imported (the registry fills on import)."""
    from rewardsmith.adapters.audit import (  # noqa: F401
        families_answer,
        families_choice,
        families_code,
        families_code_execution,
        families_forced_error,
        families_ifeval,
        families_json,
        families_judge,
        families_qa,
        families_reasoning_gym,
        families_tool_call,
    )

    return FAMILIES


def select(names: Iterable[str] | None) -> list[Family]:
    """The families named (every one when ``names`` is empty or None); an unknown name raises
    ``ValueError`` with the closest ones."""
    known = all_families()
    if isinstance(names, str):  # "denial,judge" as the CLI takes it
        names = names.split(",")
    wanted = [n.strip() for n in names or () if n.strip()]
    if not wanted:
        return list(known.values())
    unknown = [n for n in wanted if n not in known and n not in _targets(known)]
    if unknown:
        import difflib

        hints = {n: difflib.get_close_matches(n, list(known), n=1) for n in unknown}
        said = "; ".join(f"{n!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for n, h in hints.items())
        raise ValueError(f"unknown audit family {said}; `rewardsmith audit --list-families` lists them")
    return [f for f in known.values() if f.name in wanted or f.target in wanted]


def _targets(known: Mapping[str, Family]) -> set[str]:
    return {f.target for f in known.values()}
