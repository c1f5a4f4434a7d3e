"""The audit's fuzzer: mutations of each row's known-correct completion, drawn by hypothesis from the
grammar of edits (:mod:`.fuzz_grammar`), scored in batches, and the ones flagged shrunk to a minimal
example.

The named families try the shapes somebody listed; the fuzzer composes edits (one to four per
mutation) into shapes nobody listed. A mutation with a wrong-making edit that the spec pays (above
the threshold) is a hack; one made of right-preserving edits only that the spec pays less than the
row's unedited completion is a false negative.

Hypothesis draws the mutations (seeded: the same seed gives the same mutations; no example database)
with its generate phase only, and every draw is scored through ``verify_batch``, so the search costs
what scoring costs. To shrink, the same seeded search is replayed with the property in place (the
scores come from the batch's cache, so it fails exactly where the batch found a hack) and hypothesis's
shrinker takes the first flagged mutation to a minimal one, scoring each smaller candidate on the way.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.adapters.audit.family import AuditRow
from rewardsmith.adapters.audit.fuzz_grammar import (
    FORMS,
    SPECS,
    Edit,
    EditSpec,
    Subject,
    applicable,
    apply,
    base,
    clean,
)
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.verifiers.core import Sample, Verdict, Verifier

NAME = "fuzz"
EXAMPLES_SHRUNK = 3  # flagged mutations shrunk per kind (hack, false negative): each on another row
SHRINK_CALLS = 100  # verdicts one shrink may ask for beyond the batch's
WRONG_KEPT = 4  # wrong values kept per row (each one paid nothing stated cleanly)
_OVERDRAW = 1.5  # hypothesis draws this many per mutation wanted (the same text twice is one mutation)
PASSES = 8  # searches per row at most, while its draws repeat (a row whose grammar is small)
_EPS = 1e-9


@dataclass(frozen=True)
class Mutation:
    """The edits of one mutation, in the order they are applied."""

    edits: tuple[Edit, ...]

    @property
    def attack(self) -> bool:
        return any(SPECS[e.name].makes == "wrong" for e in self.edits)

    def described(self) -> list[str]:
        return [str(e) for e in self.edits]


@dataclass
class _Row:
    row: AuditRow
    subject: Subject
    base: str
    base_score: float = 0.0
    base_paid: bool = False
    mutations: list[tuple[Mutation, str]] | None = None
    scores: dict[str, Verdict] | None = None
    searches: list[tuple[str, int]] = field(default_factory=list)  # (seed key, examples) of each search


# ---- what a row's answer is ------------------------------------------------------------------------

def kind_of(traits: Traits) -> str | None:
    """The answer kind the spec reads (its first answer-reading part decides)."""
    for name, kind in (("tool_call", "call"), ("json", "json"), ("choice", "label"), ("ifeval", "response"),
                       ("reasoning_gym", "gym"), ("qa", "text"), ("math", "math")):
        if name in traits.kinds:
            return kind
    return None


def subjects(rows: Sequence[AuditRow], traits: Traits) -> list[Subject | None]:
    """Each row's subject with its candidate wrong values (not yet checked against the spec)."""
    kind = kind_of(traits)
    golds = [_gold(row, traits, kind) for row in rows]
    out: list[Subject | None] = []
    for i, row in enumerate(rows):
        gold = golds[i]
        if gold is None:
            out.append(None)
            continue
        others = [g for g in golds[i + 1:] + golds[:i] if g is not None and g != gold]
        out.append(_subject(row, traits, kind, gold, others))
    return out


def _gold(row: AuditRow, traits: Traits, kind: str | None) -> str | None:
    if kind == "json":
        from rewardsmith.adapters.audit.families_json import _MISSING, _reference, _text

        value = _reference(row, traits)
        return None if value is _MISSING else _text(value)
    if kind == "call":
        from rewardsmith.adapters.audit.families_tool_call import _read
        from rewardsmith.verifiers.tool_call.render import python_text

        read = _read(row, traits)
        return None if read is None else python_text(read.right)
    if kind == "response" or (kind is None and row.gold is None):
        return row.reference
    if kind == "gym":
        value = row.get(traits.answer_fields[0])
        return None if value is None or not str(value).strip() else str(value)
    return None if row.gold is None else row.gold.text


