"""The GRPO loop's parts: advantages, the loss mask, micro-batching, filters, error rows, the prompt
sampler, prompt loading, and the order of failures (the reward spec before the model)."""

from __future__ import annotations

import json
import math

import pytest
from conftest import REPO

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from grpo_helpers import ReplayGenerator, grads, make_tiny_llama  # noqa: E402

from rewardsmith.adapters.grpo.config import GRPOConfig  # noqa: E402
from rewardsmith.adapters.grpo.data import encode_rows  # noqa: E402
from rewardsmith.adapters.grpo.loop import GRPOTrainer, RewardOutage, build_trainer  # noqa: E402
from rewardsmith.adapters.grpo.objective import group_advantages  # noqa: E402
from rewardsmith.adapters.grpo.prompts import PromptSampler  # noqa: E402
from rewardsmith.reward_models.sampling import cut_completion, stop_position  # noqa: E402
from rewardsmith.verifiers import SpecError, build  # noqa: E402
from rewardsmith.verifiers.core import Verdict, Verifier  # noqa: E402

# --------------------------------------------------------------------------- advantages


def test_group_advantages_are_trls_formula():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 0.5, 0.5])
    adv = group_advantages(rewards, 4, "group")
    first = rewards[:4]
    expected = (first - first.mean()) / (first.std() + 1e-4)  # Bessel std, as TRL's nanstd
    assert torch.allclose(adv.values[:4], expected, atol=1e-6)
    assert adv.values[4:].abs().sum() == 0 and adv.zero_variance.tolist() == [False, True]
    batch = group_advantages(rewards, 4, "batch")
    assert torch.allclose(batch.values[:4], (first - first.mean()) / (rewards.std() + 1e-4), atol=1e-6)
    none = group_advantages(rewards, 4, "none")
    assert torch.allclose(none.values[:4], first - first.mean())


def test_an_error_reward_is_left_out_of_its_groups_statistics_not_paid_zero():
    rewards = torch.tensor([1.0, 0.0, math.nan, 1.0])
    adv = group_advantages(rewards, 4)
    valid = torch.tensor([1.0, 0.0, 1.0])
    expected = (valid - valid.mean()) / (valid.std() + 1e-4)
    assert torch.allclose(adv.values[[0, 1, 3]], expected, atol=1e-6)
    assert adv.values[2] == 0 and adv.valid.tolist() == [True, True, False, True]
    # were the error a 0, the right answers would be paid less: the mean would be 0.5, not 2/3
    as_zero = group_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]), 4)
    assert not torch.allclose(as_zero.values[[0, 1, 3]], adv.values[[0, 1, 3]])


def test_a_group_with_fewer_than_two_scored_rows_carries_no_signal():
    adv = group_advantages(torch.tensor([1.0, math.nan, math.nan, math.nan]), 4)
    assert adv.zero_variance.tolist() == [True] and adv.values.abs().sum() == 0


# --------------------------------------------------------------------------- completions and the mask


def test_the_completion_keeps_its_eos_and_a_cut_one_is_marked_truncated():
    assert cut_completion([5, 6, 2, 9, 9], {2}) == ([5, 6, 2], False)
    assert cut_completion([5, 6, 7], {2}) == ([5, 6, 7], True)
    assert cut_completion([5, 6, 7, 2], {2}, stop_hit=1) == ([5, 6], False)


def test_stop_position_finds_the_token_that_completes_the_stop_string():
    from rewardsmith.reward_models.loading import load_tokenizer

    tok = load_tokenizer("smollm2", padded=True)
    ids = tok("The answer is <answer>7</answer> and more text", add_special_tokens=False)["input_ids"]
    at = stop_position(tok, ids, ["</answer>"])
    assert at is not None
    assert "</answer>" in tok.decode(ids[: at + 1]) and "</answer>" not in tok.decode(ids[:at])
    assert stop_position(tok, ids, ["</nothing>"]) is None


# --------------------------------------------------------------------------- a small trainer

