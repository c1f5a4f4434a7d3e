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
  ``Point``) — so no candidate code ever runs where a comparison is decided. A rebuilt value
  holds plain data only: no function, no reference to a candidate object, no private or dunder
  name in an enum's member table or an instance's attributes, no attribute that would replace
  something its class defines (see :func:`instance_of`); a namedtuple or enum member that holds
  an object crosses whole as a reference instead, and a defaultdict carries the value its factory
  makes, never the factory.
* **Anything else stays where it lives.** A generator, a ``re.Match``, an instance of the
  candidate's class is kept in a table on the candidate's side and crosses as a reference
  (``{"$ref": n}``); the judge turns it into a :class:`Remote` whose every use is a request
  over the socket, and whose comparisons refuse (the judge never lets the candidate decide
  what is equal). The judge's functions (a key function, a fake installed with
  monkeypatch) cross as numbers (``$callback``): the candidate's call asks the judge to
  run them on plain data. An instance of a task's class crosses from the judge by its
  attributes (``$instance``), rebuilt as the candidate's class of that name; the judge and the
  host accept neither from the candidate.
* **Per job, not per process**: the classes rebuilt from descriptions live in a
  :class:`Classes` that belongs to one job (the judge's run, or one row on the host), capped:
  a row that floods it fails alone.
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
        "$defaultdict", "$namedtuple", "$enum", "$builtin")  # ($instance, $callback: only between the processes)
MAX_MEMBERS = 1000  # members of an enum sent with one of its values
MAX_CLASSES = 1000  # namedtuple and enum classes one job rebuilds (each costs memory)
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
    if t is range:  # its bounds as ints are (a 5,000-digit stop would be a line no JSON reader takes)
        return {"$range": [encode(value.start), encode(value.stop), encode(value.step)]}
    if t is type and getattr(builtins, _type_name(value), None) is value:  # int, KeyError: the receiver's own
        return {"$builtin": value.__name__}
    special = _encode_stdlib(value, t, keep, depth)
    if special is not None:
        return special
    if _is_enum(t):
        return _plain_or_kept(value, t, keep, lambda noting: _encode_enum(value, t, noting, depth))
    fields = _namedtuple_fields(t)
    if fields is not None:
        return _plain_or_kept(value, t, keep, lambda noting: {"$namedtuple": [
            _type_name(t), list(fields), [encode(v, noting, depth) for v in tuple.__iter__(value)]]})
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


def _plain_or_kept(value, t, keep, inline):
    """``inline(keep)``: the value as plain structure (a namedtuple, an enum member, a defaultdict's
    default). The receiver rebuilds such a value from plain data only, so one that holds an object
    the sender keeps crosses whole as a reference when the sender keeps references (the
    candidate: its namedtuple of nodes stays in its process, and the tests index it there)."""
    if keep is None:
        return inline(None)
    held = []

    def noting(v):
        ref = keep(v)
        if ref is not None:
            held.append(ref)
        return ref

    data = inline(noting)
    if held:
        ref = keep(value)
        if type(ref) is int:
            return {"$ref": ref, "$type": _type_name(t)}
    return data


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
                return {"$defaultdict": [None if factory is None else factory.__name__, pairs]}
            # Any other factory crosses as the value it makes (called once, here): the receiver gives
            # each missing key a copy of it, and never holds a function of the sender's.
            try:
                made = factory()
            except Exception:
                if keep is not None and type(ref := keep(value)) is int:
                    return {"$ref": ref, "$type": "defaultdict"}
                raise WireError("unsupported_value", "a defaultdict whose factory failed") from None
            return _plain_or_kept(value, t, keep, lambda noting: {"$defaultdict": [
                {"$default": encode(made, noting, depth)}, pairs]})
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


class Classes:
    """The namedtuple and enum classes one job rebuilds from their descriptions: one class per
    description (so members of one enum compare, and ``is`` holds between two calls' results),
    at most MAX_CLASSES of them. It belongs to one job (the judge's run, one row on the host): a
    job that sends more fails alone, and the next job starts with a Classes of its own."""

    def __init__(self):
        self.made = {}

    def get(self, key, make):
        made = self.made.get(key)
        if made is None:
            if len(self.made) >= MAX_CLASSES:
                raise WireError("unsupported_value", f"values of more than {MAX_CLASSES} distinct rebuilt classes")
            made = self.made[key] = make()
        return made


