"""The ``reasoning_gym`` verifier: reasoning-gym's procedural tasks, scored by each dataset's own scorer,
behind rewardsmith's reading of the answer and a safe default for the scorers that pay too easily.

Fields read: ``answer`` (``answer_field``; the generator's gold, ``null`` for puzzles with many
solutions), ``metadata`` (``metadata_field``; the generator's metadata, which the scorers read) and
the dataset name at ``metadata.source_dataset`` (``dataset_field``, or the spec's ``dataset``); the
prompt becomes the entry's ``question``. :func:`rewardsmith.verifiers.reasoning_gym.rows.make_rows`
writes such rows.

Reading: the content of the ``<answer>…</answer>`` tags reasoning-gym's prompts ask for (the whole
content: grids and move lists span lines), outside ``<think>`` and what a reader never sees
(:func:`~rewardsmith.verifiers.reading.answer_region`); tags that differ are a hedge and score 0.
``answer_from`` may add ``boxed``/``phrase``/``bare`` as fallbacks, read by
:mod:`~rewardsmith.verifiers.reading.statements`.

Scoring: the dataset's ``score_answer`` on the rebuilt entry, never on this host: reasoning-gym's
scorers hand some answers to ``eval`` and sympy's ``parse_expr``, so they run in the sandbox
(:mod:`rewardsmith.verifiers.isolated`: Docker, or local bubblewrap), each answer in a fresh process
behind an evaluation boundary that turns text into values only through a closed expression grammar.
Only a full score pays unless ``partial`` (many scorers pay 0.01 or 0.05 for any answer, or a
substring ratio); a dataset the survey (:mod:`.survey`, ``survey.json``) found paying some cheat in
full must also pass the stricter check (``unsafe``). A scorer that raises, runs past ``timeout_s`` or
dies on the answer scores 0; one that cannot read the row even for the gold makes the row
``invalid_input``; the sandbox failing, or lacking reasoning-gym, is ``error``.

``import reasoning_gym`` costs about 2.5 s: it happens in each sandbox job, never at import or build.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from rewardsmith.verifiers.core import (
    MISSING,
    Sample,
    Verdict,
    Verifier,
    error,
    invalid_input,
    lookup,
    read_completion,
    short,
)
from rewardsmith.verifiers.isolated import Scored, ScoreItem, score_isolated
from rewardsmith.verifiers.json_value import duplicate_key
from rewardsmith.verifiers.options import NonEmpty, Range, Unique, declare, option
from rewardsmith.verifiers.reading import PROMPT_OPENS_THINK_DOC, Region, answer_region, hinted
from rewardsmith.verifiers.reading.code_blocks import line_feeds
from rewardsmith.verifiers.reading.frame import sentence_start, unframed, working
from rewardsmith.verifiers.reading.statements import (
    FORMS,
    MAX_STATEMENTS,
    answer_tags,
    final_answer,
    offers,
    plain,
)
from rewardsmith.verifiers.reasoning_gym.policy import (
    UNSAFE,
    grammar_problem,
    number_problem,
    squash,
    stricter_check,
    tuple_paths,
    unwrapped,
    working_number,
)
from rewardsmith.verifiers.reasoning_gym.survey import FULL
from rewardsmith.verifiers.registry import register

Form = Literal["answer_tag", "boxed", "phrase", "bare"]
_SHOWN = 200


def read_answer(text: str | Region, forms: tuple[str, ...]) -> tuple[str | None, str]:
    """(the one committed answer or None, why none): every answer tag's whole content, else the other forms."""
    region = text.text if isinstance(text, Region) else answer_region(text, keep_style=True).text
    said: list[str] = []
    refused = ""  # why the last statement is no commitment (reading.frame)
    if "answer_tag" in forms:
        tags = answer_tags(region)
        said = [line_feeds(region[start:end]).strip() for start, end in tags]  # CRLF is a line end, as shown
        if said:
            beside, refused = _beside_tags(region, tags)
            said += beside
    if not said and any(f != "answer_tag" for f in forms):
        # Every form is read, so a box followed by "the final answer is 157" is seen as the hedge it is;
        # the deciding form must be one the spec names.
        found = final_answer(Region(region), tuple(f for f in FORMS if f != "answer_tag"))
        said = [plain(t) for t in found.texts] if found and found.form in forms else []
        refused = found.unframed if said and found else ""
    if not said:
        return None, f"no answer found (read from {', '.join(forms)})"
    if len(said) > MAX_STATEMENTS:
        return None, f"more than {MAX_STATEMENTS} answers stated"
    distinct = list(dict.fromkeys(squash(s) for s in said if s.strip()))
    if not distinct:
        return None, "the answer is empty"
    if len(distinct) > 1:
        return None, "several different answers (" + " | ".join(short(d, 30) for d in distinct[:4]) + "): a hedge"
    twice = duplicate_key(said[-1])
    if twice:
        return None, f"several different answers (a JSON {twice}): a hedge"
    if refused:
        return None, refused
    return said[-1], ""


