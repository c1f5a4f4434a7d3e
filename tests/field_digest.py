"""Test-only verifier ``test_field_digest``: the score is a hash of exactly what the verifier received.

Used by the cross-adapter parity tests (tests/adapters/test_family_parity.py): any change a trainer
channel makes to a field on the way (a None turned into a missing key, a key added by a schema, a
list turned into a tuple or an array, an int into a float, chat messages flattened to text) changes
the reward, so "the trainer gets exactly ``build(spec).verify``" is checked bit for bit.

Importable by subprocesses and workers that put ``tests/`` on ``PYTHONPATH`` (importing it registers
the name).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.verifiers import Sample, Verdict, Verifier, register
from rewardsmith.verifiers.core import MISSING, lookup

NAME = "test_field_digest"
STATUS_FIELD = "digest_status"  # a row may ask for a status (to check each channel's on_error handling)


def canonical(value: Any) -> Any:
    """``value`` as a JSON-able tree that keeps what JSON would lose: the type of every scalar and
    container (``1`` vs ``1.0`` vs ``"1"``, a list vs a tuple or an array) and None vs a missing key."""
    if isinstance(value, Mapping):
        return {"dict": {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}}
    if isinstance(value, list):
        return {"list": [canonical(v) for v in value]}
    if value is None or isinstance(value, bool | int | float | str):
        return {type(value).__name__: value}
    return {f"other:{type(value).__module__}.{type(value).__qualname__}": repr(value)}


def completion_form(completion: Any) -> Any:
    """What the completion is, as the parity tests compare it: text is text, and so is ONE plain
    assistant message (TRL and the GRPO loop wrap a text completion that way when the prompt is chat);
    any other message list (``tool_calls``, several turns, extra keys) is kept whole."""
    if (
        isinstance(completion, Sequence)
        and not isinstance(completion, str)
        and len(completion) == 1
        and isinstance(completion[0], Mapping)
        and set(completion[0]) == {"role", "content"}
        and completion[0]["role"] == "assistant"
        and isinstance(completion[0]["content"], str)
    ):
        return completion[0]["content"]
    return completion


def received(sample: Sample, fields: Sequence[str]) -> dict[str, Any]:
    """The completion and the named fields, each present or missing."""
    got = {
        name: ("missing" if (value := lookup(sample.fields, name)) is MISSING else canonical(value)) for name in fields
    }
    return {"completion": canonical(completion_form(sample.completion)), "fields": got}


def digest(tree: Any) -> float:
    """A number in [0, 1) from the tree (48 bits: exact in float32's neighbourhood too, see the tests)."""
    text = json.dumps(tree, sort_keys=True, ensure_ascii=False)
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16**12


@register(NAME)
class FieldDigest(Verifier):
    """Score = a hash of the completion and the fields ``fields``; status from ``digest_status``."""

    name = "field_digest"

    def __init__(self, fields: Sequence[str] = ()) -> None:
        self.fields = list(fields)

    def _verify(self, sample: Sample) -> Verdict:
        tree = received(sample, self.fields)
        status = sample.get(STATUS_FIELD) or "ok"
        if status == "error":
            return Verdict(score=0.0, status="error", feedback="asked for by the row", details={"received": tree})
        return Verdict(score=digest(tree), status=status, details={"received": tree})
