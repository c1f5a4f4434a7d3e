"""The ``agent`` reward: one definition of a rollout's reward, with the guards RL needs, paid the same everywhere.

Terms, each placed at the policy turn that earned it (:mod:`~rewardsmith.verifiers.agent.turns`):

* ``answer``: any reward spec, read at the rollout's final answer (``math``, ``qa``, a judge...), at the
  last turn. A rollout that stopped other than ``done`` (``max_turns``, ``max_length``, ``tool_limit``,
  ``error``) earns no positive outcome, whatever the spec says;
* ``call_reward``: paid for each well-formed call the environment recorded as ``ok``, at the turn that made
  it, up to ``call_cap`` per rollout (a cap is required: per-call rewards are farmed without one). A call
  whose status nobody recorded (``unknown``) earns nothing;
* ``invalid_penalty``: taken for each malformed call (arguments that are not one JSON object, no name) and
  each call the environment recorded as ``error``, ``unknown_tool``, ``bad_arguments`` or ``timeout``, up
  to ``invalid_cap`` (none: no cap), so a loop of invalid calls to the turn limit costs more the longer it
  runs; a ``truncated`` result is the environment's limit, not the policy's fault;
* ``turn``: a reward spec scored on each turn's text (a format check), paid as its **mean** over the turns
  times ``turn_weight``: writing the format every turn earns what writing it once does.

The scalar is the turn vector reduced by ``reduction`` (``sum``, ``last``, ``discounted`` with ``gamma``);
``details["turns"]`` carries the vector so a trainer crediting turns pays the same reward. A string
completion is a rollout of one turn. Statuses: an ``error`` in a term makes the verdict an ``error`` (an
outage is never a silent 0); a record that cannot be read is ``invalid_input``.
"""

from __future__ import annotations

from typing import Annotated, Any

from rewardsmith.verifiers.agent.turns import Reduction, record, reduce
from rewardsmith.verifiers.core import (
    TRAJECTORY_FIELD,
    Sample,
    Verdict,
    Verifier,
    completion_problem,
)
from rewardsmith.verifiers.options import Range, Spec, SpecError, declare, option
from rewardsmith.verifiers.registry import register
from rewardsmith.verifiers.trajectory import CallRecord

__all__ = ["AgentReward"]

# Recorded statuses that are the policy's fault.
INVALID_STATUSES = frozenset({"error", "unknown_tool", "bad_arguments", "timeout"})
_PRECEDENCE = ("error", "timeout", "invalid_input", "no_answer", "ok")


