"""The ``tool_call`` verifier: right calls pay in every format, and every way of earning reward
without making exactly the expected calls scores 0."""

from __future__ import annotations

import json
import pickle

import pytest
from conftest import REPO

from rewardsmith.verifiers import Sample, SpecError, Verdict, build
from rewardsmith.verifiers.options import format_options

DOCS = [
    {
        "name": "get_weather",
        "description": "Weather forecast for a city.",
        "parameters": {
            "type": "dict",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "unit": {"type": "string"},
                "hourly": {"type": "boolean"},
            },
            "required": ["city"],
        },
    },
    {
        "name": "convert",
        "parameters": {
            "type": "dict",
            "properties": {
                "amount": {"type": "float"},
                "pair": {"type": "tuple", "items": {"type": "string"}},
                "options": {"type": "dict", "properties": {"round": {"type": "integer"}, "fee": {"type": "boolean"}}},
            },
            "required": ["amount"],
        },
    },
    {"name": "get_time", "parameters": {"type": "dict", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}},
]
WEATHER = [{"get_weather": {"city": ["Paris", "Paris, France"], "days": [3], "unit": ["celsius", ""], "hourly": [""]}}]
PARALLEL = [
    {"get_weather": {"city": ["Paris"], "days": [3], "unit": [""], "hourly": [""]}},
    {"get_weather": {"city": ["Rome"], "days": [3], "unit": [""], "hourly": [""]}},
]


def verdict(completion, ground_truth=WEATHER, functions=DOCS, **spec) -> Verdict:
    reward = build({"type": "tool_call", **spec})
    fields = {"ground_truth": ground_truth}
    if functions is not None:
        fields["function"] = functions
    return reward.verify(Sample(prompt="What is the weather?", completion=completion, fields=fields))


def hermes(*calls: tuple[str, dict]) -> str:
    return "\n".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in calls)


def openai(*calls: tuple[str, dict], content: str | None = None) -> list[dict]:
    items = [
        {"type": "function", "id": f"c{i}", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)
    ]
    return [{"role": "assistant", "content": content, "tool_calls": items}]


RIGHT = {"city": "Paris", "days": 3}


# ----------------------------------------------------------------------------- right answers pay


@pytest.mark.parametrize(
    "completion",
    [
        'get_weather(city="Paris", days=3)',
        '[get_weather(city="Paris", days=3)]',
        '```python\n[get_weather(city="Paris", days=3, unit="celsius")]\n```',
        'get_weather(days=3, city="paris, france")',  # another acceptable value, BFCL's string normalisation
        hermes(("get_weather", RIGHT)),
        "Let me look that up.\n" + hermes(("get_weather", {**RIGHT, "unit": "celsius"})),
        openai(("get_weather", RIGHT)),
        [{"role": "assistant", "tool_calls": [{"function": {"name": "get_weather", "arguments": RIGHT}}]}],
        [{"role": "assistant", "content": hermes(("get_weather", RIGHT))}],  # TRL's conversational completion
    ],
)
def test_the_right_call_pays_in_every_format(completion):
    v = verdict(completion)
    assert (v.score, v.correct, v.status) == (1.0, True, "ok"), v.feedback


def test_parallel_calls_match_in_any_order_and_each_expected_call_once():
    rome, paris = ("get_weather", {"city": "Rome", "days": 3}), ("get_weather", {"city": "Paris", "days": 3})
    assert verdict(hermes(paris, rome), PARALLEL).score == 1.0
    assert verdict(hermes(rome, paris), PARALLEL).score == 1.0
    assert verdict('[get_weather(city="Rome", days=3), get_weather(city="Paris", days=3)]', PARALLEL).score == 1.0
    twice = verdict(hermes(paris, paris), PARALLEL)  # one call cannot answer two expected ones
    assert twice.score == 0.0 and '("Rome")' in twice.feedback and "extra call" in twice.feedback


