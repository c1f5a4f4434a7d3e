"""Issue 11 item 10: discoverable options, declared once per verifier.

Each built-in verifier declares its options once (dataclass fields with type, default and one
line); the checks a build runs, the listing `rewardsmith verifiers NAME` prints and the JSON
Schema are all derived from that declaration, so these tests drive all three from it.
"""

from __future__ import annotations

import json
import tempfile
import typing
from pathlib import Path
from typing import Annotated

import jsonschema
import pytest
from conftest import REPO

from rewardsmith.adapters.cli import main
from rewardsmith.verifiers import Range, SpecError, Verifier, build, declare, option
from rewardsmith.verifiers.math import MathVerifier
from rewardsmith.verifiers.options import declared_options, describe, format_options, json_schema
from rewardsmith.verifiers.registry import BUILTINS, get_factory


# The smallest valid spec of each built-in (its required options filled in).
def _saved_model_dir(kind: str) -> str:
    """A directory that passes the reward-model verifiers' build check (a ``rewardsmith.json``
    naming its kind); option checks happen at build time, before any model loads."""
    folder = Path(tempfile.mkdtemp(prefix=f"rewardsmith-{kind}-"))
    (folder / "rewardsmith.json").write_text(json.dumps({"kind": kind}))
    return str(folder)


MINIMAL = {
    "math": {"type": "math"},
    "code": {"type": "code"},
    "judge": {"type": "judge", "backend": {"kind": "openai"}, "cache": False},
    "brier": {"type": "brier"},
    "format": {"type": "format"},
    "ifeval": {"type": "ifeval"},
    "reasoning_gym": {"type": "reasoning_gym"},
    "json": {"type": "json"},
    "tool_call": {"type": "tool_call"},
    "choice": {"type": "choice"},
    "qa": {"type": "qa"},
    "overlong": {"type": "overlong", "max_length": 100, "cache_length": 10},
    "cosine": {"type": "cosine", "max_length": 100},
    "repetition": {"type": "repetition"},
    "weighted": {"type": "weighted", "parts": ["math", "format"]},
    "min": {"type": "min", "parts": ["format"]},
    "max": {"type": "max", "parts": ["format"]},
    "gate": {"type": "gate", "when": "format", "then": "math"},
    "route": {"type": "route", "routes": {"*gsm8k*": "math"}},
    "cascade": {"type": "cascade", "judge": {"backend": {"kind": "openai"}, "cache": False}},
    "agent": {"type": "agent", "answer": "math"},
    "orm": {"type": "orm", "path": _saved_model_dir("orm")},
    "prm": {"type": "prm", "path": _saved_model_dir("prm")},
}

# One wrong value per option kind, with the message the build must give.
WRONG = [
    ({"type": "math", "timeout_s": "fast"}, "math.timeout_s: expected a number, got 'fast'"),
    ({"type": "math", "timeout_s": 0}, "math.timeout_s: must be > 0, got 0.0"),
    ({"type": "math", "workers": 1.5}, "math.workers: expected an integer >= 0 or null, got 1.5"),
    ({"type": "math", "last_number": "no"}, "math.last_number: expected true or false, got 'no'"),
    ({"type": "math", "extract": ["boxed", "boxd"]},
     "math.extract[1]: expected one of 'answer_tag', 'boxed', 'phrase', 'gsm8k', 'conclusion', 'last_number', "
     "got 'boxd'; did you mean 'boxed'?"),
    ({"type": "math", "leniency": {"percnt": False}}, "math.leniency.percnt: unknown leniency switch 'percnt'; "
                                                      "did you mean 'percent'?"),
    ({"type": "math", "leniency": {"rel_tol": "tiny"}}, "math.leniency.rel_tol: expected a number, got 'tiny'"),
    ({"type": "format", "mode": "strct"}, "format.mode: expected one of 'strict', 'soft', got 'strct'; "
                                          "did you mean 'strict'?"),
    ({"type": "format", "tags": ["think", "think"]}, "format.tags: has duplicates"),
    ({"type": "code", "memory_mb": 16}, "code.memory_mb: must be >= 32, got 16"),
    ({"type": "code", "checker": "flaot"}, "code.checker: expected one of 'exact', 'whitespace', 'float', "
                                           "'tokens_ci', got 'flaot'; did you mean 'float'?"),
    ({"type": "repetition", "max_penalty": 0.5}, "repetition.max_penalty: must be <= 0, got 0.5"),
    ({"type": "overlong", "max_length": 10}, "overlong.cache_length: missing: a required option"),
    ({"type": "cosine", "max_length": 10, "exceed": float("nan")}, "cosine.exceed: expected a finite number, got nan"),
    ({"type": "math", "timeout_s": 10**5000}, "math.timeout_s: expected a finite number, got <int too large to show>"),
    ({"type": "judge", "threshold": float("inf"), "cache": False},
     "judge.threshold: expected a finite number, got inf"),
    ({"type": "judge", "mode": "holstic", "cache": False}, "judge.mode: expected one of 'checklist', 'holistic', "
                                                           "'pairwise', 'reference', got 'holstic'; did you mean"),
    ({"type": "judge", "cache": False, "backend": {"kind": "opnai"}},
     "judge.backend.kind: unknown backend kind 'opnai'; did you mean 'openai'?"),
    ({"type": "judge", "cache": False, "backend": {"kind": "openai", "base_urll": "http://x"}},
     "judge.backend.base_urll: unknown option 'base_urll'; did you mean 'base_url'?"),
    ({"type": "weighted", "parts": []}, "weighted.parts: must not be empty"),
    ({"type": "cascade", "judge": {"backend": "smollm2"}, "on_judge_error": "skip"},
     "cascade.on_judge_error: expected one of 'error', 'rule'"),
]

