"""The only language the judge and the candidate share: plain data, framed, capped.

The code verifier runs a candidate's code in one process and the tests that judge it in
another (a different user); they talk over one socket. This module is both ends of that
socket and the host's decoder of what the judge reports. It is standard-library only,
because the sandbox runs it as ``python3 -c`` source (its text is put in front of the
judge's and the candidate's).

Why it is built this way:

* **Plain data only, never pickle.** A value is JSON with a few tags (tuples, sets, dicts
  with any keys, big ints, non-finite floats, bytes, Decimal, Fraction, dates, and what
  tests look at beyond plain equality: an OrderedDict's order, a defaultdict's factory, a
  namedtuple's fields, an enum member's class). Whatever the candidate sends, the judge
  builds its *own* objects from it — of its own builtin types, of classes it makes for a
  namedtuple or an enum, or of the task's own classes when the names match (a prelude's
  ``Point``) — so no candidate code ever runs where a comparison is decided.
* **Anything else stays where it lives.** A generator, a ``re.Match``, an instance of the
  candidate's class is kept in a table on the candidate's side and crosses as a reference
  (``{"$ref": n}``); the judge turns it into a :class:`Remote` whose every use is a request
  over the socket, and whose comparisons refuse (the judge never lets the candidate decide
  what is equal). The judge's functions (a key function, a fake installed with
  monkeypatch) cross as numbers (``$callback``): the candidate's call asks the judge to
  run them on plain data. An instance of a task's class crosses by its attributes
  (``$instance``), rebuilt as the other side's class of that name.
* **Caps on everything a hostile peer controls**: the size of a frame, the nesting depth,
  the number of nodes, the size of an int (Python's 4,300-digit ``int()`` limit never
  applies: big ints travel in hex). Breaking a cap raises :class:`WireError` with a status
  the judge reports as a failed test, never as a harness error.
"""

import builtins
import contextlib
import json
import struct

FRAME = struct.Struct("!I")
MAX_FRAME = 16 << 20  # bytes in one message
MAX_DEPTH = 100  # nesting of containers in one value
MAX_NODES = 2_000_000  # values in one message
MAX_INT_BITS = 1 << 20  # about 315,000 decimal digits
# Every tag a value may carry (the decoder's vocabulary; datasets may use it for expected values).
TAGS = ("$int", "$float", "$tuple", "$set", "$frozenset", "$dict", "$complex", "$bytes", "$bytearray", "$range",
        "$decimal", "$fraction", "$date", "$datetime", "$time", "$timedelta", "$deque", "$counter", "$odict",
        "$defaultdict", "$namedtuple", "$enum")  # ($instance and $callback only cross between the processes)
MAX_MEMBERS = 1000  # members of an enum sent with one of its values
MAX_CLASSES = 1000  # namedtuple and enum classes one process rebuilds (each costs memory)
# defaultdict factories that travel by name (any other is a reference: a call goes back to its owner)
_FACTORIES = ("int", "float", "str", "list", "dict", "set", "tuple", "bool", "frozenset", "bytes", "complex")
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
    if _is_enum(t):
        return _encode_enum(value, t, keep, depth)
    fields = _namedtuple_fields(t)
    if fields is not None:
        return {"$namedtuple": [_type_name(t), list(fields), [encode(v, keep, depth) for v in tuple.__iter__(value)]]}
    base = _builtin_base(t)
    if base is not None:  # a subclass of a builtin (a namedtuple, an IntEnum): its plain value
        return encode(base(value), keep, _depth)
    if keep is not None:
        ref = keep(value)
        if type(ref) is dict:  # the keeper's own encoding (an instance of a task's class, by its attributes)
            return ref
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
        pairs = [[encode(k, keep, depth), encode(v, keep, depth)] for k, v in dict.items(value)]
        if name == "OrderedDict":  # its order is part of its equality
            return {"$odict": pairs}
        if name == "defaultdict":  # its factory is part of its behaviour (a missing key)
            factory = value.default_factory
            if factory is None or any(factory is base for base in _BASES if base.__name__ in _FACTORIES):
                sent = None if factory is None else factory.__name__
            else:
                sent = encode(factory, keep, depth)
            return {"$defaultdict": [sent, pairs]}
    return None


def _is_enum(t):
    import enum

    try:
        return issubclass(t, enum.Enum) and not issubclass(t, enum.Flag)
    except TypeError:
        return False


def _encode_enum(value, t, keep, depth):
    """An enum member as its class's name, its kind, its own name and every member (so the
    other side can rebuild the class: ``.name``, ``is``, equality among members all work)."""
    members = list(t.__members__.items())
    if len(members) > MAX_MEMBERS:
        raise WireError("unsupported_value", f"an enum of more than {MAX_MEMBERS} members")
    kind = "int" if issubclass(t, int) else "str" if issubclass(t, str) else ""
    return {"$enum": [_type_name(t), kind, str(value._name_),
                      [[str(name), encode(member._value_, keep, depth)] for name, member in members]]}