def test_a_float_parameter_takes_an_integer_and_a_tuple_where_declared():
    truth = [{"convert": {"amount": [10.0], "pair": [["USD", "EUR"]], "options": [""]}}]
    assert verdict('convert(amount=10, pair=("USD", "EUR"))', truth).score == 1.0
    assert verdict('convert(amount=10.0, pair=["usd", "eur"])', truth).score == 1.0


def test_an_integer_item_matches_in_a_list_of_floats_but_not_the_reverse():
    docs = [
        {
            "name": "fit",
            "parameters": {
                "type": "dict",
                "properties": {
                    "xs": {"type": "array", "items": {"type": "float"}},
                    "ns": {"type": "array", "items": {"type": "integer"}},
                },
            },
        }
    ]
    truth = [{"fit": {"xs": [[1.0, 2.5]], "ns": [[1, 2]]}}]
    assert verdict("fit(xs=[1, 2.5], ns=[1, 2])", truth, docs).score == 1.0
    assert verdict("fit(xs=[1.0, 2.5], ns=[1.0, 2])", truth, docs).score == 0.0
    assert verdict("fit(xs=['1.0', 2.5], ns=[1, 2])", truth, docs).score == 0.0
    assert verdict("fit(xs=[1.0, 2.5], ns=[True, 2])", truth, docs).score == 0.0


def test_dict_arguments_follow_the_nested_acceptable_shape():
    truth = [{"convert": {"amount": [5.0], "options": [{"round": [2], "fee": [False, ""]}]}}]
    assert verdict("convert(amount=5.0, options={'round': 2})", truth).score == 1.0
    assert verdict("convert(amount=5.0, options={'round': 2, 'fee': False})", truth).score == 1.0
    assert verdict("convert(amount=5.0, options={'round': 2, 'fee': 0})", truth).score == 0.0
    assert verdict("convert(amount=5.0, options={'round': '2'})", truth).score == 0.0
    assert verdict("convert(amount=5.0, options={'round': 2.0})", truth).score == 0.0  # declared integer
    assert verdict("convert(amount=5.0, options={'round': 2, 'spread': 1})", truth).score == 0.0
    assert verdict("convert(amount=5.0, options={'fee': False})", truth).score == 0.0


def test_no_call_expected_pays_only_a_completion_without_calls():
    assert verdict("I can't check the weather for that; no tool fits.", []).score == 1.0
    assert verdict("[]", []).score == 1.0
    for completion in (
        'get_weather(city="Paris")',
        hermes(("get_weather", RIGHT)),
        openai(("get_weather", RIGHT)),
        "<tool_call>{not json</tool_call>",
        "<tool_call>",
    ):
        v = verdict(completion, [])
        assert (v.score, v.correct, v.status) == (0.0, False, "ok"), completion


def test_rows_load_without_docs_and_hold_types_through_the_acceptable_values():
    assert verdict('get_weather(city="Paris", days=3)', functions=None).score == 1.0
    assert verdict('get_weather(city="Paris", days="3")', functions=None).score == 0.0
    assert verdict('get_weather(city="Paris", days=3.0)', functions=None).score == 0.0


def test_fields_may_be_json_strings_and_openai_tool_wrappers():
    tools = json.dumps([{"type": "function", "function": d} for d in DOCS])
    assert verdict('get_weather(city="Paris", days=3)', json.dumps(WEATHER), tools).score == 1.0
    assert verdict('get_weather(city="Paris", days=3.0)', json.dumps(WEATHER), tools).score == 0.0


# ----------------------------------------------------------------------------- attacks score 0