QUESTIONS = [("What is 3 + 4? Give only the final number in \\boxed{}.", "7"),
             ("What is 12 + 9? Give only the final number in \\boxed{}.", "21"),
             ("What is 5 + 5? Give only the final number in \\boxed{}.", "10")]
# prompt 1: mixed; prompt 2: mixed, one cut at the limit; prompt 3: all right (zero variance)
TEXTS = ["\\boxed{7}", "\\boxed{8}", "The sum is 3 + 4 = 7, so \\boxed{7}", "no idea",
         "\\boxed{21}", "It is \\boxed{20}", "Let me add twelve and nine together slowly now", "\\boxed{21}",
         "\\boxed{10}", "It is \\boxed{10}", "\\boxed{10}", "ten: \\boxed{10}"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from rewardsmith.reward_models.loading import load_tokenizer

    path = make_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))
    return path, load_tokenizer(path, padded=True)


def _rows(n=3):
    return [{"prompt": [{"role": "user", "content": q}], "answer": a} for q, a in QUESTIONS[:n]]


def _trainer(tiny, tmp_path, reward=None, texts=TEXTS, n_prompts=3, rows=None, length=10,
             **switches):
    from transformers import AutoModelForCausalLM

    path, tok = tiny
    rows = rows or _rows(n_prompts)
    prompts = encode_rows(((i + 1, r, None) for i, r in enumerate(rows)), tok, "prompt", "auto", 256)
    completions = [(tok(t, add_special_tokens=False)["input_ids"] + [tok.eos_token_id])[:length] for t in texts]
    settings = {"model": path, "output_dir": str(tmp_path / "out"), "device": "cpu", "num_generations": 4,
                "prompts_per_step": n_prompts, "max_completion_length": length, "temperature": 0.7, **switches}
    config = GRPOConfig.from_mapping(settings)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    return GRPOTrainer(config, prompts, reward=reward or build("math"), model=model, tokenizer=tok,
                       generator=ReplayGenerator(completions, {tok.eos_token_id}), progress=False)


def _gradients(trainer, iterations=1):
    batch, _ = trainer.rollout(trainer.train_set.prompts)
    trainer.reference_logps(batch)
    prepared = trainer.prepare_update(batch)
    out = []
    for iteration in range(iterations):
        trainer.model.zero_grad(set_to_none=True)
        loss = trainer.accumulate_gradients(*prepared, iteration, {})
        out.append((loss, grads(trainer.model)))
        norm = torch.cat([g.flatten() for g in out[-1][1].values()]).norm()
        with torch.no_grad():  # move the weights so that the second iteration has ratios != 1
            for p in trainer.model.parameters():
                if p.grad is not None:
                    p.add_(p.grad, alpha=-1.0 / float(norm))
    return out


def _same(a, b, tol=1e-5):
    flat_a = torch.cat([g.flatten() for g in a.values()])
    flat_b = torch.cat([g.flatten() for g in b.values()])
    return float((flat_a - flat_b).norm() / flat_b.norm().clamp(min=1e-12)) < tol


def test_the_eos_token_is_inside_the_loss_mask(tiny, tmp_path):
    trainer = _trainer(tiny, tmp_path)
    batch, _ = trainer.rollout(trainer.train_set.prompts)
    eos = tiny[1].eos_token_id
    inputs = trainer.collate(batch, range(len(batch)))
    for row, ids in enumerate(batch.completion_ids):
        n = len(ids)
        assert inputs["mask"][row, :n].tolist() == [1.0] * n and inputs["mask"][row, n:].sum() == 0
        if not batch.truncated[row]:
            assert ids[-1] == eos  # ... so the model is taught where to stop


@pytest.mark.slow
@pytest.mark.parametrize("loss_type", ["grpo", "dr_grpo", "dapo"])
def test_splitting_the_batch_into_micro_batches_changes_nothing(tiny, tmp_path, loss_type):
    whole = _gradients(_trainer(tiny, tmp_path / "a", loss_type=loss_type, micro_batch_size=12, num_iterations=2,
                                beta=0.04), iterations=2)
    split = _gradients(_trainer(tiny, tmp_path / "b", loss_type=loss_type, micro_batch_size=4, num_iterations=2,
                                beta=0.04), iterations=2)
    for (loss_w, grad_w), (loss_s, grad_s) in zip(whole, split, strict=True):
        assert loss_s == pytest.approx(loss_w, rel=1e-5)
        assert _same(grad_s, grad_w)


