"""The contracts every verifier shares: what goes in (Sample), what comes out (Verdict).

Kept free of heavy imports: trainers ship verifiers to workers by pickling, and the
server, the CLI and every adapter build on these two types.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from rewardsmith.verifiers.trajectory import Trajectory, TrajectoryError, from_messages

Status = Literal["ok", "no_answer", "invalid_input", "timeout", "error"]
STATUSES: tuple[Status, ...] = ("ok", "no_answer", "invalid_input", "timeout", "error")

Message = Mapping[str, Any]
Text = str | Sequence[Message]


MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()


def lookup(obj: Any, path: str) -> Any:
    """``obj[path]`` when that key exists, else follow the dots (list items by index); ``MISSING``
    when the path leads nowhere.

    One rule for every place a field is named (a verifier's ``answer_field``, ``--field``, the
    calibrate command): ``reward_model.ground_truth`` reaches into verl's nested columns.
    """
    if isinstance(obj, Mapping) and path in obj:
        return obj[path]
    value = obj
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def message_text(value: Text | None) -> str:
    """Plain text of a completion: a string as is, chat messages as the last assistant turn.

    TRL passes conversational completions as ``[{"role": "assistant", "content": ...}]``;
    the reward is about what the model said last.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    messages = list(value)
    for message in reversed(messages):
        if message.get("role", "assistant") == "assistant":
            return _content_text(message.get("content", ""))
    return _content_text(messages[-1].get("content", "")) if messages else ""


def _content_text(content: Any) -> str:
    # Multimodal chat content is a list of parts; only the text parts count.
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


@dataclass
class Sample:
    """One completion to score, with the dataset fields the verifiers read by name."""

    prompt: Text = ""
    completion: Text = ""
    fields: dict[str, Any] = field(default_factory=dict)

    RESERVED: ClassVar[tuple[str, ...]] = ("prompt", "completion")

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Sample:
        """A dataset row: ``prompt`` and ``completion`` by name, every other column a field.

        A row without a completion gets ``None`` (every verifier reports ``invalid_input``), not
        ``""``, which would be a real, empty generation scored as an unanswered one.
        """
        extra = {k: v for k, v in row.items() if k not in cls.RESERVED}
        return cls(prompt=row.get("prompt", ""), completion=row.get("completion"), fields=extra)

    @property
    def completion_text(self) -> str:
        return message_text(self.completion)

    @property
    def prompt_text(self) -> str:
        """The prompt as text: chat turns joined; anything else a dataset put there, as a string."""
        if isinstance(self.prompt, str):
            return self.prompt
        if isinstance(self.prompt, Sequence) and all(isinstance(m, Mapping) for m in self.prompt):
            return "\n".join(_content_text(m.get("content", "")) for m in self.prompt)
        return "" if self.prompt is None else str(self.prompt)

    def get(self, name: str, default: Any = None) -> Any:
        """A field by name, or by dotted path into nested fields (``reward_model.ground_truth``)."""
        value = lookup(self.fields, name)
        return default if value is MISSING else value

    def trajectory(self) -> Trajectory | None:
        """The rollout this sample scores: the :class:`Trajectory` an adapter put in the ``trajectory`` field,
        or one read from a chat-message completion (with the ``stop_reason`` and ``env_reward`` fields);
        ``None`` for a string completion. Raises :class:`TrajectoryError` for messages that cannot be read."""
        given = self.fields.get(TRAJECTORY_FIELD)
        if isinstance(given, Trajectory):
            return given
        completion = self.completion
        if isinstance(completion, str) or completion is None:
            return None
        return from_messages(self.prompt, completion, stop_reason=self.fields.get(STOP_REASON_FIELD),
                             env_reward=self.fields.get(ENV_REWARD_FIELD))


@dataclass(kw_only=True)
class Verdict:
    """The outcome of verifying one sample.

    ``score`` is the reward. ``status`` says whether the score means anything: an
    ``error`` is an infrastructure failure (the adapters apply their ``on_error``
    policy to it), never a judgement that the completion was wrong. Keyword-only, so a
    verdict never silently swaps ``correct`` and ``status``. A composite keeps its parts'
    verdicts in ``parts`` (walk them with :meth:`walk`) and their scores in ``components``.
    """

    score: float = 0.0
    correct: bool | None = None
    status: Status = "ok"
    feedback: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    components: dict[str, float | None] = field(default_factory=dict)
    parts: dict[str, Verdict] = field(default_factory=dict)

    @property
    def reward(self) -> float | None:
        """The score, or None when the status is ``error`` (there is no honest score)."""
        return None if self.status == "error" else self.score

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "score": self.score,
            "correct": self.correct,
            "status": self.status,
            "feedback": self.feedback,
            "details": self.details,
            "elapsed_s": round(self.elapsed_s, 6),
        }
        if self.components:
            out["components"] = self.components
        if self.parts:
            out["parts"] = {name: part.to_dict() for name, part in self.parts.items()}
        return out

    def walk(self, path: str = "") -> Iterator[tuple[str, Verdict]]:
        """This verdict and every nested part's, depth first, with dotted paths (``""`` for this one).

        The one way adapters and the summary look inside a composite (a route's chosen reward,
        a gate's ``then``, a cascade's judge), instead of each digging through ``details``.
        """
        yield path, self
        for name, part in self.parts.items():
            yield from part.walk(f"{path}.{name}" if path else name)

    def detail(self, key: str, default: Any = None) -> Any:
        """``details[key]`` of this verdict or, failing that, of the first part that has it (depth
        first): e.g. the answer a composite's math part extracted."""
        return next((v.details[key] for _, v in self.walk() if key in v.details), default)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(
            score=float(data.get("score") or 0.0),  # a malformed row's verdict has score None
            correct=data.get("correct"),
            status=data.get("status", "ok"),
            feedback=data.get("feedback", ""),
            details=dict(data.get("details", {})),
            elapsed_s=float(data.get("elapsed_s") or 0.0),
            components=dict(data.get("components", {})),
            parts={name: cls.from_dict(part) for name, part in (data.get("parts") or {}).items()},
        )


