"""The only language the judge and the candidate share: plain data, framed, capped.

The code verifier runs a candidate's code in one process and the tests that judge it in
another (a different user); they talk over one socket. This module is both ends of that
socket and the host's decoder of what the judge reports. It is standard-library only,
because the sandbox runs it as ``python3 -c`` source (its text is put in front of the
judge's and the candidate's).

Why it is built this way:

* **Plain data only, never pickle.** A value is JSON with a few tags (tuples, sets, dicts
  with any keys, big ints, non-finite floats, bytes, Decimal, Fraction, dates). Whatever
  the candidate sends, the judge builds its *own* objects of its *own* builtin types from
  it, so no candidate code ever runs where a comparison is decided.
* **Anything else stays where it lives.** A generator, a ``re.Match``, an instance of the
  candidate's class is kept in a table on the candidate's side and crosses as a reference
  (``{"$ref": n}``); the judge turns it into a :class:`Remote` whose every use is a request
  over the socket, and whose comparisons refuse (the judge never lets the candidate decide
  what is equal). The judge's values the candidate cannot hold (a lambda the tests pass
  as a key function) cross the same way in the other direction.
* **Caps on everything a hostile peer controls**: the size of a frame, the nesting depth,
  the number of nodes, the size of an int (Python's 4,300-digit ``int()`` limit never
  applies: big ints travel in hex). Breaking a cap raises :class:`WireError` with a status
  the judge reports as a failed test, never as a harness error.
"""

import json
import struct

FRAME = struct.Struct("!I")
MAX_FRAME = 16 << 20  # bytes in one message
MAX_DEPTH = 100  # nesting of containers in one value
MAX_NODES = 2_000_000  # values in one message
MAX_INT_BITS = 1 << 20  # about 315,000 decimal digits
# Every tag a value may carry (the decoder's vocabulary; datasets may use it for expected values).
TAGS = ("$int", "$float", "$tuple", "$set", "$frozenset", "$dict", "$complex", "$bytes", "$bytearray", "$range",
        "$decimal", "$fraction", "$date", "$datetime", "$time", "$timedelta", "$deque", "$counter")
_SAFE_INT = 1 << 53  # ints beyond this travel as hex, so any JSON reader keeps them exact


