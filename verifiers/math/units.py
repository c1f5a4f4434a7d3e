"""Which words after a number are units (droppable) and which change or hedge its value.

A unit may be dropped because it does not change the number: ``10 cm`` is 10. A word
such as ``thousand``, ``dozen`` or ``squared`` does change it, and ``or``, ``maybe`` or
``at least`` hedge it, so the units switch drops only words on the list below (units of
measure, currency and time): an unknown word is never assumed to be a unit, because a
policy will find any word a blacklist forgot.
"""

from __future__ import annotations

import re


def words(text: str) -> frozenset[str]:
    """A word list written as text (easier to read and extend than a list literal)."""
    return frozenset(text.split())


# Units of three letters or more match in any case ("Meters", "HOURS").
_UNIT_WORDS = """
    inch inches foot feet yard yards mile miles meter meters metre metres
    millimeter millimeters millimetre millimetres centimeter centimeters centimetre centimetres
    kilometer kilometers kilometre kilometres micrometer micrometers nanometer nanometers
    light-year light-years
    gram grams kilogram kilograms milligram milligrams lbs pound pounds ounce ounces ton tons tonne tonnes
    liter liters litre litres milliliter milliliters millilitre millilitres gal gallon gallons
    quart quarts pint pints cup cups tablespoon tablespoons teaspoon teaspoons tbsp tsp
    sec secs second seconds min mins minute minutes hrs hour hours day days week weeks month months
    year years yrs millisecond milliseconds decade decades century centuries
    mph kph kmh km/h m/s cm/s ft/s mi/h knot knots rpm
    acre acres hectare hectares
    degree degrees deg rad radian radians celsius fahrenheit kelvin
    dollar dollars usd cent cents euro euros eur gbp yen jpy rupee rupees yuan cny peso pesos franc francs won
    joule joules cal calorie calories kcal kwh watt watts volt volts amp amps ampere amperes ohm ohms
    newton newtons kpa pascal pascals atm bar bars
    byte bytes kilobyte kilobytes megabyte megabytes gigabyte gigabytes bit bits
    unit units square-units
"""
# Symbols of one or two letters match only as written: "m" is a metre but "M" may be a million,
# "B" a billion, "K" a thousand, "G" a gram only in lower case.
_UNIT_SYMBOLS = """
    mm cm dm m km um nm in ft yd mi au mg g kg lb oz ml mL l L cl dl cc s ms h hr min yr
    ha sq J kJ W kW V Pa Hz kHz MHz GHz N kB KB MB GB TB Rs rs
"""
UNITS = words(_UNIT_WORDS)
UNIT_SYMBOLS = words(_UNIT_SYMBOLS)

# Prefixes of an area or volume unit: "square feet", "sq. ft", "cubic meters".
UNIT_PREFIXES = frozenset({"square", "sq", "sq.", "cubic", "cu", "cu."})

# Words that change a number's value or hedge it. They are never units (above), and the
# last-number fallback refuses a number next to one ("5 thousand", "3 or 4", "at least 5").
_VALUE_WORDS = """
    hundred hundreds thousand thousands million millions billion billions trillion trillions
    dozen dozens score gross lakh crore k K M B G T bn mn mil
    half halves third thirds quarter quarters fourth fourths fifth fifths sixth sixths seventh sevenths
    eighth eighths ninth ninths tenth tenths hundredth hundredths thousandth thousandths
    squared cubed times twice thrice percent percentage
    more less fewer greater smaller larger bigger higher lower plus minus over under above below
    or and to but maybe perhaps possibly probably either not except than least most
    approximately approx about around roughly nearly almost circa
    pairs pair couples couple
"""
VALUE_WORDS = words(_VALUE_WORDS)
# Of those, the ones that change or hedge the quantity a value next to them states ("\\boxed{18} percent",
# "at most \\boxed{18}", "negative \\boxed{18}"); the connectives are left out ("or 18 in all", "to feed").
QUANTITY_WORDS = frozenset(
    w for w in (VALUE_WORDS - words("or and to but than either except larger smaller bigger higher lower"))
    | words("negative") if len(w) > 1  # "the larger angle" names it; "values of k" is a variable
)
# Spelled-out numbers after a digit multiply it ("5 hundred") or list another value ("5 or six").
_NUMBER_WORDS = words(
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty "
    "seventy eighty ninety"
)

_UNIT_TEXT = re.compile(r"^(?:(?P<prefix>[A-Za-z.]+)\s+)?(?P<unit>[A-Za-z/-]+)(?:\^\{?[23]\}?|[²³])?$")


def is_unit(words: str) -> bool:
    """Whether ``words`` (what follows a number) is a unit of measure: ``cm``, ``square feet``,
    ``km/h``, ``cm^2``, ``dollars``. Words of three letters or more match in any case; symbols of
    one or two letters only as written (``m`` is a metre, ``M`` is not a unit)."""
    text = words.strip().rstrip(".")
    match = _UNIT_TEXT.match(text)
    if not match:
        return False
    prefix, unit = match.group("prefix"), match.group("unit")
    if prefix is not None and prefix.lower() not in UNIT_PREFIXES:
        return False
    if "/" in unit and not _known_unit(unit):
        top, _, bottom = unit.partition("/")
        return _known_unit(top) and _known_unit(bottom)
    return _known_unit(unit)


