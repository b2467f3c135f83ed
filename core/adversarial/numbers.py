"""Number and quantity swaps: "one person" -> "two people", "40 %" -> "65 %".

Every number in a reply is a place: digits ("309", "10,000", "5.2", "21st"),
English number words ("one" ... "ninety-nine", "the first"), percentages and,
unless the date swap is asked for too, years. Each place gets up to
``alternatives`` different values of the same form (digits stay digits with
the same thousands separators and decimals; words stay words; ordinals stay
ordinals), always different from the original.

Agreement is kept where it is simple: a count of one becomes a count of two or
more, so "one person" becomes "seven people" and "there is only one person"
becomes "there are only seven people"; where the noun after "one" is not a
known countable noun the place is skipped rather than left ungrammatical.
Numbers that belong to times ("7 p.m.", "10:30"), dates ("12/28", "12月28日"),
decades ("1990s", "90年代"), codes with leading zeros and very long digit
strings are left alone. Works on Chinese text for Arabic digits ("132分钟").
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from .edits import Edit, Proposals, detect_language, make_edit, match_case

KIND = "number"

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL_WORDS = ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
                  "eighth", "ninth", "tenth"]
_WORD_VALUES: dict[str, int] = {w: i for i, w in enumerate(_UNITS)}
_WORD_VALUES.update({w: 10 * i for i, w in enumerate(_TENS) if w})

_DIGITS = re.compile(
    r"(?<![A-Za-z0-9.,/:\-])(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?"
    r"(?P<ord>st|nd|rd|th)?(?![A-Za-z0-9])"
)
_NUMBER_WORD = re.compile(
    r"\b(?P<word>(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
    r"(?:-(?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen)\b",
    re.I,
)
_ORDINAL_WORD = re.compile(r"\b(?P<word>first|second|third|fourth|fifth|sixth|seventh|eighth"
                           r"|ninth|tenth)\b", re.I)
_ORDINAL_DETERMINERS = {"the", "his", "her", "its", "their", "my", "our", "your", "this"}
_PERCENT_AFTER = re.compile(r"\s*(?:%|％|percent\b|per cent\b)")
_TIME_AFTER = re.compile(r"\s*(?:[ap]\.?m\b\.?|:\d|点|时)", re.I)
_DATE_AFTER = re.compile(r"(?:[/\-.]\d|\s*(?:月|日|号))")
_DECADE_AFTER = re.compile(r"(?:s\b|'s\b|年代)")
_THERE_BE = re.compile(
    r"(?P<there>\bthere)(?P<gap>\s*)(?P<be>is|was|['’]s)"
    r"(?P<middle>\s+(?:only|just|exactly|about|around|over|nearly|almost|at least)\s+|\s+)$",
    re.I,
)
_ONE_BLOCKERS_BEFORE = {"the", "that", "this", "which", "every", "each", "any", "no", "another",
                        "only", "some", "a", "little", "someone", "anyone", "everyone"}
_POSSESSIVES = {"my", "your", "his", "her", "its", "our", "their", "an"}
_ONE_IDIOMS_AFTER = {"day", "time", "point", "way", "another", "thing", "more", "hand", "or",
                     "and", "by", "on", "in"}

IRREGULAR_PLURALS = {
    "person": "people", "man": "men", "woman": "women", "child": "children", "foot": "feet",
    "tooth": "teeth", "mouse": "mice", "goose": "geese", "fish": "fish", "sheep": "sheep",
    "deer": "deer", "series": "series", "life": "lives", "wife": "wives", "knife": "knives",
}
COUNTABLE_NOUNS = set(IRREGULAR_PLURALS) | {
    "guy", "girl", "boy", "kid", "baby", "player", "team", "game", "match", "movie", "film", "song",
    "album", "book", "novel", "story", "show", "episode", "season", "series", "time", "year",
    "month", "week", "day", "hour", "minute", "second", "dollar", "cent", "point", "goal",
    "touchdown", "car", "house", "city", "country", "state", "student", "teacher", "friend",
    "brother", "sister", "son", "daughter", "dog", "cat", "animal", "bird", "tree", "room",
    "door", "window", "chair", "table", "cup", "glass", "bottle", "plate", "shirt", "hat",
    "picture", "photo", "video", "clip", "scene", "camera", "phone", "computer", "ball", "bag",
    "box", "language", "award", "medal", "title", "championship", "trophy", "star", "planet",
    "moon", "president", "member", "band", "record", "coach", "stadium", "inch", "mile",
    "meter", "kilometer", "pound", "letter", "word", "page", "line", "object", "item", "thing",
    "chapter", "version", "sequel", "apple", "egg", "cookie", "couch", "bed", "laptop",
    "television", "tv", "remote", "instrument", "guitar", "piano", "drum", "singer",
    "actor", "actress", "director", "writer", "character", "sibling", "parent", "grandparent",
    "wheel", "leg", "arm", "eye", "ear", "finger", "step", "floor", "building", "school",
    "company", "job", "employee", "worker", "fan", "ticket", "seat", "vote", "question",
    "answer", "idea", "reason", "example", "lap", "race", "round", "inning", "quarter",
    "cake", "pizza", "sandwich", "drink", "beer", "coffee", "sofa", "lamp",
    "painting", "poster", "towel", "shoe", "sock", "glove", "jacket", "paper", "pen", "pencil",
}


@dataclass(frozen=True)
class _Site:
    start: int
    end: int
    value: float
    form: str  # count | decimal | percent | ordinal | year | word | ordinal-word
    surface: str
    needs_plural: bool = False


def swap_numbers(text: str, *, rng: random.Random, language: str | None = None, years: bool = True,
                 alternatives: int = 2) -> Proposals:
    """Every safe number swap of ``text``; ``years=False`` leaves years to the date swap."""
    if not text.strip():
        return Proposals.skipped(KIND, "empty reply")
    english = (language or detect_language(text)) == "en"
    sites, reasons = _find_sites(text, years=years, english=english)
    edits: list[Edit] = []
    for site_index, site in enumerate(sites):
        for alternative, value in enumerate(_other_values(site, rng, alternatives)):
            edit = _render(text, site, value, site_index, alternative, english)
            if edit is not None:
                edits.append(edit)
            else:
                reasons.append("cannot make the noun after 'one' agree")
    if edits:
        return Proposals.of(KIND, edits, "no number to swap")
    if reasons:
        return Proposals.skipped(KIND, max(reasons, key=reasons.count))
    return Proposals.skipped(KIND, "no number in the reply")


def _find_sites(text: str, *, years: bool, english: bool) -> tuple[list[_Site], list[str]]:
    sites: list[_Site] = []
    reasons: list[str] = []
    for m in _DIGITS.finditer(text):
        after = text[m.end():]
        num, frac, ordinal = m.group("num"), m.group("frac"), m.group("ord")
        if _TIME_AFTER.match(after) or _DATE_AFTER.match(after):
            reasons.append("only numbers of times or dates (left to the date swap)")
            continue
        if _DECADE_AFTER.match(after):
            reasons.append("only decades (left to the date swap)")
            continue
        digits = num.replace(",", "")
        if (len(digits) > 1 and digits.startswith("0")) or len(digits) > 9:
            reasons.append("only codes or identifiers")
            continue
        value = int(digits)
        if ordinal:
            sites.append(_Site(m.start(), m.end(), value, "ordinal", m.group()))
        elif _PERCENT_AFTER.match(after):
            sites.append(_Site(m.start(), m.end(), float(f"{digits}.{frac}") if frac else value,
                               "percent" if not frac else "decimal", m.group()))
        elif frac:
            sites.append(_Site(m.start(), m.end(), float(f"{digits}.{frac}"), "decimal", m.group()))
        elif "," not in num and len(digits) == 4 and 1500 <= value <= 2099 \
                and looks_like_year(text, m.start(), m.end()):
            if years:
                sites.append(_Site(m.start(), m.end(), value, "year", m.group()))
            else:
                reasons.append("only years (left to the date swap)")
        else:
            sites.append(_Site(m.start(), m.end(), value, "count", m.group(),
                               needs_plural=value == 1))
    if english:
        for m in _NUMBER_WORD.finditer(text):
            word = m.group("word").lower()
            if word == "zero":
                continue
            if word == "one" and not _one_is_a_count(text, m):
                reasons.append("'one' used as a pronoun or in an idiom")
                continue
            value = sum(_WORD_VALUES[part] for part in word.split("-"))
            sites.append(_Site(m.start(), m.end(), value, "word", m.group(), needs_plural=value == 1))
        for m in _ORDINAL_WORD.finditer(text):
            before = text[:m.start()].split()
            if before and before[-1].lower() in _ORDINAL_DETERMINERS:
                value = _ORDINAL_WORDS.index(m.group("word").lower())
                sites.append(_Site(m.start(), m.end(), value, "ordinal-word", m.group()))
    sites.sort(key=lambda s: s.start)
    return sites, reasons


YEAR_PREPOSITIONS = {"in", "since", "until", "till", "by", "from", "of", "before", "after",
                     "around", "circa", "year", "during", "early", "late", "mid", "between"}
_WORDS_AFTER_YEARS = {"and", "to", "when", "where", "in", "until", "after", "before", "so", "but",
                      "i", "he", "she", "they", "we", "the", "a", "it", "was", "is", "season",
                      "film", "movie", "census", "election", "olympics", "world", "cup"}


def looks_like_year(text: str, start: int, end: int) -> bool:
    """Whether the four digits at ``text[start:end]`` read as a year: after "in",
    "since", ... or before "年", punctuation or a word that cannot be counted."""
    after = text[end:]
    if after.startswith("年"):
        return True
    before = re.findall(r"[A-Za-z]+", text[max(0, start - 20):start])
    if before and before[-1].lower() in YEAR_PREPOSITIONS:
        return True
    following = re.match(r"\s*([A-Za-z]+)", after)
    if following is None:
        return True
    return following.group(1).lower() in _WORDS_AFTER_YEARS


def _one_is_a_count(text: str, m: re.Match[str]) -> bool:
    before = [w.lower() for w in text[:m.start()].split()]
    if before and before[-1] == "only":
        # "there is only one person" counts; "the only one" is a pronoun.
        if len(before) > 1 and before[-2] in _ONE_BLOCKERS_BEFORE | _POSSESSIVES:
            return False
    elif before and before[-1] in _ONE_BLOCKERS_BEFORE:
        return False
    following = re.match(r"\s+([A-Za-z]+)", text[m.end():])
    if following is None:
        return False
    return following.group(1).lower() not in _ONE_IDIOMS_AFTER


def _other_values(site: _Site, rng: random.Random, how_many: int) -> list[float]:
    """Up to ``how_many`` distinct values of the site's form, none equal to the original."""
    out: list[float] = []
    for _ in range(how_many * 20):
        if len(out) >= how_many:
            break
        value = _draw(site, rng)
        if value != site.value and value not in out:
            out.append(value)
    return out


