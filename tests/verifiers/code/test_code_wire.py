"""The judge's and the candidate's shared language: plain data only, with every cap a hostile
peer could try to break turned into a test status, never an exception the judge cannot place."""

from __future__ import annotations

import collections
import datetime
import decimal
import fractions
import json
import socket

import pytest

from rewardsmith.verifiers.code.sandboxed.wire import MAX_DEPTH, MAX_FRAME, Channel, WireError, decode, encode

PLAIN = [
    None, True, False, 0, -7, 2**53, -(2**80), 10**5000, 1.5, float("inf"), float("-inf"), "text", "",
    [1, [2, [3]]], (1, "a"), (), {1, 2}, frozenset({3}), {"a": 1, 2: "b", (1, 2): [3]}, 3 + 4j, b"\x00\xff",
    bytearray(b"ab"), range(1, 10, 2), decimal.Decimal("1.10"), fractions.Fraction(3, 7),
    datetime.date(2024, 2, 29), datetime.datetime(2024, 1, 1, 12, 30), datetime.timedelta(days=1, seconds=5),
    collections.deque([1, 2]), collections.Counter("abca"),
]


@pytest.mark.parametrize("value", PLAIN, ids=lambda v: type(v).__name__)
def test_plain_values_round_trip_as_the_same_type(value):
    back = decode(json.loads(json.dumps(encode(value))))
    assert back == value and type(back) is type(value)


def test_nan_round_trips():
    back = decode(encode(float("nan")))
    assert back != back


def test_subclasses_of_builtins_arrive_as_their_plain_base_or_a_namedtuple_of_ours():
    Point = collections.namedtuple("Point", "x y")

    class Sneaky(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    back = decode(encode(Point(1, 2)))  # a namedtuple keeps its fields, in a class of our own making
    assert back == (1, 2) and back.y == 2 and type(back) is not Point and type(back).__eq__ is tuple.__eq__
    back = decode(encode(Sneaky(5)))
    assert type(back) is int and back == 5 and back != 6


def test_objects_cross_only_as_references_and_only_with_a_resolver():
    class Thing:
        pass

    kept = []
    data = encode([Thing()], keep=lambda v: kept.append(v) or len(kept))
    assert data == [{"$ref": 1, "$type": Thing.__qualname__}] and kept[0].__class__ is Thing
    with pytest.raises(WireError) as refused:
        decode(data)
    assert refused.value.status == "unsupported_value"
    assert decode(data, resolve=lambda ref, name: ("stand-in", ref)) == [("stand-in", 1)]
    with pytest.raises(WireError):
        encode(Thing())  # no keeper: refused, not repr'd


def test_a_dict_never_looks_like_a_tag():
    forged = {"$int": "0x78"}
    assert decode(encode(forged)) == forged  # a returned dict stays a dict, it does not become 120
    assert decode(encode({"$arg": 0})) == {"$arg": 0}


@pytest.mark.parametrize(("data", "status"), [
    ({"$int": "f" * 300_000}, "output_limit"),  # over the int cap
    ({"$float": "1e400"}, "unsupported_value"),
    ({"$tuple": 5}, "unsupported_value"),
    ({"$set": [[1]]}, "unsupported_value"),  # unhashable: not from a real set
    ({"$nope": 1}, "unsupported_value"),
    ({"a": 1, "b": 2, "c": 3}, "unsupported_value"),  # untagged object
    (2**60, "unsupported_value"),  # a big int outside its tag
    ({"$ref": 1}, "unsupported_value"),
])
def test_malformed_or_oversized_values_are_wire_errors_with_a_status(data, status):
    with pytest.raises(WireError) as caught:
        decode(data)
    assert caught.value.status == status


def test_depth_and_node_caps():
    deep = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(WireError) as caught:
        encode(deep)
    assert caught.value.status == "unsupported_value"
    with pytest.raises(WireError):
        decode(json.loads("[" * 200 + "]" * 200))
    with pytest.raises(WireError) as many:
        decode([0] * 2_000_001)
    assert many.value.status == "output_limit"
    with pytest.raises(WireError):
        encode(2 ** (1 << 21))


def test_channel_frames_and_refuses_oversized_or_undecodable_messages():
    a, b = socket.socketpair()
    left, right = Channel(a), Channel(b)
    left.send({"op": "call", "args": [encode((1, 2))]})
    assert right.receive() == {"op": "call", "args": [{"$tuple": [1, 2]}]}
    with pytest.raises(WireError) as big:
        left.send({"value": "x" * (MAX_FRAME + 1)})
    assert big.value.status == "output_limit"
    a.sendall((MAX_FRAME + 1).to_bytes(4, "big"))
    with pytest.raises(WireError) as announced:
        right.receive()
    assert announced.value.status == "output_limit"
    c, d = socket.socketpair()
    c.sendall((5).to_bytes(4, "big") + b"\xff{}]x")
    with pytest.raises(WireError):
        Channel(d).receive()
    c.sendall((3).to_bytes(4, "big") + b"[1]")  # valid JSON, but not a message object
    with pytest.raises(WireError):
        Channel(d).receive()
    c.close()
    with pytest.raises(EOFError):
        Channel(d).receive()
    for s in (a, b, d):
        s.close()
