"""The command line helps with typos and documents itself: every parser refuses abbreviated flags,
an unknown flag or subcommand gets the closest valid name and the usage of the command it was typed
for, every flag has plain help text (no reStructuredText markup), and counts are pluralised."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from rewardsmith.adapters.cli import build_parser, main
from rewardsmith.verifiers.wording import plural

# What reStructuredText / Sphinx markup looks like: ``literal``, :mod:`x`, :func:`~a.b`, `x`_
MARKUP = re.compile(r"``|:[a-z]+:`|`_\b")


def walk(parser: argparse.ArgumentParser, path: str = "rewardsmith") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the tree, with the command line that reaches it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, f"{path} {name}")


PARSERS = list(walk(build_parser()))


def test_the_walk_reaches_every_subcommand():
    paths = {path for path, _ in PARSERS}
    assert {"rewardsmith score", "rewardsmith train grpo", "rewardsmith train orm", "rewardsmith label steps",
            "rewardsmith sandbox doctor", "rewardsmith eval", "rewardsmith audit", "rewardsmith models"} <= paths


def test_every_parser_refuses_abbreviated_flags():
    assert [path for path, parser in PARSERS if parser.allow_abbrev] == []


def test_every_flag_and_subcommand_has_help_text():
    missing = []
    for path, parser in PARSERS:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{path} {choice.dest}" for choice in action._choices_actions if not choice.help]
            if action.help is argparse.SUPPRESS:
                continue
            if not (action.help or "").strip():
                name = "/".join(action.option_strings) or action.metavar or action.dest
                missing.append(f"{path} {name}")
    assert missing == [], "flags without help text (add help=...): " + ", ".join(missing)


def test_help_text_is_plain_without_restructuredtext_markup():
    marked = []
    for path, parser in PARSERS:
        texts = {"description": parser.description, "epilog": parser.epilog, "--help": parser.format_help()}
        for action in parser._actions:
            texts[f"help of {'/'.join(action.option_strings) or action.dest}"] = action.help
        marked += [f"{path}: {where}: {MARKUP.search(text).group(0)!r}" for where, text in texts.items()
                   if isinstance(text, str) and MARKUP.search(text)]
    assert marked == [], "reStructuredText markup in what argparse prints: " + "; ".join(marked)


@pytest.mark.parametrize(
    ("argv", "usage", "hint"),
    [
        (["score", "in.jsonl", "-o", "out.jsonl", "--overwrit"], "usage: rewardsmith score ",
         "did you mean --overwrite?"),
        (["train", "grpo", "--max-step", "3"], "usage: rewardsmith train grpo ", "did you mean --max-steps?"),
        (["label", "steps", "in.jsonl", "-o", "x", "--policy", "p", "--max-new-token", "4"],
         "usage: rewardsmith label steps ", "did you mean --max-new-tokens?"),
        (["scor", "in.jsonl"], "usage: rewardsmith [", "did you mean 'score'?"),
        (["train", "gpro"], "usage: rewardsmith train [", "did you mean 'grpo'?"),
        (["train", "orm", "--device", "cdua"], "usage: rewardsmith train orm ", "did you mean 'cuda'?"),
    ],
)
def test_a_typo_gets_a_suggestion_and_the_usage_of_its_subcommand(capsys, argv, usage, hint):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(usage), err
    assert hint in err


def test_an_abbreviated_flag_is_refused_not_expanded(capsys):
    with pytest.raises(SystemExit):
        main(["score", "in.jsonl", "-o", "out.jsonl", "--overwr"])
    err = capsys.readouterr().err
    assert "unrecognized arguments: --overwr" in err and "did you mean --overwrite?" in err


def test_a_flag_far_from_every_other_gets_no_guess(capsys):
    with pytest.raises(SystemExit):
        main(["score", "in.jsonl", "-o", "out.jsonl", "--zzzzzz"])
    err = capsys.readouterr().err
    assert "unrecognized arguments: --zzzzzz" in err and "did you mean" not in err


@pytest.mark.parametrize(("n", "expected"), [(0, "0 rows"), (1, "1 row"), (2, "2 rows"), (1234, "1234 rows")])
def test_plural(n, expected):
    assert plural(n, "row") == expected


def test_plural_with_an_irregular_form_and_thousands():
    assert plural(1, "row has", "rows have") == "1 row has"
    assert plural(3, "row has", "rows have") == "3 rows have"
    assert plural(1, "family", "families") == "1 family"
    assert plural(12345, "prompt", thousands=True) == "12,345 prompts"


def test_a_cli_message_with_a_count_of_one_is_singular(tmp_path, capsys):
    """`label synthetic` reports what it wrote: one problem is "1 problem", not "1 problems"."""
    out = tmp_path / "pairs.jsonl"
    assert main(["label", "synthetic", "--problems", "1", "--form", "pairwise", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 pairwise row from 1 problem (1 correct solution, 1 with an error" in printed
    assert main(["label", "synthetic", "--problems", "2", "--form", "pairwise", "-o", str(out)]) == 0
    assert "2 pairwise rows from 2 problems (2 correct solutions" in capsys.readouterr().out
