"""Prompts for the GRPO loop: read from any file ``rewardsmith score`` reads, rendered, measured.

A prompt is text or chat messages; the other columns (``answer``, ``tests``, ...) travel with
it to the reward. A prompt longer than ``max_prompt_length`` tokens is reported and skipped,
never cut: a cut prompt is a different task whose reward would be wrong. A malformed row is
reported with its line number and skipped; the rest trains.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rewardsmith.adapters.scoring.rows import read_rows
from rewardsmith.verifiers.wording import plural

ChatMode = Literal["auto", "always", "never"]


@dataclass(frozen=True)
class Prompt:
    index: int  # position in the file: the key of its pass-rate record
    prompt: str | list[dict[str, Any]]  # as the reward sees it
    fields: dict[str, Any]  # the other columns
    ids: tuple[int, ...]  # the rendered prompt's tokens


@dataclass
class PromptSet:
    prompts: list[Prompt]
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # the first few, by line

    def describe(self) -> str:
        text = plural(len(self.prompts), "prompt", thousands=True)
        if self.skipped:
            text += " (skipped: " + ", ".join(f"{n:,} {why}" for why, n in sorted(self.skipped.items())) + ")"
        return text


def render(tokenizer: Any, prompt: str | Sequence[Mapping[str, Any]], chat: ChatMode = "auto") -> list[int]:
    """The prompt's token ids as generation starts from them: chat messages through the chat
    template with the generation prompt; text as it is (``always``: as one user message)."""
    has_template = bool(getattr(tokenizer, "chat_template", None))
    if isinstance(prompt, str) and chat != "always":
        return list(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    if chat == "never" or not has_template:
        text = prompt if isinstance(prompt, str) else "\n".join(str(m.get("content", "")) for m in prompt)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt]
    encoded = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if hasattr(encoded, "keys"):  # transformers 5 returns a BatchEncoding
        encoded = encoded["input_ids"]
    return list(encoded)


def _valid_prompt(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return (isinstance(value, list) and bool(value)
            and all(isinstance(m, Mapping) and "role" in m and "content" in m for m in value))


def encode_rows(rows: Iterable[tuple[int, Mapping[str, Any] | None, str | None]], tokenizer: Any, prompt_field: str,
                chat: ChatMode, max_prompt_length: int) -> PromptSet:
    """(line, row or None, parse error) → a PromptSet; bad and too-long rows are counted and named."""
    out = PromptSet([])

    def skip(why: str, line: int, detail: str) -> None:
        out.skipped[why] = out.skipped.get(why, 0) + 1
        if len(out.problems) < 10:
            out.problems.append(f"line {line}: {detail}")

    for position, (line, row, error) in enumerate(rows):
        if row is None:
            skip("malformed", line, error or "not a JSON object")
            continue
        value = row.get(prompt_field)
        if not _valid_prompt(value):
            skip("no prompt", line, f"no usable {prompt_field!r} (text, or a list of {{role, content}} messages)")
            continue
        ids = render(tokenizer, value, chat)
        if len(ids) > max_prompt_length:
            skip("too long", line, f"prompt is {len(ids)} tokens, over max_prompt_length {max_prompt_length}")
            continue
        fields = {k: v for k, v in row.items() if k != prompt_field}
        out.prompts.append(Prompt(position, value, fields, tuple(ids)))
    return out


def load_prompts(path: str | Path, tokenizer: Any, prompt_field: str = "prompt", chat: ChatMode = "auto",
                 max_prompt_length: int = 1024, split: str | None = None) -> PromptSet:
    """Every prompt of a JSONL / JSON / parquet file or a ``datasets`` folder."""
    rows = ((r.line, r.data, r.error) for r in read_rows(path, split))
    return encode_rows(rows, tokenizer, prompt_field, chat, max_prompt_length)
