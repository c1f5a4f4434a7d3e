"""Every relative link in README.md and docs/**/*.md reaches a file that exists, and every ``#anchor``
names a heading of the page it points to (GitHub's slugs), so moving text between pages cannot leave
a dead link behind."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parents[1]

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)


def doc_pages(root: Path = REPO) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _prose_lines(text: str):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text, lower case, punctuation other than - and _
    removed, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags render as nothing
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in _prose_lines(path.read_text(encoding="utf-8")):
        found.update(_HTML_ANCHOR.findall(line))
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    problems = []
    for number, line in _prose_lines(page.read_text(encoding="utf-8")):
        for target in _LINK.findall(_INLINE_CODE.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            where = f"{page.relative_to(root)}:{number}: {target}"
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / unquote(path_part)).resolve() if path_part else page
            if not dest.exists():
                problems.append(f"{where}: no such file")
                continue
            if anchor:
                if dest.is_dir():
                    problems.append(f"{where}: an anchor on a directory")
                elif dest.suffix != ".md":
                    problems.append(f"{where}: an anchor on a file that is not Markdown")
                elif unquote(anchor) not in anchors(dest):
                    problems.append(f"{where}: no heading with that anchor in {dest.relative_to(root)}")
    return problems


def test_every_relative_link_and_anchor_in_the_docs_resolves():
    pages = doc_pages()
    assert len(pages) > 10, "README.md and the docs/ pages should be found"
    problems = [problem for page in pages for problem in broken_links(page)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_the_readme_tour_links_to_every_docs_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    index = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted((REPO / "docs").rglob("*.md"))
    unlinked_index = [p.relative_to(REPO / "docs").as_posix() for p in pages
                      if p.name != "README.md" and f"]({p.relative_to(REPO / 'docs').as_posix()}" not in index]
    assert not unlinked_index, f"docs/README.md does not link to {unlinked_index}"
    unlinked_readme = [rel for rel in (p.relative_to(REPO).as_posix() for p in pages if p.name != "README.md")
                       if f"]({rel}" not in readme]
    assert not unlinked_readme, f"README.md does not link to {unlinked_readme}"


def test_slugs_follow_githubs_rule():
    assert slug("Set-up on a fresh machine: two commands") == "set-up-on-a-fresh-machine-two-commands"
    assert slug("Serving: `orm` and `prm` verifiers") == "serving-orm-and-prm-verifiers"
    assert slug("A group's prompt runs once") == "a-groups-prompt-runs-once"
    assert slug("When the reward fails: `on_error`") == "when-the-reward-fails-on_error"
    assert slug("Does it learn? Measured on 2 CPU cores") == "does-it-learn-measured-on-2-cpu-cores"


def test_the_checker_finds_broken_links_and_anchors(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## A real section\n\n```\n# not a heading\n```\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](other.md) [fine too](other.md#a-real-section) [in page](#page) [web](https://example.com/x#y)\n"
        "[missing file](missing.md)\n"
        "[missing anchor](other.md#no-such-section)\n"
        "[code comment is no heading](other.md#not-a-heading)\n"
        "[missing in-page anchor](#nowhere)\n"
        "[needs ../](docs/other.md)\n"
        "`[inside code](missing-too.md)` is not a link\n"
        "```\n[inside a fence](missing-as-well.md)\n```\n"
    )
    problems = broken_links(page, root=tmp_path)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "missing.md: no such file",
        "other.md#no-such-section: no heading with that anchor in docs/other.md",
        "other.md#not-a-heading: no heading with that anchor in docs/other.md",
        "#nowhere: no heading with that anchor in docs/page.md",
        "docs/other.md: no such file",
    ]
    assert [int(p.split(":")[1]) for p in problems] == [4, 5, 6, 7, 8]
