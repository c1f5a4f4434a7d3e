"""Whatever text a row holds, every output format writes it and reads it back (issue 27, item 1).

A JSON input may hold what UTF-8 cannot (a lone surrogate: ``"\\ud800"``), NUL and control
characters, raw line separators, invalid UTF-8 bytes and huge fields. The verifier judges such
a row; the writer must not be the one to fail on it. Every shape goes through every format
(JSONL, JSON array, JSONL.gz, parquet, stdout), in values, nested values and the verdict's
feedback; the rows read back equal the rows read in, and a resumed job neither drops nor
duplicates them. What cannot be written (a parquet column name holding a surrogate, a full
disk) exits 5 naming the input line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rewardsmith.adapters.cli import main
from rewardsmith.adapters.scoring.outputs import json_text
from rewardsmith.adapters.scoring.rows import read_rows
from rewardsmith.verifiers import Verdict, Verifier, register

SHAPES = {
    "lone_high": "x \ud800 y",
    "lone_low": "\udfff",
    "high_at_end": "abc\ud83d",
    "reversed_pair": "\ude00\ud83d",
    "nul": "a\x00b\x00",
    "controls": "\x01\x1b[31mred\x7f\x08",
    "separators": "one\u2028two\u2029three\x85four",
    "cr_lf": "a\r\nb\rc\n",
    "bom": "\ufeffstart",
    "astral": "\U0001f600 \U00010348",
    "noncharacters": "\uffff\ufffe",
    "backslashes": '\\ud800 is not a surrogate "quoted"',
    "huge": "7" * (3 << 20),
}
FORMATS = ["out.jsonl", "out.json", "out.jsonl.gz", "out.parquet"]


@register("test_echo_text")
class EchoText(Verifier):
    """Test-only: reward 1 when the completion starts with "x", feedback and details quote it whole."""

    name = "echo_text"

    def _verify(self, sample):
        text = sample.completion
        return Verdict(
            score=float(text.startswith("x")),
            correct=text.startswith("x"),
            feedback=f"read {text}",
            details={"read": text, text[:8]: len(text), "power": 10**5000},  # more digits than str() prints
        )


def input_rows() -> list[dict]:
    return [
        {"id": name, "completion": text, "text": text, "meta": {"nested": [text, {"k": text}]}}
        for name, text in SHAPES.items()
    ]


def write_input(path: Path, rows: list[dict], extra: bytes = b"") -> Path:
    """JSON lines as a JSON writer makes them (surrogates as escapes), plus raw ``extra`` bytes."""
    path.write_bytes("".join(json.dumps(row) + "\n" for row in rows).encode() + extra)
    return path


# A row whose bytes are not UTF-8: read with U+FFFD in their place, then written like any other.
INVALID_UTF8 = b'{"id": "invalid_utf8", "completion": "caf\xe9 \xff\xfe x", "text": "\xc3\x28", "meta": {}}\n'
INVALID_UTF8_READ = {"id": "invalid_utf8", "completion": "caf\ufffd \ufffd\ufffd x", "text": "\ufffd(", "meta": {}}


def expected_rows() -> list[dict]:
    return [*input_rows(), INVALID_UTF8_READ]


def score(src: Path, out: str, *extra: str) -> int:
    return main(
        ["score", str(src), "-o", out, "--reward", "test_echo_text", "--no-progress", "--batch-size", "4", *extra]
    )


def check_rows(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want)
    for row, given in zip(got, want, strict=True):
        assert {k: row[k] for k in given} == given, row["id"]  # every field back exactly
        assert row["verdict"]["status"] == "ok"
        assert row["verdict"]["feedback"] == f"read {given['completion']}"
        assert row["verdict"]["details"]["read"] == given["completion"]
        assert row["verdict"]["details"]["power"] == "1" + "0" * 5000
        assert row["reward"] == float(given["completion"].startswith("x"))


def test_json_text_writes_what_python_will_not_print():
    assert json.loads(json_text({"n": 10**5000, "ok": 7})) == {"n": "1" + "0" * 5000, "ok": 7}
    deep: list = []
    for _ in range(sys.getrecursionlimit() - 20):  # as deep as a reader could have built it
        deep = [deep]
    assert json_text(deep).count("[") == sys.getrecursionlimit() - 19


NEAR_LIMIT = 900  # nesting a JSON reader takes, close to Python's recursion limit
ODD_NUMBERS = [
    ('{"id": "long_int", "completion": "x", "n": ' + "9" * 5000 + "}", "holds a number too long to read"),
    ('{"id": "too_deep", "completion": "x", "d": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"id": "deep", "completion": "x", "d": ' + "[" * NEAR_LIMIT + "1" + "]" * NEAR_LIMIT + "}", None),
    ('{"id": "floats", "completion": "x", "f": [1e999, -1e999, -0.0, 1e-320]}', None),
]


@pytest.mark.parametrize("name", FORMATS)
def test_numbers_and_nesting_python_cannot_hold_are_malformed_rows_never_a_crash(tmp_path, name, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(line + "\n" for line, _ in ODD_NUMBERS))
    out = tmp_path / name
    assert score(src, str(out)) == 0, capsys.readouterr().err
    got = [row.data for row in read_rows(out)]
    assert len(got) == len(ODD_NUMBERS)
    for row, (line, reason) in zip(got, ODD_NUMBERS, strict=True):
        if reason is None:
            assert {k: row[k] for k in json.loads(line)} == json.loads(line)
            assert row["verdict"]["status"] == "ok"
        else:  # written through whole, as every malformed line is
            assert row["_raw"] == line and row["verdict"]["status"] == "invalid_input"
            assert reason in row["verdict"]["feedback"]


def test_json_text_is_utf8_and_reads_back_exactly():
    for text in SHAPES.values():
        line = json_text({text: [text]})
        line.encode("utf-8")  # would raise on a lone surrogate left in
        assert len(line.splitlines()) == 1  # one line for any splitter (U+2028, NEL, CR...), whatever the text
        assert json.loads(line) == {text: [text]}


@pytest.mark.parametrize("name", FORMATS)
def test_every_text_shape_is_written_by_every_format_and_reads_back(tmp_path, name, capsys):
    src = write_input(tmp_path / "in.jsonl", input_rows(), INVALID_UTF8)
    out = tmp_path / name
    assert score(src, str(out)) == 0, capsys.readouterr().err
    check_rows([row.data for row in read_rows(out)], expected_rows())
    if name.endswith(".jsonl"):  # the JSONL file itself is strict UTF-8 text with JSON's escapes
        text = out.read_bytes().decode("utf-8")
        assert "\\ud800" in text and "\\u0000" in text and "\U0001f600" in text


@pytest.mark.parametrize("name", FORMATS)
def test_a_job_cut_short_resumes_over_odd_text_without_dropping_or_duplicating(tmp_path, name, capsys):
    src = write_input(tmp_path / "in.jsonl", input_rows(), INVALID_UTF8)
    out = tmp_path / name
    assert score(src, str(out), "--limit", "5") == 0
    assert score(src, str(out)) == 0
    assert "5 resumed" in capsys.readouterr().out
    check_rows([row.data for row in read_rows(out)], expected_rows())


def test_a_torn_last_line_after_odd_text_is_cut_and_rescored(tmp_path, capsys):
    src = write_input(tmp_path / "in.jsonl", input_rows(), INVALID_UTF8)
    out = tmp_path / "out.jsonl"
    assert score(src, str(out), "--limit", "4") == 0
    whole = out.read_bytes()
    with out.open("ab") as handle:  # a kill in the middle of the next batch's write
        handle.write(json_text({"id": "nul", "completion": "\ud800"}).encode()[:20])
    assert score(src, str(out)) == 0
    assert out.read_bytes().startswith(whole)
    check_rows([row.data for row in read_rows(out)], expected_rows())


def test_retry_errors_on_a_parquet_output_keeps_odd_text(tmp_path, capsys):
    src = write_input(tmp_path / "in.jsonl", input_rows())
    out = tmp_path / "out.parquet"
    assert score(src, str(out)) == 0
    assert score(src, str(out), "--retry-errors") == 0  # unpacks the parquet back into JSONL and converts again
    check_rows([row.data for row in read_rows(out)], input_rows())


STDOUT_CLI = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv.pop(1))
    import test_score_odd_text  # registers test_echo_text
    from rewardsmith.adapters.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_stdout_gets_every_shape_as_utf8_whatever_the_locale(tmp_path):
    script = tmp_path / "cli.py"
    script.write_text(STDOUT_CLI)
    src = write_input(tmp_path / "in.jsonl", input_rows(), INVALID_UTF8)
    env = {**os.environ, "PYTHONIOENCODING": "latin-1", "LC_ALL": "C"}
    result = subprocess.run(
        [
            sys.executable,
            str(script),
            str(Path(__file__).parent),
            "score",
            str(src),
            "-o",
            "-",
            "--reward",
            "test_echo_text",
            "--no-progress",
        ],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    got = [json.loads(line) for line in result.stdout.decode("utf-8").splitlines()]
    check_rows(got, expected_rows())


def test_a_field_name_parquet_cannot_hold_exits_5_naming_the_line_and_jsonl_takes_it(tmp_path, capsys):
    rows = [{"id": "a", "completion": "x"}, {"id": "b", "completion": "y", "bad \ud800 name": 1}]
    src = write_input(tmp_path / "in.jsonl", rows)
    assert score(src, str(tmp_path / "out.parquet")) == 5
    err = capsys.readouterr().err
    assert "input line 2" in err and "bad \\ud800 name" in err and ".jsonl" in err
    assert not (tmp_path / "out.parquet").exists()  # no half-written OUTPUT
    assert score(src, str(tmp_path / "out.jsonl")) == 0
    assert [row.data for row in read_rows(tmp_path / "out.jsonl")][1]["bad \ud800 name"] == 1


def test_a_full_disk_exits_5_naming_the_rows_not_2(tmp_path, capsys):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    src = write_input(tmp_path / "in.jsonl", input_rows()[:3])
    assert score(src, "/dev/full") == 5
    err = capsys.readouterr().err
    assert "lines 1-3" in err and "No space left" in err and "Traceback" not in err