@pytest.mark.parametrize(
    ("completion", "why"),
    [
        ('get_weather(city="Paris", days="3")', "integer"),  # the right value as a string
        ('get_weather(city="Paris", days=3.0)', "integer"),
        ('get_weather(city="Paris", days=True)', "integer"),
        ('get_weather(city=["Paris", "London"], days=3)', "string"),  # two cities in one argument
        ('get_weather(city="Paris or London", days=3)', "not an acceptable"),
        ('get_weather(city="Paris", days=3, verbose=True)', "unexpected argument 'verbose'"),
        ('get_weather(city="Paris", days=3, hourly=False)', "should be left out"),  # an argument nobody expects
        ('get_weather(city="Paris", days=3, unit="")', "unit"),  # "" is the omission marker, not a value
        ('get_weather(city="Paris")', "missing argument 'days'"),
        ("get_weather(days=3)", "missing required argument 'city'"),
        ('get_time(tz="Europe/Paris")', "calls get_time"),
        ('get_weather("Paris", days=3)', "positional"),
        ('get_weather(city="Paris", city="Paris", days=3)', "twice"),
        ('get_weather(**{"city": "Paris", "days": 3})', "unpacking"),
        ("get_weather(city=CITY, days=3)", "not a literal"),
        ('get_weather(city="Par" + "is", days=3)', "not a literal"),
        ('get_weather(city="Paris", days=1e999)', "not a plain literal"),
    ],
)
def test_wrong_calls_score_zero_and_say_why(completion, why):
    v = verdict(completion)
    assert (v.score, v.correct, v.status) == (0.0, False, "ok")
    assert why in v.feedback, v.feedback


def test_strings_normalise_like_bfcl_but_keep_their_numbers():
    truth = [{"get_time": {"tz": ["-5", "1.5 hours", "1/2", "GPT-4", "john.doe@mail.com", "Paris, France"]}}]
    for same in ("-5", " -5 ", "1.5 Hours", "1.5_hours", "1 / 2", "gpt 4", "JOHN.DOE@mail.com", "paris france"):
        assert verdict(f"get_time(tz={same!r})", truth).score == 1.0, same
    # BFCL's rule alone reads "5" as "-5", "15 hours" as "1.5 hours", "12" as "1/2", "johndoe" as "john.doe"
    for other in ("5", "15 hours", "12", "GPT-40", "GPT4", "1.50 hours", "johndoe@mail.com", "ParisFrance", "C++"):
        assert verdict(f"get_time(tz={other!r})", truth).score == 0.0, other
    assert verdict('get_time(tz="gpt-4")', truth, strings="exact").score == 0.0
    assert verdict('get_time(tz="GPT-4")', truth, strings="exact").score == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        # every offered tool at once
        '[get_weather(city="Paris", days=3), get_time(tz="CET"), convert(amount=1.0)]',
        # the right function several times with different arguments: a hedge
        '[get_weather(city="Paris", days=3), get_weather(city="London", days=3)]',
        hermes(("get_weather", RIGHT), ("get_weather", {"city": "London", "days": 3})),
        openai(("get_weather", RIGHT), ("get_weather", {"city": "London", "days": 3})),
        # the right call twice
        hermes(("get_weather", RIGHT), ("get_weather", RIGHT)),
        # the right call beside an unreadable one
        hermes(("get_weather", RIGHT)) + "<tool_call>{'name': 'get_weather'}</tool_call>",
        '[get_weather(city="Paris", days=3), 5]',
    ],
)
def test_hedges_and_extra_calls_score_zero(completion):
    v = verdict(completion)
    assert (v.score, v.correct) == (0.0, False), v.feedback


