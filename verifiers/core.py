"""The contracts every verifier shares: what goes in (Sample), what comes out (Verdict).

Kept free of heavy imports: trainers ship verifiers to workers by pickling, and the
server, the CLI and every adapter build on these two types.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

Status = Literal["ok", "no_answer", "invalid_input", "timeout", "error"]
STATUSES: tuple[Status, ...] = ("ok", "no_answer", "invalid_input", "timeout", "error")

Message = Mapping[str, Any]
Text = str | Sequence[Message]


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
        """A dataset row: ``prompt`` and ``completion`` by name, every other column a field."""
        extra = {k: v for k, v in row.items() if k not in cls.RESERVED}
        return cls(prompt=row.get("prompt", ""), completion=row.get("completion", ""), fields=extra)

    @property
    def completion_text(self) -> str:
        return message_text(self.completion)

    @property
    def prompt_text(self) -> str:
        if isinstance(self.prompt, str):
            return self.prompt
        return "\n".join(_content_text(m.get("content", "")) for m in self.prompt)

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


@dataclass
class Verdict:
    """The outcome of verifying one sample.

    ``score`` is the reward. ``status`` says whether the score means anything: an
    ``error`` is an infrastructure failure (the adapters apply their ``on_error``
    policy to it), never a judgement that the completion was wrong.
    """

    score: float = 0.0
    correct: bool | None = None
    status: Status = "ok"
    feedback: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    components: dict[str, float | None] = field(default_factory=dict)

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
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(
            score=float(data.get("score", 0.0)),
            correct=data.get("correct"),
            status=data.get("status", "ok"),
            feedback=data.get("feedback", ""),
            details=dict(data.get("details", {})),
            elapsed_s=float(data.get("elapsed_s", 0.0)),
            components=dict(data.get("components", {})),
        )


COMPLETION_ERROR = "completion_error"


def read_completion(sample: Sample) -> str | Verdict:
    """The completion's text, or an ``invalid_input`` verdict saying why there is none.

    An empty string is a real (empty) generation and is returned as is: scoring it as
    invalid input would let a policy dodge length and format penalties by saying nothing.
    """
    completion = sample.completion
    if completion is None:  # an adapter that could not find the completion says why in this field
        return invalid_input(str(sample.get(COMPLETION_ERROR) or "sample has no completion"))
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and all(isinstance(m, Mapping) for m in completion):
        if not completion:
            return invalid_input("completion is an empty list of chat messages")
        return sample.completion_text
    return invalid_input(f"completion must be a string or a list of chat messages, got {type(completion).__name__}")


def invalid_input(message: str, **details: Any) -> Verdict:
    return Verdict(score=0.0, correct=None, status="invalid_input", feedback=message, details=details)


def error(message: str, **details: Any) -> Verdict:
    return Verdict(score=0.0, correct=None, status="error", feedback=message, details=details)


class Verifier:
    """Base class: subclasses implement ``_verify``; batching and timing come for free.

    Subclasses override ``verify_batch`` when they have a faster path (caches, worker
    pools). A verifier holds only configuration, so it pickles cheaply and trainers
    can ship it to their workers.
    """

    name: str = "verifier"

    def verify(self, sample: Sample) -> Verdict:
        return self.verify_batch([sample])[0]

    def verify_batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        return [self._timed(sample) for sample in samples]

    async def averify_batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        """Async form: runs the batch path off the event loop so servers stay responsive."""
        return await asyncio.to_thread(self.verify_batch, list(samples))

    def components(self) -> dict[str, Verifier]:
        """Named parts for per-component logging; a plain verifier is its own only part."""
        return {self.name: self}

    def _timed(self, sample: Sample) -> Verdict:
        start = time.perf_counter()
        try:
            verdict = self._verify(sample)
        except Exception as exc:  # a verifier bug must not take down a training run
            verdict = error(f"{type(self).__name__} failed: {type(exc).__name__}: {exc}")
        verdict.elapsed_s = time.perf_counter() - start
        return verdict

    def _verify(self, sample: Sample) -> Verdict:
        raise NotImplementedError(f"{type(self).__name__} must implement _verify or verify_batch")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def all_filled(verdicts: Sequence[Verdict | None]) -> list[Verdict]:
    """A batch path fills one slot per sample; a gap is a bug to surface, not a sample to drop
    (dropping one would shift every later reward onto the wrong sample)."""
    missing = [i for i, verdict in enumerate(verdicts) if verdict is None]
    if missing:
        raise RuntimeError(f"no verdict for samples {missing[:5]} of {len(verdicts)}")
    return list(verdicts)  # type: ignore[arg-type]


def as_samples(items: Iterable[Sample | Mapping[str, Any]]) -> list[Sample]:
    """Accept rows or Samples alike: adapters hand over whatever their trainer gives them."""
    return [item if isinstance(item, Sample) else Sample.from_row(item) for item in items]