def decode(data, resolve=None, classes=None, callback=None, *, inside=None, cache=None, from_judge=False,
           plain=False):
    """The judge's (or host's) own objects for an encoded value.

    ``resolve(ref, type_name)`` makes the stand-in for a reference; without it a reference is
    refused. ``classes`` maps names to the trusted classes of the task (a prelude's ``Point``,
    ``Color``): a namedtuple or an enum member of that name is rebuilt as one of them, so
    ``isinstance`` and equality with the task's own values hold; any other is rebuilt as a
    class of the job's ``cache`` (a :class:`Classes`; a fresh one when not given).

    Inside a rebuilt value (a namedtuple's fields, an enum's values, a defaultdict's default)
    and everywhere when ``plain``, only plain data is accepted: a reference there is refused
    unless ``inside(ref, type_name)`` makes the task's own object for it (an instance of a
    prelude's class, rebuilt from its attributes), and a function never is. ``from_judge``:
    the data comes from the judge (the candidate decodes it), so an instance of a task's class
    by its attributes (``$instance``) and the judge's functions (``callback(n)`` makes the
    stand-in for function number ``n``) are accepted anywhere: the judge's functions may be
    called, the candidate's never run in the judge."""
    state = _Decoding(resolve, classes or {}, callback, inside, cache if cache is not None else Classes(),
                      from_judge)
    return state.decode(data, 0, plain and not from_judge)


class _Decoding:
    """One decode: the parts seen so far (capped), and what the caller trusts."""

    def __init__(self, resolve, classes, callback, inside, cache, from_judge):
        self.nodes, self.resolve, self.classes, self.callback = 0, resolve, classes, callback
        self.inside, self.cache, self.from_judge = inside, cache, from_judge

    def decode(self, data, depth, plain):
        self.nodes += 1
        if self.nodes > MAX_NODES:
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
            return [self.decode(v, depth, plain) for v in data]
        if t is not dict or len(data) not in (1, 2):
            raise WireError("unsupported_value", "a malformed value")
        if "$ref" in data:
            return self.reference(data, plain)
        ((tag, inner),) = data.items()
        try:
            return self.tag(tag, inner, depth, plain)
        except WireError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, ArithmeticError) as exc:
            raise WireError("unsupported_value", f"a malformed {tag} value ({type(exc).__name__})") from None

    def reference(self, data, plain):
        ref, type_name = data["$ref"], str(data.get("$type", "object"))[:100]
        made = None
        if type(ref) is int:
            if not plain and self.resolve is not None:
                return self.resolve(ref, type_name)
            if plain and self.inside is not None:
                made = self.inside(ref, type_name)
        if made is None:
            where = " inside a rebuilt value" if plain else ""
            raise WireError("unsupported_value", f"a value of type {type_name[:60]}{where} (not plain data)")
        return made

    def tag(self, tag, inner, depth, plain):
        def items():
            if type(inner) is not list:
                raise TypeError("not a list")
            return [self.decode(v, depth, plain) for v in inner]

        def pairs(inner=inner):
            if type(inner) is not list or not all(type(p) is list and len(p) == 2 for p in inner):
                raise TypeError("not a list of pairs")
            return [(self.decode(k, depth, plain), self.decode(v, depth, plain)) for k, v in inner]

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
        if tag == "$builtin":  # a builtin class by name (suppress(KeyError), convert(x, int))
            kind = getattr(builtins, str(inner), None)
            if not isinstance(kind, type):
                raise ValueError("not a builtin class")
            return kind
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

            factory, content = inner
            if factory is None or factory in _FACTORIES:
                factory = None if factory is None else getattr(builtins, factory)
            elif type(factory) is dict and len(factory) == 1 and "$default" in factory:
                factory = _Default(self.decode(factory["$default"], depth, not self.from_judge))
            else:
                raise TypeError("a defaultdict factory that is neither a builtin's name nor a default value")
            return collections.defaultdict(factory, pairs(content))
        if tag == "$callback":
            if self.callback is None or not self.from_judge or type(inner) is not int:
                raise WireError("unsupported_value", "a function of the other side")
            return self.callback(inner)
        if tag == "$instance":  # an instance of a class both sides define (the task's), by its attributes
            name, table = inner
            klass = self.classes.get(str(name))
            if not self.from_judge or not rebuildable(klass):
                raise TypeError("not a class of the task")
            return instance_of(klass, self.decode(table, depth, plain), strict=False)
        if tag == "$namedtuple":
            name, fields, values = inner
            values = [self.decode(v, depth, not self.from_judge) for v in values]
            return self.namedtuple_class(str(name), tuple(str(f) for f in fields))(*values)
        if tag == "$enum":
            name, kind, member, members = inner
            if type(members) is not list or len(members) > MAX_MEMBERS:
                raise WireError("unsupported_value", f"an enum of more than {MAX_MEMBERS} members")
            members = [(n, self.decode(v, depth, not self.from_judge)) for n, v in members]
            return self.enum_class(str(name), str(kind), members)[str(member)]
        raise ValueError(f"unknown tag {tag}")

    def namedtuple_class(self, name, fields):
        """The task's namedtuple of that name and fields, else one of the job's (``namedtuple``
        itself refuses private, dunder and repeated field names)."""
        import collections

        trusted = self.classes.get(name)
        if isinstance(trusted, type) and issubclass(trusted, tuple) and _namedtuple_fields(trusted) == fields:
            return trusted
        short = name.rpartition(".")[2]
        return self.cache.get(("namedtuple", name, fields), lambda: collections.namedtuple(
            short if short.isidentifier() else "value", fields))

    def enum_class(self, name, kind, members):
        """The task's enum of that name, else one of the job's, made from public member names
        only: a dunder, sunder or private name would be a method or a setting of the class, and
        one its base has (``numerator`` of an IntEnum, read by ``Fraction.__eq__``) would replace it."""
        import enum
        import json

        trusted = self.classes.get(name)
        if isinstance(trusted, type) and _is_enum(trusted):
            return trusted
        if kind not in ("", "int", "str"):
            raise ValueError("an enum of an unknown kind")
        base = {"int": enum.IntEnum, "str": getattr(enum, "StrEnum", enum.Enum)}.get(kind, enum.Enum)
        names = [n for n, _ in members]
        own = set(dir(base))  # a member named like its base's attribute (numerator, upper) would replace it
        if not all(_public(n) and n not in own for n in names) or len(set(names)) != len(names):
            raise WireError("unsupported_value", "an enum whose members are not public, distinct names of its own")
        short = name.rpartition(".")[2]
        key = ("enum", name, kind, json.dumps([[n, repr(v)] for n, v in members]))
        return self.cache.get(key, lambda: base(short if short.isidentifier() else "value", members))