@pytest.mark.slow
def test_bnpo_depends_on_the_micro_batches_as_trl_documents(tiny, tmp_path):
    whole = _gradients(_trainer(tiny, tmp_path / "a", loss_type="bnpo", micro_batch_size=12))
    split = _gradients(_trainer(tiny, tmp_path / "b", loss_type="bnpo", micro_batch_size=4))
    assert not _same(split[0][1], whole[0][1], tol=1e-3)


@pytest.mark.slow
def test_filtered_zero_variance_groups_give_no_gradient_even_with_a_kl_term(tiny, tmp_path):
    # prompt 3's group is all right: zero advantage, but with beta > 0 its KL still pulls
    filtered = _gradients(_trainer(tiny, tmp_path / "f", beta=0.1, filter_zero_variance_groups=True), 2)
    informative_only = _gradients(_trainer(tiny, tmp_path / "i", beta=0.1, texts=TEXTS[:8], n_prompts=2), 2)
    unfiltered = _gradients(_trainer(tiny, tmp_path / "u", beta=0.1), 2)
    for (_, f), (_, i) in zip(filtered, informative_only, strict=True):
        assert _same(f, i)
    assert not _same(unfiltered[1][1], informative_only[1][1], tol=1e-3)  # the KL of the dropped group did pull


def test_zero_variance_groups_get_zero_advantage(tiny, tmp_path):
    trainer = _trainer(tiny, tmp_path)
    batch, stats = trainer.rollout(trainer.train_set.prompts)
    _, advantages, totals = trainer.prepare_update(batch)
    assert advantages[8:].abs().sum() == 0 and advantages[:8].abs().sum() > 0
    assert stats["informative_groups"] == 2 and stats["groups_sampled"] == 3
    assert totals.rows == 12


class FlakyOnOdd(Verifier):
    """Scores like math, except that odd rows come back as a backend error."""

    def __init__(self, all_rows: bool = False) -> None:
        self.math = build("math")
        self.all_rows = all_rows

    def _verify_batch(self, samples):
        verdicts = self.math.verify_batch(samples)
        return [Verdict(score=0.0, status="error", feedback="judge timed out") if self.all_rows or i % 2 else v
                for i, v in enumerate(verdicts)]


def test_error_rows_are_left_out_of_the_loss_and_counted(tiny, tmp_path):
    trainer = _trainer(tiny, tmp_path, reward=FlakyOnOdd())
    batch, _ = trainer.rollout(trainer.train_set.prompts)
    trained, _, totals = trainer.prepare_update(batch)
    assert totals.rows == 6 and trainer.counters["error_rows"] == 6
    assert all(v.status != "error" for v in trained.verdicts)
    assert math.isnan(float(batch.rewards[1])) and not math.isnan(float(batch.rewards[0]))


def test_prompts_without_the_rewards_column_are_named_once_with_the_fix(tiny, tmp_path, caplog):
    """A prompt file whose label column has another name trains on zeros (every row invalid_input,
    every group without variance): the loop says so once, naming the field and the config key."""
    renamed = [{"prompt": r["prompt"], "solution": r["answer"]} for r in _rows()]
    caplog.set_level("INFO", logger="rewardsmith")
    trainer = _trainer(tiny, tmp_path, rows=renamed)
    trainer.rollout(trainer.train_set.prompts)
    trainer.rollout(trainer.train_set.prompts)
    warnings = [line for line in caplog.messages if "invalid_input" in line]
    assert len(warnings) == 1 and "'answer'" in warnings[0] and "columns: {answer:" in warnings[0]
    assert trainer.counters["invalid_rows"] == 24
    mapped = _trainer(tiny, tmp_path / "mapped", rows=renamed, columns={"answer": "solution"})
    batch, _ = mapped.rollout(mapped.train_set.prompts)
    assert mapped.counters["invalid_rows"] == 0 and float(batch.rewards.sum()) > 0
    assert len([line for line in caplog.messages if "invalid_input" in line]) == 1


