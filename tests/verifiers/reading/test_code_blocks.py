"""Code blocks are what the CommonMark parser sees: a fence in a comment is none, one in a quote or a list is one."""

from __future__ import annotations

from rewardsmith.verifiers.reading.code_blocks import code_blocks, line_feeds


def test_blocks_are_what_the_parser_sees_not_what_looks_like_a_fence():
    text = 'Text\n```json\n{"a": 1}\n```\n<!--\n```\nhidden\n```\n-->\n\n    indented\n'
    blocks = code_blocks(text)
    assert [(b.info, b.content, b.fenced, b.closed) for b in blocks] == [
        ("json", '{"a": 1}\n', True, True),
        ("", "indented\n", False, True),
    ]
    assert text[blocks[0].start : blocks[0].end] == '```json\n{"a": 1}\n```\n'
    assert code_blocks("no code here") == []
    assert code_blocks("inline ```json {}``` is a code span") == []


def test_containers_and_closing_fences():
    quoted = code_blocks("> ```json\n> {}\n> ```")
    assert [(b.content, b.closed) for b in quoted] == [("{}\n", True)]
    listed = code_blocks("1. item\n\n   ```yaml\n   a: 1\n   ```\n")
    assert [(b.info, b.content, b.closed) for b in listed] == [("yaml", "a: 1\n", True)]
    assert [b.closed for b in code_blocks("```json\n{}\n")] == [False]
    assert [b.closed for b in code_blocks("````\n```\n````")] == [True]  # a shorter fence does not close it
    assert [b.content for b in code_blocks("````\n```\n````")] == ["```\n"]


def test_line_ends_are_read_as_commonmark_reads_them():
    for text in ("```json\r\n{}\r\n```\r\n", "```json\r{}\r```"):
        assert line_feeds(text) == "```json\n{}\n```" + ("\n" if text.endswith("\n") else "")
        assert [(b.content, b.closed) for b in code_blocks(text)] == [("{}\n", True)]