@pytest.mark.parametrize(
    "completion",
    [
        # the call in two formats
        hermes(("get_weather", RIGHT)) + '\nget_weather(city="Paris", days=3)',
        openai(("get_weather", RIGHT), content=hermes(("get_weather", RIGHT))),
        openai(("get_weather", RIGHT), content='get_weather(city="Paris", days=3)'),
        # the right call in tags, a wrong one in prose or a code block
        hermes(("get_weather", RIGHT)) + '\nor maybe:\n```python\nget_weather(city="London", days=3)\n```',
        hermes(("get_weather", RIGHT)) + '\nAlternatively {"name": "get_weather", "arguments": {"city": "Rome"}}',
        openai(("get_weather", RIGHT), content="or get_weather(city='London', days=3)"),
        # ...or in a comment of the Python call list
        'get_weather(city="Paris", days=3)  # or get_weather(city="London", days=3)',
        '```python\n[get_weather(city="Paris", days=3)]  # {"name": "get_weather"} for London\n```',
        # two assistant turns, each with a call
        [*openai(("get_weather", RIGHT)), *openai(("get_weather", {"city": "Rome", "days": 3}))],
    ],
)
def test_calls_in_two_formats_or_beside_prose_calls_are_a_hedge_under_auto(completion):
    v = verdict(completion)
    assert (v.score, v.correct, v.status) == (0.0, False, "ok"), v.feedback


def test_an_explicit_format_reads_only_that_format():
    both = hermes(("get_weather", RIGHT)) + '\nI could also have written get_weather(city="London", days=3).'
    assert verdict(both, format="python").status == "no_answer"  # only a Python call list is read as calls
    assert verdict('get_weather(city="Paris", days=3)', format="hermes").status == "no_answer"
    assert verdict(hermes(("get_weather", RIGHT)), format="openai").status == "no_answer"
    assert verdict(hermes(("get_weather", RIGHT)), format="hermes").score == 1.0
    assert verdict('get_weather(city="Paris", days=3)  # sunny, I hope', format="python").score == 1.0
    assert verdict('get_weather(city="Paris", days=3)  # sunny, I hope', format="auto").score == 1.0


@pytest.mark.parametrize("fmt", ["hermes", "python", "openai"])
def test_an_explicit_format_still_refuses_a_second_call_in_another_syntax(fmt):
    """The format says which calls are read, not which text is ignored: a call in any other syntax beside
    them is a second call set (another runtime, or the reader, takes that one), whatever the format."""
    completion = {
        "hermes": hermes(("get_weather", RIGHT)) + '\nI could also have written get_weather(city="London", days=3).',
        "python": 'get_weather(city="Paris", days=3)  # or get_weather(city="London", days=3)',
        "openai": openai(("get_weather", RIGHT), content="get_weather(city='London')"),
    }[fmt]
    v = verdict(completion, format=fmt)
    assert (v.score, v.status) == (0.0, "ok") and "hedge" in v.feedback, v.feedback


@pytest.mark.parametrize(
    "completion",
    [
        'Sure! I will call get_weather(city="Paris", days=3) for you.',  # prose around a python call
        'I think: ```python\nget_weather(city="Paris", days=3)\n```',
        '```python\nget_weather(city="Paris", days=3)\n```\n```python\nget_weather(city="Rome", days=3)\n```',
        "The weather in Paris will be sunny.",
        "",
        "[1, 2, 3]",
    ],
)
def test_no_readable_call_is_no_answer(completion):
    v = verdict(completion)
    assert (v.score, v.status) == (0.0, "no_answer"), v.feedback


def test_unreadable_tags_and_json_score_zero():
    for completion in (
        "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Paris', 'days': 3}}</tool_call>",  # not JSON
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}',  # never closed
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "days": 4}}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": NaN}}</tool_call>',
        '<tool_call>{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\", \\"days\\": 3}"}</tool_call>',
        '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]</tool_call>',
    ):
        v = verdict(completion)
        assert (v.score, v.correct, v.status) == (0.0, False, "ok"), completion


def test_openai_tool_calls_are_read_strictly():
    bad_json = [{"role": "assistant", "tool_calls": [{"function": {"name": "get_weather", "arguments": "{city: 1}"}}]}]
    no_function = [{"role": "assistant", "tool_calls": [{"type": "function", "name": "get_weather"}]}]
    not_a_list = [{"role": "assistant", "tool_calls": "get_weather(city='Paris', days=3)"}]
    for completion in (bad_json, no_function, not_a_list):
        v = verdict(completion)
        assert (v.score, v.status) == (0.0, "ok"), v.feedback
    # a tool result in the completion is not a call; the assistant's call before it is
    with_result = [*openai(("get_weather", RIGHT)), {"role": "tool", "content": "get_time(tz='UTC')"}]
    assert verdict(with_result).score == 1.0


