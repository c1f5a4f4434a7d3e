"""Examples as token ids, and where on them a reward model's score is read.

One encoder serves training, evaluation and the ``orm``/``prm`` verifiers, so a model is scored
at inference exactly as it was trained:

* The prompt is rendered with the tokenizer's chat template (generation prompt included) when
  the tokenizer has one and ``chat_template`` is on, else taken as text. The completion follows
  it as the policy produced it — no end-of-turn or EOS token is appended, so tokenizers without
  an ``eos_token`` need nothing, and the score of a decoder is read at the completion's last token.
* Prompt and completion are tokenized separately and the completion with
  ``split_special_tokens=True``: a completion that *writes* ``<|im_end|>`` or ``[SEP]`` gets the
  characters, not the control token (a policy must not move the position its score is read at).
* Encoders without a template get their own pair frame (``[CLS] prompt [SEP] completion [SEP]``),
  read off the tokenizer once.
* A PRM's label sits on the last token of each step, found from the tokenizer's character
  offsets: the last token that starts before the step's end. Searching for the separator's token
  would miss it whenever the tokenizer merges it with the step's last characters.
* Too long: the prompt is cut from the left first (the completion is what is judged); a
  completion that alone does not fit is :class:`TooLong` (training skips the row and counts it;
  the verifiers score it 0, since the policy chose its length).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.reward_models.data import Pair, Point, Stepwise, Text
from rewardsmith.reward_models.steps import StepSplitter
from rewardsmith.verifiers import RewardsmithError
from rewardsmith.verifiers.json_text import without_surrogates


class TooLong(RewardsmithError, ValueError):
    """The completion alone does not fit in the model's window."""


@dataclass(frozen=True)
class Encoded:
    input_ids: list[int]
    positions: list[int]  # where the score is read: one (ORM) or one per step (PRM)
    labels: list[float]  # one per position; empty at inference
    margin: float = 0.0

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass
class Encoder:
    """Tokenizes reward-model inputs the one way (see the module docstring)."""

    tokenizer: Any
    max_length: int = 1024
    chat_template: bool = True
    splitter: StepSplitter = field(default_factory=StepSplitter)
    prefixes: bool = False  # a PRM input as one sequence per step prefix (encoders: see model.py)

    def __post_init__(self) -> None:
        self.use_template = bool(self.chat_template and getattr(self.tokenizer, "chat_template", None))
        frame = self.tokenizer("a", "b", add_special_tokens=True) if not self.use_template else None
        if frame is None:
            self.head, self.middle, self.tail = [], [], []
        else:
            ids, seq = frame["input_ids"], frame.sequence_ids()
            first, second = seq.index(0), seq.index(1)
            self.head = list(ids[:first])
            self.middle = [t for t, s in zip(ids[first:second], seq[first:second], strict=True) if s is None]
            self.tail = [t for t, s in zip(ids[second:], seq[second:], strict=True) if s is None]

    # ------------------------------------------------------------------ pieces

    def prompt_ids(self, prompt: Text) -> list[int]:
        """The prompt's ids, its control tokens (a rendered chat template's) parsed as such: the
        prompt comes from the dataset, and the policy saw it this way."""
        if isinstance(prompt, str) and not self.use_template:
            return self._ids(prompt, special=True) if prompt else []
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
        if self.use_template:
            text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            return self._ids(text, special=True)
        return self._ids("\n".join(str(m.get("content", "")) for m in messages), special=True)

    def _ids(self, text: str, special: bool) -> list[int]:
        # ``special``: the text may hold control tokens (a rendered template); a completion's never does
        text = without_surrogates(text)  # a completion may hold one (JSON's "\ud800"); no tokenizer encodes it
        return list(self.tokenizer(text, add_special_tokens=False, split_special_tokens=not special)["input_ids"])

    def _frame(self, prompt: list[int], completion: list[int]) -> tuple[list[int], int]:
        """The whole sequence and the index of the completion's first token, the prompt cut from
        the left when the whole does not fit."""
        fixed = len(self.head) + len(self.middle) + len(self.tail) + len(completion)
        if fixed > self.max_length:
            raise TooLong(f"the completion takes {len(completion)} tokens, more than max_length "
                          f"{self.max_length} allows")
        room = self.max_length - fixed
        prompt = prompt[len(prompt) - room:] if len(prompt) > room else prompt
        start = len(self.head) + len(prompt) + len(self.middle)
        return [*self.head, *prompt, *self.middle, *completion, *self.tail], start

    # ------------------------------------------------------------------ examples

    def outcome(self, prompt: Text, completion: Text, label: float | None = None) -> Encoded:
        """An ORM input: the score is read at the completion's last token."""
        prompt, text = split_completion(prompt, completion)
        comp = self._ids(text, special=False)
        if not comp:
            comp = self._ids(" ", special=False) or [self._fallback_id()]  # an empty answer still gets a position
        ids, start = self._frame(self.prompt_ids(prompt), comp)
        return Encoded(ids, [start + len(comp) - 1], [] if label is None else [float(label)])

    def process(self, prompt: Text, steps: Sequence[str], labels: Sequence[float] | None = None) -> list[Encoded]:
        """A PRM input: the steps joined with the splitter's separator, a position per step (one
        sequence; with ``prefixes``, one sequence per step prefix, each read at its end)."""
        text, spans = self.splitter.joined_spans(steps)
        return self._process(prompt, text, spans, labels)

    def process_text(self, prompt: Text, completion: Text) -> list[Encoded]:
        """A raw completion, cut into steps by the splitter (what the ``prm`` verifier receives)."""
        prompt, text = split_completion(prompt, completion)
        spans = self.splitter.spans(text)
        if not spans:
            raise ValueError("the completion has no step (it is empty or whitespace)")
        return self._process(prompt, text, spans, None)

    def _process(self, prompt: Text, text: str, spans: Sequence[tuple[int, int]],
                 labels: Sequence[float] | None) -> list[Encoded]:
        enc = self.tokenizer(without_surrogates(text), add_special_tokens=False, split_special_tokens=True,
                             return_offsets_mapping=True)
        comp, offsets = list(enc["input_ids"]), enc["offset_mapping"]
        last = step_end_tokens(offsets, spans)
        prompt_ids = self.prompt_ids(prompt)
        values = [float(v) for v in labels] if labels is not None else None
        if not self.prefixes:
            ids, start = self._frame(prompt_ids, comp)
            return [Encoded(ids, [start + i for i in last], values or [])]
        self._frame(prompt_ids, comp)  # the whole must fit, as without prefixes (TooLong otherwise)
        out = []
        for k, end in enumerate(last):  # the prefix ending at step k: what a PRM sees mid-generation
            ids, start = self._frame(prompt_ids, comp[: end + 1])
            out.append(Encoded(ids, [start + end], [values[k]] if values is not None else []))
        return out

    def example(self, example: Pair | Point | Stepwise) -> list[Encoded]:
        """A training example as one sequence (pointwise, stepwise) or two (chosen, rejected)."""
        if isinstance(example, Pair):
            chosen = self.outcome(example.prompt, example.chosen)
            rejected = self.outcome(example.prompt, example.rejected)
            return [Encoded(chosen.input_ids, chosen.positions, [], example.margin),
                    Encoded(rejected.input_ids, rejected.positions, [], example.margin)]
        if isinstance(example, Point):
            return [self.outcome(example.prompt, example.completion, example.label)]
        return self.process(example.prompt, example.steps, example.labels)

    def _fallback_id(self) -> int:
        for name in ("unk_token_id", "eos_token_id", "pad_token_id"):
            value = getattr(self.tokenizer, name, None)
            if isinstance(value, int):
                return value
        return 0