class WireError(Exception):
    """A message broke a cap or the protocol; ``status`` is the test status it earns."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Channel:
    """Length-prefixed JSON messages over a connected socket."""

    def __init__(self, sock):
        self.sock = sock

    def send(self, message):
        data = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        if len(data) > MAX_FRAME:
            raise WireError("output_limit", f"a message of {len(data)} bytes is over the {MAX_FRAME}-byte limit")
        self.sock.sendall(FRAME.pack(len(data)) + data)

    def receive(self):
        """The next message; EOFError when the peer has gone, WireError on a bad frame."""
        (size,) = FRAME.unpack(self._exact(FRAME.size))
        if size > MAX_FRAME:
            raise WireError("output_limit", f"the other side sent {size} bytes, over the {MAX_FRAME}-byte limit")
        data = self._exact(size)
        try:
            message = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise WireError("unsupported_value", f"an undecodable message ({type(exc).__name__})") from None
        if type(message) is not dict:
            raise WireError("unsupported_value", "a message that is not an object")
        return message

    def _exact(self, size):
        parts, remaining = [], size
        while remaining:
            chunk = self.sock.recv(min(remaining, 1 << 20))
            if not chunk:
                raise EOFError("the other side closed the channel")
            parts.append(chunk)
            remaining -= len(chunk)
        return b"".join(parts)


# -- values -------------------------------------------------------------------------------


def encode(value, keep=None, _depth=0):
    """A value as plain JSON data. ``keep(value)`` returns a reference number for a value
    that is not plain data (None: refuse it with WireError)."""
    if _depth > MAX_DEPTH:
        raise WireError("unsupported_value", f"a value nested more than {MAX_DEPTH} levels deep")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        if -_SAFE_INT < value < _SAFE_INT:
            return value
        if value.bit_length() > MAX_INT_BITS:
            raise WireError("output_limit", f"an int of {value.bit_length()} bits (over {MAX_INT_BITS})")
        return {"$int": hex(value)}
    if t is float:
        if value != value or value in (float("inf"), float("-inf")):
            return {"$float": repr(value)}
        return value
    depth = _depth + 1
    if t is list:
        return [encode(v, keep, depth) for v in value]
    if t is tuple:
        return {"$tuple": [encode(v, keep, depth) for v in value]}
    if t is set or t is frozenset:
        return {"$" + t.__name__: [encode(v, keep, depth) for v in value]}
    if t is dict:
        return {"$dict": [[encode(k, keep, depth), encode(v, keep, depth)] for k, v in value.items()]}
    if t is complex:
        return {"$complex": [encode(value.real), encode(value.imag)]}
    if t is bytes or t is bytearray:
        return {"$" + t.__name__: value.hex()}
    if t is range:
        return {"$range": [value.start, value.stop, value.step]}
    special = _encode_stdlib(value, t, keep, depth)
    if special is not None:
        return special
    base = _builtin_base(t)
    if base is not None:  # a subclass of a builtin (a namedtuple, an IntEnum): its plain value
        return encode(base(value), keep, _depth)
    if keep is not None:
        ref = keep(value)
        if ref is not None:
            return {"$ref": ref, "$type": _type_name(t)}
    raise WireError("unsupported_value", f"a value of type {_type_name(t)} cannot be sent as plain data")


def _encode_stdlib(value, t, keep, depth):
    module = getattr(t, "__module__", "")
    name = getattr(t, "__qualname__", "")
    if module == "decimal" and name == "Decimal":
        return {"$decimal": str(value)}
    if module == "fractions" and name == "Fraction":
        return {"$fraction": [encode(value.numerator), encode(value.denominator)]}
    if module == "datetime" and name in ("date", "datetime", "time", "timedelta"):
        if name == "timedelta":
            return {"$timedelta": [value.days, value.seconds, value.microseconds]}
        if getattr(value, "tzinfo", None) is not None:
            return None  # a time zone is an object: a reference
        return {"$" + name: value.isoformat()}
    if module == "collections":
        if name == "deque":
            return {"$deque": [encode(v, keep, depth) for v in value]}
        if name == "Counter":
            return {"$counter": [[encode(k, keep, depth), encode(v, keep, depth)] for k, v in dict.items(value)]}
        if name in ("OrderedDict", "defaultdict"):
            return {"$dict": [[encode(k, keep, depth), encode(v, keep, depth)] for k, v in dict.items(value)]}
    return None


_BASES = (bool, int, float, str, bytes, tuple, list, dict, frozenset, set, complex)


def _builtin_base(t):
    for base in _BASES:
        try:
            if issubclass(t, base):
                return base
        except TypeError:
            return None
    return None


def _type_name(t):
    try:
        name = t.__qualname__
        return name if type(name) is str else "object"
    except Exception:
        return "object"


def decode(data, resolve=None):
    """The judge's (or host's) own objects for an encoded value. ``resolve(ref, type_name)``
    makes the stand-in for a reference; without it a reference is refused."""
    counter = [0]
    return _decode(data, resolve, 0, counter)


def _decode(data, resolve, depth, counter):
    counter[0] += 1
    if counter[0] > MAX_NODES:
        raise WireError("output_limit", f"a value with more than {MAX_NODES} parts")
    if depth > MAX_DEPTH + 2:
        raise WireError("unsupported_value", f"a value nested more than {MAX_DEPTH} levels deep")
    t = type(data)
    if data is None or t is bool or t is str or t is float:
        return data
    if t is int:
        if data.bit_length() > 53:
            raise WireError("unsupported_value", "a big int outside its tag")
        return data
    depth += 1
    if t is list:
        return [_decode(v, resolve, depth, counter) for v in data]
    if t is not dict or len(data) not in (1, 2):
        raise WireError("unsupported_value", "a malformed value")
    if "$ref" in data:
        ref = data["$ref"]
        if resolve is None or type(ref) is not int:
            raise WireError("unsupported_value", f"a value of type {str(data.get('$type', '?'))[:60]} (not plain data)")
        return resolve(ref, str(data.get("$type", "object"))[:100])
    ((tag, inner),) = data.items()
    try:
        return _decode_tag(tag, inner, resolve, depth, counter)
    except WireError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, ArithmeticError) as exc:
        raise WireError("unsupported_value", f"a malformed {tag} value ({type(exc).__name__})") from None


def _decode_tag(tag, inner, resolve, depth, counter):
    def items():
        if type(inner) is not list:
            raise TypeError("not a list")
        return [_decode(v, resolve, depth, counter) for v in inner]

    def pairs():
        if type(inner) is not list or not all(type(p) is list and len(p) == 2 for p in inner):
            raise TypeError("not a list of pairs")
        return [(_decode(k, resolve, depth, counter), _decode(v, resolve, depth, counter)) for k, v in inner]

    if tag == "$int":
        if type(inner) is not str or len(inner) > MAX_INT_BITS // 4 + 4:
            raise WireError("output_limit", f"an int over {MAX_INT_BITS} bits")
        return int(inner, 16)
    if tag == "$float":
        if inner not in ("nan", "inf", "-inf"):
            raise ValueError(inner)
        return float(inner)
    if tag == "$tuple":
        return tuple(items())
    if tag == "$set":
        return set(items())
    if tag == "$frozenset":
        return frozenset(items())
    if tag == "$dict":
        return dict(pairs())
    if tag == "$complex":
        real, imag = items()
        return complex(real, imag)
    if tag == "$bytes":
        return bytes.fromhex(inner)
    if tag == "$bytearray":
        return bytearray.fromhex(inner)
    if tag == "$range":
        return range(*items())
    if tag == "$decimal":
        import decimal

        return decimal.Decimal(str(inner))
    if tag == "$fraction":
        import fractions

        return fractions.Fraction(*items())
    if tag in ("$date", "$datetime", "$time"):
        import datetime

        return getattr(datetime, tag[1:]).fromisoformat(str(inner))
    if tag == "$timedelta":
        import datetime

        return datetime.timedelta(*items())
    if tag == "$deque":
        import collections

        return collections.deque(items())
    if tag == "$counter":
        import collections

        return collections.Counter(dict(pairs()))
    raise ValueError(f"unknown tag {tag}")
