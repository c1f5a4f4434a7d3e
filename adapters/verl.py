"""verl glue: point ``custom_reward_function.path`` at this file.

verl loads the file by path (``importlib.util.spec_from_file_location``) and calls the
function named by ``custom_reward_function.name`` with keyword arguments:

* ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=, **reward_kwargs)``
  (the default ``naive`` reward manager; one sample per call);
* ``compute_score_batch(data_sources=, solution_strs=, ground_truths=, extra_infos=, **reward_kwargs)``
  with ``reward_model.reward_manager=batch`` (name it ``compute_score_batch``): one
  ``verify_batch`` for the whole batch, which is what keeps the math worker pool busy.

Each returns a dict with ``score`` and the same extra keys for every sample (verl stacks the
extras into per-sample arrays, so a key missing on one sample breaks the batch):
``acc`` (1.0 correct, 0.0 otherwise), ``status``, ``pred`` (the extracted answer or ""),
``error`` (1.0 when the verifier failed).

The reward spec: ``configure(spec)``, else the environment variable ``REWARDSMITH_REWARD``
(a registry name or a YAML/JSON file), else ``math``. ``data_source`` is put in the sample's
fields, so a ``route`` spec (``field: data_source``) picks the reward per row.
``ground_truth`` becomes the ``answer`` field; a dict ground truth (``{"tests": ...}``) is
spread into the fields. ``extra_info`` entries become fields too.

verl cannot take a missing reward, so ``status=error`` scores ``0.0`` (and ``error: 1.0``)
under ``REWARDSMITH_ON_ERROR=zero`` (default), or raises under ``raise``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.core import Sample, Verdict, Verifier
from rewardsmith.verifiers.registry import build

DEFAULT_SPEC = "math"
ENV_SPEC = "REWARDSMITH_REWARD"
ENV_ON_ERROR = "REWARDSMITH_ON_ERROR"
EXTRA_KEYS = ("acc", "status", "pred", "error", "invalid")

_lock = threading.Lock()
_spec: Any = None
_verifier: Verifier | None = None


def configure(spec: str | Path | Mapping[str, Any] | Verifier | None) -> Verifier | None:
    """Use ``spec`` for every later call (``None``: back to the environment / default)."""
    global _spec, _verifier
    with _lock:
        _spec = spec
        _verifier = build(spec) if spec is not None else None
        return _verifier


def verifier() -> Verifier:
    """The configured verifier, built once per process (verl calls once per sample)."""
    global _verifier
    with _lock:
        if _verifier is None:
            _verifier = build(_spec if _spec is not None else os.environ.get(ENV_SPEC) or DEFAULT_SPEC)
        return _verifier


def _sample(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None) -> Sample:
    fields: dict[str, Any] = {}
    if isinstance(extra_info, Mapping):
        fields.update(extra_info)
    if isinstance(ground_truth, Mapping):
        fields.update(ground_truth)
    elif ground_truth is not None:
        fields["answer"] = ground_truth
    if data_source is not None:
        fields["data_source"] = data_source
    prompt = fields.pop("prompt", "")
    return Sample(prompt=prompt if isinstance(prompt, str | list) else str(prompt), completion=solution_str,
                  fields=fields)


def _pred(verdict: Verdict) -> str:
    extracted = verdict.detail("extracted")
    return "" if extracted is None else str(extracted)


def _result(verdict: Verdict) -> dict[str, Any]:
    if verdict.status == "error" and os.environ.get(ENV_ON_ERROR, "zero") == "raise":
        raise RuntimeError(f"rewardsmith verifier error: {verdict.feedback}")
    failed = verdict.status == "error"
    return {
        "score": 0.0 if failed else float(verdict.score),
        "acc": 1.0 if verdict.correct else 0.0,
        "status": verdict.status,
        "pred": _pred(verdict),
        "error": 1.0 if failed else 0.0,
        "invalid": 1.0 if verdict.status == "invalid_input" else 0.0,  # numeric: verl's metrics drop strings
    }


def compute_score(data_source: Any = None, solution_str: str = "", ground_truth: Any = None,
                  extra_info: Mapping[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    """verl's per-sample reward: ``{"score", "acc", "status", "pred", "error", "invalid"}``."""
    return _result(verifier().verify_batch([_sample(data_source, solution_str, ground_truth, extra_info)])[0])


def compute_score_batch(data_sources: Sequence[Any] = (), solution_strs: Sequence[str] = (),
                        ground_truths: Sequence[Any] | None = None,
                        extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
                        **kwargs: Any) -> list[dict[str, Any]]:
    """verl's ``batch`` reward manager form: one dict per sample, one ``verify_batch`` in all."""
    per_sample = sorted(k for k in ("data_source", "solution_str", "ground_truth", "extra_info") if k in kwargs)
    if per_sample:  # a per-sample reward manager calling the batch form would get [] and train on nothing
        raise TypeError(f"compute_score_batch was called per sample (with {', '.join(per_sample)}): point verl's "
                        "custom reward function at compute_score, or use a batch reward manager")
    n = len(solution_strs)
    truths = list(ground_truths) if ground_truths is not None else [None] * n
    infos = list(extra_infos) if extra_infos is not None else [None] * n
    sources = list(data_sources) if len(data_sources) else [None] * n
    samples = [_sample(*row) for row in zip(sources, solution_strs, truths, infos, strict=True)]
    return [_result(v) for v in verifier().verify_batch(samples)]
