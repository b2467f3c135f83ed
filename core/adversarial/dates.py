"""Date and time swaps: "June 6, 1975" -> "July 13, 1999", "2001年12月28日" -> "1994年3月9日".

Every date, year, decade, month, weekday and clock time in a reply is a place.
A place keeps its written form: the same separators, zero padding, ordinal
suffix ("6th" -> "13th"), month spelling (full or abbreviated, in the same
capitalisation) and digit count; only the values change, and the result is a
valid calendar date (no 31 June; 29 February only in leap years; a date
without a year never becomes 29 February). When a date has several parts, a
random non-empty subset of them changes.

Ambiguous words are only read as dates in a safe context: "may" and "march"
only before a day or year or after "in", "since", "until", ...; month
abbreviations only with a day or year; a bare four-digit number only where
it reads as a year (see :func:`numbers.looks_like_year`).
"""

from __future__ import annotations

import calendar
import random
import re
from dataclasses import dataclass

from .edits import Edit, Proposals, make_edit, match_case
from .numbers import YEAR_PREPOSITIONS, looks_like_year

KIND = "date"

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
MONTH_ABBREVIATIONS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                       "nov", "dec"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ZH_WEEKDAYS = "一二三四五六日"
LATEST_YEAR = 2024  # replacement years stay at or before max(original, this)

_MONTH_NAMES = {name: i + 1 for i, name in enumerate(MONTHS)}
_MONTH_NAMES.update({abbr: i + 1 for i, abbr in enumerate(MONTH_ABBREVIATIONS)})
_MONTH_NAMES["sept"] = 9

_M = (r"(?P<month>january|february|march|april|may|june|july|august|september|october|november"
      r"|december|sept|jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)(?:\s*\.)?")
_D = r"(?P<day>[0-3]?\d)(?P<suffix>st|nd|rd|th)?"
_Y = r"(?P<year>1[5-9]\d\d|20\d\d)"
_NOT_AFTER_DIGIT = r"(?<![0-9A-Za-z])"
_NOT_BEFORE_DIGIT = r"(?![0-9A-Za-z])"

# (pattern, label), most specific first: a later match overlapping an earlier one is dropped.
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_M}\s+{_D},?\s*{_Y}\b", re.I), "date"),
    (re.compile(rf"\b{_D}\s+(?:of\s+)?{_M},?\s*{_Y}\b", re.I), "date"),
    (re.compile(rf"{_NOT_AFTER_DIGIT}(?P<year>\d{{4}})(?P<sep>[-/.])(?P<month>\d{{1,2}})(?P=sep)"
                rf"(?P<day>\d{{1,2}}){_NOT_BEFORE_DIGIT}"), "numeric-date"),
    (re.compile(rf"{_NOT_AFTER_DIGIT}(?P<first>\d{{1,2}})(?P<sep>[/.])(?P<second>\d{{1,2}})(?P=sep)"
                rf"(?P<year>\d{{4}}|\d{{2}}){_NOT_BEFORE_DIGIT}"), "numeric-date"),
    (re.compile(r"(?<!\d)(?P<year>\d{4})年(?P<month>\d{1,2})月(?P<day>\d{1,2})(?:日|号)"), "date"),
    (re.compile(r"(?<!\d)(?P<year>\d{4})年(?P<month>\d{1,2})月"), "date"),
    (re.compile(r"(?<!\d)(?P<month>\d{1,2})月(?P<day>\d{1,2})(?:日|号)"), "date"),
    (re.compile(r"(?<!\d)(?P<century>\d\d)?(?P<decade>\d)0年代"), "decade"),
    (re.compile(r"(?<!\d)(?P<year>\d{4})年(?!代)"), "date"),
    (re.compile(r"(?<![\d个])(?P<month>\d{1,2})月(?!\d)"), "date"),
    (re.compile(rf"\b{_M}\s+{_D}\b", re.I), "date"),
    (re.compile(rf"\b{_D}\s+(?:of\s+)?{_M}", re.I), "date"),
    (re.compile(rf"\b{_M}\s+{_Y}\b", re.I), "date"),
    (re.compile(r"(?<![\w$])['’]?(?P<century>1[5-9]|20)?(?P<decade>\d)0(?:['’])?s\b"), "decade"),
    (re.compile(r"\b(?P<hour>1[0-2]|0?[1-9])(?::(?P<minute>[0-5]\d))?\s*[ap]\.?\s?m\b\.?", re.I),
     "time"),
    (re.compile(r"(?<![\d:])(?P<hour>[01]?\d|2[0-3]):(?P<minute>[0-5]\d)(?![\d:])"), "time"),
    (re.compile(r"\b(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
                re.I), "weekday"),
    (re.compile(r"(?:星期|礼拜)(?P<zh_weekday>[一二三四五六日天])"), "weekday"),
    (re.compile(r"\b(?P<month>january|february|march|april|may|june|july|august|september"
                r"|october|november|december)\b", re.I), "month"),
    (re.compile(rf"(?<![A-Za-z0-9.,/:$\-]){_Y}(?![A-Za-z0-9%])"), "year"),
]
_AMBIGUOUS_MONTHS = {"may", "march"}


