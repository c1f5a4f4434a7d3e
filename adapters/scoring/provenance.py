"""Which job wrote an output: recorded beside it before the first row, checked before a resume.

A resume appends the rest of the input to what OUTPUT already holds, so OUTPUT must come
from the same input (identity: path, size, content fingerprint; the split of a datasets
folder), the same reward spec (a fingerprint of its value: a spec file's content, not its
path) and the same ``--field`` mapping. Anything else would merge two jobs into one file
without a word, so the scoring job refuses and says what differs.

The record is a sidecar, ``OUTPUT.rewardsmith.json``, not a header line: the output stays
plain rows (one JSON object per line, or a parquet table) that jq, pandas, ``datasets`` and
trainers read as they are, and one mechanism serves every output format.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rewardsmith.adapters.scoring.outputs import replacing
from rewardsmith.verifiers import RewardsmithError
from rewardsmith.verifiers.core import Verifier

RECORD_SUFFIX = ".rewardsmith.json"
RECORD_VERSION = 1


class ResumeError(RewardsmithError, RuntimeError):
    """OUTPUT exists but is not a partial result of this job; the message says what differs."""


def record_path(output: Path) -> Path:
    return output.with_name(output.name + RECORD_SUFFIX)


def spec_fingerprint(spec: Any) -> str | None:
    """SHA-256 of the spec value's canonical JSON; None for a value without one (a Verifier object).

    A registry name counts as ``{"type": name}``, so ``math`` and ``{"type": "math"}`` match.
    """
    if isinstance(spec, Verifier) or spec is None:
        return None
    if isinstance(spec, str):
        spec = {"type": spec}
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Provenance:
    """The identity of one scoring job, as far as its rows depend on it."""

    input: dict[str, Any] | None  # path, size, fingerprint; None: a stream (stdin, a pipe), which has none
    spec: str | None  # spec_fingerprint; None: a Verifier object
    reward: str  # the spec as the user named it, for messages only
    split: str | None = None
    fields: dict[str, str] = field(default_factory=dict)

    def to_json(self, complete: bool = False) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            ours = version("rewardsmith")
        except PackageNotFoundError:  # running from a checkout that is not installed
            ours = "unknown"
        return {
            "rewardsmith_score_record": RECORD_VERSION,
            "input": self.input or {"stream": True},
            "split": self.split,
            "fields": self.fields,
            "spec": {"fingerprint": self.spec, "reward": self.reward},
            "complete": complete,
            "rewardsmith_version": ours,
            "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        source = data.get("input") or {}
        spec = data.get("spec") or {}
        return cls(input=None if source.get("stream") else dict(source), spec=spec.get("fingerprint"),
                   reward=str(spec.get("reward", "?")), split=data.get("split"), fields=dict(data.get("fields") or {}))

    def differences(self, earlier: Provenance) -> list[str]:
        """What differs from the job that wrote ``earlier``, one phrase each (empty: the same job)."""
        found = []
        if self.input is None or earlier.input is None:
            found.append("the input is a stream (stdin, a pipe) now or was then, and a stream cannot be matched "
                         "against an earlier job")
        elif (self.input.get("size"), self.input.get("fingerprint")) != (
                earlier.input.get("size"), earlier.input.get("fingerprint")):
            was, now = earlier.input.get("path"), self.input.get("path")
            found.append(f"the input {now} has changed since" if was == now
                         else f"the input differs (was {was}, now {now})")
        if self.split != earlier.split:
            found.append(f"the split differs (was {earlier.split}, now {self.split})")
        if self.fields != earlier.fields:
            found.append(f"the field mapping differs (was {_fields(earlier.fields)}, now {_fields(self.fields)})")
        if self.spec is None or earlier.spec is None:
            found.append("the reward was given as a Verifier object, which cannot be fingerprinted (pass its spec)")
        elif self.spec != earlier.spec:
            found.append(f"the reward spec differs (was {earlier.reward}, now {self.reward})")
        return found


def read_record(path: Path) -> dict[str, Any]:
    """The record at ``path``; :class:`ResumeError` when it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeError(f"cannot read the job record {path} ({exc}); start over with --overwrite, "
                          "or write to another -o") from exc
    if not isinstance(data, dict) or data.get("rewardsmith_score_record") != RECORD_VERSION:
        raise ResumeError(f"{path} is not a job record this version of rewardsmith reads; start over with "
                          "--overwrite, or write to another -o")
    return data


def write_record(path: Path, provenance: Provenance, complete: bool = False) -> None:
    """Write the record atomically (a temporary file renamed over it) and durably."""
    with replacing(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        json.dump(provenance.to_json(complete), handle, indent=2)
        handle.write("\n")


def check_resume(record: dict[str, Any], current: Provenance, output: str) -> None:
    """Refuse, in one line, to resume an output another job wrote."""
    differences = current.differences(Provenance.from_json(record))
    if differences:
        raise ResumeError(f"refusing to resume {output}, which holds rows of another job: {'; '.join(differences)}. "
                          "Start over with --overwrite, or write to another -o")


def _fields(mapping: Mapping[str, str]) -> str:
    return " ".join(f"--field {k}={v}" for k, v in sorted(mapping.items())) or "no --field"