def _public(name):
    return type(name) is str and name.isidentifier() and not name.startswith("_")


class _Default:
    """A defaultdict's factory rebuilt from the value the sender's factory made: a copy per key."""

    def __init__(self, value):
        self.value = value

    def __call__(self):
        import copy

        return copy.deepcopy(self.value)


def rebuildable(klass):
    """A plain class (no builtin base but object): its instance is its attributes."""
    return isinstance(klass, type) and all(base is object or id(base) not in _BUILTIN_TYPES for base in klass.__mro__)


_BUILTIN_TYPES = frozenset(id(v) for v in vars(builtins).values() if isinstance(v, type))  # once, not per value


def instance_of(klass, table, strict=True):
    """An instance of the task's class ``klass`` holding ``table`` (name -> value), made without
    running its ``__init__``. ``strict`` (the table came from the candidate): every name is a
    public one the class does not define, or one it declares (a dataclass field, a slot), and
    never a dunder: an attribute named like a method (``same``) or a class-level setting
    (``tolerance``) would replace the task's own in the task's ``__eq__``. The caller decoded the
    values as plain data (``decode(..., plain=True)``)."""
    if type(table) is not dict or not all(type(k) is str for k in table):
        raise WireError("unsupported_value", "not an attribute table")
    if strict:
        declared = _declared(klass)
        for key in table:
            if not _may_hold(klass, key, declared):
                raise WireError("unsupported_value", f"an attribute {key[:60]!r} that {_type_name(klass)} does not "
                                                     "declare, or that would replace one of its own")
    obj = klass.__new__(klass)
    for key, value in table.items():
        object.__setattr__(obj, key, value)
    return obj


def _declared(klass):
    names = set(getattr(klass, "__dataclass_fields__", None) or ())
    for base in klass.__mro__:
        slots = base.__dict__.get("__slots__", ())
        names.update((slots,) if type(slots) is str else slots)
    return names - {"__dict__", "__weakref__"}


def _may_hold(klass, key, declared):
    if not key.isidentifier() or (key.startswith("__") and key.endswith("__")):
        return False
    if key in declared:
        return True
    return not key.startswith("_") and not any(key in base.__dict__ for base in klass.__mro__)


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
