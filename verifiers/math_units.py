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