def _namedtuple_fields(t):
    try:
        fields = t.__dict__.get("_fields") if issubclass(t, tuple) else None
    except TypeError:
        return None
    if type(fields) is tuple and all(type(f) is str for f in fields):
        return fields
    return None


_BASES = (bool, int, float, str, bytes, tuple, list, dict, frozenset, set, complex)
_REBUILT = {}  # classes rebuilt from their description (one per description, so members compare)


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


def decode(data, resolve=None, classes=None, callback=None):
    """The judge's (or host's) own objects for an encoded value. ``resolve(ref, type_name)``
    makes the stand-in for a reference; without it a reference is refused. ``classes`` maps
    names to the trusted classes of the task (a prelude's ``Point``, ``Color``): a namedtuple
    or an enum member of that name is rebuilt as one of them, so ``isinstance`` and equality
    with the task's own values hold; any other is rebuilt as a class of its own.
    ``callback(n)`` makes the stand-in for the other side's function number ``n`` (only the
    candidate accepts them: the judge's functions may be called, the candidate's never run
    in the judge)."""
    counter = [0, classes or {}, callback]  # the parts seen so far, the trusted classes, the callback maker
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
    if tag == "$odict":
        import collections

        return collections.OrderedDict(pairs())
    if tag == "$defaultdict":
        import collections

        factory, inner = inner
        if factory is None or factory in _FACTORIES:
            factory = None if factory is None else getattr(builtins, factory)
        else:
            factory = _decode(factory, resolve, depth, counter)
            if not callable(factory):
                raise TypeError("a defaultdict factory that is not callable")
        return collections.defaultdict(factory, pairs())
    if tag == "$callback":
        if counter[2] is None or type(inner) is not int:
            raise WireError("unsupported_value", "a function of the other side")
        return counter[2](inner)
    if tag == "$instance":  # an instance of a class both sides define (the task's), by its attributes
        name, table = inner
        klass = counter[1].get(str(name))
        if not rebuildable(klass):
            raise TypeError("not a class of the task")
        table = _decode(table, resolve, depth, counter)
        if type(table) is not dict or not all(type(k) is str for k in table):
            raise TypeError("not an attribute table")
        obj = klass.__new__(klass)
        for key, value in table.items():
            object.__setattr__(obj, key, value)
        return obj
    if tag == "$namedtuple":
        name, fields, values = inner
        values = [_decode(v, resolve, depth, counter) for v in values]
        return _namedtuple_class(counter[1], str(name), tuple(str(f) for f in fields))(*values)
    if tag == "$enum":
        name, kind, member, members = inner
        members = [(str(n), _decode(v, resolve, depth, counter)) for n, v in members[:MAX_MEMBERS]]
        return _enum_class(counter[1], str(name), str(kind), members)[str(member)]
    raise ValueError(f"unknown tag {tag}")


def rebuildable(klass):
    """A plain class (no builtin base but object): its instance is its attributes."""
    return isinstance(klass, type) and all(base is object or id(base) not in _BUILTIN_TYPES for base in klass.__mro__)


_BUILTIN_TYPES = frozenset(id(v) for v in vars(builtins).values() if isinstance(v, type))  # once, not per value


def attributes(obj):
    """An instance's attributes: its ``__dict__`` and its slots."""
    table = {}
    try:
        own = object.__getattribute__(obj, "__dict__")
    except AttributeError:  # __slots__ only
        own = None
    if type(own) is dict:
        table.update(own)
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if type(slots) is str else slots:
            if type(slot) is str and slot not in ("__dict__", "__weakref__"):
                with contextlib.suppress(AttributeError):
                    table[slot] = object.__getattribute__(obj, slot)
    return table


def _namedtuple_class(classes, name, fields):
    import collections

    trusted = classes.get(name)
    if isinstance(trusted, type) and issubclass(trusted, tuple) and _namedtuple_fields(trusted) == fields:
        return trusted
    key = ("namedtuple", name, fields)
    if key not in _REBUILT:
        _room_for_a_class()
        short = name.rpartition(".")[2]
        _REBUILT[key] = collections.namedtuple(short if short.isidentifier() else "value", fields)
    return _REBUILT[key]


def _enum_class(classes, name, kind, members):
    import enum
    import json

    trusted = classes.get(name)
    if isinstance(trusted, type) and _is_enum(trusted):
        return trusted
    key = ("enum", name, kind, json.dumps([[n, repr(v)] for n, v in members]))
    if key not in _REBUILT:
        _room_for_a_class()
        base = {"int": enum.IntEnum, "str": getattr(enum, "StrEnum", enum.Enum)}.get(kind, enum.Enum)
        short = name.rpartition(".")[2]
        _REBUILT[key] = base(short if short.isidentifier() else "value", members)
    return _REBUILT[key]


def _room_for_a_class():
    if len(_REBUILT) >= MAX_CLASSES:
        raise WireError("unsupported_value", f"values of more than {MAX_CLASSES} distinct rebuilt classes")