# Nested specs: the error says where it is, from the root of the spec.
NESTED = [
    ({"type": "weighted", "parts": ["math", {"type": "format", "leniency": {}}]},
     "parts[1].leniency: unknown option 'leniency' (options of 'format': tags, mode"),
    ({"type": "weighted", "parts": [{"type": "math", "leniency": {"percentt": False}}]},
     "parts[0].leniency.percentt: unknown leniency switch 'percentt'; did you mean 'percent'?"),
    ({"type": "route", "routes": {"gsm8k": {"type": "gate", "when": "format",
                                            "then": {"type": "math", "answer_feild": "answer"}}}},
     "routes.gsm8k.then.answer_feild: unknown option 'answer_feild'; did you mean 'answer_field'?"),
    ({"type": "route", "routes": {"openai/gsm8k": {"type": "maths"}}},
     'routes["openai/gsm8k"]: unknown verifier \'maths\'; did you mean \'math\'?'),
    ({"type": "gate", "when": {"type": "format", "tags": "think"}, "then": "math"},
     "when.tags: expected a list"),
    ({"type": "brier", "correctness": {"type": "math", "timeout_s": "fast"}},
     "correctness.timeout_s: expected a number, got 'fast'"),
    ({"type": "cosine", "max_length": 10, "correctness": {"type": "weighted", "parts": ["math", "nope"]}},
     "correctness.parts[1]: unknown verifier 'nope'"),
    ({"type": "cascade", "rule": {"type": "math", "workrs": 0}}, "rule.workrs: unknown option 'workrs'; "
                                                                 "did you mean 'workers'?"),
    ({"type": "cascade", "judge": {"mode": "reference", "cache": False, "backend": {"kind": "openai", "modle": "m"}}},
     "judge.backend.modle: unknown option 'modle'; did you mean 'model'?"),
    ({"type": "route", "routes": {"a": "format"}, "default": {"type": "math", "timeout_s": -1}},
     "default.timeout_s: must be > 0"),
]


@pytest.mark.parametrize(("spec", "message"), WRONG, ids=[m.split(":")[0] for _, m in WRONG])
def test_a_wrong_value_names_the_option_and_what_it_takes(spec, message):
    with pytest.raises(SpecError) as info:
        build(spec)
    assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize(("spec", "message"), NESTED, ids=[m.split(":")[0] for _, m in NESTED])
def test_a_nested_mistake_says_where_it_is_in_the_spec(spec, message):
    with pytest.raises(SpecError) as info:
        build(spec)
    assert str(info.value).startswith(message), str(info.value)


def test_an_unknown_name_suggests_the_closest_and_lists_the_rest():
    with pytest.raises(SpecError) as info:
        build({"type": "math", "answer_feild": "x"})
    text = str(info.value)
    assert text.startswith("math.answer_feild: unknown option 'answer_feild'; did you mean 'answer_field'?")
    listed = "answer_field, leniency, last_number, extract, prompt_opens_think, timeout_s, workers"
    assert f"(options of 'math': {listed})" in text
    with pytest.raises(SpecError, match=r"^unknown verifier 'fromat'; did you mean 'format'\?"):
        build("fromat")


