"""A second call in any call syntax a model might use refuses the answer; a call a reader does not see, or one
only inside reasoning, is never the one paid; honest look-alikes (a lead-in, parallel calls, the tool named in
prose, arguments holding parentheses or JSON) keep their reward (issue 36, the tool_call class)."""

from __future__ import annotations

import json

import pytest

from rewardsmith.verifiers import Sample, build

DOCS = [
    {"name": "get_weather", "parameters": {"type": "dict", "required": ["city", "days"], "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}}},
    {"name": "get_time", "parameters": {"type": "dict", "required": ["tz"], "properties": {"tz": {"type": "string"}}}},
    {"name": "search", "parameters": {"type": "dict", "required": ["query"], "properties": {
        "query": {"type": "string"}}}},
]
WEATHER = [{"get_weather": {"city": ["Paris"], "days": [3]}}]
RIGHT = {"city": "Paris", "days": 3}
WRONG = {"city": "London", "days": 3}


def score(completion, ground_truth=WEATHER, **spec):
    reward = build({"type": "tool_call", **spec})
    return reward.verify(Sample(prompt="Weather in Paris?", completion=completion,
                                fields={"ground_truth": ground_truth, "function": DOCS}))


def tag(args, name="get_weather"):
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"


def pythonic(args, name="get_weather"):
    return f"[{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})]"


def openai_turn(args, content=None):
    call = {"type": "function", "id": "c0", "function": {"name": "get_weather", "arguments": json.dumps(args)}}
    return [{"role": "assistant", "content": content, "tool_calls": [call]}]


W = json.dumps(WRONG)
# The wrong call, as other chat templates and habits write it (none of them is a format the verifier reads).
OTHER_SYNTAXES = {
    "llama3_json": '<|python_tag|>{"name": "get_weather", "parameters": ' + W + "}",
    "llama3_pythonic": '<|python_tag|>get_weather.call(city="London", days=3)',
    "mistral": '[TOOL_CALLS][{"name": "get_weather", "arguments": ' + W + "}]",
    "mistral_v11": "[TOOL_CALLS]get_weather[ARGS]" + W,
    "function_tag": "<function=get_weather>" + W + "</function>",
    "qwen3_coder": "<function=get_weather>\n<parameter=city>\nLondon\n</parameter>\n</function>",
    "deepseek": "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n" + W + "\n```<｜tool▁call▁end｜>",
    "kimi": "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" + W + "<|tool_call_end|>",
    "openai_json_fenced": '```json\n{"name": "get_weather", "arguments": ' + W + "}\n```",
    "openai_function_object": '{"type": "function", "function": {"name": "get_weather", "arguments": ' + W + "}}",
    "functools": 'functools[{"name": "get_weather", "arguments": ' + W + "}]",
    "bfcl_dict": '{"get_weather": {"city": "London", "days": 3}}',
    "pythonic_in_prose": 'Or maybe get_weather(city="London", days=3) is better.',
    "pythonic_code_span": "Alternatively: `get_weather(city='London', days=3)`",
    "pythonic_fence": "```python\nget_weather(city='London', days=3)\n```",
    "spaced_pythonic": "get_weather (city = 'London', days = 3)",
    "fullwidth": "get_weather（city＝＂London＂，days＝3）",
    "unicode_quotes": "{“name”: “get_weather”, “arguments”: {“city”: “London”, “days”: 3}}",
    "zero_width_name": "get_wea\u200bther(city='London', days=3)",
    "cyrillic_letters": "gеt_wеathеr(city='London', days=3)",  # Cyrillic е
    "other_tool": "get_time(tz='Europe/London')",
    "any_name_json": '{"name": "lookup_weather", "arguments": {"city": "London"}}',
    "escaped_json": '"{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"London\\"}}"',
    "entities": "get_weather&#40;city=&quot;London&quot;, days=3&#41;",
    "yaml_lines": "get_weather:\n  city: London\n  days: 3",
    "fullwidth_tag": "＜tool_call＞{＂name＂: ＂get_weather＂, ＂arguments＂: " + W + "}＜/tool_call＞",
    "invoke_tag": '<invoke name="get_weather"><parameter name="city">London</parameter></invoke>',
    # escapes decoded as the reader decodes them: a JSON parser, a Markdown renderer
    "json_unicode_escapes": '{"n\\u0061me": "get\\u005fweather", "arguments": {"city": "London", "days": 3}}',
    "markdown_escaped_name": 'get\\_weather(city="London", days=3)',
}


@pytest.mark.parametrize("syntax", sorted(OTHER_SYNTAXES))
@pytest.mark.parametrize("fmt", ["auto", "hermes"])
def test_a_second_call_in_another_syntax_beside_a_hermes_call_is_a_hedge(syntax, fmt):
    for completion in (tag(RIGHT) + "\n" + OTHER_SYNTAXES[syntax], OTHER_SYNTAXES[syntax] + "\n" + tag(RIGHT)):
        v = score(completion, format=fmt)
        assert (v.score, v.status) == (0.0, "ok") and v.feedback, (completion, v.feedback)


@pytest.mark.parametrize("syntax", ["mistral", "llama3_json", "function_tag", "pythonic_in_prose", "fullwidth",
                                    "unicode_quotes", "deepseek"])
def test_a_second_call_beside_openai_tool_calls_or_in_a_python_comment_is_a_hedge(syntax):
    other = OTHER_SYNTAXES[syntax]
    v = score(openai_turn(RIGHT, content=other))
    assert (v.score, v.status) == (0.0, "ok"), v.feedback
    v = score(pythonic(RIGHT) + "  # " + other.replace("\n", " "))
    assert (v.score, v.status) == (0.0, "ok"), v.feedback


@pytest.mark.parametrize("syntax", ["mistral", "llama3_json", "function_tag", "deepseek", "kimi", "fullwidth",
                                    "bfcl_dict", "pythonic_in_prose"])
def test_a_call_in_a_syntax_not_read_is_still_a_call(syntax):
    """On a row that expects no call, a call in any syntax is a call made (0); where a call is expected,
    the right call in a syntax not read is no answer, and says so."""
    none = score(OTHER_SYNTAXES[syntax], [])
    assert none.score == 0.0 and "not read as one" in none.feedback, none.feedback
    right = OTHER_SYNTAXES[syntax].replace("London", "Paris")
    v = score(right)
    assert (v.score, v.status) == (0.0, "no_answer") and "not read as one" in v.feedback, v.feedback


def test_no_call_rows_still_pay_prose_that_names_a_tool_without_calling_it():
    for prose in ("I can't help with that; get_weather only covers cities.", "No tool fits this question.",
                  "The `get_time` tool needs a time zone (for example Europe/Paris)."):
        assert score(prose, []).score == 1.0, prose


# ----------------------------------------------------------------------------- reasoning


def test_a_call_only_inside_reasoning_is_not_a_call():
    for call in (tag(RIGHT), pythonic(RIGHT), OTHER_SYNTAXES["mistral"].replace("London", "Paris")):
        v = score(f"<think>I will call {call}</think>\nThe weather should be mild.")
        assert (v.score, v.status) == (0.0, "no_answer"), v.feedback
        assert score(f"<think>{call}</think>").score == 0.0
        assert score(f"<think>{call}").score == 0.0  # never closed: all reasoning


def test_a_wrong_call_weighed_in_reasoning_does_not_hedge_the_answer_after_it():
    for wrong in (tag(WRONG), OTHER_SYNTAXES["mistral"], OTHER_SYNTAXES["pythonic_in_prose"]):
        assert score(f"<think>{wrong}? No: Paris.</think>\n{tag(RIGHT)}").score == 1.0
        assert score(f"<think>{wrong}</think>{pythonic(RIGHT)}").score == 1.0


# ----------------------------------------------------------------------------- what a reader does not see


@pytest.mark.parametrize("hide", [
    lambda s: f"~~{s}~~",
    lambda s: f"<del>{s}</del>",
    lambda s: f"<!-- {s} -->",
    lambda s: f'<span style="display:none">{s}</span>',
    lambda s: f"\\phantom{{{s}}}",
    lambda s: f"<!-- {s}",  # a comment never closed
])
def test_a_hidden_call_is_never_paid(hide):
    """A call a reader does not see is never the one paid: alone it is no visible call, and beside a visible
    one it is a second call (a runtime parsing the raw text would execute it)."""
    alone = score(hide(tag(RIGHT)))
    assert alone.score == 0.0, alone.feedback
    for hidden in (tag(WRONG), pythonic(WRONG), OTHER_SYNTAXES["mistral"]):
        for completion in (hide(hidden) + "\n" + tag(RIGHT), tag(RIGHT) + "\n" + hide(hidden)):
            v = score(completion)
            assert v.score == 0.0, (completion, v.feedback)


def test_a_tag_a_reader_sees_as_other_text_is_not_paid():
    fenced = "Here is the call:\n```\n" + tag(RIGHT) + "\n```"
    assert score(fenced).score == 0.0  # shown as code, not made; a Hermes runtime would still execute it
    entity = tag({"city": "Par&#105;s", "days": 3})  # the reader sees "Paris", the runtime gets "Par&#105;s"
    assert score(entity).score == 0.0


# ----------------------------------------------------------------------------- honest look-alikes


@pytest.mark.parametrize("completion", [
    "Let me check the forecast.\n" + tag(RIGHT),
    "I will use get_weather.\n" + tag(RIGHT),
    "I'll use the `get_weather` tool for this.\n" + tag(RIGHT),
    "get_weather (the forecast tool) needs a city and a number of days.\n" + tag(RIGHT),
    "<think>The user wants Paris; get_weather takes a city.</think>\n" + tag(RIGHT),
    "```python\n" + pythonic(RIGHT) + "\n```",
    pythonic(RIGHT) + "  # Paris, three days",
    openai_turn(RIGHT, content="Checking the weather with get_weather now."),
    "Ｌｅｔ me check — “Paris” it is.\n" + tag(RIGHT),
    "Sure.\n\n<tool_call>\n" + json.dumps({"name": "get_weather", "arguments": RIGHT}, indent=4) + "\n</tool_call>",
    "1. **Call:** " + tag(RIGHT).replace("\n", ""),
])
def test_the_right_call_with_prose_before_it_still_pays(completion):
    v = score(completion)
    assert (v.score, v.status) == (1.0, "ok"), v.feedback


def test_parallel_calls_in_the_accepted_syntax_still_pay():
    rome = {"city": "Rome", "days": 3}
    truth = [{"get_weather": {"city": ["Paris"], "days": [3]}}, {"get_weather": {"city": ["Rome"], "days": [3]}}]
    assert score(tag(RIGHT) + "\n" + tag(rome), truth).score == 1.0
    assert score("Two cities, two calls:\n" + tag(rome) + "\n" + tag(RIGHT), truth).score == 1.0
    assert score('[get_weather(city="Rome", days=3), get_weather(city="Paris", days=3)]', truth).score == 1.0


@pytest.mark.parametrize("query", [
    'get_weather(city="London", days=3)',
    '{"name": "get_weather", "arguments": {"city": "London"}}',
    "weather (Paris) [3 days] <today>",
    "<tool_call> in Hermes' format",
])
def test_arguments_holding_parentheses_or_json_like_text_still_pay(query):
    truth = [{"search": {"query": [query]}}]
    for completion in (tag({"query": query}, "search"), pythonic({"query": query}, "search")):
        v = score(completion, truth)
        assert (v.score, v.status) == (1.0, "ok"), (completion, v.feedback)


@pytest.mark.parametrize("tail", [
    "I'll tell you the forecast once get_weather answers.",  # honest, but outside the grammar
    "Ignore the call above; the user wants London.",
    "Do not run this.",
])
def test_the_calls_are_the_completions_last_statement(tail):
    """Only closing marks and closing sentences may follow the last call (reading.frame.trailing): what follows
    may say anything, so the verdict does not read it."""
    v = score(tag(RIGHT) + "\n" + tail)
    assert v.score == 0.0 and "last statement" in v.feedback
    assert score(tag(RIGHT) + "\nI hope this helps.").score == 1.0
