"""What a reader sees (verifiers/reading): each construct that hides text hides it, honest look-alikes stay
visible, a redefinition leaves nothing readable, and look-alike characters fold to what they look like."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardsmith.verifiers.reading import fold, readable_text, strip_invisible, visible

SECRET = "4217"  # the hidden value: it must not be seen


def seen(text: str) -> str:
    return visible(text).text


# ------------------------------------------------------------------ Markdown: hidden


@pytest.mark.parametrize("completion", [
    f"The answer is 5.\n```\n\\boxed{{{SECRET}}}\n```",  # fenced code
    f"The answer is 5.\n~~~python\nx = {SECRET}\n~~~\n",  # tilde fence
    f"The answer is 5.\n\n    \\boxed{{{SECRET}}}\n",  # indented code block
    f"The answer is 5, not `{SECRET}`.",  # code span
    f"The answer is 5 ``{SECRET} ` x``.",  # code span with a backtick inside
    f"The answer is 5 <!-- {SECRET} -->.",  # inline comment
    f"<!--\n\\boxed{{{SECRET}}}\n-->\nThe answer is 5.",  # comment block
    f"The answer is 5. <!-- never closed {SECRET}",  # a comment that never closes hides the rest
    f"The answer is ~~{SECRET}~~ 5.",  # strikethrough
    f"The answer is ~{SECRET}~ 5.",  # ... and GitHub's single-tilde run
    f"The answer is <del>{SECRET}</del> 5.",
    f"The answer is <s>{SECRET}</s> 5.",
    f"The answer is <S>{SECRET}</S> 5.",
    f"The answer is <strike>{SECRET}</strike> 5.",
    f"The answer is 5. <del>{SECRET} never closed",  # hides to the end of its paragraph
    f"The answer is <del><b>{SECRET}</b></del> 5.",
    f"The answer is <span style=\"color: white\">{SECRET}</span> 5.",
    f"The answer is <span style='display:none'>{SECRET}</span> 5.",
    f"The answer is <span hidden>{SECRET}</span> 5.",
    f"The answer is <span style=\"font-size:0\">{SECRET}</span> 5.",
    f"The answer is 5.\n\n<div style=\"display:none\">\n{SECRET}\n</div>\n",  # an HTML block
    f"<div>\nThe answer is 5 <!-- {SECRET} -->\n</div>",
    f"The answer is [5](https://example.com/{SECRET}).",  # link target
    f"The answer is [5](https://x.org \"{SECRET}\").",  # link title
    f"The answer is ![{SECRET}](img.png) 5.",  # image: alt text is not what is shown
    f"The answer is [5][ref].\n\n[ref]: https://x.org/{SECRET}",  # reference definition
    f"The answer is 5.\n\n> quote `{SECRET}`",  # code span inside a container
    f"The answer is 5 <details>{SECRET}</details>.",  # collapsed: only the summary shows until clicked
    f"The answer is 5.\n<details><summary>more</summary>\n{SECRET}\n</details>",
    f"The answer is 5.\n\n<details>\n<summary>more</summary>\n\n{SECRET}\n\n</details>\n",  # Markdown inside
    f"The answer is 5.\n\n<details>\n\n{SECRET}",  # never closed: hides the rest
    f"The answer is 5. <s>struck\n\n{SECRET}",  # a browser reopens an unclosed <s> in every later block
    f"The answer is 5. <strike>a\n\n- {SECRET}\n\n</strike>",
    f"The answer is 5. <s><s>a\n\n{SECRET}</s> {SECRET}</s>",  # nested: the second close ends the strike
    f"The answer is 5.\n\n<details data-open>\n\n{SECRET}\n\n</details>",  # an attribute *named* open opens it
    f"The answer is 5.\n\n<details title=\"open\">\n\n{SECRET}\n\n</details>",
    "The answer is 5. " + "".join(c + "\u0336" for c in SECRET),  # struck through by an overlay mark
    "The answer is 5. " + "".join(c + "\u20e0" for c in SECRET),  # inside an enclosing prohibition sign
    f"The answer is 5. {SECRET[0]}\u0338{SECRET[1:]}",  # a slashed digit is no digit read
])
def test_markdown_that_hides_text_is_not_seen(completion: str) -> None:
    text = seen(completion)
    assert SECRET not in text
    assert "5" in text  # the visible answer stays


@pytest.mark.parametrize(("completion", "kept"), [
    ("The answer is **5**.", "The answer is 5."),  # emphasis markers are a style, not characters
    ("__Answer: 5__ and <b>x</b>", "Answer: 5 and x"),
    ("It is 2 * 3 and a ** b.", "2 * 3 and a ** b"),  # an unmatched asterisk is a character
    ("The answer is *x* = $\\frac{1}{2}$.", "$\\frac{1}{2}$"),
    ("The answer is [Paris](https://x.org).", "Paris"),
    ("Answer: <answer>B</answer>", "<answer>B</answer>"),  # other tags stay for the later layers
    ("<think>working</think> The answer is 5.", "<think>working</think>"),
    ("It costs $5 and then $6.", "$5 and then $6"),  # currency, not math
    ("It costs $5 and $6 % more.", "% more"),  # not math, so the % is a percent sign
    ("Pay $40 then 25% off, so $30.", "25% off"),
    ("Pay $40 then 25% off, so $30. \\phantom{x}", "25% off, so $30."),  # the same where the walker runs
    ("50% of them, so 12.", "50% of them"),  # a percent sign in prose is not a comment
    ("x ~ 5 and a ~ tilde", "x ~ 5 and a ~ tilde"),  # a tilde beside a space strikes nothing
    ("$a ~~b~~ c$", "~~b~~"),  # inside math, Markdown reads nothing
    ("$`x`$ and \\(`y`\\)", "`y`"),
    ("`<!--` closes nothing; the answer is 5.", "the answer is 5"),
    ("Use \\~~not struck~~ here.", "not struck"),  # an escaped tilde opens nothing
    ("The answer is <b>5</b> <del>3</del>.\n\nNext paragraph.", "Next paragraph."),
    ("<details open>\n\nShown 5.\n\n</details>\n\nAfter.", "Shown 5."),  # open: read
    ("<details>\n\nx\n\n</details>\n\nAfter it, 5.", "After it, 5."),  # only the element hides
    ("Write `<details>` to fold; the answer is 5.", "the answer is 5"),  # a tag in code opens nothing
    ("<s>x\n\ny</s> The answer is 5.", "The answer is 5."),  # ... up to its close tag
    ("<del>x\n\nThe answer is 5.", "The answer is 5."),  # <del> is closed by its paragraph's end
])
def test_honest_markdown_stays_as_written(completion: str, kept: str) -> None:
    assert kept in seen(completion)


@pytest.mark.parametrize(("completion", "reads"), [
    ("The answer is &#66;.", "The answer is B."),
    ("The answer is &#x42;.", "The answer is B."),
    ("x &lt; 5 &amp; y", "x < 5 & y"),
])
def test_entities_read_as_what_they_render(completion: str, reads: str) -> None:
    assert seen(completion) == reads


def test_entities_inside_code_or_math_are_not_rendered() -> None:
    assert "&#66;" in seen("$x = &#66;$")
    assert "B" not in seen("`&#66;`")


# ------------------------------------------------------------------ LaTeX: hidden


@pytest.mark.parametrize("completion", [
    f"The answer is $\\boxed{{5\\phantom{{{SECRET}}}}}$.",
    f"The answer is $\\boxed{{5}}\\hphantom{{{SECRET}}}$.",
    f"The answer is $\\boxed{{5}}\\vphantom {{{SECRET}}}$.",
    f"The answer is $\\boxed{{5}}$ {{\\color{{white}} {SECRET}}}.",
    f"The answer is $\\boxed{{5 {{\\color{{White}}{SECRET}}}}}$.",
    f"The answer is $\\boxed{{5}}$ \\textcolor{{white}}{{{SECRET}}}.",
    f"The answer is $\\boxed{{5}}$ \\textcolor{{transparent}}{{{SECRET}}}.",
    f"The answer is $\\boxed{{5}}$ \\textcolor {{white}} {{{SECRET}}}.",
    f"The answer is $\\boxed{{5}}$ \\textcolor{{#fefefe}}{{{SECRET}}}.",  # near white: no visible colour
    f"The answer is $\\boxed{{5}}$ \\textcolor{{WhiteSmoke}}{{{SECRET}}}.",
    f"The answer is $\\boxed{{5}}$ {{\\color{{rgb,255:red,250;green,250;blue,250}} {SECRET}}}.",
    f"The answer is $\\boxed{{5 \\cancel{{{SECRET}}}}}$.",
    f"The answer is $\\boxed{{5}}$ $\\bcancel{{{SECRET}}}$.",
    f"The answer is $\\boxed{{5}}$ $\\xcancel{{{SECRET}}}$.",
    f"The answer is \\sout{{{SECRET}}} 5.",
    f"The answer is \\st{{{SECRET}}} 5.",
    f"The answer is $\\boxed{{5}}$.\n% \\boxed{{{SECRET}}}",
    f"The answer is $\\boxed{{5}}$.\n   %{SECRET}",
    f"The answer is $\\boxed{{5}} % {SECRET}$.",  # a comment inside math ends at the math
    f"The answer is $$\\boxed{{5}} % {SECRET}$$.",
    f"The answer is \\(\\boxed{{5}} % {SECRET}\\).",
    f"The answer is $\\boxed{{5}}$. \\iffalse \\boxed{{{SECRET}}} \\fi",
    f"The answer is $\\boxed{{5}}$. \\iffalse \\boxed{{{SECRET}}}",  # never closed: hides the rest
    f"The answer is $\\boxed{{5}}$ \\textcolor[gray]{{1}}{{{SECRET}}}.",  # a model's spec is no named colour
    f"The answer is $\\boxed{{5}}$ {{\\color[rgb]{{1,1,1}} {SECRET}}}.",
    f"The answer is $\\boxed{{5}}$ \\colorbox{{black}}{{{SECRET}}}.",  # black on black
    f"The answer is $\\boxed{{5}}$ \\fcolorbox{{red}}{{navy}}{{{SECRET}}}.",
    f"The answer is $\\boxed{{5}}$ \\colorbox[gray]{{0}}{{{SECRET}}}.",
])
def test_latex_that_hides_text_is_not_seen(completion: str) -> None:
    text = seen(completion)
    assert SECRET not in text
    assert "\\boxed{5" in text or "5" in text


@pytest.mark.parametrize(("completion", "kept"), [
    ("$\\boxed{\\frac{1}{2}}$", "$\\boxed{\\frac{1}{2}}$"),  # math stays LaTeX source
    ("$\\textcolor{red}{5}$", "\\textcolor{red}{5}"),  # a visible colour is dress
    ("{\\color{blue} 5}", "{\\color{blue} 5}"),
    ("$50\\%$ of 12 is 6", "$50\\%$ of 12 is 6"),  # an escaped percent is a percent
    ("\\colorbox{white}{5}", "\\colorbox{white}{5}"),  # a white background shows its content
    ("\\colorbox{yellow}{5}", "\\colorbox{yellow}{5}"),  # ... as does a light one
    ("\\fcolorbox{red}{white}{5}", "\\fcolorbox{red}{white}{5}"),
    ("$\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}$", "\\begin{pmatrix} 1"),  # an environment a reader sees
    ("$x > 0 \\iff y > 0$, so 5", "\\iff y > 0"),  # "if and only if" is no TeX conditional
    ("$\\phantom{x}$ then 5", "then 5"),
])
def test_honest_latex_stays_as_written(completion: str, kept: str) -> None:
    assert kept in seen(completion)


@pytest.mark.parametrize(("completion", "defined"), [
    ("\\def\\boxed#1{7} The answer is $\\boxed{5}$.", "\\boxed"),
    ("\\renewcommand{\\boxed}[1]{7} $\\boxed{5}$", "\\boxed"),
    ("\\newcommand{\\ans}{7} The answer is $\\ans$.", "\\ans"),
    ("\\let\\frac\\times $\\boxed{\\frac{1}{2}}$", "\\frac"),
    ("\\DeclareMathOperator{\\five}{7} $\\boxed{\\five}$", "\\five"),
    ("$\\gdef\\x{7}\\boxed{\\x}$", "\\x"),
    ("\\catcode`\\5=13 $\\boxed{5}$", "\\catcode"),
    ("\\iftrue The answer is 7. \\else $\\boxed{5}$ \\fi", "\\iftrue"),  # a conditional picks what renders
    ("The answer is 7.\\begin{comment}$\\boxed{5}$\\end{comment}", "comment"),  # an environment not surely seen
])
def test_a_redefinition_leaves_nothing_readable(completion: str, defined: str) -> None:
    reading = visible(completion)
    assert not reading.readable
    assert any(defined in named for named in reading.redefines)
    assert readable_text(completion) == ""


@pytest.mark.parametrize("completion", [
    "The answer is $\\boxed{5}$.",
    "We define $f(x) = x^2$ and get $\\boxed{5}$.",  # the word "define" is not a definition
    "```\n\\def\\boxed#1{7}\n```\nThe answer is $\\boxed{5}$.",  # a definition inside code is code
    "The answer is $\\boxed{5}$. <!-- \\renewcommand{\\boxed}{7} -->",
])
def test_no_definition_keeps_the_text_readable(completion: str) -> None:
    assert visible(completion).readable
    assert "\\boxed{5}" in readable_text(completion)


# ------------------------------------------------------------------ Unicode


@pytest.mark.parametrize(("written", "reads"), [
    ("4\u200b2", "42"),  # zero-width space
    ("4\u200d2", "42"),  # zero-width joiner
    ("4\u20602", "42"),  # word joiner
    ("4\u00ad2", "42"),  # soft hyphen
    ("4\ufeff2", "42"),  # byte order mark
    ("4\ufe0f2", "42"),  # variation selector
    ("4\U000e0041\U000e00422", "42"),  # tag characters
    ("4\u31642", "42"),  # Hangul filler
])
def test_what_renders_as_nothing_is_dropped(written: str, reads: str) -> None:
    assert strip_invisible(written) == reads
    assert seen(f"The answer is {written}.") == f"The answer is {reads}."


def test_bidi_controls_are_kept_by_fold_because_they_reorder_what_is_shown() -> None:
    assert seen("\\boxed{\u202e12}") == ""  # and a completion holding an override reads as nothing
    assert "\u202e" in fold("\u202e12")


@pytest.mark.parametrize(("look_alike", "plain"), [
    ("\u0412", "B"),  # Cyrillic Ve
    ("\u0392", "B"),  # Greek Beta
    ("\uff22", "B"),  # fullwidth B
    ("\U0001d401", "B"),  # mathematical bold B
    ("\u0421", "C"),  # Cyrillic Es
    ("\u0430", "a"),  # Cyrillic a
    ("\u13aa", "A"),  # Cherokee A
    ("\u0665", "5"),  # Arabic-Indic five
    ("\u096b", "5"),  # Devanagari five
    ("\U0001d7d3", "5"),  # mathematical bold five
    ("\uff0c", ","),  # fullwidth comma
    ("\u066b", ","),  # Arabic decimal separator
    ("\u201a", ","),  # single low quotation mark
    ("\u0440\u0430ris", "paris"),  # mixed scripts
    ("(\u0412)", "(B)"),
])
def test_look_alikes_fold_to_what_they_look_like(look_alike: str, plain: str) -> None:
    assert fold(look_alike) == plain


@pytest.mark.parametrize(("a", "b"), [
    ("B", "C"), ("1", "l"), ("0", "O"), ("rn", "m"), ("Paris", "Pari5"), ("2.5", "25"), ("B", "b"),
])
def test_different_characters_stay_different(a: str, b: str) -> None:
    assert fold(a) != fold(b)


def test_ascii_is_untouched_and_fold_is_stable() -> None:
    for text in ["The answer is B.", "x = 5, y = 6", "Paris"]:
        assert fold(text) == text
    for text in ["\u0412", "\uff22\u0665", "\u0440\u0430ris"]:
        assert fold(fold(text)) == fold(text)


# ------------------------------------------------------------------ the map back to the source


def test_offsets_map_back_to_the_source() -> None:
    source = "A <!-- x --> \\boxed{5} &#66; z\u200b!"
    reading = visible(source)
    for needle in ("\\boxed{5}", "z"):
        at = reading.text.index(needle)
        assert source[reading.source_offset(at) :].startswith(needle)
    assert reading.source_offset(reading.text.index("B")) == source.index("&#66;")


def test_plain_text_is_read_as_it_is() -> None:
    text = "The answer is 5. Then, 6 and 7; done!\nNext line."
    reading = visible(text)
    assert reading.text == text
    assert reading.pieces == ((0, 0, len(text)),)


# ------------------------------------------------------------------ any text at all


_PIECES = ["`", "~~", "~", "$", "$$", "\\(", "\\)", "\\[", "\\]", "<!--", "-->", "<del>", "</del>", "<s>", "[",
           "](", ")", "![", "&#66;", "&amp;", "%", "\\%", "\n", "\n\n", "    ", "{", "}", "\\phantom", "\\color",
           "{white}", "\\iffalse", "\\fi", "\\cancel", "\\boxed{5}", "<think>", "</think>", "5", "x", " ", "\u200b",
           "\u0412", "\u202e", ">", "- ", "```", "<span style='color:white'>", "</span>", "\\\\"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_any_text_is_read_without_error_and_maps_back(source: str) -> None:
    """No input makes the reader raise; every kept run is the source verbatim, in order; nothing invisible
    is left in what is seen."""
    reading = visible(source)
    previous_text, previous_source = 0, 0
    for text_start, source_start, length in reading.pieces:
        assert reading.text[text_start : text_start + length] == source[source_start : source_start + length]
        assert text_start >= previous_text and source_start >= previous_source
        previous_text, previous_source = text_start + length, source_start + length
    assert strip_invisible(reading.text) == reading.text


@pytest.mark.parametrize(("mixed", "folded"), [
    ("Ｂ `code` \"q\" 'a'", "B `code` \"q\" 'a'"),  # ASCII beside a look-alike stays as written
    ("“B” and ‘C’", "\"B\" and 'C'"),  # curly quotes fold to the ASCII ones, one character each
    ("rn0l1 Ｂ", "rn0l1 B"),  # TR39 would merge rn/m, 0/O, l/1: never in ASCII
])
def test_fold_never_changes_ascii_even_beside_non_ascii(mixed: str, folded: str) -> None:
    assert fold(mixed) == folded


def test_a_page_keeps_code_and_emphasis_as_written() -> None:
    """Instruction following judges the page: "highlight 2 sections" is about the markers, a comma in code counts."""
    page = "*one* and **two**, `x, y`"
    assert visible(page, keep_code=True, keep_style=True).text == page
    assert visible(page).text.startswith("one and two,")


def test_a_bidirectional_override_leaves_nothing_readable() -> None:
    """U+202E shows "\u202e5 si rewsna ehT" as "The answer is 5": stored and shown orders differ, so nothing reads
    as written (an isolate or embedding likewise); a mark (U+200F) reorders no run and stays."""
    for control in ("\u202e", "\u202d", "\u2067", "\u202b"):
        seen_ = visible(f"{control}3 si rewsna ehT\u202c. The answer is 5.")
        assert not seen_.readable and seen_.text == ""
    assert visible("The answer is 5.\u200f").readable


def test_a_mark_on_markup_leaves_nothing_readable() -> None:
    """A strike or an enclosing sign after a closing $ or ** lands on whatever glyph the renderer draws last (the
    box's): what it marks cannot be read from the source. On a letter or digit it marks that character."""
    for marked in ("$\\boxed{5}$\u20e0", "**5**\u0336"):
        assert not visible(f"The answer is {marked}.").readable, marked
    assert visible("The answer is 5\u20e0 or 6.").text == "The answer is   or 6."
    assert visible("The answer is $\\boxed{5}$.").readable


def test_fold_reads_scripts_and_refuses_digits_that_look_like_other_digits() -> None:
    assert fold("2\u2075") == "2^5" and fold("H\u2082O") == "H_2O"  # not 25, not H2O
    assert fold("\u09ea") == "\ufffd"  # Bengali 4 looks like 8: read as neither
    assert fold("\u0665") == "5" and fold("\u09e9") == "3"  # a digit that looks like no other digit keeps its value


@pytest.mark.parametrize("command", ["\\cancel", "\\phantom", "\\sout", "\\textcolor{white}"])
def test_a_command_written_without_braces_takes_the_next_token(command: str) -> None:
    """TeX's undelimited argument is one token: \\cancel 7 crosses out the 7 (and \\cancel\\alpha the alpha)."""
    text = seen(f"The answer is $5 + {command} 7 8$.")
    assert "7" not in text and "8" in text and "5" in text
    assert "alpha" not in seen(f"The answer is $5 {command}\\alpha$.")


def test_default_ignorable_code_points_render_as_nothing():
    from rewardsmith.verifiers.reading import strip_invisible

    assert strip_invisible("b\u17b4ad") == "bad"  # a Khmer vowel sign that renders nothing (category Mn)
    assert strip_invisible("a\ufe0fb\u3164c") == "abc"  # a variation selector, a Hangul filler
    assert strip_invisible("a\u200eb") == "a\u200eb"  # bidi marks are kept for the reordering check