def test_python_construction_runs_the_same_checks():
    with pytest.raises(SpecError, match=r"^math\.timeout_s: expected a number, got 'fast'"):
        MathVerifier(timeout_s="fast")
    with pytest.raises(SpecError, match=r"^math\.leniency\.percentt: unknown leniency switch"):
        MathVerifier(leniency={"percentt": False})


def test_values_are_coerced_as_declared():
    math = build({"type": "math", "timeout_s": 2, "extract": ["boxed"], "leniency": {"percent": False}})
    assert math.timeout_s == 2.0 and isinstance(math.timeout_s, float)
    assert math.extract == ("boxed",) and math.leniency.percent is False and math.leniency.units is True
    judge = build({"type": "judge", "mode": "holistic", "min_score": 1, "max_score": 3, "cache": False,
                   "backend": {"kind": "openai"}, "score_descriptions": {"1": "bad", "2": "ok", "3": "good"}})
    assert judge.score_descriptions == {1: "bad", 2: "ok", 3: "good"}  # JSON object keys are strings
    assert build({"type": "code", "k": 2.0}).k == 2


def _declared_type(factory, name):
    return typing.get_type_hints(factory, include_extras=True)[name]


@pytest.mark.parametrize("kind", sorted(BUILTINS))
def test_every_builtin_declares_each_option_once_with_a_line_of_help(kind):
    factory = get_factory(kind)
    infos = declared_options(factory)
    assert infos, f"{kind} declares no options"
    for info in infos:
        assert info.doc, f"{kind}.{info.name} has no help line"
        assert (info.type and info.type != "any") or info.name == "rubric", f"{kind}.{info.name}: {info.type}"


@pytest.mark.parametrize("kind", sorted(BUILTINS))
def test_every_scalar_option_is_checked_by_the_declaration(kind):
    """Derived, not hand-written: each option declared as a plain number, bool or string rejects a
    value of the wrong type with a message naming it, for every built-in verifier."""
    factory = get_factory(kind)
    wrong = {float: "fast", int: "many", bool: "yes", str: 42}
    words = {float: "a number", int: "an integer", bool: "true or false", str: "a string"}
    checked = 0
    for info in declared_options(factory):
        declared = _declared_type(factory, info.name)
        base = typing.get_args(declared)[0] if typing.get_origin(declared) is typing.Annotated else declared
        if base not in wrong:
            continue
        with pytest.raises(SpecError) as raised:
            build({**MINIMAL[kind], info.name: wrong[base]})
        assert str(raised.value).startswith(f"{kind}.{info.name}: expected {words[base]}"), str(raised.value)
        checked += 1
    if kind not in ("weighted", "min", "max", "gate", "route", "cascade", "brier"):
        assert checked, f"{kind} has no scalar option"


@pytest.mark.parametrize("kind", sorted(BUILTINS))
def test_the_json_schema_is_valid_and_agrees_with_the_build(kind):
    schema = json_schema(kind, get_factory(kind))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors(MINIMAL[kind])), "a spec that builds must validate"
    build(MINIMAL[kind])
    bad = {**MINIMAL[kind], "no_such_option": 1}
    assert list(validator.iter_errors(bad)), "the schema must refuse unknown options, as build does"
    with pytest.raises(SpecError):
        build(bad)


def test_the_schema_carries_types_defaults_constraints_and_help():
    schema = json_schema("math", get_factory("math"))
    timeout = schema["properties"]["timeout_s"]
    assert timeout["type"] == "number" and timeout["exclusiveMinimum"] == 0 and timeout["default"] == 5.0
    assert "limit" in timeout["description"]
    assert schema["properties"]["leniency"]["properties"]["percent"] == {
        "type": "boolean", "default": True,
        "description": "a 50\\% gold takes 0.5 and 50; an answer's X\\% is X/100 unless a percent is asked"}
    assert schema["properties"]["extract"]["items"]["enum"][1] == "boxed"
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors({"type": "math", "timeout_s": "fast"}))
    assert list(validator.iter_errors({"type": "math", "leniency": {"percentt": False}}))


# --- plugins without a declaration -------------------------------------------------------------------------