@dataclass(frozen=True)
class _Site:
    match: re.Match[str]
    label: str


def swap_dates(text: str, *, rng: random.Random, language: str | None = None,
               alternatives: int = 2) -> Proposals:
    """Every safe date or time swap of ``text``, up to ``alternatives`` per place."""
    del language  # English and Chinese forms are recognised by their shape
    if not text.strip():
        return Proposals.skipped(KIND, "empty reply")
    edits: list[Edit] = []
    for site_index, site in enumerate(_find_sites(text)):
        seen: set[str] = set()
        for _ in range(alternatives * 20):
            if len(seen) >= alternatives:
                break
            new = _rewrite(site, rng)
            if new is None or new == site.match.group() or new in seen:
                continue
            seen.add(new)
            edits.append(make_edit(KIND, text, site.match.start(), site.match.end(), new,
                                   site=site_index, alternative=len(seen) - 1))
    return Proposals.of(KIND, edits, "no date, year, weekday or time in the reply")


def date_mentions(text: str) -> list[str]:
    """The dates, years, decades, months, weekdays and times in ``text``, in order."""
    return [site.match.group() for site in _find_sites(text)]


def _find_sites(text: str) -> list[_Site]:
    taken: list[tuple[int, int]] = []
    sites: list[_Site] = []
    for pattern, label in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            if not _plausible(text, m, label):
                continue
            taken.append((m.start(), m.end()))
            sites.append(_Site(m, label))
    sites.sort(key=lambda s: s.match.start())
    return sites


def _plausible(text: str, m: re.Match[str], label: str) -> bool:
    groups = m.groupdict()
    if label == "year":
        return looks_like_year(text, m.start(), m.end())
    if label == "month":
        if m.group("month").lower() in _AMBIGUOUS_MONTHS:
            before = re.findall(r"[A-Za-z]+", text[max(0, m.start() - 20):m.start()])
            return bool(before) and before[-1].lower() in YEAR_PREPOSITIONS | {"this", "next", "last"}
        return True
    year, month, day = _ymd(m)
    if month is not None and not 1 <= month <= 12:
        return False
    if day is not None:
        limit = calendar.monthrange(year or 2001, month)[1] if month else 31
        if not 1 <= day <= limit:
            return False
    if label == "numeric-date" and "first" in groups:
        first, second = int(groups["first"]), int(groups["second"])
        if not (1 <= first <= 31 and 1 <= second <= 31) or (first > 12 and second > 12):
            return False
    return True


def _ymd(m: re.Match[str]) -> tuple[int | None, int | None, int | None]:
    groups = m.groupdict()
    year = int(groups["year"]) if groups.get("year") else None
    month: int | None = None
    if groups.get("month"):
        raw = groups["month"].lower()
        month = int(raw) if raw.isdigit() else _MONTH_NAMES[raw]
    day = int(groups["day"]) if groups.get("day") else None
    return year, month, day


def _rewrite(site: _Site, rng: random.Random) -> str | None:
    """A new surface for the site's match, every group replaced in its own form."""
    m = site.match
    values = _new_values(site, rng)
    if values is None:
        return None
    replacements: dict[str, str] = {}
    # "2001-12-28" and "2017年04月10日" write every field with two digits; keep doing so.
    numeric_fields = [m.group(g) for g in ("month", "day", "first", "second")
                      if m.groupdict().get(g) and m.group(g).isdigit()]
    padded = (site.label == "numeric-date" and "first" not in m.groupdict()) or any(
        len(f) == 2 and f.startswith("0") for f in numeric_fields)
    for name, value in values.items():
        original = m.group(name)
        if original is None:
            continue
        replacements[name] = _format_group(name, original, value, keep_width=padded)
    if m.groupdict().get("suffix") and "day" in values:
        replacements["suffix"] = match_case(m.group("suffix"), _ordinal_suffix(int(values["day"])))
    text = m.group()
    base = m.start()
    for name in sorted(replacements, key=lambda n: m.start(n), reverse=True):
        start, end = m.start(name) - base, m.end(name) - base
        text = text[:start] + replacements[name] + text[end:]
    return text


