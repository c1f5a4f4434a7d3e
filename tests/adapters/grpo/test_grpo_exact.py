"""The GRPO loop's loss and gradients against TRL 1.16's ``GRPOTrainer``, on the same inputs.

Both trainers get the same model object (so the same weights), the same two chat prompts,
the same eight completions and the same reward spec (``math``, through our TRL reward functions
on TRL's side and ``build`` on ours). Sampling is random in both, so both are handed the same
completions: TRL's generation method is replaced by one returning them (TRL's own
``_generate_and_score_completions`` then tokenises the prompts, scores, computes advantages,
the old and the reference log-probabilities), and our loop gets a generator that replays them.

Iteration 1 compares at the sampling weights (ratio 1); the weights are then moved, so that
iteration 2 compares with ratios far from 1: clipping on both sides, ``epsilon_high`` and
sequence-level importance sampling are exercised (each case asserts clipped tokens exist).
Tolerance: losses within 1e-5 (relative), gradients within 1e-4 in relative L2 norm and each
parameter's gradient within 1e-5 of the largest gradient entry (fp32, CPU; the two compute
log-probabilities with different kernels, so they agree to rounding, not bit for bit).
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from grpo_helpers import ReplayGenerator, grads, make_tiny_llama  # noqa: E402

from rewardsmith.adapters.grpo.config import GRPOConfig  # noqa: E402
from rewardsmith.adapters.grpo.data import encode_rows  # noqa: E402
from rewardsmith.adapters.grpo.loop import GRPOTrainer  # noqa: E402
from rewardsmith.verifiers import build  # noqa: E402

pytestmark = pytest.mark.slow

PROMPTS = [("What is 3 + 4? Give only the final number in \\boxed{}.", "7"),
           ("What is 12 + 9? Give only the final number in \\boxed{}.", "21")]
# Per prompt, four completions: right, wrong, right with more words, cut at the limit.
TEXTS = [["\\boxed{7}", "\\boxed{8}", "3 + 4 is \\boxed{7}", "Let me think about this for a while"],
         ["\\boxed{21}", "It is \\boxed{20}", "\\boxed{22}", "12 plus 9 gives \\boxed{21}"]]
MAX_LEN = 12
TEMPERATURE = 0.7
STEP = 3.0  # L2 length of the move between the two iterations


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    return make_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def _completions(tokenizer) -> list[list[int]]:
    """Each text with its EOS, cut at MAX_LEN tokens as the sampler would (the long ones lose it)."""
    return [(tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id])[:MAX_LEN]
            for group in TEXTS for text in group]


def _trl_trainer(model_dir, tmp_path, dataset=None, **switches):
    from datasets import Dataset
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer

    from rewardsmith.adapters.trainers.trl import reward_funcs

    rows = dataset or [{"prompt": [{"role": "user", "content": q}], "answer": a} for q, a in PROMPTS]
    settings = {"output_dir": str(tmp_path / "trl"), "use_cpu": True, "bf16": False, "report_to": [],
                "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "num_generations": 4,
                "max_completion_length": MAX_LEN, "temperature": TEMPERATURE, "epsilon_high": 0.28,
                "num_iterations": 2, "learning_rate": 1e-5, "disable_tqdm": True, **switches}
    args = TRLConfig(**settings)
    trainer = TRLTrainer(model=model_dir, reward_funcs=reward_funcs("math"), args=args,
                         train_dataset=Dataset.from_list(rows))
    trainer.current_gradient_accumulation_steps = 1
    trainer.model.train()
    return trainer, rows


def _assert_close_grads(ours: dict, theirs: dict) -> None:
    assert ours.keys() == theirs.keys() and ours
    flat_o = torch.cat([g.flatten() for g in ours.values()])
    flat_t = torch.cat([g.flatten() for g in theirs.values()])
    assert flat_t.norm() > 0
    assert (flat_o - flat_t).norm() / flat_t.norm() < 1e-4
    scale = flat_t.abs().max()
    worst = max(float((ours[n] - theirs[n]).abs().max()) for n in ours)
    assert worst <= 1e-5 * float(scale) + 1e-9


CASES = [(loss, beta, level) for loss in ("grpo", "dr_grpo", "dapo") for beta in (0.0, 0.04)
         for level in ("token", "sequence")]


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("loss_type", "beta", "level"), CASES)
def test_loss_and_gradients_match_trl(tiny_model_dir, tmp_path, loss_type, beta, level):
    trl_trainer, rows = _trl_trainer(tiny_model_dir, tmp_path, loss_type=loss_type, beta=beta,
                                     importance_sampling_level=level)
    model, tokenizer = trl_trainer.model, trl_trainer.processing_class
    completions = _completions(tokenizer)
    trl_trainer._generate_single_turn = lambda *args, **kwargs: ([list(c) for c in completions], None)
    inputs = [copy.deepcopy(rows[0]) for _ in range(4)] + [copy.deepcopy(rows[1]) for _ in range(4)]
    trl_batch = trl_trainer._generate_and_score_completions(inputs)

    config = GRPOConfig(model=tiny_model_dir, reward="math", output_dir=str(tmp_path / "ours"), device="cpu",
                        num_generations=4, prompts_per_step=2, max_completion_length=MAX_LEN,
                        temperature=TEMPERATURE, loss_type=loss_type, beta=beta, epsilon_high=0.28,
                        importance_sampling_level=level, num_iterations=2, micro_batch_size=8)
    prompts = encode_rows(((i + 1, r, None) for i, r in enumerate(rows)), tokenizer, "prompt", "auto", 256)
    eos = {tokenizer.eos_token_id}
    ours = GRPOTrainer(config, prompts, reward=build("math"), model=model, tokenizer=tokenizer,
                       generator=ReplayGenerator(completions, eos), progress=False)
    batch, _ = ours.rollout(prompts.prompts)
    ours.reference_logps(batch)
    trained, advantages, totals = ours.prepare_update(batch)

    # the same prompts, rewards, advantages, old and reference log-probabilities
    trl_prompt_rows = [[t for t, m in zip(ids, mask, strict=True) if m]
                       for ids, mask in zip(trl_batch["prompt_ids"].tolist(), trl_batch["prompt_mask"].tolist(),
                                            strict=True)]
    assert trl_prompt_rows == [list(batch.prompts[i // 4].ids) for i in range(8)]
    assert torch.allclose(advantages, trl_batch["advantages"].float(), atol=1e-5)
    assert advantages.abs().sum() > 0
    mask = trl_batch["completion_mask"].float()
    width = mask.shape[1]
    ours_old = torch.stack([torch.nn.functional.pad(r, (0, width - r.numel())) for r in trained.old_logps])
    assert torch.allclose(ours_old * mask, trl_batch["old_per_token_logps"] * mask, atol=1e-4)
    if beta:
        ours_ref = torch.stack([torch.nn.functional.pad(r, (0, width - r.numel())) for r in trained.ref_logps])
        assert torch.allclose(ours_ref * mask, trl_batch["ref_per_token_logps"] * mask, atol=1e-4)
    assert int(trl_batch["num_items_in_batch"]) == totals.tokens

    for iteration in range(2):
        model.zero_grad(set_to_none=True)
        trl_loss = trl_trainer.compute_loss(model, trl_batch)
        trl_loss.backward()
        theirs = grads(model)
        model.zero_grad(set_to_none=True)
        sums: dict[str, float] = {}
        our_loss = ours.accumulate_gradients(trained, advantages, totals, iteration, sums)
        mine = grads(model)
        assert our_loss == pytest.approx(float(trl_loss), rel=1e-5, abs=1e-7)
        _assert_close_grads(mine, theirs)
        if iteration == 1:
            assert sums["clip_low"] > 0 and sums["clip_high"] > 0, "the moved weights must clip on both sides"
            assert sums["ratio_max"] > 1.28  # past epsilon_high, not only epsilon
        else:  # a long step down the loss: ratios move far from 1, up for rewarded completions
            norm = torch.cat([g.flatten() for g in theirs.values()]).norm()
            with torch.no_grad():
                for name, p in model.named_parameters():
                    if name in theirs:
                        p.add_(theirs[name] * (-STEP / norm))
    model.zero_grad(set_to_none=True)


@pytest.mark.timeout(600)
def test_five_optimizer_steps_through_trls_train_give_our_weights(tiny_model_dir, tmp_path):
    """Beyond one loss: TRL's own ``train()`` (its optimizer, linear schedule, gradient clipping
    at 1.0 — active here, the gradient norm is above it) and our loop, five steps on the same
    completions of one prompt, move the weights by the same update (fp32 rounding apart)."""
    from transformers import AutoModelForCausalLM

    rows = [{"prompt": [{"role": "user", "content": PROMPTS[0][0]}], "answer": PROMPTS[0][1]}] * 8
    trl_trainer, _ = _trl_trainer(tiny_model_dir, tmp_path, learning_rate=1e-3, max_steps=5, save_strategy="no",
                                  num_iterations=1, num_generations=8, temperature=1.0, epsilon_high=None,
                                  dataset=rows)
    tokenizer = trl_trainer.processing_class
    completions = _completions(tokenizer)
    trl_trainer._generate_single_turn = lambda *args, **kwargs: ([list(c) for c in completions], None)
    start = {n: p.detach().clone() for n, p in trl_trainer.model.named_parameters()}
    trl_trainer.train()
    theirs = torch.cat([(p.detach() - start[n]).flatten() for n, p in trl_trainer.model.named_parameters()])

    config = GRPOConfig(model=tiny_model_dir, reward="math", output_dir=str(tmp_path / "ours"), device="cpu",
                        num_generations=8, prompts_per_step=1, max_completion_length=MAX_LEN, learning_rate=1e-3,
                        max_steps=5, micro_batch_size=8, save_every=0)
    prompts = encode_rows(((1, rows[0], None),), tokenizer, "prompt", "auto", 256)
    ours = GRPOTrainer(config, prompts, reward=build("math"), tokenizer=tokenizer,
                       model=AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32),
                       generator=ReplayGenerator(completions, {tokenizer.eos_token_id}), progress=False,)
    norms = [ours.train_step()["grad_norm"] for _ in range(5)]
    mine = torch.cat([(p.detach() - start[n]).flatten() for n, p in ours.model.named_parameters()])
    assert min(norms) > 1.0  # clipping does something
    assert theirs.norm() > 1.0 and float((mine - theirs).norm() / theirs.norm()) < 1e-4
