"""Trainer configs are checked from Python the way verifier options are (issue 25): a bad value
raises the same SpecError, naming the key and what would work, before anything loads."""

from __future__ import annotations

import pytest

from rewardsmith.adapters.grpo.config import GRPOConfig
from rewardsmith.reward_models.train import TrainConfig
from rewardsmith.verifiers.math import MathVerifier
from rewardsmith.verifiers.options import SpecError


@pytest.mark.parametrize(("make", "key", "says"), [
    (lambda: GRPOConfig(num_generations=-3), "num_generations", ">= 2"),
    (lambda: GRPOConfig(learning_rate="abc"), "learning_rate", "abc"),
    (lambda: GRPOConfig(loss_type="ppo"), "loss_type", "dapo"),
    (lambda: GRPOConfig(top_p=1.5), "top_p", "<= 1"),
    (lambda: TrainConfig(batch_size=-1), "batch_size", "> 0"),
    (lambda: TrainConfig(kind="rm"), "kind", "orm"),
    (lambda: TrainConfig(learning_rate=0), "learning_rate", "> 0"),
    (lambda: MathVerifier(timeout_s=-1), "timeout_s", "> 0"),  # the verifier's, for comparison
])
def test_a_bad_value_raises_a_spec_error_naming_the_key(make, key: str, says: str) -> None:
    with pytest.raises(SpecError) as caught:
        make()
    assert key in str(caught.value) and says in str(caught.value)


def test_good_values_are_kept_and_coerced_losslessly() -> None:
    grpo = GRPOConfig(num_generations=4, learning_rate=1, stop=["</answer>"])
    assert (grpo.num_generations, grpo.learning_rate, grpo.stop) == (4, 1.0, ("</answer>",))
    assert type(grpo.learning_rate) is float
    assert TrainConfig(batch_size=2).batch_size == 2
    with pytest.raises(SpecError, match="num_generations"):  # the YAML path says the same
        GRPOConfig.from_mapping({"num_generations": 1})
