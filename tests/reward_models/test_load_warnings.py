"""Loading a model says what matters about the load and nothing else: transformers' ~1.5 KB
"The following layers were not sharded" (a tensor-parallel check it runs on every load once a
verbosity is set, sharding or not) and the report of a new head's weights are dropped around our
loads only; any other warning, during a load or after it, still gets through.

Records are read with a handler on the ``transformers`` logger (where every transformers record
goes before its own stderr handler, which keeps whatever stream was current when it was made)."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from rewardsmith.reward_models.loading import quiet_loading
from rewardsmith.reward_models.model import load_model

TP_LOGGER = "transformers.distributed.tensor_parallel"
LOAD_LOGGER = "transformers.modeling_utils"


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def text(self) -> str:
        return "\n".join(self.messages)


@pytest.fixture
def shown():
    """What transformers logs at WARNING and above, under the verbosity that makes it run its
    tensor-parallel check (one a user may set)."""
    import transformers  # noqa: F401  (sets up the transformers logger)

    handler = Collect()
    root, load = logging.getLogger("transformers"), logging.getLogger(LOAD_LOGGER)
    level = load.level
    load.setLevel(logging.WARNING)
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)
    load.setLevel(level)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["orm", "prm"])
def test_loading_a_base_with_a_new_head_shows_no_sharding_or_head_report(kind, shown):
    load_model("minilm", kind)
    assert "not sharded" not in shown.text() and "TP rules" not in shown.text()
    assert "LOAD REPORT" not in shown.text()  # the new head's MISSING weights are the point of a new head


@pytest.mark.slow
def test_without_the_filter_transformers_does_print_it(shown):
    """The check above would pass vacuously if transformers stopped logging it."""
    from transformers import AutoModelForTokenClassification

    from rewardsmith.reward_models.loading import resolve

    AutoModelForTokenClassification.from_pretrained(resolve("minilm"))
    assert "The following layers were not sharded" in shown.text()
    assert len(shown.text()) > 1000


def test_other_warnings_still_get_through_during_a_load_and_the_filter_goes_after(shown):
    with quiet_loading():
        logging.getLogger(TP_LOGGER).warning("The following layers were not sharded: a.weight")
        logging.getLogger(LOAD_LOGGER).warning("a checkpoint with a corrupted shard")
        logging.getLogger(LOAD_LOGGER).warning("Model LOAD REPORT from: x\nKey | Status\n"
                                               "encoder.layer.0.weight | MISSING\nclassifier.weight | MISSING\n")
        logging.getLogger(LOAD_LOGGER).warning("Model LOAD REPORT from: x\nKey | Status\n"
                                               "score.weight | MISSING\nscore.bias | MISSING\n")
    assert "not sharded" not in shown.text()
    assert "corrupted shard" in shown.text()
    assert "encoder.layer.0.weight" in shown.text()  # a missing weight outside the head is reported
    assert "score.bias" not in shown.text()  # a new head alone is not
    logging.getLogger(TP_LOGGER).warning("The following layers were not sharded: b.weight")
    assert "not sharded: b.weight" in shown.text()  # scoped: transformers' logging is as it was
