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

Bases and tokenizers are found by ``rewardsmith.reward_models.loading`` (a local directory, a cached
hub id, or an alias for the offline test models: ``smollm2``, ``minilm``).
"""

from __future__ import annotations

from typing import Any

from rewardsmith.reward_models.loading import ModelLoadError, cannot_load, quiet_loading, resolve


def load_model(name: str, kind: str, num_labels: int = 1, dtype: Any = None, pad_token_id: int | None = None) -> Any:
    """A base with a fresh (or, for a trained reward model, its saved) head."""
    from transformers import AutoModelForSequenceClassification, AutoModelForTokenClassification

    auto = AutoModelForSequenceClassification if kind == "orm" else AutoModelForTokenClassification
    path = resolve(name)
    kwargs: dict[str, Any] = {"num_labels": num_labels}
    if dtype is not None:
        kwargs["dtype"] = dtype
    try:
        with quiet_loading():  # "newly initialized: score.weight" is the point of a new head
            model = auto.from_pretrained(path, **kwargs)
    except Exception as exc:
        raise ModelLoadError(cannot_load(name, "model", exc)) from exc
    if pad_token_id is not None:
        model.config.pad_token_id = pad_token_id
    return model


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