def test_a_reward_outage_stops_the_step_instead_of_training_on_nothing(tiny, tmp_path):
    trainer = _trainer(tiny, tmp_path, reward=FlakyOnOdd(all_rows=True))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    with pytest.raises(RewardOutage, match=r"status=error.*judge timed out.*resume"):
        trainer.train_step()
    assert all(torch.equal(before[n], p) for n, p in trainer.model.named_parameters())


class Boxed(Verifier):
    """1 for a completion with a boxed answer, whatever the prompt: each replayed group's variance
    is then fixed (groups 1 and 2 mixed, group 3 all boxed) whichever prompts are drawn."""

    def _verify(self, sample):
        return Verdict(score=float("\\boxed{" in sample.completion_text), status="ok")


def test_dynamic_sampling_keeps_drawing_until_the_groups_are_informative(tiny, tmp_path):
    trainer = _trainer(tiny, tmp_path, reward=Boxed(), dynamic_sampling=True, max_resample_rounds=2)
    batch, stats = trainer.rollout()
    # round 1: 3 prompts, 2 informative groups; round 2: 1 more prompt, informative
    assert stats["rounds"] == 2 and stats["groups_sampled"] == 4 and stats["informative_groups"] == 3
    assert len(batch.prompts) == 3
    assert not bool(group_advantages(batch.rewards, 4).zero_variance.any())
    capped = _trainer(tiny, tmp_path / "capped", reward=Boxed(), dynamic_sampling=True, max_resample_rounds=0)
    batch, stats = capped.rollout()
    assert stats["rounds"] == 1 and len(batch.prompts) == 2  # the cap holds; only informative groups train


# --------------------------------------------------------------------------- prompt order


def test_the_sampler_skips_extreme_prompts_and_reprobes_them_later():
    sampler = PromptSampler(4, seed=0, window=2, skip_extreme=True, reprobe_after=5)
    first, _ = sampler.draw(4, step=0)
    solved = first[0]
    for step in (0, 1):
        sampler.record(solved, 1.0, step)
    sampler.record(first[1], 0.5, 1)
    picked, passed = sampler.draw(4, step=2)
    assert solved not in picked and passed >= 1
    assert sampler.is_extreme(solved, step=5) and not sampler.is_extreme(solved, step=6)
    picked, passed = sampler.draw(8, step=6)  # 5 steps since its last group: due again
    assert solved in picked and passed == 0
    state = json.loads(json.dumps(sampler.state_dict()))
    clone = PromptSampler(4, seed=0, window=2, skip_extreme=True, reprobe_after=5)
    clone.load_state_dict(state)
    assert clone.draw(3, 7) == sampler.draw(3, 7)


def test_when_every_prompt_is_extreme_the_sampler_still_returns_prompts():
    sampler = PromptSampler(2, seed=0, window=1, skip_extreme=True, reprobe_after=100)
    for i in range(2):
        sampler.record(i, 0.0, 0)
    picked, _ = sampler.draw(2, 1)
    assert len(picked) == 2


# --------------------------------------------------------------------------- input and failure order


def test_long_and_malformed_prompts_are_reported_and_skipped(tiny):
    _, tok = tiny
    rows = [(1, {"prompt": "short", "answer": "1"}, None), (2, None, "Expecting value: line 1 column 1"),
            (3, {"prompt": "word " * 300, "answer": "2"}, None), (4, {"question": "no prompt"}, None),
            (5, {"prompt": [{"role": "user", "content": "hi"}], "answer": "3"}, None)]
    prompts = encode_rows(iter(rows), tok, "prompt", "auto", 64)
    assert [p.fields["answer"] for p in prompts.prompts] == ["1", "3"]
    assert prompts.skipped == {"malformed": 1, "too long": 1, "no prompt": 1}
    assert any(p.startswith("line 3: prompt is") for p in prompts.problems)
    assert "line 2" in prompts.problems[0]