def _subject(row: AuditRow, traits: Traits, kind: str | None, gold: str, others: list[str]) -> Subject:
    candidates: list[str] = []
    if kind == "json":
        from rewardsmith.adapters.audit.families_json import _MISSING, _part, _reference, _text, wrong

        changed = wrong(_reference(row, traits))
        candidates += [] if changed is _MISSING else [_text(changed)]
        fenced = (part := _part(traits)) is not None and part.extract == "fenced"
        return Subject("json", gold, forms=FORMS["json_fenced" if fenced else "json"],
                       wrong=candidates + others[:6])
    if kind == "call":
        from rewardsmith.adapters.audit.families_tool_call import _read, _wrong_call
        from rewardsmith.verifiers.tool_call.render import hermes_text, python_text

        read = _read(row, traits)
        assert read is not None
        call = _wrong_call(read) if read.right else None
        candidates += [] if call is None else [python_text([call, *read.right[1:]])]
        forms = tuple(f for f in FORMS["call"] if f.fmt in read.forms) or FORMS["call"][:1]
        return Subject("call", gold, forms=forms, renderings={"python": gold, "hermes": hermes_text(read.right)},
                       wrong=candidates + others[:6])
    if kind == "response" or (kind is None and row.gold is None):
        return Subject("response", gold, forms=FORMS["response"], wrong=others[:6])
    if kind == "label":
        from rewardsmith.verifiers.choice.row import read_options

        choices = next((row.get(c) for c, _, _ in traits.choice_parts if row.get(c) is not None), None)
        read = read_options(choices)
        labels = () if isinstance(read, str) else read.labels
        return Subject("label", gold, forms=FORMS["label"], wrong=[label for label in labels if label != gold])
    if row.gold is not None:
        candidates += [w for k in range(4) if (w := row.gold.wrong(k)) is not None]
    sub_kind = kind if kind in ("gym", "text") else "math"
    return Subject(sub_kind, gold, forms=FORMS[sub_kind], wrong=list(dict.fromkeys(candidates + others[:6])))


# ---- hypothesis ------------------------------------------------------------------------------------

def mutations(subject: Subject) -> Any:
    """The hypothesis strategy of a subject's mutations: one to four right-preserving edits, or one
    wrong-making edit followed by up to three edits of either make."""
    from hypothesis import strategies as st

    right = [_edit(spec, subject) for spec in applicable(subject, "right")]
    wrong = [_edit(spec, subject) for spec in applicable(subject, "wrong")]
    branches = []
    if right:
        branches.append(st.lists(st.one_of(right), min_size=1, max_size=4).map(lambda es: Mutation(tuple(es))))
    if wrong:
        branches.append(st.tuples(st.one_of(wrong), st.lists(st.one_of(right + wrong), max_size=3))
                        .map(lambda t: Mutation((t[0], *t[1]))))
    return st.one_of(branches)


def _edit(spec: EditSpec, subject: Subject) -> Any:
    from hypothesis import strategies as st

    options = spec.options if spec.name != "form" else (tuple(str(i) for i in range(len(subject.forms))),)
    chosen = st.tuples(*(st.sampled_from(o) for o in options))
    wrong = st.sampled_from(subject.wrong) if spec.needs_wrong else st.just("")
    return st.builds(Edit, st.just(spec.name), chosen, wrong)


class _Flagged(Exception):
    """Raised by the shrinking property: this mutation is still flagged."""