def _beside_tags(region: str, tags: list[tuple[int, int]]) -> tuple[list[str], str]:
    """What the completion states beside its answer tags, read by the rule every family shares: a box or a
    stated answer anywhere in the answer region, and a value offered right after a tag ("The answer is 157.
    <answer>156</answer>" and "<answer>156</answer>, or maybe 157" hedge). A tag's own lines are its answer, whole.
    Also why the last statement (the last tag, or a restatement after it) is no commitment, or ``""``."""
    blanked, cursor = [], 0
    for start, end in tags:
        blanked += [region[cursor:start], " " * (end - start)]
        cursor = end
    outside = final_answer(Region("".join([*blanked, region[cursor:]])), ("boxed", "phrase"))
    stated = [plain(s.text) for s in outside.statements] if outside else []  # before the tags as after them
    last_tag = tags[-1]
    if outside and any(s.start > last_tag[1] for s in outside.statements if s.form != "offer"):
        refused = outside.unframed  # "<answer>156</answer> The answer is 156.": the restatement is the last
    else:
        refused = unframed(region, last_tag[0], last_tag[1], tags[:-1])
    return stated + [plain(offered) for _, end in tags for offered in offers(region, end)], refused


@register("reasoning_gym")
@declare
class ReasoningGymVerifier(Verifier):
    """reasoning-gym's 100+ procedural tasks, each scored by its own scorer, read and paid strictly.

    1.0 when the one committed answer earns the scorer's full score (and, for a dataset whose scorer
    pays attacks, passes the stricter check); 0 otherwise. ``details`` holds the dataset, the answer
    read and the scorer's raw score.
    """

    name = "reasoning_gym"

    dataset: str | None = option(None, "the dataset of every row (otherwise read from dataset_field)")
    dataset_field: str = option("metadata.source_dataset", "the field holding the row's dataset name")
    answer_field: str = option("answer", "the field holding the generator's gold answer (may be null)")
    metadata_field: str = option("metadata", "the field holding the generator's metadata, which the scorers read")
    config_field: str | None = option(
        "config", "the field holding the generator options the row was made with (absent: the defaults)"
    )
    answer_from: Annotated[tuple[Form, ...], NonEmpty(), Unique()] = option(
        ("answer_tag",), "where the answer is read, strongest first: answer_tag, boxed, phrase, bare"
    )
    prompt_opens_think: bool = option(False, PROMPT_OPENS_THINK_DOC)
    partial: bool = option(False, "pay the scorer's partial credit (below 1.0) instead of 0")
    min_score: Annotated[float, Range(ge=0, le=1)] = option(0.0, "with partial: a score below this pays 0")
    unsafe: Literal["exact", "refuse", "trust"] = option(
        "exact", "datasets whose scorer pays attacks: also require the exact gold, refuse the row, or trust the scorer"
    )
    max_answer_chars: Annotated[int, Range(ge=1)] = option(10_000, "a longer answer scores 0 unscored")
    timeout_s: Annotated[float, Range(gt=0)] = option(10.0, "wall-clock limit per answer scored in the sandbox")
    memory_mb: Annotated[int, Range(ge=64)] = option(512, "memory an answer's scoring process may take")
    backend: Literal["auto", "docker", "local"] = option(
        "auto", "the sandbox the scorers run in: docker when an engine answers, else local (bubblewrap)"
    )
    workers: Annotated[int, Range(ge=1)] | None = option(
        None, "sandbox jobs a batch is split into (default: the sandbox's concurrency); each imports reasoning-gym"
    )

    def __post_init__(self) -> None:
        self._backend_override: Any = None  # tests hand in a backend object here (not pickled)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_backend_override"] = None
        return state

    def start(self, wait: bool = False) -> None:
        """Start the sandbox now (with ``wait``, score one row there) instead of at the first batch."""
        backend = self._backend()
        if wait and not isinstance(backend, str):
            entry = {"question": "", "answer": "0", "metadata": {}}
            score_isolated([ScoreItem("chain_sum", "0", entry)], "reasoning_gym", backend, jobs=1)

    def _backend(self) -> Any:
        """The sandbox backend, or a sentence saying why there is none."""
        if self._backend_override is not None:
            return self._backend_override
        from rewardsmith.sandbox.backend import get_backend

        try:
            return get_backend(self.backend)
        except Exception as exc:  # e.g. backend: docker with no engine: error verdicts, not a crash
            return f"{type(exc).__name__}: {exc}"

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        out: list[Verdict | None] = [None] * len(samples)
        pending: list[tuple[int, ScoreItem, dict[str, Any], Region]] = []
        for i, sample in enumerate(samples):
            prepared = self._prepare(sample)
            if isinstance(prepared, Verdict):
                out[i] = prepared
            else:
                pending.append((i, *prepared))
        # GRPO groups repeat completions: each distinct (dataset, answer, entry, config) is scored once.
        index_of: dict[str, int] = {}
        unique: list[ScoreItem] = []
        slots: list[int] = []
        for _, item, _, _ in pending:
            key = _identity(item)
            if key is not None and key in index_of:
                slots.append(index_of[key])
                continue
            if key is not None:
                index_of[key] = len(unique)
            slots.append(len(unique))
            unique.append(item)
        results = self._score(unique)
        for (i, item, details, region), slot in zip(pending, slots, strict=True):
            out[i] = hinted(self._judge(item, details, results[slot]), region)
        return [v if v is not None else error("no verdict (a verifier bug)") for v in out]

    def _prepare(self, sample: Sample) -> tuple[ScoreItem, dict[str, Any], Region] | Verdict:
        """The scoring item of a sample, or the verdict that needs no scorer (bad row, no answer, hedge)."""
        text = read_completion(sample)
        if isinstance(text, Verdict):
            return text
        metadata = sample.get(self.metadata_field)
        if not isinstance(metadata, Mapping):
            return invalid_input(
                f"sample has no {self.metadata_field!r} mapping (the generator's metadata)",
                missing_field=self.metadata_field,
            )
        name = self.dataset or sample.get(self.dataset_field)
        if not isinstance(name, str) or not name:
            return invalid_input(
                f"sample has no dataset name at {self.dataset_field!r}", missing_field=self.dataset_field
            )
        gold = lookup(sample.fields, self.answer_field)
        if gold is MISSING:
            return invalid_input(
                f"sample has no {self.answer_field!r} field (null is fine for many-solution puzzles)",
                missing_field=self.answer_field,
            )
        details: dict[str, Any] = {"dataset": name}
        if name in UNSAFE:
            details["unsafe"] = UNSAFE[name]
            if self.unsafe == "refuse":
                return invalid_input(
                    f"{name}'s scorer pays attacks in full ({UNSAFE[name]}); unsafe: refuse", **details
                )
        region = answer_region(text, self.prompt_opens_think, keep_style=True)  # the scorer reads it raw
        answer, why = read_answer(region, self.answer_from)
        if answer is None:
            hedge = why.startswith(("several", "more than"))
            return hinted(
                Verdict(score=0.0, correct=False, status="ok" if hedge else "no_answer", feedback=why, details=details),
                region,
            )
        answer = unwrapped(answer, gold)
        details["answer"] = short(answer, _SHOWN)
        off_grammar = grammar_problem(name, answer) or number_problem(gold, answer)
        if off_grammar:
            return Verdict(score=0.0, correct=False, feedback=off_grammar, details=details)
        if isinstance(gold, str) and number_problem("0", answer) is None and "<answer" in region.text.lower():
            opened = sentence_start(region.text, region.text.lower().index("<answer"))
            other = working_number(working(region.text, opened), answer, sample.prompt_text)
            if other is not None:
                why = f"a sentence of the working ends on {other}, and the answer is {short(answer, 40)}: a hedge"
                return Verdict(score=0.0, correct=False, feedback=why, details=details)
        if len(answer) > self.max_answer_chars:
            return Verdict(
                score=0.0,
                correct=False,
                feedback=f"the answer is longer than {self.max_answer_chars} characters",
                details=details,
            )
        config = sample.get(self.config_field) if self.config_field else None
        if config is not None and not isinstance(config, Mapping):
            return invalid_input(f"{self.config_field!r} should hold the generator's options as a mapping", **details)
        entry = {"question": sample.prompt_text, "answer": gold, "metadata": dict(metadata)}
        return ScoreItem(name, answer, entry, dict(config) if config else None, tuple_paths(name)), details, region

    def _score(self, items: list[ScoreItem]) -> list[Scored]:
        if not items:
            return []
        backend = self._backend()
        if isinstance(backend, str):
            return [Scored("error", f"no sandbox to run reasoning-gym's scorers in: {backend}")] * len(items)
        return score_isolated(
            items, "reasoning_gym", backend, timeout_s=self.timeout_s, memory_mb=self.memory_mb, jobs=self.workers
        )

    def _judge(self, item: ScoreItem, details: dict[str, Any], result: Scored) -> Verdict:
        kind, value = result.kind, result.value
        if kind == "missing":
            return error(f"{value}: rebuild the sandbox image (sandbox/image/build_offline.sh --force), or for "
                         "the local sandbox run sandbox/image/install_scorers.sh /opt/rewardsmith/scorers", **details)
        if kind == "error":
            return error(value, **details)
        if kind == "bad_row":
            return invalid_input(value, **details)
        if kind == "timeout":
            return Verdict(
                score=0.0,
                correct=False,
                status="timeout",
                elapsed_s=self.timeout_s,
                details=details,
                feedback=f"the scorer took longer than {self.timeout_s:g}s",
            )
        if kind in ("raised", "crash"):
            return Verdict(
                score=0.0, correct=False, details=details, feedback=f"the scorer failed on the answer: {value}"
            )
        if kind != "score":
            return error(f"reasoning_gym scoring failed: {value}", **details)
        raw = value if value == value else 0.0  # NaN pays nothing
        raw = min(max(raw, 0.0), 1.0)
        details["raw_score"] = raw
        if raw >= FULL:
            problem = None
            if item.name in UNSAFE and self.unsafe == "exact":
                problem = stricter_check(item.name, item.answer, item.entry["answer"], item.entry["metadata"])
            if problem:
                return Verdict(score=0.0, correct=False, details=details, feedback=f"{problem}: {UNSAFE[item.name]}")
            return Verdict(score=1.0, correct=True, details=details)
        score = raw if self.partial and raw >= self.min_score else 0.0
        feedback = f"the scorer paid {raw:.3g}"
        if raw > 0 and not score:
            feedback += f" (below min_score {self.min_score:g})" if self.partial else " (partial credit is off)"
        return Verdict(score=score, correct=False, details=details, feedback=feedback)


def _identity(item: ScoreItem) -> str | None:
    """What makes two items the same scoring (None when the entry cannot be written as JSON)."""
    try:
        return json.dumps([item.name, item.answer, item.entry, item.config], sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None