@register("agent")
@declare
class AgentReward(Verifier):
    """A rollout's reward: an outcome read at the final answer, capped per-call and per-turn terms, each at
    the turn that earned it, reduced to one scalar. The module docstring gives every guard."""

    name = "agent"

    answer: Spec | None = option(None, "the outcome reward, read at the final answer; no positive outcome unless "
                                       "the rollout stopped as done")
    call_reward: Annotated[float, Range(ge=0)] = option(0.0, "paid for each well-formed call recorded ok")
    call_cap: Annotated[float, Range(ge=0)] | None = option(None, "the most calls may earn in one rollout "
                                                                 "(required with call_reward)")
    invalid_penalty: Annotated[float, Range(ge=0)] = option(0.0, "taken for each malformed call or call "
                                                                 "recorded error, unknown_tool, bad_arguments "
                                                                 "or timeout")
    invalid_cap: Annotated[float, Range(ge=0)] | None = option(None, "the most invalid calls may cost in one "
                                                                    "rollout (none: no cap)")
    turn: Spec | None = option(None, "a reward scored on each turn's text, paid as its mean over the turns")
    turn_weight: Annotated[float, Range(ge=0)] = option(1.0, "what the turn term's mean is worth")
    reduction: Reduction = option("sum", "how the turn vector becomes the scalar: sum, last, discounted")
    gamma: Annotated[float, Range(gt=0, le=1)] = option(1.0, "the discount of reduction: discounted")

    def __post_init__(self) -> None:
        if self.call_reward > 0 and self.call_cap is None:
            raise SpecError("call_reward needs call_cap: a per-call reward with no cap per rollout is farmed by "
                            "calling more", ("call_cap",))
        if self.answer is None and self.turn is None and not self.call_reward and not self.invalid_penalty:
            raise SpecError("an agent reward needs a term: answer, turn, call_reward or invalid_penalty", ("answer",))

    def components(self) -> dict[str, Verifier]:
        parts = {"answer": self.answer, "turn": self.turn}
        return {name: part for name, part in parts.items() if part is not None}

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        rollouts: list[list[str] | Verdict] = [_turn_texts(s) for s in samples]
        readable = [i for i, r in enumerate(rollouts) if not isinstance(r, Verdict)]
        answers = dict(zip(readable, self.answer.verify_batch([samples[i] for i in readable]), strict=True)
                       ) if self.answer is not None else {}
        per_row: dict[int, list[Verdict]] = {}
        if self.turn is not None:
            turn_samples = [(i, Sample(prompt=samples[i].prompt, completion=text, fields=_plain(samples[i].fields)))
                            for i in readable for text in rollouts[i]]  # type: ignore[union-attr]
            for (i, _), verdict in zip(turn_samples, self.turn.verify_batch([s for _, s in turn_samples]),
                                       strict=True):
                per_row.setdefault(i, []).append(verdict)
        out = []
        for i, sample in enumerate(samples):
            rollout = rollouts[i]
            if isinstance(rollout, Verdict):
                out.append(rollout)
                continue
            out.append(self._scored(sample, len(rollout), answers.get(i), per_row.get(i, [])))
        return out

    def _scored(self, sample: Sample, n_turns: int, answer: Verdict | None, turns: list[Verdict]) -> Verdict:
        trajectory = sample.trajectory()
        rewards = [0.0] * n_turns
        parts: dict[str, Verdict] = {}
        components: dict[str, float | None] = {}
        feedback: list[str] = []
        unfinished = trajectory is not None and trajectory.stop_reason not in (None, "done")
        if answer is not None:
            outcome = answer.score
            if unfinished and outcome > 0:
                outcome = 0.0
                feedback.append(f"stopped at {trajectory.stop_reason}: no positive outcome")  # type: ignore[union-attr]
            rewards[-1] += outcome
            parts["answer"], components["answer"] = answer, None if answer.status == "error" else outcome
            if answer.feedback:
                feedback.append(f"answer: {answer.feedback}")
        records = trajectory.calls() if trajectory is not None else []
        index = trajectory.turn_numbers() if trajectory is not None else {}
        if self.call_reward:
            earned = self._calls(records, index, rewards)
            components["calls"] = earned
        if self.invalid_penalty:
            cost, invalid = self._invalid(records, index, rewards)
            components["invalid_calls"] = -cost
            if invalid:
                feedback.append(f"{invalid} invalid call{'s' if invalid > 1 else ''}")
        if self.turn is not None:
            mean = sum(v.score for v in turns) / len(turns) if turns else 0.0
            for t, verdict in enumerate(turns):
                rewards[t] += self.turn_weight * verdict.score / len(turns)
            worst = min(turns, key=lambda v: _PRECEDENCE.index(v.status)) if turns else None
            if worst is not None:
                parts["turn"] = worst
            components["turn"] = None if any(v.status == "error" for v in turns) else self.turn_weight * mean
        score = reduce(rewards, self.reduction, self.gamma)
        statuses = [v.status for v in parts.values()] + [v.status for v in turns]
        status = min(statuses, key=_PRECEDENCE.index, default="ok")
        return Verdict(
            score=score,
            correct=None if answer is None else False if unfinished and answer.correct else answer.correct,
            status=status,  # type: ignore[arg-type]
            feedback="; ".join(feedback),
            details={"turns": record(rewards, self.reduction, self.gamma), "stop_reason": getattr(
                trajectory, "stop_reason", None), "calls": [r.status for r in records]},
            elapsed_s=sum(v.elapsed_s for v in parts.values()) + sum(v.elapsed_s for v in turns),
            components=components,
            parts=parts,
        )

    def _calls(self, records: list[CallRecord], index: dict[int, int], rewards: list[float]) -> float:
        earned = 0.0
        cap = self.call_cap or 0.0
        for r in records:
            if r.call.well_formed and r.status == "ok" and earned < cap:
                pay = min(self.call_reward, cap - earned)
                earned += pay
                rewards[index[r.turn]] += pay
        return earned

    def _invalid(self, records: list[CallRecord], index: dict[int, int], rewards: list[float]) -> tuple[float, int]:
        cost, invalid = 0.0, 0
        cap = float("inf") if self.invalid_cap is None else self.invalid_cap
        for r in records:
            if r.call.well_formed and r.status not in INVALID_STATUSES:
                continue
            invalid += 1
            take = min(self.invalid_penalty, cap - cost)
            if take > 0:
                cost += take
                rewards[index[r.turn]] -= take
        return cost, invalid


def _turn_texts(sample: Sample) -> list[str] | Verdict:
    """Each policy turn's text (a string completion is one turn), or the verdict saying why the record cannot
    be read."""
    problem = completion_problem(sample)
    if problem is not None:
        return problem
    trajectory = sample.trajectory()
    if trajectory is None:
        return [sample.completion]  # type: ignore[list-item]
    turns = trajectory.turns()
    return ["\n\n".join(m.content for m in turn) for turn in turns] or [""]


def _plain(fields: dict[str, Any]) -> dict[str, Any]:
    """The row's fields for scoring one turn's text alone (the rollout's record stays with the rollout)."""
    return {k: v for k, v in fields.items() if k != TRAJECTORY_FIELD}
