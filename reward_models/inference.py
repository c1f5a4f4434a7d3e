"""Scoring with a reward model: batches in, one log-odds per read position out.

``predict`` is shared by training's evaluation and by a saved model served as a verifier, so the
numbers a training log reports are the numbers the verifier gives. Batches are sorted by length
(padding stays small) and run under ``torch.inference_mode``.

A saved reward model is a directory: the HF model and tokenizer (``save_pretrained``) and
``rewardsmith.json``, which records how it reads its input (kind, step separator, chat template,
attention, window) so that serving cannot drift from training.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rewardsmith.reward_models.data import Text
from rewardsmith.reward_models.encoding import Encoded, Encoder
from rewardsmith.reward_models.loading import ModelLoadError, load_tokenizer
from rewardsmith.reward_models.model import device_of, load_model, position_logits
from rewardsmith.reward_models.steps import StepSplitter
from rewardsmith.verifiers.reward_model import sigmoid

META_FILE = "rewardsmith.json"
IGNORE = -100.0


def collate(batch: Sequence[Encoded], pad_id: int, device: Any = None) -> dict[str, Any]:
    """Right-padded tensors: ``input_ids``, ``attention_mask``, ``positions`` (-1 where a row has
    fewer), ``labels`` (``IGNORE`` there) and ``margins``."""
    import torch

    length = max(len(e) for e in batch)
    n_pos = max(len(e.positions) for e in batch)
    ids = torch.full((len(batch), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), length), dtype=torch.long)
    positions = torch.full((len(batch), n_pos), -1, dtype=torch.long)
    labels = torch.full((len(batch), n_pos), IGNORE, dtype=torch.float32)
    for row, item in enumerate(batch):
        ids[row, : len(item)] = torch.tensor(item.input_ids, dtype=torch.long)
        mask[row, : len(item)] = 1
        positions[row, : len(item.positions)] = torch.tensor(item.positions, dtype=torch.long)
        if item.labels:
            labels[row, : len(item.labels)] = torch.tensor(item.labels, dtype=torch.float32)
    out = {"input_ids": ids, "attention_mask": mask, "positions": positions, "labels": labels,
           "margins": torch.tensor([e.margin for e in batch], dtype=torch.float32)}
    if device is not None:
        out = {k: v.to(device) for k, v in out.items()}
    return out


def log_odds(logits: Any) -> Any:
    """One number per position: the logit of a one-output head, l1 − l0 of a two-class head
    (so that sigmoid of it is P(correct) either way)."""
    return logits[..., 0] if logits.shape[-1] == 1 else logits[..., 1] - logits[..., 0]


def predict(model: Any, encoded: Sequence[Encoded], pad_id: int, batch_size: int = 32,
            causal: bool = False) -> list[list[float]]:
    """Log-odds at every read position of every input, in input order."""
    import torch

    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    out: list[list[float]] = [[] for _ in encoded]
    was_training = model.training
    model.eval()
    device = device_of(model)
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                chunk = order[start:start + batch_size]
                batch = collate([encoded[i] for i in chunk], pad_id, device)
                logits = position_logits(model, batch["input_ids"], batch["attention_mask"], batch["positions"],
                                         causal=causal)
                values = log_odds(logits).float().cpu().tolist()
                for row, i in enumerate(chunk):
                    out[i] = values[row][: len(encoded[i].positions)]
    finally:
        model.train(was_training)
    return out


@dataclass(frozen=True)
class ModelMeta:
    """How a saved reward model reads its input (``rewardsmith.json``)."""

    kind: str  # "orm" | "prm"
    max_length: int = 1024
    chat_template: bool = True
    separator: str = "\n\n"
    causal: bool = False
    attention: str = "native"  # encoder PRMs: prefix | causal | bidirectional (see train.TrainConfig.attention)
    base: str = ""
    threshold: float = 0.5  # PRM: P(correct) below this marks a step wrong (chosen on validation data)
    num_labels: int = 1  # 2: a two-class head (hard PRM labels)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def read(cls, path: Path) -> ModelMeta:
        meta_path = path / META_FILE
        if not meta_path.is_file():
            raise ModelLoadError(f"{path} is not a reward model saved by rewardsmith (no {META_FILE}); "
                                 "train one with `rewardsmith train orm|prm`")
        data = json.loads(meta_path.read_text())
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def model_folder(path: str | Path) -> Path:
    """The saved reward model at ``path``: ``path`` itself when it holds ``rewardsmith.json``, or
    the ``model/`` of a ``train orm|prm`` run folder; :class:`ModelLoadError` saying which two it
    looked for and what it found otherwise."""
    folder = Path(path)
    if (folder / META_FILE).is_file():
        return folder
    if (folder / "model" / META_FILE).is_file():
        return folder / "model"
    if not folder.exists():
        found = "it does not exist"
    elif not folder.is_dir():
        found = "it is a file"
    else:
        names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())
        run_signs = [n for n in ("log.jsonl", "checkpoints/", "result.json", "model/") if n in names]
        if run_signs:
            found = (f"it is a run folder ({', '.join(run_signs)}) without a saved model: the run has not finished "
                     "(rerun the same `rewardsmith train` command to resume it)")
        elif "config.json" in names:
            found = (f"it is a model folder without {META_FILE} (a base model, not one `rewardsmith train orm|prm` "
                     "saved)")
        else:
            shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            found = f"it holds {shown}" if names else "it is empty"
    raise ModelLoadError(
        f"{folder} is not a reward model: looked for a model folder ({folder / META_FILE}) or a run folder of "
        f"`rewardsmith train orm|prm` ({folder / 'model' / META_FILE}), but {found}")


class RewardModel:
    """A saved reward model, loaded once per process per (path, device, dtype)."""

    _cache: ClassVar[dict[tuple[str, str, str], RewardModel]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: str | Path, device: str = "auto", dtype: str | None = None) -> None:
        import torch

        self.path = Path(path)
        self.meta = ModelMeta.read(self.path)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.tokenizer = load_tokenizer(str(self.path), padded=True)
        torch_dtype = getattr(torch, dtype) if dtype else None
        self.model = load_model(str(self.path), self.meta.kind, num_labels=self.meta.num_labels, dtype=torch_dtype,
                                pad_token_id=self.tokenizer.pad_token_id)
        self.model.to(device).eval()
        self.encoder = Encoder(self.tokenizer, self.meta.max_length, self.meta.chat_template,
                               StepSplitter(self.meta.separator), prefixes=self.meta.attention == "prefix")
        self.lock = threading.Lock()  # one forward at a time: threads share the model

    @classmethod
    def get(cls, path: str | Path, device: str = "auto", dtype: str | None = None) -> RewardModel:
        key = (str(Path(path).resolve()), device, dtype or "")
        with cls._lock:
            if key not in cls._cache:
                cls._cache[key] = cls(path, device, dtype)
            return cls._cache[key]

    def encode(self, prompt: Text, completion: Text) -> list[Encoded]:
        if self.meta.kind == "orm":
            return [self.encoder.outcome(prompt, completion)]
        return self.encoder.process_text(prompt, completion)

    def logits(self, rows: Sequence[tuple[Text, Text]], batch_size: int = 16) -> list[list[float] | Exception]:
        """Per row, the log-odds at each read position (ORM: one; PRM: one per step), or the
        exception that made the row unscorable (too long, no step): the completion's doing."""
        return self._run([lambda p=p, c=c: self.encode(p, c) for p, c in rows], batch_size)

    def step_logits(self, rows: Sequence[tuple[Text, Sequence[str]]], batch_size: int = 16
                    ) -> list[list[float] | Exception]:
        """A PRM's log-odds for rows whose steps are given (evaluation data), one per step."""
        return self._run([lambda p=p, s=s: self.encoder.process(p, s) for p, s in rows], batch_size)

    def _run(self, encoders: Sequence[Any], batch_size: int) -> list[list[float] | Exception]:
        """Each row's sequences (one, or one per step prefix) through the model together; a row's
        values in order of its read positions."""
        encoded: list[list[Encoded] | None] = []
        out: list[list[float] | Exception] = []
        for encode in encoders:
            try:
                encoded.append(encode())
                out.append([])
            except ValueError as exc:  # TooLong, an empty completion
                encoded.append(None)
                out.append(exc)
        flat = [seq for seqs in encoded if seqs is not None for seq in seqs]
        with self.lock:
            values = iter(predict(self.model, flat, self.tokenizer.pad_token_id, batch_size, causal=self.meta.causal))
        for i, seqs in enumerate(encoded):
            if seqs is not None:
                out[i] = [x for _ in seqs for x in next(values)]
        return out

    def score(self, rows: Sequence[tuple[Text, Text]], batch_size: int = 16) -> list[list[float] | Exception]:
        """Like :meth:`logits`, as P(correct) (the sigmoid of the log-odds)."""
        return [v if isinstance(v, Exception) else [sigmoid(x) for x in v] for v in self.logits(rows, batch_size)]