def _draw(site: _Site, rng: random.Random) -> float:
    v = site.value
    if site.form in ("ordinal", "ordinal-word"):
        return rng.randint(1, 10)
    if site.form == "year":
        upper = max(int(v), 2024)
        return min(upper, max(1500, int(v) + rng.choice([-1, 1]) * rng.randint(1, 30)))
    if site.form == "percent":
        if v % 5 == 0:
            return 5 * rng.randint(1, 19)
        return rng.randint(2, 99)
    if site.form == "decimal":
        return round(v * rng.uniform(0.3, 3.0), _decimals(site.surface))
    if site.form == "word" and v > 19:
        return 10 * rng.randint(2, 9) + (rng.randint(1, 9) if v % 10 else 0)
    if v <= 12:
        return rng.randint(2, 12)
    return _other_integer(int(v), rng)


def _other_integer(v: int, rng: random.Random) -> int:
    """A value of the same roundness: 309 -> 612, 10,000 -> 40,000."""
    step = 1
    while v % (step * 10) == 0 and v // (step * 10) >= 1:
        step *= 10
    low = max(2, v // 3)
    high = v * 3
    k_low = max(1, -(-low // step))
    k_high = max(k_low + 1, high // step)
    return step * rng.randint(k_low, k_high)


def _render(text: str, site: _Site, value: float, site_index: int, alternative: int,
            english: bool) -> Edit | None:
    surface = _format(site, value)
    start, end = site.start, site.end
    replacement = surface
    if site.needs_plural and english:
        agreed = _agree(text, site, surface)
        if agreed is None:
            return None
        start, end, replacement = agreed
    return make_edit(KIND, text, start, end, replacement, site=site_index, alternative=alternative)


def _format(site: _Site, value: float) -> str:
    if site.form == "word":
        return match_case(site.surface, _words(int(value)))
    if site.form == "ordinal-word":
        return match_case(site.surface, _ORDINAL_WORDS[int(value)])
    if site.form == "ordinal":
        return f"{int(value)}{_ordinal_suffix(int(value))}"
    if site.form == "decimal":
        decimals = _decimals(site.surface)
        return f"{value:,.{decimals}f}" if "," in site.surface else f"{value:.{decimals}f}"
    number = int(value)
    return f"{number:,}" if "," in site.surface else str(number)


def _decimals(surface: str) -> int:
    match = re.search(r"\.(\d+)", surface)
    return len(match.group(1)) if match else 0


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _words(n: int) -> str:
    if n < 20:
        return _UNITS[n]
    tens, units = divmod(n, 10)
    return _TENS[tens] + (f"-{_UNITS[units]}" if units else "")


def pluralize(noun: str) -> str:
    low = noun.lower()
    if low in IRREGULAR_PLURALS:
        return match_case(noun, IRREGULAR_PLURALS[low])
    if re.search(r"(s|x|z|ch|sh)$", low):
        return noun + "es"
    if re.search(r"[^aeiou]y$", low):
        return noun[:-1] + "ies"
    return noun + "s"


_VERB_AGREEMENT = {"is": "are", "was": "were", "has": "have", "does": "do"}


def _agree(text: str, site: _Site, number: str) -> tuple[int, int, str] | None:
    """Make a count of one into a plural count: the noun, a following verb and a
    preceding "there is" agree. Returns (start, end, replacement) or None."""
    after = text[site.end:]
    noun_match = re.match(r"(\s+)([A-Za-z]+)", after)
    if noun_match is None:
        return None
    gap, noun = noun_match.group(1), noun_match.group(2)
    if noun.lower() == "of":  # "one of the directors" needs no agreement
        return site.start, site.end, number
    if noun.lower() not in COUNTABLE_NOUNS:
        return None
    start, end = site.start, site.end + noun_match.end()
    replacement = f"{number}{gap}{pluralize(noun)}"
    verb_match = re.match(r"(\s+)(is|was|has|does)\b", text[end:], re.I)
    if verb_match:
        replacement += verb_match.group(1) + match_case(verb_match.group(2),
                                                        _VERB_AGREEMENT[verb_match.group(2).lower()])
        end += verb_match.end()
    there = _THERE_BE.search(text[:site.start])
    if there:
        plural_be = "were" if there.group("be").lower() == "was" else "are"
        start = there.start()
        be = there.group("be")
        replacement = (f"{there.group('there')} {match_case(be if be[0].isalpha() else 'x', plural_be)}"
                       f"{there.group('middle')}{replacement}")
    return start, end, replacement