# ----------------------------------------------------------------------------- partial credit


def test_partial_credit_is_below_one_unless_exact_and_gives_nothing_for_a_hedge():
    paris, rome = ("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {"city": "Rome", "days": 3})
    london = ("get_weather", {"city": "London", "days": 3})
    assert verdict(hermes(paris, rome), PARALLEL, partial=True).score == 1.0
    assert verdict(hermes(paris), PARALLEL, partial=True).score == 0.5
    assert verdict(hermes(paris, london), PARALLEL, partial=True).score == 0.0  # a wrong call costs a right one
    assert verdict(hermes(paris, rome, london), PARALLEL, partial=True).score == 0.5
    hedge = verdict(hermes(paris, london), WEATHER, partial=True)
    assert (hedge.score, hedge.correct) == (0.0, False)
    calls = [("get_weather", {"city": c, "days": 3}) for c in ("Paris", "Rome", "Oslo", "Bern")]
    assert verdict(hermes(*calls), PARALLEL, partial=True).score == 0.0  # calling everything earns nothing


# ----------------------------------------------------------------------------- rows and limits


@pytest.mark.parametrize(
    ("fields", "missing"),
    [
        ({}, "ground_truth"),
        ({"ground_truth": {"get_weather": {}}}, None),
        ({"ground_truth": [{"get_weather": {"city": "Paris"}}]}, None),
        ({"ground_truth": [{"a": {}, "b": {}}]}, None),
        ({"ground_truth": "[{not json"}, None),
        ({"ground_truth": [{"get_weather": {"city": ["Paris"]}}], "function": [{"name": "other"}]}, None),
        ({"ground_truth": [{"get_weather": {"city": ["Paris"]}}], "function": [{"parameters": {}}]}, None),
    ],
)
def test_a_row_without_readable_expected_calls_is_invalid_input(fields, missing):
    v = build("tool_call").verify(Sample(prompt="p", completion='get_weather(city="Paris")', fields=fields))
    assert v.status == "invalid_input" and v.score == 0.0
    assert v.details.get("missing_field") == missing


def test_no_completion_is_invalid_input():
    v = build("tool_call").verify(Sample.from_row({"prompt": "p", "ground_truth": WEATHER}))
    assert v.status == "invalid_input"


@pytest.mark.parametrize(
    "completion",
    [
        'get_weather(city="Paris", days=3)' + " " * 60_000,  # over max_chars
        "[" + ", ".join(['get_weather(city="Paris", days=3)'] * 40) + "]",  # over max_calls
        hermes(*[("get_weather", RIGHT)] * 40),
        'get_weather(city="Paris", days=3, unit=' + "[" * 150 + "]" * 150 + ")",  # deep nesting
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": '
        + "[" * 50_000
        + "]" * 50_000
        + "}}</tool_call>",
        'get_weather(city="Paris", days=' + "9" * 5000 + ")",  # an integer Python will not read
        "get_weather(city='Paris', days=0x" + "f" * 20_000 + ")",  # one it reads, huge
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": ' + "9" * 5000 + "}}</tool_call>",
        "<tool_call>" * 5000,
        "</tool_call>" * 4000,
        "(" * 10_000 + ")" * 10_000,
    ],
)
def test_what_a_completion_can_trigger_scores_zero_never_error(completion):
    v = verdict(completion)
    assert v.score == 0.0 and v.status in ("ok", "no_answer"), v.feedback
    assert v.elapsed_s < 5


