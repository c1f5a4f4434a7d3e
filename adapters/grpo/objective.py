"""GRPO's maths: group advantages, per-token log-probabilities, the clipped surrogate and its KL.

Pure functions over tensors, written to agree with TRL 1.16's ``GRPOTrainer`` to the line
(same names for the same switches), so a run can move between the two without its numbers
changing meaning. Where we differ from TRL it is on purpose and named here:

* a row whose reward is an error (NaN) is not a zero: it is left out of its group's mean and
  std and out of the loss (TRL keeps it in the loss with advantage 0);
* the loss normalisers are the whole batch's (rows, tokens), so splitting a batch into
  micro-batches of any sizes leaves ``grpo``, ``dr_grpo`` and ``dapo`` unchanged; ``bnpo``
  normalises per micro-batch, as TRL does and documents.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch

from rewardsmith.reward_models.shared_prompt import can_share_prompts, logits_with_shared_prompts, position_ids

LossType = Literal["grpo", "dr_grpo", "dapo", "bnpo"]
ScaleRewards = Literal["group", "batch", "none"]
ISLevel = Literal["token", "sequence"]
ISMode = Literal["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"]
STD_EPS = 1e-4  # TRL's: (r - mean) / (std + 1e-4)


# --------------------------------------------------------------------------- advantages


@dataclass
class Advantages:
    values: torch.Tensor  # (N,) 0 for rows that carry no signal (error rows, zero-variance groups)
    std: torch.Tensor  # (N,) the std each row was scaled by (group or batch)
    zero_variance: torch.Tensor  # (G,) bool: a group whose valid rewards are all equal (or < 2 valid)
    valid: torch.Tensor  # (N,) bool: the reward is a number (not an error)


def group_advantages(rewards: torch.Tensor, group_size: int, scale_rewards: ScaleRewards = "group") -> Advantages:
    """``r - mean(group)``, divided by the group's (``group``) or the batch's (``batch``) std plus
    1e-4, or not divided (``none``, Dr. GRPO). NaN rewards (errors) are left out of every
    statistic and get advantage 0. std is Bessel-corrected, as TRL's ``nanstd``."""
    if rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size}")
    rewards = rewards.to(torch.float64)
    valid = ~torch.isnan(rewards)
    grouped = rewards.view(-1, group_size)
    counts = valid.view(-1, group_size).sum(dim=1)
    mean = torch.nanmean(grouped, dim=1)
    group_std = _nanstd(grouped, dim=1)
    zero_variance = (counts < 2) | torch.isclose(group_std.nan_to_num(0.0), torch.zeros_like(group_std))
    centred = rewards - mean.repeat_interleave(group_size)
    if scale_rewards == "group":
        std = group_std.repeat_interleave(group_size)
    elif scale_rewards == "batch":
        std = _nanstd(rewards, dim=0).expand_as(rewards) if valid.sum() > 1 else torch.zeros_like(rewards)
    elif scale_rewards == "none":
        std = group_std.repeat_interleave(group_size)  # kept for logging only
    else:
        raise ValueError(f"scale_rewards must be group, batch or none, got {scale_rewards!r}")
    values = centred if scale_rewards == "none" else centred / (std + STD_EPS)
    values = torch.where(valid, values, torch.zeros_like(values)).nan_to_num(0.0)
    values = torch.where(zero_variance.repeat_interleave(group_size), torch.zeros_like(values), values)
    return Advantages(values.float(), std.float(), zero_variance, valid)


def _nanstd(x: torch.Tensor, dim: int) -> torch.Tensor:
    mean = torch.nanmean(x, dim=dim, keepdim=True)
    count = (~torch.isnan(x)).sum(dim=dim)
    var = torch.nanmean((x - mean) ** 2, dim=dim) * count / (count - 1).clamp(min=1)
    return torch.where(count > 1, var.sqrt(), torch.full_like(var, math.nan))


# --------------------------------------------------------------------------- log-probabilities


def token_logps(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, completion_length: int,
                temperature: float, *, entropy: bool = False, prompt_of_row: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probabilities of the last ``completion_length`` tokens under ``model`` at the sampling
    temperature (logits / T, as the sampler drew them), and optionally the entropy of that
    distribution at each position (without gradient: a metric).

    ``prompt_of_row`` (B,): which distinct prompt each row continues, rows of one prompt next to
    each other (a GRPO group). Given, each prompt runs once and its keys and values are shared
    by its rows' completions: the same numbers (to float rounding) and the same gradients (they
    add up through the sharing), for a group of n a 1/n share of the prompt's work."""
    if temperature <= 0:
        raise ValueError("temperature must be positive to score sampled tokens")
    if prompt_of_row is not None and can_share_prompts(model):
        logits = logits_with_shared_prompts(model, input_ids, attention_mask, completion_length, prompt_of_row)
    else:
        where = position_ids(model, attention_mask)
        logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=completion_length + 1,
                       use_cache=False, **({} if where is None else {"position_ids": where})).logits
        logits = logits[:, -completion_length - 1:-1, :]
    logits = logits.float()
    if temperature != 1.0:
        logits = logits / temperature
    targets = input_ids[:, -completion_length:]
    logp_all = logits.log_softmax(-1)
    del logits  # log_softmax's backward reads its output: the (B, T, vocab) input can go now
    logps = torch.gather(logp_all, -1, targets.unsqueeze(-1)).squeeze(-1)
    return logps, (_entropy(logp_all.detach()) if entropy else None)


ENTROPY_CHUNK_POSITIONS = 1024