COMPLETION_ERROR = "completion_error"
# The fields a rollout's record travels in (docs/agents.md).
TRAJECTORY_FIELD = "trajectory"
STOP_REASON_FIELD = "stop_reason"
ENV_REWARD_FIELD = "env_reward"


def read_completion(sample: Sample) -> str | Verdict:
    """The text an answer verifier reads, or a verdict saying why there is none.

    A string completion is read as is. A rollout (chat messages, or a ``trajectory`` field) is read only
    at its final answer (:meth:`Trajectory.final_answer`: the last sampled assistant message without tool
    calls), never at a tool's output or a context message; a rollout that stopped other than ``done``
    (``max_turns``, ``max_length``, ...) or whose policy last called a tool states no answer (``no_answer``).
    An empty string is a real (empty) generation and is returned as is: scoring it as invalid input would
    let a policy dodge length and format penalties by saying nothing.
    """
    read = read_rollout(sample)
    if not isinstance(read, Trajectory):
        return read
    why = unanswered(read)
    if why:
        return Verdict(score=0.0, correct=False, status="no_answer", feedback=why,
                       details={"stop_reason": read.stop_reason})
    final = read.final_answer()
    assert final is not None  # unanswered() said it has one
    return final.content


def completion_problem(sample: Sample) -> Verdict | None:
    """An ``invalid_input`` verdict when the sample has no completion a verifier can read (none, an empty
    message list, messages that are not a rollout), else ``None``: the check every family makes first,
    including those that read a rollout's calls rather than its answer."""
    read = read_rollout(sample)
    return read if isinstance(read, Verdict) else None


def read_rollout(sample: Sample) -> Trajectory | str | Verdict:
    """The sample's rollout (a ``trajectory`` field wins over the completion), its string completion, or an
    ``invalid_input`` verdict saying why neither can be read. The record is read once here."""
    completion = sample.completion
    if completion is None and not isinstance(sample.fields.get(TRAJECTORY_FIELD), Trajectory):
        # an adapter that could not find the completion says why in this field
        return invalid_input(str(sample.get(COMPLETION_ERROR) or "sample has no completion"),
                             missing_field="completion")
    if isinstance(completion, Sequence) and not isinstance(completion, str) and not completion:
        return invalid_input("completion is an empty list of chat messages")
    try:
        trajectory = sample.trajectory()
    except TrajectoryError as exc:
        return invalid_input(f"completion: {exc}")
    if trajectory is not None:
        return trajectory
    if isinstance(completion, str):
        return completion
    return invalid_input(f"completion must be a string or a list of chat messages, got {type(completion).__name__}")


def unanswered(trajectory: Trajectory) -> str:
    """Why the rollout has no final answer an outcome reward may pay, or ``""``."""
    if trajectory.stop_reason not in (None, "done"):
        return (f"the rollout stopped at {trajectory.stop_reason}, not done: an unfinished rollout earns no "
                "outcome reward")
    sampled = trajectory.sampled_turns()
    if not sampled:
        return "the rollout has no assistant message the policy generated"
    final = trajectory.final_answer()
    if final is None:
        return "the policy's last turn calls a tool: the rollout states no final answer"
    if final.refused:
        return "the policy's last turn is a refusal (a refusal part): a refusal states no answer"
    return ""


def invalid_input(message: str, missing_field: str | None = None, **details: Any) -> Verdict:
    """The row lacks what the verifier needs; ``missing_field`` names the field, so adapters can
    tell the user which column to map (see ``rewardsmith.adapters.health``)."""
    if missing_field is not None:
        details["missing_field"] = missing_field
    return Verdict(score=0.0, correct=None, status="invalid_input", feedback=message, details=details)


def error(message: str, **details: Any) -> Verdict:
    return Verdict(score=0.0, correct=None, status="error", feedback=message, details=details)


