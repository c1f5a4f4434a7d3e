"""Write data/tool_call_examples.jsonl: tool-call rows in BFCL's shape, with completions in every format.

Each row has ``prompt``, ``completion``, ``ground_truth`` (BFCL's expected calls: a list of
``{function: {param: [acceptable values]}}``, ``""`` marking an optional parameter; ``[]`` when no
call should be made), ``function`` (the function docs), ``reference`` (a right completion, for
``rewardsmith audit``) and ``expect`` (``right``, ``wrong`` or ``no_answer``: what the default
``tool_call`` reward should say). Completions are OpenAI chat messages with ``tool_calls``,
Hermes ``<tool_call>`` tags or Python call lists, right ones and the shapes a policy games a
lenient reward with (a number as a string, a hedge, an unknown argument, two formats, a call where
none belongs). Tests check every row gets the verdict its ``expect`` says.

Run ``python data/make_tool_call_examples.py`` to regenerate (the output is deterministic).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

WEATHER_DOCS = [
    {
        "name": "get_weather",
        "description": "Daily weather forecast for a city.",
        "parameters": {
            "type": "dict",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. 'Paris'."},
                "days": {"type": "integer", "description": "Number of days to forecast."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Default celsius."},
            },
            "required": ["city", "days"],
        },
    },
    {
        "name": "convert_currency",
        "description": "Convert an amount between currencies.",
        "parameters": {
            "type": "dict",
            "properties": {
                "amount": {"type": "float"},
                "source": {"type": "string"},
                "target": {"type": "string"},
            },
            "required": ["amount", "source", "target"],
        },
    },
]
WEATHER_Q = "What will the weather be in Paris over the next 3 days?"
WEATHER_GT = [{"get_weather": {"city": ["Paris", "Paris, France"], "days": [3], "unit": ["celsius", ""]}}]
PARALLEL_Q = "Convert 100 USD to EUR and 50 GBP to JPY."
PARALLEL_GT = [
    {"convert_currency": {"amount": [100.0], "source": ["USD"], "target": ["EUR"]}},
    {"convert_currency": {"amount": [50.0], "source": ["GBP"], "target": ["JPY"]}},
]
CHAT_Q = "Write a haiku about autumn."


def hermes(*calls: tuple[str, dict]) -> str:
    return "\n".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>" for n, a in calls)


def openai(*calls: tuple[str, dict], content: str | None = None) -> list[dict]:
    items = [
        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)
    ]
    return [{"role": "assistant", "content": content, "tool_calls": items}]


PARIS = ("get_weather", {"city": "Paris", "days": 3})
USD = ("convert_currency", {"amount": 100.0, "source": "USD", "target": "EUR"})
GBP = ("convert_currency", {"amount": 50, "source": "GBP", "target": "JPY"})

ROWS = [
    # (id, prompt, ground truth, completion, expect)
    ("weather-python", WEATHER_Q, WEATHER_GT, '[get_weather(city="Paris", days=3)]', "right"),
    (
        "weather-hermes",
        WEATHER_Q,
        WEATHER_GT,
        "Let me check.\n" + hermes(("get_weather", {"city": "Paris, France", "days": 3, "unit": "celsius"})),
        "right",
    ),
    ("weather-openai", WEATHER_Q, WEATHER_GT, openai(PARIS), "right"),
    ("weather-string-number", WEATHER_Q, WEATHER_GT, '[get_weather(city="Paris", days="3")]', "wrong"),
    ("weather-hedge", WEATHER_Q, WEATHER_GT, hermes(PARIS, ("get_weather", {"city": "London", "days": 3})), "wrong"),
    ("weather-extra-argument", WEATHER_Q, WEATHER_GT, openai(("get_weather", {**PARIS[1], "verbose": True})), "wrong"),
    ("weather-two-formats", WEATHER_Q, WEATHER_GT, hermes(PARIS) + '\n[get_weather(city="London", days=3)]', "wrong"),
    ("weather-every-tool", WEATHER_Q, WEATHER_GT, '[get_weather(city="Paris", days=3), convert_currency()]', "wrong"),
    ("weather-prose-only", WEATHER_Q, WEATHER_GT, "It will be sunny in Paris all week.", "no_answer"),
    ("currency-parallel", PARALLEL_Q, PARALLEL_GT, hermes(GBP, USD), "right"),
    ("currency-missing-call", PARALLEL_Q, PARALLEL_GT, openai(USD), "wrong"),
    (
        "chat-no-call",
        CHAT_Q,
        [],
        "Crisp leaves drifting down,\nrivers carry amber light,\nthe year exhales slow.",
        "right",
    ),
    ("chat-needless-call", CHAT_Q, [], '[get_weather(city="Paris", days=1)]', "wrong"),
]

REFERENCES = {
    WEATHER_Q: '[get_weather(city="Paris", days=3)]',
    PARALLEL_Q: '[convert_currency(amount=100.0, source="USD", target="EUR"), '
    'convert_currency(amount=50.0, source="GBP", target="JPY")]',
    CHAT_Q: "Leaves fall, the air cools; autumn settles on the hills.",
}


def main() -> None:
    path = HERE / "tool_call_examples.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for row_id, prompt, truth, completion, expect in ROWS:
            row = {
                "id": row_id,
                "prompt": prompt,
                "completion": completion,
                "ground_truth": truth,
                "function": WEATHER_DOCS,
                "reference": REFERENCES[prompt],
                "expect": expect,
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(ROWS)} rows to {path}")


if __name__ == "__main__":
    main()
