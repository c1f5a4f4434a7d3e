"""Step labels from verifiers: Monte-Carlo rollouts (Math-Shepherd style), optionally checked by a judge.

For each step prefix of a solution, ``k`` continuations are sampled from a policy and their
final answers scored with any registry spec; the step is labelled with the fraction that reach a
correct answer (``soft``) or with whether any does (``hard``, Math-Shepherd's "hard estimation").
The last step needs no rollout: its label is the verdict on the whole solution. Prefixes of a
whole batch of rows are generated together; with ``stop_at_first_wrong`` they are generated round
by round (step 1 of every row, then step 2 of the rows still going), so no rollout is spent past a
step already labelled wrong, and the row is cut after that step.

Monte-Carlo labels are noisy (a lucky rollout from a wrong prefix, an unlucky one from a right
prefix). With ``judge``, a second opinion labels each prefix through the ``judge`` verifier
(``correct`` of the judge's verdict on the prefix); ``agree_only`` keeps each row only up to the
first step where the two disagree, and drops a row whose first step they disagree on.

A row whose rollouts could not be scored (``status=error``: an outage) is reported as an error,
so ``rewardsmith label steps --retry-errors`` redoes it; nothing is labelled from a missing score.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.reward_models.policy import Policy
from rewardsmith.reward_models.sampling import SamplingSettings
from rewardsmith.reward_models.steps import StepSplitter
from rewardsmith.verifiers import Sample, Verdict, Verifier
from rewardsmith.verifiers.wording import plural

Mode = Literal["soft", "hard"]


@dataclass
class StepLabelConfig:
    k: int = 8
    mode: Mode = "soft"
    stop_at_first_wrong: bool = False
    separator: str = "\n\n"
    sampling: SamplingSettings = field(default_factory=lambda: SamplingSettings(temperature=0.7, seed=0))
    agree_only: bool = False
    wrong_below: float = 0.5  # a soft label below this counts as wrong (stopping, agreement)
    generate: bool = False  # a row without a solution gets one sampled from the policy first


@dataclass
class RowLabels:
    """The outcome for one row: steps and labels, or why there are none."""

    status: str  # ok | error | invalid_input | no_answer
    steps: list[str] = field(default_factory=list)
    labels: list[float] = field(default_factory=list)
    mc_labels: list[float] = field(default_factory=list)
    judge_labels: list[float | None] = field(default_factory=list)
    feedback: str = ""
    rollouts: int = 0
    seconds: float = 0.0
    solution: str | None = None  # the solution labelled, when the policy wrote it

    def verdict(self) -> Verdict:
        """As a scoring job records it: score = share of steps labelled right, ``correct`` = all are."""
        if self.status != "ok":
            return Verdict(score=0.0, correct=None, status=self.status, feedback=self.feedback,  # type: ignore[arg-type]
                           elapsed_s=self.seconds)
        good = [v >= 0.5 for v in self.labels]
        details: dict[str, Any] = {"steps": len(self.steps), "rollouts": self.rollouts,
                                   "seconds_per_prefix": self.seconds / max(len(self.steps), 1)}
        return Verdict(score=sum(good) / len(good) if good else 0.0, correct=all(good) if good else None,
                       status="ok", feedback=self.feedback, details=details, elapsed_s=self.seconds)


class StepLabeler:
    """Labels the steps of a batch of rows (``prompt``, ``completion`` = the solution, and the
    fields ``reward`` reads, e.g. ``answer``)."""

    def __init__(self, policy: Policy, reward: Verifier, config: StepLabelConfig,
                 judge: Verifier | None = None) -> None:
        self.policy = policy
        self.reward = reward
        self.judge = judge
        self.config = config
        self.splitter = StepSplitter(config.separator)

    def label(self, rows: Sequence[Mapping[str, Any]]) -> list[RowLabels]:
        start = time.perf_counter()
        results: list[RowLabels | None] = [None] * len(rows)
        steps: dict[int, list[str]] = {}
        solutions = self._solutions(rows)
        for i, row in enumerate(rows):
            solution = solutions.get(i, row.get("completion"))
            if not isinstance(solution, str):
                results[i] = RowLabels("invalid_input", feedback="the row has no solution to label (`completion`)")
                continue
            pieces = self.splitter.split(solution)
            if not pieces:
                results[i] = RowLabels("invalid_input", feedback="the solution has no step")
                continue
            steps[i] = pieces
        finals = self._final_verdicts(rows, steps)
        mc: dict[int, list[float | None]] = {i: [None] * len(s) for i, s in steps.items()}
        failed: dict[int, str] = {}
        for i, verdict in finals.items():
            if verdict.status in ("error", "invalid_input"):
                failed[i] = f"{verdict.status}: {verdict.feedback}"
            else:
                mc[i][-1] = 1.0 if verdict.correct else 0.0
        alive = {i for i in steps if i not in failed}
        rollouts: dict[int, int] = dict.fromkeys(steps, 0)
        depth = 0
        max_depth = max((len(s) for s in steps.values()), default=0) - 1
        while alive and depth < max_depth:
            if self.config.stop_at_first_wrong:
                todo = [(i, depth) for i in sorted(alive) if depth < len(steps[i]) - 1]
            else:
                todo = [(i, d) for i in sorted(alive) for d in range(len(steps[i]) - 1)]
            if not todo:
                break
            for (i, d), value in zip(todo, self._rollout_labels(rows, steps, todo, failed), strict=True):
                rollouts[i] += self.config.k
                mc[i][d] = value
            alive -= set(failed)
            if self.config.stop_at_first_wrong:
                alive = {i for i in alive if mc[i][depth] is None or mc[i][depth] >= self.config.wrong_below}
                depth += 1
            else:
                break
        judged = self._judge_labels(rows, steps, failed) if self.judge is not None else {}
        elapsed = time.perf_counter() - start
        prefixes = sum(len(s) for s in steps.values()) or 1
        for i, pieces in steps.items():
            if i in failed:
                status = "error" if failed[i].startswith("error") else "invalid_input"
                results[i] = RowLabels(status, feedback=failed[i], seconds=elapsed * len(pieces) / prefixes)
                continue
            results[i] = self._finish(pieces, mc[i], judged.get(i), rollouts[i], elapsed * len(pieces) / prefixes)
        for i, solution in solutions.items():
            if results[i] is not None:
                results[i].solution = solution  # type: ignore[union-attr]
        return [r if r is not None else RowLabels("error", feedback="not labelled") for r in results]

    def _solutions(self, rows: Sequence[Mapping[str, Any]]) -> dict[int, str]:
        """Solutions sampled from the policy for the rows that have none (``generate``)."""
        if not self.config.generate:
            return {}
        missing = [i for i, row in enumerate(rows) if row.get("completion") is None]
        if not missing:
            return {}
        texts = [self.policy.render(rows[i].get("prompt", "")) for i in missing]
        sampled = self.policy.continue_texts(texts, 1, self.config.sampling)
        return {i: out[0] for i, out in zip(missing, sampled, strict=True)}

    # ------------------------------------------------------------------ pieces

    def _sample(self, row: Mapping[str, Any], completion: str) -> Sample:
        fields = {k: v for k, v in row.items() if k not in ("prompt", "completion")}
        return Sample(prompt=row.get("prompt", ""), completion=completion, fields=fields)

    def _final_verdicts(self, rows: Sequence[Mapping[str, Any]], steps: Mapping[int, list[str]]) -> dict[int, Verdict]:
        order = list(steps)
        verdicts = self.reward.verify_batch([self._sample(rows[i], self.splitter.join(steps[i])) for i in order])
        return dict(zip(order, verdicts, strict=True))

    def _rollout_labels(self, rows: Sequence[Mapping[str, Any]], steps: Mapping[int, list[str]],
                        todo: list[tuple[int, int]], failed: dict[int, str]) -> list[float | None]:
        k = self.config.k
        sep = self.config.separator
        prefixes = [self.splitter.join(steps[i][: d + 1]) + sep for i, d in todo]
        texts = [self.policy.render(rows[i].get("prompt", "")) + prefix for (i, _), prefix in zip(todo, prefixes,
                                                                                                     strict=True)]
        continuations = self.policy.continue_texts(texts, k, self.config.sampling)
        samples = [self._sample(rows[i], prefix + cont)
                   for (i, _), prefix, conts in zip(todo, prefixes, continuations, strict=True) for cont in conts]
        verdicts = self.reward.verify_batch(samples)
        out: list[float | None] = []
        for n, (i, _) in enumerate(todo):
            group = verdicts[n * k:(n + 1) * k]
            bad = next((v for v in group if v.status in ("error", "invalid_input")), None)
            if bad is not None:
                failed.setdefault(i, f"{bad.status}: a rollout could not be scored: {bad.feedback}")
                out.append(None)
                continue
            right = sum(bool(v.correct) for v in group)
            out.append(right / k if self.config.mode == "soft" else float(right > 0))
        return out

    def _judge_labels(self, rows: Sequence[Mapping[str, Any]], steps: Mapping[int, list[str]],
                      failed: dict[int, str]) -> dict[int, list[float | None]]:
        assert self.judge is not None
        todo = [(i, d) for i in steps if i not in failed for d in range(len(steps[i]))]
        verdicts = self.judge.verify_batch([self._sample(rows[i], self.splitter.join(steps[i][: d + 1]))
                                            for i, d in todo])
        out: dict[int, list[float | None]] = {i: [None] * len(steps[i]) for i in steps if i not in failed}
        for (i, d), verdict in zip(todo, verdicts, strict=True):
            if verdict.status == "error":
                failed.setdefault(i, f"error: the judge could not label a step: {verdict.feedback}")
            elif verdict.status == "ok" and verdict.correct is not None:
                out[i][d] = 1.0 if verdict.correct else 0.0
        return out

    def _finish(self, pieces: list[str], mc: list[float | None], judged: list[float | None] | None, rollouts: int,
                seconds: float) -> RowLabels:
        wrong = self.config.wrong_below
        cut = len(pieces)
        if self.config.stop_at_first_wrong:
            cut = next((d + 1 for d, v in enumerate(mc) if v is not None and v < wrong), cut)
            cut = min(cut, next((d for d, v in enumerate(mc) if v is None), cut))
        labels = [v for v in mc[:cut] if v is not None]
        feedback = ""
        if judged is not None:
            if self.config.agree_only:
                agree = next((d for d in range(cut) if judged[d] is None or (judged[d] >= 0.5) != (mc[d] >= wrong)),
                             cut)
                if agree < cut:
                    feedback = f"monte-carlo and judge disagree at step {agree + 1}; kept {plural(agree, 'step')}"
                cut = agree
                labels = labels[:cut]
            if cut == 0:
                return RowLabels("no_answer", feedback=feedback or "no step kept", rollouts=rollouts, seconds=seconds)
        return RowLabels("ok", steps=pieces[:cut], labels=labels, mc_labels=labels if judged is None else
                         [v for v in mc[:cut] if v is not None],
                         judge_labels=[] if judged is None else judged[:cut], feedback=feedback, rollouts=rollouts,
                         seconds=seconds)
