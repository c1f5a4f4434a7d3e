"""Why a GRPO run learns nothing, and what to change: groups whose completions all got the same
reward have advantage 0, so a step made only of them leaves the policy as it was (loss 0, grad
norm 0). A run says so once per stretch of such steps, from the verdicts of those groups:

* ``all_pass``: every completion passed (the prompts are too easy for the policy);
* ``all_fail``: every completion was judged wrong (too hard, or cut at ``max_completion_length``);
* ``unjudged``: the reward could not judge any (``no_answer``, ``invalid_input``, ``error``);
* ``constant``: the same score for all, neither pass nor 0, from a reward without a correct flag
  (the reward does not tell these completions apart).

The rule: ``no_signal_warn_after`` steps in a row in which at least :data:`NO_SIGNAL_SHARE` of the
sampled groups had no reward variance. Pure bookkeeping over verdicts: no torch here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from rewardsmith.adapters.grpo.config import GRPOConfig
from rewardsmith.verifiers.core import Verdict

NO_SIGNAL_SHARE = 0.99  # "near 1": with fewer than 100 groups a step, every group
UNJUDGED = ("no_answer", "invalid_input", "error")
KIND_NAMES = {"all_pass": "all right", "all_fail": "all wrong", "unjudged": "not judged",
              "constant": "one score for all"}


def flat_group_kind(verdicts: Sequence[Verdict], passed: Sequence[bool]) -> str:
    """Which way a group without reward variance carries no signal (see the module's list)."""
    if all(v.status in UNJUDGED for v in verdicts):
        return "unjudged"
    judged = [(v, p) for v, p in zip(verdicts, passed, strict=True) if v.status != "error"]
    if all(p for _, p in judged):
        return "all_pass"
    if all(v.correct is False or (v.correct is None and v.score == 0) for v, _ in judged):
        return "all_fail"
    return "constant"


@dataclass
class StepSignal:
    """One step's sampled groups, seen for signal: how many there were, and of those without
    reward variance, their kinds, statuses, scores and how many completions were cut short."""

    step: int
    groups: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    rows: int = 0
    truncated: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    scores: Counter[float] = field(default_factory=Counter)

    def add_group(self, verdicts: Sequence[Verdict], passed: Sequence[bool], truncated: Sequence[bool],
                  flat: bool) -> None:
        """Count one sampled group; ``flat``: its rewards had no variance."""
        self.groups += 1
        if not flat:
            return
        self.kinds[flat_group_kind(verdicts, passed)] += 1
        self.rows += len(verdicts)
        self.truncated += sum(truncated)
        self.statuses.update(v.status for v in verdicts)
        self.scores.update(round(float(v.score), 4) for v in verdicts if v.status != "error")

    @property
    def flat_groups(self) -> int:
        return sum(self.kinds.values())

    @property
    def share(self) -> float:
        """The share of the sampled groups without reward variance (1 - ``informative_share``)."""
        return self.flat_groups / self.groups if self.groups else 1.0

    @property
    def no_signal(self) -> bool:
        return self.share >= NO_SIGNAL_SHARE


def diagnose_no_signal(window: Sequence[StepSignal], config: GRPOConfig) -> str | None:
    """The warning for a stretch of steps without signal: why (from the groups' verdicts) and
    what to change (with the config's numbers); None when a step of ``window`` had signal."""
    if not window or not all(s.no_signal for s in window):
        return None
    kinds: Counter[str] = sum((s.kinds for s in window), Counter())
    statuses: Counter[str] = sum((s.statuses for s in window), Counter())
    scores: Counter[float] = sum((s.scores for s in window), Counter())
    groups = sum(s.groups for s in window)
    flat = sum(s.flat_groups for s in window)
    rows = sum(s.rows for s in window)
    cut = sum(s.truncated for s in window) / max(rows, 1)
    first, last = window[0].step, window[-1].step
    steps = f"step {first}" if first == last else f"steps {first}-{last}"
    head = (f"no learning signal for {len(window)} steps in a row ({steps}): {flat} of {groups} groups had the "
            f"same reward for all {config.num_generations} completions, so every advantage is 0 and the policy "
            f"does not change")
    main = kinds.most_common(1)[0][0] if kinds else "unjudged"
    why = _why(main, kinds[main], statuses, scores, cut, config)
    others = [f"{KIND_NAMES[k]}: {n}" for k, n in kinds.most_common() if k != main]
    if others:
        why += f" (other groups: {', '.join(others)})"
    return f"{head}. Why: {why}. What to change: {_advice(main, statuses, cut, config)}"


def _why(kind: str, n: int, statuses: Counter[str], scores: Counter[float], cut: float, config: GRPOConfig) -> str:
    cut_text = f"{cut:.0%} of their completions were cut at max_completion_length {config.max_completion_length}"
    if kind == "all_pass":
        return f"every completion passed in {n} groups: the prompts are too easy for this policy"
    if kind == "all_fail":
        why = f"every completion was judged wrong in {n} groups: the prompts are too hard for this policy"
        return why + (f", and {cut_text}" if cut >= 0.5 else "")
    if kind == "unjudged":
        shown = ", ".join(f"{status} {count}" for status, count in statuses.most_common() if status in UNJUDGED)
        why = f"the reward could not judge any completion in {n} groups (status {shown})"
        return why + (f"; {cut_text}, before an answer" if cut >= 0.5 else "")
    score = scores.most_common(1)[0][0] if scores else 0.0
    return (f"every completion got the same score ({score:g}) in {n} groups from a reward that gives no correct "
            f"flag: it does not tell these completions apart")


def _advice(kind: str, statuses: Counter[str], cut: float, config: GRPOConfig) -> str:
    longer = f"raise max_completion_length (now {config.max_completion_length}) so answers fit"
    explore = (f"a larger num_generations (now {config.num_generations}) or temperature (now {config.temperature:g}) "
               f"makes a rare {'failure' if kind == 'all_pass' else 'success'} show up in a group")
    sampling = ("skip_extreme_prompts and dynamic_sampling are on already" if config.skip_extreme_prompts
                and config.dynamic_sampling else
                "skip_extreme_prompts: true (pass over prompts always or never solved) or dynamic_sampling: true "
                "(sample until groups differ)")
    if kind == "all_pass":
        return f"harder prompts; {sampling}; {explore}"
    if kind == "all_fail":
        tips = [longer] if cut >= 0.5 else []
        return "; ".join([*tips, "easier prompts (or a curriculum)", explore, sampling])
    if kind == "unjudged":
        tips = [longer] if cut >= 0.5 else []
        if statuses["error"]:
            tips.append("fix the reward backend (status=error is an outage, not a judgement)")
        if statuses["invalid_input"]:
            tips.append("give the reward the fields it reads (a column in the data, or `columns:` in the config)")
        if statuses["no_answer"]:
            tips.append("make the prompts ask for the answer in the form the reward reads (e.g. \\boxed{} for "
                        "math), or use a reward that reads the policy's form")
        return "; ".join(tips) or "check the reward spec against the completions in samples.jsonl"
    return "use a reward whose scores differ between better and worse completions (or one with a correct flag)"


class NoSignalWatch:
    """Follows steps for signal: counts those without any, and returns the warning of
    :func:`diagnose_no_signal` once per stretch, when it reaches ``config.no_signal_warn_after`` steps."""

    def __init__(self, config: GRPOConfig) -> None:
        self.config = config
        self.stretch: list[StepSignal] = []
        self.warned = False

    def observe(self, signal: StepSignal) -> str | None:
        """Add one step; the warning when this step completes a stretch, else None."""
        if not signal.no_signal:
            self.stretch, self.warned = [], False
            return None
        self.stretch.append(signal)
        after = self.config.no_signal_warn_after
        if self.warned or not after or len(self.stretch) < after:
            return None
        self.warned = True
        return diagnose_no_signal(self.stretch, self.config)
