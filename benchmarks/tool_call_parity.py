"""The tool_call reward next to BFCL's AST checker, on the same candidate outputs of BFCL's own rows.

BFCL ships questions and possible answers but no model outputs, so the candidates are built here,
deterministically, from each row's possible answers, each with its truth known by construction:

* right: ``right_first`` (every parameter's first acceptable value), ``right_last`` (the last
  acceptable value of each: the other variants), ``right_minimal`` (every optional parameter left
  out), ``swapped_order`` (parallel calls in reverse order);
* no call expected (BFCL's irrelevance category): ``no_call_prose``, ``no_call_empty_list`` (right),
  ``needless_call`` (the offered function with its required arguments), ``needless_call_no_args``;
* wrong: ``wrong_value`` (one argument changed to a value not acceptable), ``missing_required``
  (a required argument left out), ``wrong_type`` (an integer as a float, a boolean as 1, a string
  inside a list, a list as a string), ``string_number`` (a number argument as a string of the
  right value), ``extra_argument`` (an argument nobody expects), ``extra_call`` (a call of another
  offered function appended), ``missing_call`` (a parallel call dropped), ``duplicated_call`` (the
  first call made twice), ``wrong_name`` (the first call to another function).

Each candidate is the Python call text BFCL's prompting models write (``[f(a=1), g(b="x")]``).
Ours: ``build({"type": "tool_call", "format": "python"})``; BFCL: its own decoder
(``default_decode_ast_prompting``) and ``ast_checker`` for the row's category, unmodified (for
irrelevance, the rule of its ``eval_runner``: right when the decoder finds no call, by BFCL's own
``is_empty_output``). We print agreement per category and per mutation, each one's accuracy
against the construction's truth, every disagreement with who is right, and candidates/s for both.

Importing BFCL's checker needs stand-in modules, put into ``sys.modules`` before the import, and
nothing of BFCL's code is changed: ``bfcl_eval.constants.model_config`` (the real module imports
every vendor's model handler and SDK; the checker reads only ``MODEL_CONFIG_MAPPING[model]
.underscore_to_dot`` to rename dotted functions for some APIs: the stand-in says False, as for
prompting models) and, for the decoder's module, ``tenacity`` (retry decorators of the API
handlers) and ``tree_sitter``/``tree_sitter_java``/``tree_sitter_javascript`` (the Java and
JavaScript parsers, unused for Python).

    pip install --no-deps --target ~/.cache/rewardsmith/bfcl-eval-2026.3.23 bfcl-eval==2026.3.23
    python benchmarks/tool_call_parity.py [--bfcl DIR] [--rows N] [--show N] [--json OUT]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
import types
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.adapters.audit.families_tool_call import wrong_value
from rewardsmith.verifiers.tool_call.bfcl import bfcl_rows
from rewardsmith.verifiers.tool_call.expected import example_call, read_expected
from rewardsmith.verifiers.tool_call.render import python_text

HERE = Path(__file__).resolve().parent
DEFAULT_BFCL = Path(os.environ.get("REWARDSMITH_BFCL_PATH",
                                   Path.home() / ".cache" / "rewardsmith" / "bfcl-eval-2026.3.23"))
INSTALL = (
    "pip install --no-deps --target ~/.cache/rewardsmith/bfcl-eval-2026.3.23 bfcl-eval==2026.3.23  "
    "(--no-deps: its declared dependencies pull every vendor SDK)"
)
CATEGORIES = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",  # no call should be made (BFCL ships no possible answers for it)
}
MODEL = "rewardsmith-parity"  # the model name BFCL's checker is given (its stand-in config)


@dataclass(frozen=True)
class Candidate:
    category: str
    row_id: str
    mutation: str
    text: str
    truth: bool
    row: dict[str, Any]  # ground_truth and function, as the verifier reads them


# ----------------------------------------------------------------------------- BFCL, imported as is


def _stand_in(name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules.setdefault(name, module)


class _Inert:
    """Accepts any construction and method call (the tree-sitter parsers BFCL builds at import)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


def load_bfcl(home: Path = DEFAULT_BFCL) -> types.SimpleNamespace:
    """BFCL's checker, decoder and data folder; raises ``ImportError`` saying how to install it."""
    if not (home / "bfcl_eval" / "eval_checker" / "ast_eval" / "ast_checker.py").is_file():
        raise ImportError(f"bfcl-eval is not installed at {home}; install it with:\n  {INSTALL}")
    if str(home) not in sys.path:
        sys.path.insert(0, str(home))
    _stand_in(
        "bfcl_eval.constants.model_config", MODEL_CONFIG_MAPPING={MODEL: types.SimpleNamespace(underscore_to_dot=False)}
    )
    passthrough = lambda *args, **kwargs: lambda fn: fn  # noqa: E731 - a decorator factory that does nothing
    _stand_in(
        "tenacity",
        retry=passthrough,
        retry_if_exception_message=_Inert,
        retry_if_exception_type=_Inert,
        wait_random_exponential=_Inert,
    )
    _stand_in("tree_sitter", Language=_Inert, Parser=_Inert)
    _stand_in("tree_sitter_java", language=lambda: None)
    _stand_in("tree_sitter_javascript", language=lambda: None)
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.model_handler.utils import default_decode_ast_prompting
    from bfcl_eval.utils import is_empty_output

    return types.SimpleNamespace(
        checker=ast_checker,
        decode=default_decode_ast_prompting,
        is_empty_output=is_empty_output,
        python=Language.PYTHON,
        data=home / "bfcl_eval" / "data",
    )


