"""A group's completions share one prompt: run the prompt once and give its keys and values to
every completion, instead of running it once per completion.

For GRPO's groups of n completions this cuts the prompt's share of the work to 1/n, both where
the sampler prefills (generation) and where the trainer computes log-probabilities (forward and
backward: gradients add up through the shared keys and values, so they are those of the full
sequences). Measured on SmolLM2-135M, a 50-token prompt and 8 completions of 28 tokens on two CPU
cores: forward + backward 2.9 s -> 1.8 s, prefill 0.76 s -> 0.16 s.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch


def prompt_groups(prompt_keys: list[Any]) -> torch.Tensor | None:
    """``prompt_of_row`` for rows whose prompts are ``prompt_keys`` (any comparable key), or None
    when no prompt repeats (nothing to share) or a prompt's rows are not next to each other."""
    index: list[int] = []
    seen: set[Any] = set()
    for i, key in enumerate(prompt_keys):
        if i and key == prompt_keys[i - 1]:
            index.append(index[-1])
            continue
        if key in seen:
            return None
        seen.add(key)
        index.append(len(seen) - 1)
    return torch.tensor(index) if len(seen) < len(prompt_keys) else None


def can_share_prompts(model: Any) -> bool:
    """Gradient checkpointing turns the key/value cache off in training: no sharing then."""
    if not model.training:
        return True
    base = _base(model)
    flag = "is_activation_checkpointing" if hasattr(type(base), "is_activation_checkpointing") \
        else "is_gradient_checkpointing"
    return not getattr(base, flag, False)


def logits_with_shared_prompts(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                               completion_length: int, prompt_of_row: torch.Tensor) -> torch.Tensor:
    """(B, completion_length, V): the logits predicting each completion token, from one forward
    of the distinct prompts (its last position predicts the first completion token) and one of
    the completions on top of the prompts' cache, copied to each row of the prompt."""
    width = input_ids.shape[1] - completion_length
    rows = prompt_of_row.to(input_ids.device)
    firsts = torch.searchsorted(rows, torch.arange(int(rows.max()) + 1, device=rows.device))
    where = position_ids(model, attention_mask)
    head = model(input_ids=input_ids[firsts, :width], attention_mask=attention_mask[firsts, :width],
                 **_sliced(where, firsts, slice(0, width)), use_cache=True, logits_to_keep=1)
    first = head.logits[:, -1:, :][rows]
    if completion_length == 1:
        return first
    name = cache_name(model)
    cache = getattr(head, name)
    cache.batch_select_indices(rows)
    tail = model(input_ids=input_ids[:, width:-1], attention_mask=attention_mask[:, :-1],
                 **_sliced(where, slice(None), slice(width, -1)), **{name: cache}, use_cache=True,
                 logits_to_keep=completion_length - 1).logits
    return torch.cat([first, tail], dim=1)


def prefill_for_groups(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, n: int
                       ) -> dict[str, Any]:
    """The keys and values of each prompt but its last token, computed once and copied for its
    ``n`` completions: ``generate(input_ids=<each prompt n times>, **this)`` then runs only the
    last prompt token before sampling."""
    name = cache_name(model)
    head = model(input_ids=input_ids[:, :-1], attention_mask=attention_mask[:, :-1],
                 **_sliced(position_ids(model, attention_mask), slice(None), slice(0, -1)), use_cache=True,
                 logits_to_keep=1)
    cache = getattr(head, name)
    cache.batch_repeat_interleave(n)
    return {name: cache}


def position_ids(model: Any, attention_mask: torch.Tensor) -> torch.Tensor | None:
    """Each token's position counted from its row's first real token, as ``generate`` counts
    them, so a left-padded row is scored at the positions it was sampled at (models with
    absolute position embeddings would otherwise see other positions). None for a model that
    takes no position ids."""
    if "position_ids" not in inspect.signature(_base(model).forward).parameters:
        return None
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def cache_name(model: Any) -> str:
    """transformers 5.2x renames ``past_key_values`` to ``cache`` (argument and output; the old
    argument still works there, with a warning); older releases, e.g. the one vLLM pins, know
    only the old name."""
    return "cache" if "cache" in inspect.signature(_base(model).forward).parameters else "past_key_values"


def _base(model: Any) -> Any:
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _sliced(positions: torch.Tensor | None, rows: Any, columns: slice) -> dict[str, torch.Tensor]:
    return {} if positions is None else {"position_ids": positions[rows][:, columns]}