def test_a_reward_spec_that_cannot_be_built_fails_before_the_model_loads(tmp_path):
    data = tmp_path / "p.jsonl"
    data.write_text(json.dumps({"prompt": "1+1?", "answer": "2"}) + "\n")
    config = GRPOConfig(model="/no/such/model", reward={"type": "math", "answer_feild": "x"})
    with pytest.raises(SpecError, match="answer_field"):
        build_trainer(config, data)


def test_cli_reports_a_bad_spec_and_a_missing_data_file(tmp_path, capsys):
    from rewardsmith.adapters.cli import main

    data = tmp_path / "p.jsonl"
    data.write_text(json.dumps({"prompt": "1+1?", "answer": "2"}) + "\n")
    assert main(["train", "grpo", "--data", str(data), "--reward", "no_such_reward", "--model", "/nowhere"]) == 2
    assert "no_such_reward" in capsys.readouterr().err
    assert main(["train", "grpo", "--data", str(tmp_path / "missing.jsonl"), "--model", "smollm2"]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert main(["train", "grpo", "--list-config"]) == 0
    listing = capsys.readouterr().out
    for key in ("loss_type", "scale_rewards", "epsilon_high", "filter_zero_variance_groups", "dynamic_sampling"):
        assert key in listing


def test_the_documented_config_lists_every_switch_with_its_default():
    import dataclasses
    import re

    from rewardsmith.verifiers.yaml_text import load_yaml

    page = REPO / "docs" / "grpo.md"
    section = page.read_text().split("# GRPO: training a policy on any reward", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    values = load_yaml(block)
    assert set(values) == {f.name for f in dataclasses.fields(GRPOConfig)}
    assert GRPOConfig.from_mapping(values) == GRPOConfig()


# --------------------------------------------------------------------------- LoRA


def test_lora_trains_only_adapters_and_the_reference_is_the_base_model(tiny, tmp_path):
    trainer = _trainer(tiny, tmp_path, lora=True, lora_r=4, beta=0.1, num_iterations=2, learning_rate=1e-2)
    assert trainer.ref_model is None  # no second copy: the base is the model with its adapters off
    batch, _ = trainer.rollout(trainer.train_set.prompts)
    trainer.reference_logps(batch)
    assert all(torch.allclose(o, r, atol=1e-6) for o, r in zip(batch.old_logps, batch.ref_logps, strict=True))
    metrics = trainer.update(batch)
    trained = {n for n, p in trainer.model.named_parameters() if p.requires_grad}
    assert trained and all("lora_" in n for n in trained)
    assert metrics["kl"] > 0  # the adapters moved the policy away from the base
    trainer.reference_logps(batch)  # the reference stays the base model after the update
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(batch.ref_logps, _base_logps(tiny, trainer, batch),
                                                                strict=True))
    assert not all(torch.allclose(o, r, atol=1e-4) for o, r in zip(batch.old_logps, batch.ref_logps, strict=True))


def _base_logps(tiny, trainer, batch):
    from transformers import AutoModelForCausalLM

    from rewardsmith.adapters.grpo.objective import token_logps

    base = AutoModelForCausalLM.from_pretrained(tiny[0], dtype=torch.float32)
    out = []
    for rows in trainer.micro_batches(len(batch)):
        inputs = trainer.collate(batch, rows)
        logps, _ = token_logps(base, inputs["input_ids"], inputs["attention_mask"],
                               int(inputs["completion_length"]), trainer.config.temperature)
        out += [row[: len(batch.completion_ids[i])] for row, i in zip(logps.detach(), rows, strict=True)]
    return out


def test_the_weights_pushed_to_vllm_are_the_merged_lora_weights_under_base_names(tiny):
    import copy

    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from rewardsmith.adapters.grpo.vllm_engine import merged_state_dict

    base = AutoModelForCausalLM.from_pretrained(tiny[0], dtype=torch.float32)
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(std=0.1)  # adapters that change the weights
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    pushed = merged_state_dict(model)
    expected = copy.deepcopy(model).merge_and_unload().state_dict()
    assert pushed.keys() == expected.keys()
    assert all(torch.allclose(pushed[k], expected[k], atol=1e-6) for k in expected)
    original = AutoModelForCausalLM.from_pretrained(tiny[0], dtype=torch.float32).state_dict()
    changed = [k for k in expected if "q_proj" in k and not torch.allclose(pushed[k], original[k])]
    assert changed  # the LoRA delta is in the pushed weights
    assert all(torch.equal(before[n], p) for n, p in model.named_parameters())  # the model itself untouched


def test_soft_overlong_shaping_reads_the_sampled_token_ids(tiny, tmp_path):
    spec = {"type": "weighted", "parts": ["math", {"type": "overlong", "max_length": 10, "cache_length": 4,
                                                   "ids_field": "completion_ids"}], "weights": [1.0, 1.0]}
    trainer = _trainer(tiny, tmp_path, reward=build(spec))
    batch, _ = trainer.rollout(trainer.train_set.prompts)
    for ids, verdict in zip(batch.completion_ids, batch.verdicts, strict=True):
        n = len(ids)  # tokens as sampled (EOS included), not the decoded text re-tokenised
        expected = 0.0 if n <= 6 else max(-1.0, (6 - n) / 4)
        assert verdict.components["overlong"] == pytest.approx(expected)
    assert any(v.components["overlong"] < 0 for v in batch.verdicts)


def test_a_yaml_config_reads_5e_6_as_a_number():
    from rewardsmith.verifiers.yaml_text import load_yaml

    config = GRPOConfig.from_mapping(load_yaml("learning_rate: 5e-6\nseed: 3\nbeta: 1.5\nmodel: '1e5'\n"))
    assert config.learning_rate == 5e-6 and config.seed == 3 and config.beta == 1.5 and config.model == "1e5"


def test_the_models_own_generation_defaults_do_not_change_what_is_sampled(tiny):
    """A hub model's generation_config (Qwen ships repetition_penalty 1.05, top_k 20; others
    num_beams, min_new_tokens) would fill every knob the sampler leaves unset, so completions
    would come from a distribution the trainer's log-probabilities do not describe. The
    sampler draws at exactly the configured settings: its log-probs are the trainer's."""
    from transformers import AutoModelForCausalLM

    from rewardsmith.adapters.grpo.objective import token_logps
    from rewardsmith.reward_models.sampling import HFSampler, SamplingSettings

    path, tok = tiny
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    model.generation_config.update(repetition_penalty=3.0, no_repeat_ngram_size=1, min_new_tokens=6,
                                   suppress_tokens=[tok.eos_token_id])
    prompts = encode_rows(((i + 1, r, None) for i, r in enumerate(_rows(2))), tok, "prompt", "auto", 256).prompts
    torch.manual_seed(0)
    sampled = HFSampler(model, tok).generate([list(p.ids) for p in prompts], 4, SamplingSettings(8, 1.0))
    assert model.generation_config.repetition_penalty == 3.0  # the model's own config is left as it was
    gaps = []
    for i, ids in enumerate(sampled.completion_ids):
        prompt = list(prompts[i // 4].ids)
        full = torch.tensor([prompt + ids])
        logps, _ = token_logps(model, full, torch.ones_like(full), len(ids), 1.0)
        gaps.append(float((logps[0].detach() - torch.tensor(sampled.sampler_logps[i])).abs().max()))
    assert max(gaps) < 1e-4, gaps


def test_sharing_a_groups_prompt_forward_gives_the_same_log_probs_and_gradients(tiny, tmp_path):
    """The prompt runs once per group and its keys/values serve every completion of the group:
    log-probabilities and gradients equal those of the full sequences (prompts of different
    lengths, so left padding; completions of different lengths, so right padding)."""
    from rewardsmith.adapters.grpo.objective import token_logps
    from rewardsmith.reward_models.shared_prompt import prompt_groups

    trainer = _trainer(tiny, tmp_path, temperature=0.7)
    batch, _ = trainer.rollout(trainer.train_set.prompts)
    rows = list(range(len(batch)))
    inputs = trainer.collate(batch, rows)
    assert inputs["prompt_of_row"].tolist() == [0] * 4 + [1] * 4 + [2] * 4
    assert len({len(p.ids) for p in batch.prompts}) > 1 and (inputs["mask"].sum(-1) < inputs["mask"].shape[1]).any()
    length = int(inputs["completion_length"])
    results = []
    for shared in (None, inputs["prompt_of_row"]):
        trainer.model.zero_grad(set_to_none=True)
        logps, ent = token_logps(trainer.model, inputs["input_ids"], inputs["attention_mask"], length, 0.7,
                                 entropy=True, prompt_of_row=shared)
        ((logps * inputs["mask"]).sum() / inputs["mask"].sum()).backward()
        results.append((logps.detach(), ent, grads(trainer.model)))
    (full, full_ent, full_grads), (split, split_ent, split_grads) = results
    mask = inputs["mask"].bool()
    assert torch.allclose(full[mask], split[mask], atol=1e-5) and torch.allclose(full_ent[mask], split_ent[mask],
                                                                                 atol=1e-4)
    assert _same(full_grads, split_grads, tol=1e-4)
    assert prompt_groups([(1,), (2,), (3,)]) is None  # nothing repeats: nothing to share
    assert prompt_groups([(1,), (2,), (1,)]) is None  # a prompt's rows apart: not shared


def test_entropy_taken_a_chunk_of_positions_at_a_time_equals_the_whole(monkeypatch):
    """The entropy metric is computed in chunks (its temporaries would otherwise be two more
    (B, T, vocab) tensors); the chunks must tile the positions exactly, in order."""
    from rewardsmith.adapters.grpo import objective

    monkeypatch.setattr(objective, "ENTROPY_CHUNK_POSITIONS", 7)  # 3 x 11 = 33 positions: 5 chunks, one short
    logp_all = torch.randn(3, 11, 19, generator=torch.Generator().manual_seed(0)).log_softmax(-1)
    whole = -(logp_all.exp() * logp_all).sum(-1)
    chunked = objective._entropy(logp_all)
    assert chunked.shape == (3, 11)
    assert torch.allclose(chunked, whole, atol=1e-6)
    assert not torch.allclose(chunked, whole.flip(-1), atol=1e-3)  # each position keeps its own value


@pytest.mark.parametrize("kind", ["gate", "weighted"])
def test_the_loop_trains_on_exactly_the_specs_reward(tiny, tmp_path, kind):
    """What the loop trains on is build(spec).verify on the same rows (the completion as the
    policy sampled it, the prompt's columns as fields), for a gate (well formatted but wrong
    earns nothing) and a weighted sum."""
    from rewardsmith.verifiers import Sample

    spec = {"gate": {"type": "gate", "when": "format", "then": {"type": "math", "workers": 0}},
            "weighted": {"type": "weighted", "parts": [{"type": "math", "workers": 0}, "format"],
                         "weights": [1.0, 0.5]}}[kind]
    texts = ["<think>7</think><answer>7</answer>", "<think>8</think><answer>8</answer>", "\\boxed{7}", "no",
             "<think>a</think><answer>21</answer>", "\\boxed{21}", "<answer>21</answer>", "<think>x</think>",
             "<think>b</think><answer>10</answer>", "\\boxed{10}", "<think>c</think><answer>11</answer>", "10"]
    trainer = _trainer(tiny, tmp_path, reward=build(spec), texts=texts, length=40)
    batch, _ = trainer.rollout(trainer.train_set.prompts)
    _, tok = tiny
    assert not any(batch.truncated)  # every completion whole
    samples = [Sample(prompt=row["prompt"], fields={"answer": row["answer"]},
                      completion=[{"role": "assistant", "content": tok.decode(ids, skip_special_tokens=True)}])
               for row, ids in zip([r for r in _rows() for _ in range(4)], batch.completion_ids, strict=True)]
    expected = [build(spec).verify(s).score for s in samples]
    assert batch.rewards.tolist() == pytest.approx(expected)
    assert len(set(expected)) > 1  # the rows differ, so a reward read from the wrong row would show
    if kind == "gate":
        assert expected[1] == 0.0 and expected[2] == 0.0  # formatted but wrong; right but unformatted