def test_the_verifier_lists_its_options_pickles_and_rejects_bad_ones():
    text = format_options("tool_call", type(build("tool_call")))
    for name in ("format", "calls_field", "functions_field", "partial", "strings", "max_chars", "max_calls"):
        assert name in text
    reward = pickle.loads(pickle.dumps(build({"type": "tool_call", "format": "hermes"})))
    assert reward.format == "hermes"
    with pytest.raises(SpecError):
        build({"type": "tool_call", "format": "xml"})
    with pytest.raises(SpecError):
        build({"type": "tool_call", "max_calls": 0})


def test_details_say_what_was_read():
    v = verdict(hermes(("get_weather", {"city": "Paris", "days": "3"})))
    assert v.details["forms"] == ["hermes"]
    assert v.details["calls"] == ['get_weather(city="Paris", days="3")']
    assert v.details["expected"] == 1 and v.details["typed"] is True
    assert 'must be integer, got string "3"' in v.feedback


def test_every_example_row_gets_the_verdict_it_expects():
    rows = [json.loads(line) for line in (REPO / "data" / "tool_call_examples.jsonl").read_text().splitlines()]
    assert {row["expect"] for row in rows} == {"right", "wrong", "no_answer"}
    verdicts = build("tool_call").verify_batch([Sample.from_row(row) for row in rows])
    for row, v in zip(rows, verdicts, strict=True):
        said = "right" if v.score == 1.0 else ("no_answer" if v.status == "no_answer" else "wrong")
        assert said == row["expect"], (row["id"], v.feedback)
        assert v.status != "no_answer" or v.score == 0.0


def test_a_leading_reasoning_block_is_not_read():
    think = "<think>Maybe get_weather(city='London', days=3)? No: Paris.</think>\n"
    assert verdict(think + '[get_weather(city="Paris", days=3)]').score == 1.0
    assert verdict(think + hermes(("get_weather", RIGHT))).score == 1.0
    tagged = "<think>" + hermes(("get_weather", {"city": "London", "days": 3})) + "</think>"
    assert verdict(tagged + hermes(("get_weather", RIGHT))).score == 1.0  # a reasoning parser drops it
    # A stray close is the end of reasoning only where the spec says the template opened the block.
    london = hermes(("get_weather", {"city": "London", "days": 3}))
    assert verdict(london + "</think>" + hermes(("get_weather", RIGHT)), prompt_opens_think=True).score == 1.0
    stray = verdict(london + "</think>" + hermes(("get_weather", RIGHT)))
    assert stray.score == 0.0 and "prompt_opens_think: true" in stray.feedback
    assert verdict(hermes(("get_weather", RIGHT)), prompt_opens_think=True).status == "no_answer"  # never closed
    # a block never closed is all reasoning: the call in it is never handed to the runtime
    unclosed = verdict("<think>" + hermes(("get_weather", RIGHT)))
    assert (unclosed.score, unclosed.status) == (0.0, "no_answer")
    assert verdict("<think>no tool fits</think>", []).score == 1.0
    # only the first close ends it: what follows is read whole
    rome = hermes(("get_weather", {"city": "Rome", "days": 3}))
    twice = verdict("a</think>" + rome + "</think>" + hermes(("get_weather", RIGHT)), prompt_opens_think=True)
    assert twice.score == 0.0


@pytest.mark.parametrize(("value", "acceptable"), [
    ("etc/hosts", "/etc/hosts"), ("/etc.hosts", "/etc/hosts"), ("1/5 mg", "1.5 mg"), ("1-5 mg", "1.5 mg"),
    ("tmp", "*.tmp"), ("order.id", "order_id"),
])
def test_a_dot_a_slash_or_a_star_is_part_of_a_string_value(value, acceptable):
    from rewardsmith.verifiers.tool_call.match import same_string

    assert not same_string(value, acceptable, "normalized")
    assert same_string(acceptable.upper(), acceptable, "normalized")  # case still aside
    assert same_string("release_2", "Release-2", "normalized") and same_string("Paris, France", "paris france",
                                                                                 "normalized")
