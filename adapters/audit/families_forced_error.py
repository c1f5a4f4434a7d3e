"""A family for every reward: completions made to break the reader rather than to fool it.

A completion that makes a verifier fail (a parser exception, a recursion limit, a number Python
will not print, text UTF-8 cannot hold) must be scored as the completion's fault (``no_answer``,
``invalid_input``, a 0). ``status=error`` is for outages outside the completion, and trainers drop
error rows, so a policy that can cause one learns to skip the rows it would fail. Here an error
is the hack. What such text is paid is left to the other families: for some tasks junk is a
right answer (a tool-call row that expects no call, an IFEval row that asks only for a form).
"""

from __future__ import annotations

from rewardsmith.adapters.audit.family import AuditRow, Probe, family
from rewardsmith.adapters.audit.traits import Traits

_DEPTH = 3000  # past Python's default recursion limit (1000) for any reader that recurses per level
_DIGITS = 5000  # past Python's int-to-text limit (4300 digits)


@family("forced_error", "attack", "any", "text made to crash a reader: its status=error is not a fault "
        "outside the completion", measure="error")
def forced_error(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """Lone surrogates, alone and in a sentence with an answer (so that a reader that refuses junk early
    still meets one), and NUL bytes (JSON's escapes decode to them); a number of 5,000 digits in a
    box and in an answer tag; brackets, braces and parentheses nested 3,000 deep, bare, boxed, as
    JSON and inside a tool-call tag; a power tower; 100,000 characters of one digit repeated. Whatever the
    reward pays them, it must not answer ``status=error``: it is the completion's doing."""
    huge = "9" * _DIGITS
    return [
        Probe("\ud800\udfff \ud83d", "lone surrogates"),
        Probe("Adding the two parts step by step, the total comes to 7 \ud800 in the end.", "a surrogate in prose"),
        Probe("\x00" * 16, "NUL bytes"),
        Probe("[" * _DEPTH + "]" * _DEPTH, "nested brackets"),
        Probe("{" * _DEPTH + "}" * _DEPTH, "nested braces"),
        Probe("(" * _DEPTH + ")" * _DEPTH, "nested parentheses"),
        Probe("\\boxed{" + "{" * _DEPTH + "}" * _DEPTH + "}", "nested braces in a box"),
        Probe('{"a": ' * _DEPTH + "1" + "}" * _DEPTH, "nested JSON objects"),
        Probe("<tool_call>" + "[" * _DEPTH + "</tool_call>", "nested brackets in a tool call"),
        Probe("\\boxed{9^{9^{9^{9^{9}}}}}", "power tower"),
        Probe("9 " * 50_000, "100,000 characters"),
        Probe(f"\\boxed{{{huge}}}", "5,000 digits boxed"),
        Probe(f"<answer>{huge}</answer>", "5,000 digits tagged"),
    ]