def _known_unit(unit: str) -> bool:
    return unit in UNIT_SYMBOLS or (len(unit) >= 3 and unit.lower() in UNITS)


def changes_value(word: str) -> bool:
    """Whether a word next to a number changes or hedges what the number means."""
    word = word.strip().strip(".,;:!?")
    return word in VALUE_WORDS or word.lower() in VALUE_WORDS or word.lower() in _NUMBER_WORDS


# One line per unit: its canonical name, its dimension, then every way it is written. Two answers
# whose units have different canonical names are different quantities (3 mm is not 3 m); no
# conversion is attempted, so "0.3 m" does not answer "30 cm" either (a false negative, never a
# false positive).
_NAMED_UNITS = """
    millimeter length mm millimeter millimeters millimetre millimetres
    centimeter length cm centimeter centimeters centimetre centimetres
    meter length m meter meters metre metres
    kilometer length km kilometer kilometers kilometre kilometres
    inch length in inch inches
    foot length ft foot feet
    yard length yd yard yards
    mile length mi mile miles
    milligram mass mg milligram milligrams
    gram mass g gram grams
    kilogram mass kg kilogram kilograms kilo kilos
    pound mass lb lbs pound pounds
    ounce mass oz ounce ounces
    ton mass ton tons tonne tonnes
    milliliter volume ml mL milliliter milliliters millilitre millilitres
    liter volume l L liter liters litre litres
    gallon volume gal gallon gallons
    cup volume cup cups
    millisecond time ms millisecond milliseconds
    second time s sec secs second seconds
    minute time min mins minute minutes
    hour time h hr hrs hour hours
    day time day days
    week time week weeks
    month time month months
    year time yr yrs year years
    cent money cent cents ¢
    dollar money $ \\$ usd dollar dollars
    euro money € eur euro euros
    degree angle deg degree degrees
    radian angle rad radian radians
"""
UNIT_NAMES: dict[str, tuple[str, str]] = {}  # as written (lower case from three letters) -> (name, dimension)
for _line in _NAMED_UNITS.strip().splitlines():
    _name, _dimension, *_forms = _line.split()
    for _form in _forms:
        UNIT_NAMES[_form if len(_form) < 3 else _form.lower()] = (_name, _dimension)

_POWER = re.compile(r"(?:\^\s*\{?\s*([23])\s*\}?|([²³]))\s*$")
_AREA_WORDS = {"square": "2", "sq": "2", "sq.": "2", "cubic": "3", "cu": "3", "cu.": "3"}


def unit_key(written: str) -> str | None:
    """The canonical unit an answer carries (``cm^2``, ``\\text{ square centimeters}`` and
    ``sq cm`` are all ``centimeter^2``), or None when ``written`` is no unit we know by name.

    Units we know as units but not by name (``rpm``, ``knots``) are keyed by the word as written,
    so two different ones still differ.
    """
    text = re.sub(r"\\(?:text|mbox|mathrm|textrm|textnormal|rm)\s*\{([^{}]*)\}", r"\1", written)
    text = re.sub(r"\\[,;:! ]|~", " ", text).strip().rstrip(".")
    power = ""
    match = _POWER.search(text)
    if match:
        power = match.group(1) or {"²": "2", "³": "3"}[match.group(2)]
        text = text[: match.start()].strip()
    parts = text.split()
    if len(parts) == 2 and parts[0].lower() in _AREA_WORDS:
        power, parts = _AREA_WORDS[parts[0].lower()], parts[1:]
    if len(parts) != 1:
        return None
    word = parts[0]
    known = UNIT_NAMES.get(word if len(word) < 3 else word.lower())
    if known is None and not is_unit(word):
        return None
    name = known[0] if known else word.lower().rstrip("s")
    return f"{name}^{power}" if power else name


def unit_dimension(key: str) -> str | None:
    """``length``, ``time``, ``money``… of a :func:`unit_key` (powers kept apart: an area is not a length)."""
    name, _, power = key.partition("^")
    known = UNIT_NAMES.get(name)
    return None if known is None else known[1] + (f"^{power}" if power else "")


# Plurals that count by a number word ("6 tens" is 60, "3 sixes" is 18): never plain count nouns.
_COUNTING_PLURALS = words(
    "ones twos threes fours fives sixes sevens eights nines tens elevens twelves teens twenties thirties forties "
    "fifties sixties seventies eighties nineties hundreds thousands millions billions trillions dozens scores "
    "grosses halves thirds quarters fourths fifths sixths sevenths eighths ninths tenths hundredths thousandths "
    "pairs couples times percents degrees units squares cubes powers multiples factors factorials digits"
)


def is_count_noun(word: str) -> bool:
    """Whether a word after a number just names what is counted (``6 marbles``, ``310 legs``), so the
    answer is the number. Only a plain lowercase plural that changes nothing: never a unit (compared
    as one), a number word or its plural (``6 tens`` is 60), or a word that scales or hedges."""
    if not re.fullmatch(r"[a-z]{3,}s", word) or word in _COUNTING_PLURALS or changes_value(word):
        return False
    singular = word[:-3] + "y" if word.endswith("ies") else word[:-2] if word.endswith("es") else word[:-1]
    return not (changes_value(singular) or is_unit(word) or is_unit(singular))