def _search(strategy: Any, key: str, examples: int, test: Callable[[Mutation], None], shrink: bool) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as seeded

    @seeded(zlib.crc32(key.encode()))
    @settings(max_examples=examples, database=None, deadline=None, derandomize=False, print_blob=False,
              phases=(Phase.generate, Phase.shrink) if shrink else (Phase.generate,), report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(strategy)
    def run(mutation: Mutation) -> None:
        test(mutation)

    run()


def passes(key: str) -> list[str]:
    """The seeds of a row's searches: a row whose draws repeat gets more searches, each seeded anew."""
    return [key] + [f"{key}:pass{i}" for i in range(1, PASSES)]


def draw(subject: Subject, key: str, count: int,
         searches: list[tuple[str, int]] | None = None) -> list[tuple[Mutation, str]]:
    """``count`` distinct mutations of the subject (fewer when :data:`PASSES` searches repeat themselves),
    with their texts; ``searches`` receives each search's seed and size (to replay them)."""
    seen: dict[str, Mutation] = {}
    base_text = base(subject)

    def keep(mutation: Mutation) -> None:
        text = apply(subject, mutation.edits)
        if len(seen) < count and text != base_text and text not in seen:
            seen[text] = mutation

    for seeded in passes(key):
        examples = max(1, math.ceil((count - len(seen)) * _OVERDRAW))
        _search(mutations(subject), seeded, examples, keep, shrink=False)
        if searches is not None:
            searches.append((seeded, examples))
        if len(seen) >= count:
            break
    return [(m, text) for text, m in seen.items()]


# ---- the run ---------------------------------------------------------------------------------------

def fuzz(verifier: Verifier, rows: Sequence[AuditRow], traits: Traits, result: Any, *, total: int, seed: int = 0,
         threshold: float = 0.0, batch_rows: int = 8, on_record: Callable[[dict[str, Any]], None] | None = None,
         progress: Callable[[int], None] | None = None, record: Callable[..., dict[str, Any]] | None = None,
         example: Callable[[AuditRow, Any, Verdict], dict[str, Any]] | None = None) -> None:
    """Draw ``total`` mutations spread over ``rows``, score them, tally into ``result`` (the report's
    ``fuzz`` line) and shrink up to :data:`EXAMPLES_SHRUNK` hacks and false negatives."""
    made = subjects(rows, traits)
    result.not_applicable += sum(s is None for s in made)
    live = [_Row(row, s, base(s)) for row, s in zip(rows, made, strict=True) if s is not None]
    _check_wrong_values(verifier, live, threshold)
    result.rows = len(live)
    quotas = [total // len(live) + (i < total % len(live)) for i in range(len(live))] if live else []
    # mutations to shrink: per kind, each with edits of names no earlier one has (so the examples differ)
    flagged: dict[str, list[tuple[_Row, Mutation, frozenset[str]]]] = {"hack": [], "false negative": []}
    done = len(rows) - len(live)
    for start in range(0, len(live), batch_rows):
        chunk = live[start:start + batch_rows]
        for i, item in enumerate(chunk, start):
            item.mutations = draw(item.subject, f"{seed}:{item.row.line}", quotas[i], item.searches)
        samples = [_sample(item.row, text) for item in chunk for _, text in item.mutations or ()]
        verdicts = iter(verifier.verify_batch(samples) if samples else [])
        for item in chunk:
            item.scores = {}
            for mutation, text in item.mutations or ():
                verdict = next(verdicts)
                item.scores[text] = verdict
                what = _tally(result, item, mutation, verdict, threshold)
                if what and len(flagged[what]) < EXAMPLES_SHRUNK:
                    names = _signature(mutation)
                    if not any(names & taken for _, _, taken in flagged[what]):
                        flagged[what].append((item, mutation, names))
                if on_record is not None and record is not None:
                    on_record({**record(item.row, NAME, "attack" if mutation.attack else "rewrite",
                                        " + ".join(mutation.described()), text, verdict, what is not None),
                               "edits": [e.name for e in mutation.edits]})
        done += len(chunk)
        if progress is not None:
            progress(done)
            done = 0
    if progress is not None and done:
        progress(done)
    for what, found in flagged.items():
        for item, mutation, _ in found:
            result.examples.append(_shrunk(verifier, item, mutation, what, threshold, example))


def _signature(mutation: Mutation) -> frozenset[str]:
    """The names of the edits that can make the mutation flagged: its wrong-making ones (for an attack),
    else all of them."""
    wrong = frozenset(e.name for e in mutation.edits if SPECS[e.name].makes == "wrong")
    return wrong or frozenset(e.name for e in mutation.edits)


def _sample(row: AuditRow, text: str) -> Sample:
    return Sample(prompt=row.prompt, completion=text, fields=row.fields)


def _check_wrong_values(verifier: Verifier, live: list[_Row], threshold: float) -> None:
    """Score each row's base completion and each candidate W stated cleanly; keep the W the spec pays
    nothing for (up to :data:`WRONG_KEPT`): a mutation stating W is then wrong by the spec's own verdict."""
    samples = []
    for item in live:
        samples.append(_sample(item.row, item.base))
        samples.extend(_sample(item.row, clean(item.subject, w)) for w in item.subject.wrong)
    verdicts = iter(verifier.verify_batch(samples) if samples else [])
    for item in live:
        first = next(verdicts)
        item.base_score = first.score
        item.base_paid = first.status != "error" and first.score > threshold
        kept = [w for w in item.subject.wrong
                if (v := next(verdicts)).status != "error" and v.score <= threshold and w != item.subject.gold]
        item.subject.wrong = kept[:WRONG_KEPT]


def _tally(result: Any, item: _Row, mutation: Mutation, verdict: Verdict, threshold: float) -> str | None:
    result.cases += 1
    if verdict.status == "error":
        result.errors += 1
        return None
    result.paid += verdict.score
    if mutation.attack:
        if verdict.score > threshold:
            result.hacks += 1
            return "hack"
        return None
    if not item.base_paid:
        result.unjudged += 1
        return None
    if verdict.score < item.base_score - _EPS:
        result.false_negatives += 1
        return "false negative"
    return None


def _is(what: str, item: _Row, mutation: Mutation, verdict: Verdict, threshold: float) -> bool:
    if verdict.status == "error" or mutation.attack != (what == "hack"):
        return False
    return verdict.score > threshold if what == "hack" else verdict.score < item.base_score - _EPS


def _shrunk(verifier: Verifier, item: _Row, found: Mutation, what: str, threshold: float,
            example: Callable[[AuditRow, Any, Verdict], dict[str, Any]] | None) -> dict[str, Any]:
    """Replay the row's seeded search with the property in place (flagged, with an edit named as one of
    ``found``'s) and let hypothesis shrink the first such mutation; the smallest one seen (fewest edits,
    then shortest text) is kept."""
    wanted = _signature(found)
    scores = dict(item.scores or {})
    found_text = apply(item.subject, found.edits)
    best = [(found, found_text, scores[found_text])]
    calls = [0]

    def test(mutation: Mutation) -> None:
        text = apply(item.subject, mutation.edits)
        verdict = scores.get(text)
        if verdict is None:
            if calls[0] >= SHRINK_CALLS or text == item.base:
                return
            calls[0] += 1
            verdict = scores[text] = verifier.verify_batch([_sample(item.row, text)])[0]
        if _is(what, item, mutation, verdict, threshold) and wanted & {e.name for e in mutation.edits}:
            if (len(mutation.edits), len(text)) < (len(best[0][0].edits), len(best[0][1])):
                best[0] = (mutation, text, verdict)
            raise _Flagged

    for seeded, examples in item.searches:  # the row's searches replayed in turn, until one raises
        try:
            _search(mutations(item.subject), seeded, examples, test, shrink=True)
        except _Flagged:  # hypothesis re-raises the minimal example's failure at the end
            break
    mutation, text, verdict = best[0]
    shown = example(item.row, text, verdict) if example is not None else {"completion": text, "score": verdict.score}
    return {**shown, "variant": what, "edits": mutation.described(), "found": found_text,
            "found_edits": found.described(), "base_score": item.base_score}
