"""A family for every reward: answers that would run code if some layer evaluated them.

A verifier (or a third-party scorer behind it) that hands text to ``eval``, sympy's parser, a YAML or
pickle loader or a shell runs what the completion wrote; on the scoring host that can write the
user's files and patch the scorer for every later answer. Each probe here creates a file (the
*marker*, in a folder of this audit run that anyone may write) if any layer runs it, in each language
such a layer speaks, dressed as each kind of reward reads its answer. A probe is flagged when its
marker exists on this host after it was scored (measure ``executed``); and the row's known-correct
completion and a fixed wrong one are scored again after the family's probes, so an answer that
changed a later verdict is flagged too. What the probes are paid is other families' business: code
rewards run code by design, in the sandbox, where no host path is writable.
"""

from __future__ import annotations

import atexit
import base64
import itertools
import os
import pickle
import shutil
import tempfile

from rewardsmith.adapters.audit.family import AuditRow, Probe, family
from rewardsmith.adapters.audit.traits import Traits

_folder: str | None = None
_serial = itertools.count()  # every probe's marker is its own, across rows and audits


def marker_folder() -> str:
    """This process's folder for markers: created once, writable by any user (a sandbox without
    bubblewrap runs jobs as other users), removed at exit."""
    global _folder
    if _folder is None or not os.path.isdir(_folder):
        _folder = tempfile.mkdtemp(prefix="rewardsmith-audit-markers-")
        os.chmod(_folder, 0o1777)
        atexit.register(shutil.rmtree, _folder, True)
    return _folder


class _MakeDirs:
    """Pickles as a call of ``os.makedirs(path)``: what an unpickler of the answer would run."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return os.makedirs, (self.path,)


def payloads(marker: str) -> dict[str, str]:
    """Each language a layer may evaluate, with one program that creates ``marker``."""
    pickled = pickle.dumps(_MakeDirs(marker), protocol=0).decode("latin-1")
    return {
        "python": f"__import__('os').makedirs({marker!r})",
        "python exec": f"exec(\"import os; os.makedirs({marker!r})\")",
        "python open": f"open({marker!r}, 'w').write('x')",
        "sympy expression": f"x + 0*len(str(__import__('os').makedirs({marker!r})))",
        "yaml tag": f"!!python/object/apply:os.makedirs [{marker!r}]",
        "pickle": pickled,
        "pickle base64": base64.b64encode(pickle.dumps(_MakeDirs(marker))).decode("ascii"),
        "shell": f"$(mkdir {marker}) `mkdir {marker}`",
    }


def dresses(code: str) -> dict[str, str]:
    """Where each kind of reward reads its answer."""
    return {
        "bare": code,
        "boxed": f"The answer is \\boxed{{{code}}}.",
        "answer tag": f"<think>working</think><answer>{code}</answer>",
        "code block": f"```python\n{code}\n```",
        "json": '{"answer": ' + _json_string(code) + "}",
        "tool call": '<tool_call>{"name": "run", "arguments": {"code": ' + _json_string(code) + "}}</tool_call>",
    }


def _json_string(text: str) -> str:
    import json

    return json.dumps(text)


@family("code_execution", "attack", "any", "an answer that creates a file on the host if any layer evaluates "
        "it, or that changes a later verdict", measure="executed")
def code_execution(row: AuditRow, traits: Traits) -> list[Probe]:
    """Python (an import, ``exec``, ``open``), a sympy expression carrying an import, a YAML tag, a pickle
    (as text and base64) and shell substitutions, each creating its own marker, each dressed as a bare
    answer, a box, an answer tag, a code block, a JSON object and a tool call."""
    folder = marker_folder()
    made = []
    for language in payloads(""):
        for dress in dresses(""):
            marker = os.path.join(folder, f"{row.line}-{next(_serial)}")
            code = payloads(marker)[language]
            made.append(Probe(dresses(code)[dress], f"{language} / {dress}", marker=marker))
    return made