def test_a_plugin_without_a_declaration_is_checked_and_listed_from_its_signature():
    """conftest's test_field_score is a plain class with an __init__ (no dataclass)."""
    with pytest.raises(SpecError, match=r"^test_field_score\.feild: unknown option 'feild'; did you mean 'field'\?"):
        build({"type": "test_field_score", "feild": "a"})
    assert build({"type": "test_field_score", "field": "a"}).field == "a"
    text = format_options("test_field_score", get_factory("test_field_score"))
    assert "field  string, default \"s\"" in text
    assert describe("test_field_score", get_factory("test_field_score"))["options"][0]["name"] == "field"


def test_a_factory_taking_any_keyword_is_not_second_guessed():
    def factory(**options) -> Verifier:
        return build({"type": "math", **options})

    assert declared_options(factory) is None
    assert "any keyword" in format_options("anything", factory)


# --- the CLI --------------------------------------------------------------------------------------------------


def test_cli_lists_one_verifiers_options_with_type_default_and_help(capsys):
    assert main(["verifiers", "math"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("math: Math answer equivalence")
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ") and line.split()}
    assert set(lines) >= {"answer_field", "leniency", "last_number", "extract", "timeout_s", "workers", "percent"}
    assert "number > 0, default 5.0 — wall-clock limit per sample" in lines["timeout_s"]
    assert 'string, default "answer" — the field holding the gold answer' in lines["answer_field"]


def test_cli_json_gives_name_doc_options_and_schema(capsys):
    assert main(["verifiers", "route", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == "route" and "glob" in data["doc"]
    assert [o["name"] for o in data["options"]] == ["routes", "field", "default"]
    assert data["options"][0]["required"] is True and data["options"][1]["default"] is None
    jsonschema.Draft202012Validator(data["schema"]).validate(
        json.loads(json.dumps(__import__("yaml").safe_load((REPO / "data" / "reward.yaml").read_text()))))
    assert main(["verifiers", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {entry["name"] for entry in listed} >= set(BUILTINS)


def test_cli_still_lists_every_verifier(capsys):
    assert main(["verifiers"]) == 0
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines() if line and not line.startswith("`")]
    assert set(BUILTINS) <= set(names) and "test_field_score" in names
    assert "rewardsmith verifiers NAME" in out


def test_cli_unknown_verifier_suggests_the_closest(capsys):
    assert main(["verifiers", "maths"]) == 2
    err = capsys.readouterr().err
    assert "unknown verifier 'maths'; did you mean 'math'?" in err


def test_cli_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"rewardsmith {version('rewardsmith')}"


def test_cli_score_takes_an_inline_json_reward(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in [
        {"prompt": "1+1?", "completion": r"\boxed{2}", "answer": "2", "data_source": "openai/gsm8k"},
        {"prompt": "1+1?", "completion": r"\boxed{3}", "answer": "2", "data_source": "openai/gsm8k"}]) + "\n")
    out = tmp_path / "out.jsonl"
    reward = json.dumps({"type": "route", "routes": {"openai/gsm8k": {"type": "math", "workers": 0}}})
    assert main(["score", str(rows), "-o", str(out), "--reward", reward, "--no-progress"]) == 0
    assert [json.loads(line)["reward"] for line in out.read_text().splitlines()] == [1.0, 0.0]
    assert main(["score", str(rows), "-o", str(tmp_path / "bad.jsonl"), "--reward",
                 '{"type": "math", "timeout_s": "fast"}', "--no-progress"]) == 2
    assert "math.timeout_s: expected a number, got 'fast'" in capsys.readouterr().err


def test_declare_checks_options_before_a_post_init_of_the_class_own():
    """A plugin cannot forget the checks: @declare runs them before the class's own __post_init__,
    once, also through a subclass that calls super().__post_init__()."""
    seen: list[object] = []

    @declare
    class Base(Verifier):
        bonus: Annotated[float, Range(gt=0)] = option(1.0, "a positive bonus")

        def __post_init__(self) -> None:
            seen.append(self.bonus)  # already coerced: an int became a float

    @declare
    class Child(Base):
        extra: int = option(0, "an int")

        def __post_init__(self) -> None:
            super().__post_init__()

    assert Base(bonus=2).bonus == 2.0 and isinstance(seen[-1], float)
    with pytest.raises(SpecError, match="bonus"):
        Base(bonus=-1)
    with pytest.raises(SpecError, match="extra: expected an integer"):
        Child(extra="many")
    child = Child(bonus=3, extra=2)
    assert (child.bonus, child.extra, seen[-1]) == (3.0, 2, 3.0)