class Verifier:
    """Base class. Subclasses implement one hook: ``_verify`` (one sample) or ``_verify_batch``
    (a batch, when there is a faster path: caches, worker pools).

    ``verify_batch`` is a template around the hook, the same for every verifier (composites
    and plugins included): an exception becomes ``status=error`` for the batch instead of
    taking a training run down, and a hook that returns the wrong number of verdicts (which
    would shift every later reward onto the wrong sample) is reported, never zipped through.
    A subclass that overrides ``verify_batch`` itself has that method adopted as its hook, so
    third-party verifiers written that way get the same guarantees. A verifier holds only
    configuration, so it pickles cheaply and trainers can ship it to their workers.
    """

    name: str = "verifier"
    label: str | None = None  # the spec's ``name``: what a composite logs this part under (default: ``name``)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("verify_batch")
        if own is not None:
            cls._verify_batch = own  # type: ignore[method-assign]
            delattr(cls, "verify_batch")

    def verify(self, sample: Sample) -> Verdict:
        return self.verify_batch([sample])[0]

    def verify_batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        samples = list(samples)
        if not samples:
            return []
        try:
            verdicts = list(self._verify_batch(samples))
        except Exception as exc:  # a verifier bug must not take down a training run
            return _errors(len(samples), f"{type(self).__name__} failed: {type(exc).__name__}: {exc}")
        if len(verdicts) != len(samples):
            return _errors(len(samples), f"{type(self).__name__} returned {len(verdicts)} verdicts for "
                           f"{len(samples)} samples (a verifier bug)")
        return [v if isinstance(v, Verdict) else error(f"{type(self).__name__} returned no verdict for sample {i} "
                                                       "(a verifier bug)")
                for i, v in enumerate(verdicts)]

    async def averify_batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        """Async form: runs the batch path off the event loop so servers stay responsive."""
        return await asyncio.to_thread(self.verify_batch, list(samples))

    def components(self) -> dict[str, Verifier]:
        """Named parts for per-component logging; a plain verifier is its own only part.

        A composite (or a verifier with a nested spec) returns its parts here, named as its
        verdict's ``parts``: that is how :meth:`walk` and :meth:`start` reach inside it."""
        return {self.name: self}

    def walk(self, path: str = "") -> Iterator[tuple[str, Verifier]]:
        """This verifier and every part inside it, depth first, with the dotted paths
        :meth:`Verdict.walk` gives their verdicts (``""`` for this one): the one walk over a
        reward, so a part's verifier and its verdict are found under the same name."""
        yield path, self
        for name, part in self._parts().items():
            yield from part.walk(f"{path}.{name}" if path else name)

    def start(self, wait: bool = False) -> None:
        """Start now what this reward grades on (a worker pool) instead of at the first batch.

        A composite starts its parts; a leaf with nothing to start does nothing. Without
        ``wait`` this returns at once (the workers load in the background while the caller reads
        its input); with ``wait`` the first real batch pays no start-up (the reward server does
        this before it accepts requests). Only a head start: a failure here shows again,
        properly reported, on the first real item.
        """
        for part in self._parts().values():
            part.start(wait)

    def _parts(self) -> dict[str, Verifier]:
        parts = self.components()
        return {} if all(part is self for part in parts.values()) else parts

    def _verify_batch(self, samples: list[Sample]) -> Sequence[Verdict | None]:
        return [self._timed(sample) for sample in samples]

    def _timed(self, sample: Sample) -> Verdict:
        start = time.perf_counter()
        try:
            verdict = self._verify(sample)
        except Exception as exc:  # a verifier bug must not take down a training run
            verdict = error(f"{type(self).__name__} failed: {type(exc).__name__}: {exc}")
        verdict.elapsed_s = time.perf_counter() - start
        return verdict

    def _verify(self, sample: Sample) -> Verdict:
        raise NotImplementedError(f"{type(self).__name__} must implement _verify or _verify_batch")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def _errors(n: int, message: str) -> list[Verdict]:
    return [error(message) for _ in range(n)]


def as_samples(items: Iterable[Sample | Mapping[str, Any]]) -> list[Sample]:
    """Accept rows or Samples alike: adapters hand over whatever their trainer gives them."""
    return [item if isinstance(item, Sample) else Sample.from_row(item) for item in items]


def short(value: Any, limit: int = 120) -> str:
    """A value for a message (text as it is, anything else by its repr), cut to ``limit`` with an
    ellipsis; never fails (an int past Python's 4,300-digit str limit is shown by its size)."""
    text = value if isinstance(value, str) else safe_repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def safe_repr(value: Any) -> str:
    """``repr(value)``, or a description when it cannot be built (nested too deep, a huge int)."""
    try:
        return repr(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deep to show>"
    except ValueError:  # an int over the str-conversion limit, somewhere inside
        if isinstance(value, int):
            return f"<int of {value.bit_length()} bits>"
        if isinstance(value, list | tuple):
            return "[" + ", ".join(safe_repr(v) for v in value[:20]) + (", …]" if len(value) > 20 else "]")
        return f"<{type(value).__name__} holding a very large int>"
