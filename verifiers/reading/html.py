"""Which HTML an answer may be written in: a closed set, not a list of hiding tricks.

CSS can hide anything (``opacity:0``, ``color:#fefefe``, ``font-size:0vw``, an off-screen position, a class
the page styles), and HTML has elements whose content a browser does not show inline (``<dialog>``,
``<datalist>``, ``<noembed>``, ``<svg width="0">``, ``<select>``). Recognising each would never end, and the
converse holds too: a hedge placed in text some renderer shows would be free. So an answer region is read
only when its HTML is in a closed grammar:

* **elements**: every element of the HTML standard is either in :data:`READABLE` (text elements a browser
  shows as text: ``<b>``, ``<p>``, ``<table>``, ``<details>``, ...) or makes the completion unreadable; a name
  the standard does not define (``<answer>``, ``<think>``, ``<confidence>``, ``<tool_call>``) is shown by every
  browser as its text, so it is read;
* **attributes**: none, except :data:`ATTRIBUTES` (``href``, ``title``, ``open``, ``colspan``, ``rowspan``,
  ``start``); a ``style``, ``class``, ``hidden``, ``color``, ``dir`` or any other attribute makes the
  completion unreadable.

An unreadable completion states nothing (the families score it ``no_answer``, saying which tag). Tags in
code and comments are text, not markup, and are not read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rewardsmith.verifiers.reading.markdown import code_ranges, start_tag
from rewardsmith.verifiers.reading.visible import blank


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


# The elements of the HTML Living Standard (and the obsolete ones browsers still render), by name.
STANDARD = _names(
    "a abbr address area article aside audio b base bdi bdo blockquote body br button canvas caption cite code col "
    "colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset figcaption figure footer form h1 "
    "h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li link main map mark menu "
    "meta meter nav noscript object ol optgroup option output p param picture pre progress q rp rt ruby s samp "
    "script search section select slot small source span strong style sub summary sup table tbody td template "
    "textarea tfoot th thead time title tr track u ul var video wbr svg math acronym applet basefont bgsound big "
    "blink center dir font frame frameset image isindex keygen listing marquee menuitem multicol nextid nobr "
    "noembed noframes plaintext rb rtc spacer strike tt xmp"
)
# Of those, the ones a browser shows as text, in order (bdi and bdo reorder it; the rest hide, replace or
# embed their content, or are not text at all).
READABLE = _names(
    "a abbr address article aside b blockquote br caption cite code dd del details dfn div dl dt em figcaption "
    "figure footer h1 h2 h3 h4 h5 h6 header hgroup hr i ins kbd li main mark nav ol p pre q s samp section small "
    "span strong sub summary sup table tbody td tfoot th thead time tr u ul var wbr big center strike tt"
)
ATTRIBUTES = frozenset({"href", "title", "open", "colspan", "rowspan", "start"})
# An open tag as CommonMark defines one (a raw HTML tag it passes to the browser): "$a<b$ and $c>d$" holds none.
_TAG = re.compile(
    r"<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>"
)


_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_CLOSE_TAG = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)\s*>")
# Any tag, open or close, by CommonMark's grammar: "< C >" (a space after "<") is text a reader sees, no tag.
TAG = _TAG.pattern + "|" + _CLOSE_TAG.pattern.replace("(", "(?:", 1)
# Elements a browser lays out as a block of their own (or a line break): on a page, their tags break the line.
BREAKING = _names(
    "address article aside blockquote br caption dd details div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 "
    "header hgroup hr li main nav ol p pre section summary table tbody td tfoot th thead tr ul center"
)


@dataclass(frozen=True)
class Tag:
    """One HTML tag as an HTML parser reads it: where it lies, its element, its attributes' names."""

    start: int
    end: int
    name: str
    attributes: tuple[str, ...]
    closing: bool

    @property
    def readable(self) -> bool:
        """Whether the tag is in the grammar (module docstring)."""
        return not ((self.name in STANDARD and self.name not in READABLE) or any(
            a not in ATTRIBUTES for a in self.attributes))


def html_tags(source: str) -> list[Tag]:
    """The HTML tags of ``source``, in order; tags in code and comments are text, not markup."""
    if "<" not in source:
        return []
    text = _COMMENT.sub(lambda c: blank(c.group(0), [(0, len(c.group(0)))]), blank(source, code_ranges(source)))
    found = []
    for match in _TAG.finditer(text):
        tag = start_tag(match.group(0))
        if tag is not None:
            found.append(Tag(match.start(), match.end(), tag[0], tag[1], closing=False))
    found += [Tag(m.start(), m.end(), m.group(1).lower(), (), closing=True) for m in _CLOSE_TAG.finditer(text)]
    return sorted(found, key=lambda t: t.start)


def unreadable_tag(source: str) -> str:
    """The first tag of ``source`` outside the grammar (module docstring), or ``""``. Every tag counts, even
    one whose element the reader hides (``display:none; display:inline`` shows it again); tags in code and
    comments are text."""
    return next((source[t.start : t.end] for t in html_tags(source) if not t.readable), "")
