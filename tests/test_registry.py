"""The registry: build from names, dicts and files; errors at build time that list what exists."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from rewardsmith.verifiers import SpecError, Verifier, available, build, register
from rewardsmith.verifiers.math import MathVerifier


def test_build_from_name_dict_and_instance():
    assert isinstance(build("math"), MathVerifier)
    built = build({"type": "math", "answer_field": "solution", "timeout_s": 2})
    assert built.answer_field == "solution" and built.timeout_s == 2.0
    assert build(built) is built


def test_builtins_are_registered():
    expected = {"math", "code", "brier", "judge", "cascade", "format", "overlong", "cosine", "repetition",
                "weighted", "gate", "min", "max", "route"}
    assert expected <= set(available())


def test_unknown_name_lists_what_exists():
    with pytest.raises(SpecError) as info:
        build("maths")
    assert "unknown verifier 'maths'" in str(info.value)
    assert "math" in str(info.value) and "gate" in str(info.value)


def test_unknown_option_lists_accepted_options():
    with pytest.raises(SpecError) as info:
        build({"type": "math", "answer_feild": "x"})
    assert "'answer_feild'" in str(info.value) and "answer_field" in str(info.value)


def test_dict_without_type_fails_with_names():
    with pytest.raises(SpecError, match="needs a 'type'"):
        build({"answer_field": "x"})


def test_bad_option_value_is_a_spec_error():
    with pytest.raises(SpecError, match="leniency"):
        build({"type": "math", "leniency": {"percentt": False}})


def test_nested_errors_surface_at_build_time():
    with pytest.raises(SpecError, match="unknown verifier 'nope'"):
        build({"type": "weighted", "parts": ["math", "nope"]})
    with pytest.raises(SpecError, match=r"weighted\.weights: 2 weights for 1 parts"):
        build({"type": "weighted", "parts": ["math"], "weights": [1, 2]})


def test_build_from_yaml_and_json_files(tmp_path):
    yaml_file = tmp_path / "reward.yaml"
    yaml_file.write_text("type: math\nanswer_field: gold\nleniency:\n  percent: false\n")
    built = build(str(yaml_file))
    assert built.answer_field == "gold" and built.leniency.percent is False
    json_file = tmp_path / "reward.json"
    json_file.write_text(json.dumps({"type": "math", "last_number": False}))
    assert build(json_file).last_number is False


def test_missing_or_broken_file_is_a_spec_error(tmp_path):
    with pytest.raises(SpecError, match="does not exist"):
        build(str(tmp_path / "absent.yaml"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("type: [unclosed\n")
    with pytest.raises(SpecError, match="cannot read reward spec"):
        build(broken)


def test_registering_a_taken_name_fails():
    with pytest.raises(SpecError, match="already registered"):

        @register("math")
        class Other(Verifier):
            pass


def test_bundled_example_spec_builds():
    from conftest import REPO

    verifier = build(str(REPO / "data" / "reward.yaml"))
    assert set(verifier.components()) == {"gsm8k", "math"}


def test_plugins_load_through_the_entry_point_group(tmp_path):
    """A real installed-distribution layout (dist-info + entry_points.txt) on sys.path."""
    (tmp_path / "my_rewards.py").write_text(textwrap.dedent("""
        from rewardsmith.verifiers import Verdict, Verifier

        class Shouty(Verifier):
            name = "shouty"
            def __init__(self, bonus: float = 1.0):
                self.bonus = bonus
            def _verify(self, sample):
                loud = sample.completion_text.isupper()
                return Verdict(score=self.bonus if loud else 0.0, correct=loud)
    """))
    dist = tmp_path / "my_rewards-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-rewards\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[rewardsmith.verifiers]\nshouty = my_rewards:Shouty\n")
    code = textwrap.dedent("""
        from rewardsmith.verifiers import Sample, available, build
        assert "shouty" in available(), available()
        v = build({"type": "shouty", "bonus": 2.0})
        print(v.verify(Sample(completion="YES")).score, v.verify(Sample(completion="no")).score)
    """)
    env_path = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {env_path!r});" + code],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2.0", "0.0"]