def bfcl_verdict(bfcl: types.SimpleNamespace, candidate: Candidate) -> tuple[bool, str]:
    """BFCL's judgement of one candidate (valid, its error): decode the text, then the AST checker of
    its category."""
    try:
        decoded = bfcl.decode(candidate.text)
    except Exception as exc:  # BFCL counts an output it cannot decode as wrong (as no call for irrelevance)
        return candidate.category == "irrelevance", f"decode failed: {exc}"
    if candidate.category == "irrelevance":  # eval_runner's relevance rule: right when no call was decoded
        empty = bfcl.is_empty_output(decoded)
        return empty, "" if empty else "decoded a call where none should be made"
    result = bfcl.checker(
        candidate.row["function"],
        decoded,
        candidate.row["ground_truth"],
        bfcl.python,
        CATEGORIES[candidate.category],
        MODEL,
    )
    return bool(result["valid"]), json.dumps(result.get("error", ""), default=str)


def load_rows(data: Path, category: str) -> list[dict[str, Any]]:
    """BFCL's question rows joined with their possible answers by id (irrelevance rows, which have
    none, expect no call: ``[]``)."""
    stem = f"BFCL_v4_{CATEGORIES[category]}.json"
    return bfcl_rows(data / stem, None if category == "irrelevance" else data / "possible_answer" / stem)


# ----------------------------------------------------------------------------- candidates


def _docs(row: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in row["function"] if f["name"] == name)