def step_end_tokens(offsets: Sequence[Sequence[int]], spans: Sequence[tuple[int, int]]) -> list[int]:
    """For each character span, the index of the last token that starts inside it (or, when a
    merge made one token cover the span's start, the token covering it).

    Tokens of zero width (special tokens) are never chosen. A step that no token starts in cannot
    happen for non-empty text; it raises rather than silently sharing a neighbour's position.
    """
    out = []
    token = 0
    n = len(offsets)
    for start, end in spans:
        best = None
        while token < n:
            a, b = offsets[token][0], offsets[token][1]
            if b <= a:
                token += 1
                continue
            if a >= end:
                break
            if b > start:
                best = token
            token += 1
        if best is None:
            raise ValueError(f"no token covers the step at characters {start}..{end}")
        out.append(best)
        # a token that straddles the boundary belongs to this step; the next step starts after it
    return out


def split_completion(prompt: Text, completion: Text) -> tuple[Text, str]:
    """The completion's text, and the prompt with any earlier turns of a chat completion moved
    into it (TRL's implicit-prompt preference rows keep the whole conversation in ``chosen``)."""
    if isinstance(completion, str):
        return prompt, completion
    messages = [dict(m) for m in completion]
    last = max((i for i, m in enumerate(messages) if m.get("role", "assistant") == "assistant"),
               default=len(messages) - 1)
    earlier = messages[:last]
    if earlier:
        base = [{"role": "user", "content": prompt}] if isinstance(prompt, str) and prompt else (
            list(prompt) if not isinstance(prompt, str) else [])
        prompt = base + earlier
    content = messages[last].get("content", "") if messages else ""
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return prompt, "" if content is None else str(content)