def _new_values(site: _Site, rng: random.Random) -> dict[str, int | str] | None:
    m = site.match
    groups = m.groupdict()
    if site.label == "weekday":
        if groups.get("weekday"):
            current = WEEKDAYS.index(groups["weekday"].lower())
            return {"weekday": WEEKDAYS[_other(rng, 0, 6, current)]}
        current_zh = "日" if groups["zh_weekday"] == "天" else groups["zh_weekday"]
        choices = [c for c in ZH_WEEKDAYS if c != current_zh]
        return {"zh_weekday": rng.choice(choices)}
    if site.label == "time":
        out: dict[str, int | str] = {}
        hour = int(groups["hour"])
        twelve_hour = re.search(r"[ap]\.?\s?m", m.group(), re.I) is not None
        low, high = (1, 12) if twelve_hour else (0, 23)
        change_minute = groups.get("minute") is not None and rng.random() < 0.5
        out["hour"] = hour if change_minute and rng.random() < 0.5 else _other(rng, low, high, hour)
        if groups.get("minute") is not None:
            minute = int(groups["minute"])
            out["minute"] = _other(rng, 0, 59, minute) if change_minute else minute
        return out
    if site.label == "decade":
        decade = int(groups["decade"])
        # the 2000s have had three decades so far; a bare "90s" means the 1900s
        high = 2 if groups.get("century") == "20" else 9
        low = 0 if groups.get("century") else 2
        return {"decade": _other(rng, low, high, decade)}
    if site.label == "month":
        return {"month": _other(rng, 1, 12, _MONTH_NAMES[groups["month"].lower()])}
    if site.label == "year":
        return {"year": _other_year(rng, int(groups["year"]))}
    return _new_date(site, rng)


def _new_date(site: _Site, rng: random.Random) -> dict[str, int | str] | None:
    m = site.match
    groups = m.groupdict()
    if site.label == "numeric-date" and groups.get("first"):
        first, second = int(groups["first"]), int(groups["second"])
        numeric_year = int(groups["year"])
        # 12/28 is month-first, 28/12 day-first; 03/04 could be either: keep both <= 12.
        if first > 12:
            month_name, day_name = "second", "first"
        elif second > 12:
            month_name, day_name = "first", "second"
        else:
            return _numeric_ambiguous(groups, rng)
        numeric_month, numeric_day = int(groups[month_name]), int(groups[day_name])
        new = _draw_date(rng, numeric_year, numeric_month, numeric_day, has_year=True, year_digits=len(groups["year"]))
        return {"year": new[0], month_name: new[1], day_name: new[2]}
    year, month, day = _ymd(m)
    new_year, new_month, new_day = _draw_date(rng, year, month, day, has_year=year is not None,
                                              year_digits=4)
    out: dict[str, int | str] = {}
    if year is not None:
        out["year"] = new_year
    if month is not None:
        out["month"] = new_month
    if day is not None:
        out["day"] = new_day
    return out


def _numeric_ambiguous(groups: dict[str, str], rng: random.Random) -> dict[str, int | str]:
    first, second, year = int(groups["first"]), int(groups["second"]), int(groups["year"])
    while True:
        new_first, new_second = rng.randint(1, 12), rng.randint(1, 12)
        new_year = year if rng.random() < 0.5 else _other_year(rng, year, digits=len(groups["year"]))
        if (new_first, new_second, new_year) != (first, second, year):
            return {"first": new_first, "second": new_second, "year": new_year}


def _draw_date(rng: random.Random, year: int | None, month: int | None, day: int | None, *,
               has_year: bool, year_digits: int) -> tuple[int, int, int]:
    """A different valid (year, month, day); parts that are None stay None-like (0)."""
    parts = [name for name, value in (("year", year), ("month", month), ("day", day))
             if value is not None]
    while True:
        changing = [p for p in parts if rng.random() < 0.6] or [rng.choice(parts)]
        new_year = _other_year(rng, year, digits=year_digits) if year is not None and "year" in changing else year
        new_month = _other(rng, 1, 12, month) if month is not None and "month" in changing else month
        reference_year = new_year if has_year and new_year is not None and year_digits == 4 else 2001
        new_day = day
        if day is not None:
            limit = calendar.monthrange(reference_year, new_month or 1)[1]
            if "day" in changing or day > limit:
                new_day = _other(rng, 1, limit, day if day <= limit else 0)
        candidate = (new_year or 0, new_month or 0, new_day or 0)
        if candidate != (year or 0, month or 0, day or 0):
            return candidate


def _other(rng: random.Random, low: int, high: int, current: int) -> int:
    choices = [x for x in range(low, high + 1) if x != current]
    return rng.choice(choices)


def _other_year(rng: random.Random, year: int, *, digits: int = 4) -> int:
    if digits == 2:
        return _other(rng, 0, 99, year)
    upper = max(year, LATEST_YEAR)
    lower = 1500 if year >= 1500 else 1  # "1420年" (the Forbidden City) is a year too
    choices = [y for y in range(year - 30, year + 31) if y != year and lower <= y <= upper]
    return rng.choice(choices)


def _format_group(name: str, original: str, value: int | str, *, keep_width: bool = False) -> str:
    if isinstance(value, str):  # weekday names and Chinese weekday characters
        return match_case(original, value) if original.isascii() else value
    if name == "month" and not original.isdigit():
        if original.lower() in MONTHS:
            return match_case(original, MONTHS[value - 1])
        abbreviation = MONTH_ABBREVIATIONS[value - 1]
        if original.lower() == "sept" and value == 9:
            abbreviation = "sept"
        return match_case(original, abbreviation)
    # "2001-12-28" -> "2001-03-09"; "12/28" -> "3/9" (no padding was visible)
    width = len(original) if keep_width or original.startswith("0") or name in ("minute", "year") else 0
    return str(value).zfill(width)


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")