def _wrong_type(value: Any) -> Any | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return float(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return json.dumps(value)
    return None


def candidates(category: str, row: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """(mutation, text, truth) for one row."""
    if category == "irrelevance":
        yield from _no_call_candidates(row)
        return
    answers = row["ground_truth"]
    expected, _ = read_expected(answers, row["function"])

    def calls(pick: int, minimal: bool) -> list[tuple[str, dict[str, Any]]]:
        return [example_call(call, pick, minimal) for call in expected]

    right = calls(0, False)
    yield "right_first", python_text(right), True
    last = calls(-1, False)
    if last != right:
        yield "right_last", python_text(last), True
    minimal = calls(0, True)
    if minimal != right:
        yield "right_minimal", python_text(minimal), True
    if len(right) > 1 and right[::-1] != right:
        yield "swapped_order", python_text(right[::-1]), True
    name, args = right[0]
    params = answers[0][name]
    docs = _docs(row, name)["parameters"]
    # one argument changed (the first one the construction can change)
    for param, value in args.items():
        other = wrong_value(value, [v for v in params[param] if v != ""])
        if other is not None:
            yield "wrong_value", python_text([(name, {**args, param: other}), *right[1:]]), False
            break
    required = [p for p in docs.get("required", []) if p in args]
    if required:
        yield (
            "missing_required",
            python_text([(name, {k: v for k, v in args.items() if k != required[0]}), *right[1:]]),
            False,
        )
    for param, value in args.items():
        typed = _wrong_type(value)
        if typed is not None:
            yield "wrong_type", python_text([(name, {**args, param: typed}), *right[1:]]), False
            break
    for param, value in args.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            yield "string_number", python_text([(name, {**args, param: str(value)}), *right[1:]]), False
            break
    yield "extra_argument", python_text([(name, {**args, "unexpected_option": "yes"}), *right[1:]]), False
    others = [f["name"] for f in row["function"] if f["name"] not in {n for n, _ in right}]
    extra_name = others[0] if others else f"{name}_extra"
    yield "extra_call", python_text([*right, (extra_name, {})]), False
    if len(right) > 1:
        yield "missing_call", python_text(right[:-1]), False
    yield "duplicated_call", python_text([right[0], *right]), False
    yield "wrong_name", python_text([(extra_name, args), *right[1:]]), False


def _placeholder(schema: dict[str, Any]) -> Any:
    """A value of the declared type (any value: the call is wrong for being made at all)."""
    return {"integer": 1, "float": 1.5, "number": 1.5, "boolean": True, "array": [], "tuple": [], "dict": {}}.get(
        schema.get("type"), "x"
    )


def _no_call_candidates(row: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """An irrelevance row: answers without a call are right, any call of an offered function wrong."""
    yield "no_call_prose", "None of the available functions can answer this question.", True
    yield "no_call_empty_list", "[]", True
    function = row["function"][0]
    parameters = function.get("parameters", {})
    args = {p: _placeholder(parameters.get("properties", {}).get(p, {})) for p in parameters.get("required", [])}
    yield "needless_call", python_text([(function["name"], args)]), False
    yield "needless_call_no_args", python_text([(function["name"], {})]), False


def all_candidates(data: Path, rows_per_category: int | None = None) -> list[Candidate]:
    out = []
    for category in CATEGORIES:
        for row in load_rows(data, category)[:rows_per_category]:
            fields = {"ground_truth": copy.deepcopy(row["ground_truth"]), "function": row["function"]}
            for mutation, text, truth in candidates(category, row):
                out.append(Candidate(category, row["id"], mutation, text, truth, fields))
    return out


# ----------------------------------------------------------------------------- the comparison


def ours_verdicts(candidates_: list[Candidate], fmt: str = "python") -> list[bool]:
    from rewardsmith.verifiers import Sample, build

    reward = build({"type": "tool_call", "format": fmt})
    samples = [Sample(prompt="", completion=c.text, fields=c.row) for c in candidates_]
    verdicts = reward.verify_batch(samples)
    bad = [v for v in verdicts if v.status in ("error", "invalid_input")]
    if bad:
        raise RuntimeError(f"{len(bad)} verdicts with status {bad[0].status}: {bad[0].feedback}")
    return [v.score == 1.0 for v in verdicts]


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bfcl", type=Path, default=DEFAULT_BFCL, help="where bfcl-eval is installed (--target)")
    parser.add_argument("--rows", type=int, default=None, help="rows per category (default: all)")
    parser.add_argument("--show", type=int, default=40, help="disagreements listed (default 40)")
    parser.add_argument("--json", type=Path, default=None, help="write every candidate's verdicts here")
    args = parser.parse_args(argv)
    try:
        bfcl = load_bfcl(args.bfcl)
    except ImportError as exc:
        print(f"The reference is not available: {exc}", file=sys.stderr)
        return 2
    cands = all_candidates(bfcl.data, args.rows)
    ours, ours_s = _timed(lambda: ours_verdicts(cands))
    judged, theirs_s = _timed(lambda: [bfcl_verdict(bfcl, c) for c in cands])
    theirs = [valid for valid, _ in judged]
    _report(cands, ours, theirs, [error for _, error in judged], args.show)
    auto = ours_verdicts(cands, "auto")
    same = sum(a == b for a, b in zip(auto, ours, strict=True))
    print(f"\nthe default format (auto) gives the same verdict as format: python on {same}/{len(cands)}")
    if args.json is not None:
        records = [
            {
                "category": c.category,
                "id": c.row_id,
                "mutation": c.mutation,
                "text": c.text,
                "truth": c.truth,
                "ours": o,
                "bfcl": t,
            }
            for c, o, t in zip(cands, ours, theirs, strict=True)
        ]
        args.json.write_text(json.dumps(records, indent=0), encoding="utf-8")
    print(
        f"\nthroughput: ours {len(cands) / ours_s:,.0f} candidates/s ({ours_s:.2f} s), "
        f"BFCL decode+check {len(cands) / theirs_s:,.0f} candidates/s ({theirs_s:.2f} s), "
        f"ratio {theirs_s / ours_s:.2f}x"
    )
    return 0


def _report(cands: list[Candidate], ours: list[bool], theirs: list[bool], errors: list[str], show: int) -> None:
    def table(key: Callable[[Candidate], str], title: str) -> None:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, c in enumerate(cands):
            groups[key(c)].append(i)
        print(f"\n{title:<22} {'cases':>6} {'agree':>7} {'ours right':>11} {'BFCL right':>11}")
        for name, idx in groups.items():
            agree = sum(ours[i] == theirs[i] for i in idx)
            ours_ok = sum(ours[i] == cands[i].truth for i in idx)
            theirs_ok = sum(theirs[i] == cands[i].truth for i in idx)
            print(
                f"{name:<22} {len(idx):>6} {agree / len(idx):>7.1%} {ours_ok / len(idx):>11.1%} "
                f"{theirs_ok / len(idx):>11.1%}"
            )

    n = len(cands)
    agree = sum(a == b for a, b in zip(ours, theirs, strict=True))
    print(f"{n} candidates from {len({c.row_id for c in cands})} BFCL rows; agreement {agree}/{n} = {agree / n:.2%}")
    table(lambda c: c.category, "category")
    table(lambda c: c.mutation, "mutation")
    diffs = [i for i in range(n) if ours[i] != theirs[i]]
    print(f"\n{len(diffs)} disagreements" + (f" (first {show})" if len(diffs) > show else ""))
    who = Counter("ours" if ours[i] == cands[i].truth else "BFCL" for i in diffs)
    print(f"right by construction: ours {who['ours']}, BFCL {who['BFCL']}")
    for i in diffs[:show]:
        c = cands[i]
        right = "ours" if ours[i] == c.truth else "BFCL"
        print(
            f"- {c.row_id} {c.mutation} (truth {c.truth}): ours {ours[i]}, BFCL {theirs[i]} -> {right} right\n"
            f"    {c.text[:200]}\n    expected {json.dumps(c.row['ground_truth'])[:200]}\n"
            f"    BFCL says: {errors[i][:300]}"
        )


if __name__ == "__main__":
    sys.exit(main())