@torch.no_grad()
def _entropy(logp_all: torch.Tensor) -> torch.Tensor:
    """-sum p log p at each position, a chunk of positions at a time: at once, its two
    temporaries would each be as large as the (B, T, vocab) log-probabilities."""
    flat = logp_all.reshape(-1, logp_all.shape[-1])
    parts = [-(chunk.exp() * chunk).sum(-1) for chunk in flat.split(ENTROPY_CHUNK_POSITIONS)]
    return torch.cat(parts).reshape(logp_all.shape[:-1])


# --------------------------------------------------------------------------- the loss


@dataclass(frozen=True)
class LossSettings:
    loss_type: LossType = "dapo"
    epsilon: float = 0.2
    epsilon_high: float | None = None
    importance_sampling_level: ISLevel = "token"
    beta: float = 0.0
    max_completion_length: int = 256  # dr_grpo's constant normaliser
    delta: float | None = None  # two-sided clipping: the unclipped ratio capped at delta (TRL's ``delta``)
    use_bias_correction_kl: bool = True  # the k3 KL weighted by the importance ratio (TRL's default)

    @property
    def eps_high(self) -> float:
        return self.epsilon if self.epsilon_high is None else self.epsilon_high


@dataclass(frozen=True)
class BatchTotals:
    """The whole batch's sizes, so each micro-batch's loss is its share of the batch's."""

    rows: int  # rows in the loss (after filtering)
    tokens: int  # completion tokens in the loss mask
    micro_batches: int  # for bnpo, which is a mean of per-micro-batch means


def policy_loss(logps: torch.Tensor, old_logps: torch.Tensor | None, ref_logps: torch.Tensor | None,
                advantages: torch.Tensor, mask: torch.Tensor, settings: LossSettings, totals: BatchTotals,
                is_ratio: torch.Tensor | None = None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """This micro-batch's share of the batch loss, and the sums its metrics need.

    ``logps``, ``old_logps``, ``ref_logps``, ``mask``: (B, T); ``advantages``: (B,);
    ``is_ratio``: the sampler-mismatch correction, (B, T) or (B, 1), multiplied into the
    per-token loss (TRL's vLLM importance sampling). ``old_logps`` None: the batch is on-policy
    (first iteration), so the ratio is 1 with the gradient of ``logps``.
    """
    mask = mask.to(logps.dtype)
    old = logps.detach() if old_logps is None else old_logps
    adv = advantages.unsqueeze(1)
    log_ratio = logps - old
    if settings.importance_sampling_level == "token":
        log_weights = log_ratio
    else:  # GSPO: one ratio per sequence, the geometric mean of its tokens'
        log_weights = ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    ratio = torch.exp(log_weights)
    clipped = torch.clamp(ratio, 1 - settings.epsilon, 1 + settings.eps_high)
    unclipped = ratio if settings.delta is None else torch.clamp(ratio, max=settings.delta)
    per_token = -torch.min(unclipped * adv, clipped * adv)
    if is_ratio is not None:
        per_token = per_token * is_ratio
    kl = None
    if settings.beta != 0.0:
        if ref_logps is None:
            raise ValueError("beta > 0 needs the reference log-probabilities")
        delta_ref = ref_logps - logps
        kl = torch.exp(delta_ref) - delta_ref - 1  # k3: unbiased, always >= 0
        if settings.use_bias_correction_kl:
            kl = kl * ratio
        per_token = per_token + settings.beta * kl
    per_token = per_token.expand_as(mask) if per_token.shape != mask.shape else per_token
    masked = per_token * mask
    if settings.loss_type == "grpo":
        loss = (masked.sum(-1) / mask.sum(-1).clamp(min=1.0)).sum() / max(totals.rows, 1)
    elif settings.loss_type == "dr_grpo":
        loss = masked.sum() / (max(totals.rows, 1) * settings.max_completion_length)
    elif settings.loss_type == "dapo":
        loss = masked.sum() / max(totals.tokens, 1)
    elif settings.loss_type == "bnpo":
        loss = masked.sum() / mask.sum().clamp(min=1.0) / totals.micro_batches
    else:
        raise ValueError(f"loss_type must be grpo, dr_grpo, dapo or bnpo, got {settings.loss_type!r}")
    with torch.no_grad():
        full = ratio.expand_as(mask)
        low = ((full < 1 - settings.epsilon) & (adv < 0)).to(mask.dtype)
        high = ((full > 1 + settings.eps_high) & (adv > 0)).to(mask.dtype)
        stats = {"tokens": mask.sum(), "clip_low": (low * mask).sum(), "clip_high": (high * mask).sum(),
                 "kl": (kl.expand_as(mask) * mask).sum() if kl is not None else torch.zeros(()),
                 "ratio_max": (full * mask).max() if mask.any() else torch.ones(())}
    return loss, stats


def sampler_correction(trainer_logps: torch.Tensor, sampler_logps: torch.Tensor, mask: torch.Tensor,
                       mode: ISMode = "sequence_mask", cap: float | None = 3.0,
                       floor: float | None = None) -> torch.Tensor:
    """TRL's importance-sampling correction for a sampler that is not the trainer (vLLM, or a
    stale weight sync): ``π_trainer / π_sampler`` per token or per sequence, truncated at ``cap``
    (``*_truncate``) or zeroed outside [floor, cap] (``*_mask``). NaN sampler log-probs count as
    no correction."""
    diff = ((trainer_logps - sampler_logps) * mask).nan_to_num(0.0)
    if mode.startswith("sequence"):
        diff = diff.sum(-1, keepdim=True)
    ratio = torch.exp(diff)
    if mode.endswith("truncate"):
        return torch.clamp(ratio, min=floor, max=cap)
    low = -math.inf if floor is None else floor
    high = math.inf if cap is None else cap
    return ratio.masked_fill((ratio < low) | (ratio > high), 0.0)
