"""JUDGE-BENCH (Bavaresco et al., 2024; github.com/dmg-illc/JUDGE-BENCH) unified files.

One JSON object per dataset::

    {"dataset": ..., "dataset_url": ..., "expert_annotator": "true", "original_prompt": true,
     "annotations": [{"metric", "category": graded|continuous|categorical, "prompt",
                      "worst", "best" (graded/continuous), "labels_list" (categorical)}, ...],
     "instances": [{"id": int|str, "instance": str | {field: text, ...},
                    "annotations": {metric: {"individual_human_scores": [...],
                                             "mean_human"?: x, "majority_human"?: y}}}]}

A string instance is the text that was rated (the candidate, with no context).
A dict instance is mapped by field name: ``context``/``user_prompt``/``query``/...
becomes the context, ``response``/``candidate``/... the candidate, ``reference``
the reference, ``fact``/``knowledge``/``persona`` the fact; fields with no place
in the model are kept in ``extra["instance"]``. Some files (e.g. ToxicChat) give
only the pooled label: that value becomes the single score and the metric is
listed in ``extra["aggregate_only"]``; when other records of the same metric do
have individual scores, ``meta["warnings"]`` names the records that fell back.

A dict instance with two responses (``output_a``/``output_b`` or
``response_a``/``response_b``, the prompt in ``input``, ``prompt``, ...) is a
pairwise item: ``Example.pair`` holds the two responses, the context the
prompt, and the metric (which response the humans preferred) is its rating.

An instance whose response field is null cannot be judged or scored: it is left
out, and ``meta["warnings"]`` names it. So is a pair whose two responses are the
same text (both counted in ``meta["excluded"]``). Value faults (a non-number or NaN score, one off
the declared scale or between its points) and a metric or ``annotations`` missing from an instance
are counted in ``meta["value_exclusions"]`` (core/loaders/exclusions.py); a dropped response key is
an error.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, Mapping

from ..errors import DataError
from ..model import Dataset, Example, Level, PairedResponses, Rating, Scale, ScaleKind, Turn
from ._common import alternating_turns, json_type, read_json_file, turns_from_text
from .exclusions import ANNOTATIONS_MISSING, METRIC_MISSING, NOT_A_NUMBER, Exclusions, checked_value
from .formats import DatasetFormat, register_format

CATEGORIES = {"graded": ScaleKind.ORDINAL, "continuous": ScaleKind.CONTINUOUS,
              "categorical": ScaleKind.CATEGORICAL}

# Instance fields by the role they play, most specific first.
CONTEXT_FIELDS = ("context", "dialogue", "dialog", "history", "conversation", "user_prompt", "query",
                  "question", "source", "input", "prompt", "instruction")
CANDIDATE_FIELDS = ("response", "candidate", "hypothesis", "output", "generation", "translation")
REFERENCE_FIELDS = ("reference", "references", "ground_truth")
FACT_FIELDS = ("fact", "knowledge", "persona")
SYSTEM_FIELDS = ("system", "model")
PAIR_FIELDS = (("output_a", "output_b"), ("response_a", "response_b"))
#: How many record ids a warning names before it says "and N more".
WARN_IDS = 5

INDIVIDUAL = "individual_human_scores"
MEAN_FIELDS = ("mean_human", "mean_human_score")
MAJORITY_FIELDS = ("majority_human", "majority_human_score")


def looks_like_judge_bench(data: Any) -> bool:
    return isinstance(data, dict) and "instances" in data


def read_judge_bench(path: str | Path, *, name: str | None = None) -> Dataset:
    path = Path(path)
    return judge_bench_dataset(read_json_file(path), path, name=name)


def judge_bench_dataset(data: Any, path: Path, *, name: str | None = None) -> Dataset:
    where = str(path)
    if not isinstance(data, dict):
        raise DataError(f"expected a JUDGE-BENCH object with 'annotations' and 'instances', found "
                        f"{json_type(data)}", path=where)
    for key in ("annotations", "instances"):
        if key not in data:
            raise DataError("missing required field", path=where, field=key)
        if not isinstance(data[key], list):
            raise DataError(f"expected an array, found {json_type(data[key])}", path=where, field=key)
    scales = _declared_scales(data["annotations"], where)
    response_field = _file_response_field(data["instances"])

    examples: list[Example] = []
    first_index: dict[str, int] = {}
    group_of_context: dict[tuple[str, ...], str] = {}
    null_responses: list[str] = []
    identical: list[str] = []
    exclusions = Exclusions()
    for index, instance in enumerate(data["instances"]):
        example = _example(instance, index, scales, where, group_of_context, response_field, exclusions)
        if example.id in first_index:
            raise DataError(f"duplicate id {example.id!r} (first in record {first_index[example.id] + 1})",
                            path=where, record=index + 1, record_id=instance["id"], field="id")
        first_index[example.id] = index
        if example.extra.get("null_response"):
            null_responses.append(example.id)
            continue
        if example.pair is not None and example.pair.response_a == example.pair.response_b:
            identical.append(example.id)  # nothing to prefer: reported, never guessed
            continue
        examples.append(example)

    meta: dict[str, Any] = {"format": "judge-bench"}
    meta.update({k: v for k, v in data.items() if k != "instances"})
    warnings = _fallback_warnings(examples, first_index)
    if null_responses:
        warnings.append(f"{len(null_responses)} instance(s) have a null response and were left out: "
                        f"{_ids_text(null_responses)}")
    excluded = {}
    if null_responses:
        excluded["null response"] = len(null_responses)
    if identical:
        warnings.append(f"{len(identical)} pair(s) have two identical replies and were left out: {_ids_text(identical)}")
        excluded["identical replies"] = len(identical)
    if excluded:
        meta["excluded"] = excluded
    if warnings:
        meta["warnings"] = warnings
    exclusions.record_into(meta)
    reversed_metrics = [d["metric"] for d in data["annotations"] if _is_reversed(d)]
    if reversed_metrics:
        meta["lower_is_better"] = reversed_metrics
    named = data.get("dataset")
    description = named if isinstance(named, str) else ""
    return Dataset(name=name or path.stem, examples=examples, source=where,
                   description=description, meta=meta)


def _fallback_warnings(examples: list[Example], first_index: dict[str, int]) -> list[str]:
    """A metric most records rate individually, where some record gives only the pooled label."""
    out = []
    metrics = {m for ex in examples for m in ex.ratings}
    for metric in sorted(metrics):
        rated = [ex for ex in examples if metric in ex.ratings]
        fallback = [ex.id for ex in rated if metric in ex.extra.get("aggregate_only", ())]
        if fallback and len(fallback) < len(rated):
            named = ", ".join(f"{i!r} (record {first_index[i] + 1})" for i in fallback[:WARN_IDS])
            more = f" and {len(fallback) - WARN_IDS} more" if len(fallback) > WARN_IDS else ""
            out.append(f"{metric!r}: {len(rated) - len(fallback)} records have individual_human_scores but "
                       f"{named}{more} do not; their published aggregate is used as a single rater's label")
    return out


def _ids_text(ids: list[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:WARN_IDS])
    return shown + (f" and {len(ids) - WARN_IDS} more" if len(ids) > WARN_IDS else "")


def _declared_scales(declarations: list[Any], where: str) -> dict[str, Scale]:
    scales: dict[str, Scale] = {}
    for i, decl in enumerate(declarations):
        field = f"annotations[{i}]"
        if not isinstance(decl, dict):
            raise DataError(f"expected an object, found {json_type(decl)}", path=where, field=field)
        metric = decl.get("metric")
        if not isinstance(metric, str) or not metric:
            raise DataError("missing metric name", path=where, field=f"{field}.metric")
        category = decl.get("category")
        kind = CATEGORIES.get(category) if isinstance(category, str) else None
        if kind is None:
            raise DataError(f"expected one of {', '.join(CATEGORIES)}, found {decl.get('category')!r}",
                            path=where, field=f"{field}.category")
        if kind is ScaleKind.CATEGORICAL:
            labels = decl.get("labels_list", [])
            if not isinstance(labels, list):
                raise DataError(f"expected an array of labels, found {json_type(labels)}", path=where,
                                field=f"{field}.labels_list")
            scale = Scale(kind, labels=tuple(str(label) for label in labels))
        else:
            low, high = _bounds(decl, where, field)
            try:
                scale = Scale(kind, low, high)
            except ValueError as exc:
                raise DataError(str(exc), path=where, field=field) from None
        scales[metric] = scale
    return scales


def _bounds(decl: Mapping[str, Any], where: str, field: str) -> tuple[float, float]:
    if "worst" in decl or "best" in decl:
        names = ("worst", "best")
        pair = [decl.get("worst"), decl.get("best")]
    elif "range" in decl:
        names = ("range[0]", "range[1]")
        pair = list(decl["range"]) if isinstance(decl["range"], (list, tuple)) else [None, None]
    else:
        names = ("min", "max")
        pair = [decl.get("min"), decl.get("max")]
    if len(pair) != 2:
        raise DataError("expected [low, high]", path=where, field=f"{field}.range")
    numbers = []
    for label, value in zip(names, pair):
        number = _number(value)
        if number is None:
            raise DataError(f"a graded or continuous metric needs numeric bounds (worst/best), found "
                            f"{json_type(value)}", path=where, field=f"{field}.{label}")
        numbers.append(number)
    return min(numbers), max(numbers)


def _is_reversed(decl: Any) -> bool:
    if not isinstance(decl, dict) or decl.get("category") == "categorical":
        return False
    worst, best = _number(decl.get("worst")), _number(decl.get("best"))
    return worst is not None and best is not None and worst > best


def _number(value: Any) -> int | float | None:
    """A number, or a string holding one (some converted files stringify scores)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        return int(number) if number.is_integer() and "." not in value else number
    return None


def _file_response_field(instances: list[Any]) -> str | None:
    """The response field the file's dict instances give (the first one found), or None when none
    does: in a file of replies, an instance without it is a reply whose key was dropped, not a
    whole dialogue."""
    for item in instances:
        instance = item.get("instance") if isinstance(item, dict) else None
        if isinstance(instance, dict):
            for name in CANDIDATE_FIELDS:
                if name in instance:
                    return name
    return None


def _example(item: Any, index: int, scales: dict[str, Scale], where: str,
             group_of_context: dict[tuple[str, ...], str], response_field: str | None,
             exclusions: Exclusions) -> Example:
    record_id = item.get("id") if isinstance(item, dict) else None
    if isinstance(record_id, (bool, list, dict)):
        record_id = None

    def fail(message: str, field: str | None = None) -> DataError:
        return DataError(message, path=where, record=index + 1, record_id=record_id, field=field)

    if not isinstance(item, dict):
        raise fail(f"expected an object, found {json_type(item)}")
    raw_id = item.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        raise fail("missing required field" if raw_id is None else
                   f"expected a string or an integer, found {json_type(raw_id)}", "id")
    if "instance" not in item:
        raise fail("missing required field", "instance")
    place = f"record {index + 1} (id {raw_id!r})"
    if "annotations" not in item:
        exclusions.add(ANNOTATIONS_MISSING, place)
    annotations = item.get("annotations", {})
    if not isinstance(annotations, dict):
        raise fail(f"expected an object, found {json_type(annotations)}", "annotations")
    for metric in scales:
        if annotations and metric not in annotations:
            exclusions.add(METRIC_MISSING, f"{place}, field 'annotations.{metric}'")

    example_id = str(raw_id)
    fields = _map_instance(item["instance"], fail, response_field)
    extra: dict[str, Any] = {}
    if fields.null_response:
        extra["null_response"] = True
    if fields.rest:
        extra["instance"] = fields.rest
    ratings, aggregates, aggregate_only = _ratings(annotations, scales, fail, place, exclusions)
    if aggregates:
        extra["human_aggregates"] = aggregates
    if aggregate_only:
        extra["aggregate_only"] = aggregate_only
    other = {k: v for k, v in item.items() if k not in ("id", "instance", "annotations")}
    if other:
        extra["record"] = other

    group_id = example_id
    if fields.context:
        key = tuple(f"{t.speaker}\x00{t.text}" for t in fields.context)
        group_id = group_of_context.setdefault(key, example_id)
    return Example(
        id=example_id,
        group_id=group_id,
        context=fields.context,
        candidate=fields.candidate,
        references=fields.references,
        fact=fields.fact,
        system=fields.system,
        ratings=ratings,
        level=Level.TURN if fields.candidate is not None or fields.pair is not None else Level.DIALOG,
        extra=extra,
        pair=fields.pair,
    )


@dataclasses.dataclass
class _MappedInstance:
    """An instance's fields sorted into the model's places; ``rest`` has no place."""

    context: tuple[Turn, ...] = ()
    candidate: str | None = None
    references: tuple[str, ...] = ()
    fact: str | None = None
    system: str | None = None
    pair: PairedResponses | None = None
    #: A response field is present but null: nothing to judge.
    null_response: bool = False
    rest: dict[str, Any] = dataclasses.field(default_factory=dict)


def _map_instance(instance: Any, fail: Any, response_field: str | None) -> _MappedInstance:
    if isinstance(instance, str):
        return _MappedInstance(candidate=instance)
    if not isinstance(instance, dict):
        raise fail(f"expected a string or an object, found {json_type(instance)}", "instance")
    _check_responses(instance, fail, response_field)
    rest = dict(instance)

    def take(names: tuple[str, ...], accept: Any) -> Any:
        for name in names:
            if name in rest:
                value = accept(rest[name])
                if value is not None:
                    del rest[name]
                return value  # None: a shape the model cannot hold, kept in rest
        return None

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    pair = None
    null_response = False
    for first, second in PAIR_FIELDS:
        if first in rest or second in rest:
            if rest.get(first) is None or rest.get(second) is None:
                null_response = True  # a pair with a null reply: nothing to prefer
            else:
                pair = PairedResponses(rest.pop(first), rest.pop(second))
            break
    null_response = null_response or (
        pair is None and not any(isinstance(rest.get(f), str) for f in CANDIDATE_FIELDS)
        and any(f in rest and rest[f] is None for f in CANDIDATE_FIELDS))
    return _MappedInstance(
        pair=pair,
        null_response=null_response,
        # A pair's prompt written as text is one turn, byte for byte: its lines are no dialogue turns.
        context=take(CONTEXT_FIELDS, _prompt_value if pair is not None else _context_value) or (),
        candidate=take(CANDIDATE_FIELDS, text),
        references=take(REFERENCE_FIELDS, _references_value) or (),
        fact=take(FACT_FIELDS, text),
        system=take(SYSTEM_FIELDS, text),
        rest=rest,
    )


def _check_responses(instance: dict[str, Any], fail: Any, response_field: str | None) -> None:
    """The instance's replies are there and are texts (null: left out, named): a dropped key or a
    number in their place is a structural fault, never a dialog-level item made in silence."""
    for first, second in PAIR_FIELDS:
        if first in instance or second in instance:
            for name in (first, second):
                if name not in instance:
                    raise fail("missing required field (a pairwise instance needs both replies)",
                               f"instance.{name}")
                if instance[name] is not None and not isinstance(instance[name], str):
                    raise fail(f"expected a string, found {json_type(instance[name])}", f"instance.{name}")
            return
    present = [name for name in CANDIDATE_FIELDS if name in instance]
    for name in present:
        if instance[name] is not None and not isinstance(instance[name], str):
            raise fail(f"expected a string, found {json_type(instance[name])}", f"instance.{name}")
    if not present and response_field is not None and any(name in instance for name in CONTEXT_FIELDS):
        raise fail(f"missing required field (the file's other instances give {response_field!r}; an "
                   "instance without one would be a whole dialogue)", f"instance.{response_field}")


def _prompt_value(value: Any) -> tuple[Turn, ...] | None:
    return (Turn("", value),) if isinstance(value, str) else _context_value(value)


def _context_value(value: Any) -> tuple[Turn, ...] | None:
    if isinstance(value, str):
        return turns_from_text(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return alternating_turns([v.strip() for v in value if v.strip()])
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        turns = []
        for turn in value:
            speaker = turn.get("speaker", turn.get("role", ""))
            text = turn.get("text", turn.get("content"))
            if not isinstance(speaker, str) or not isinstance(text, str):
                return None
            turns.append(Turn(speaker, text))
        return tuple(turns)
    return None


def _references_value(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _ratings(annotations: dict[str, Any], scales: dict[str, Scale], fail: Any, place: str,
             exclusions: Exclusions) -> tuple[dict[str, Rating], dict[str, Any], list[str]]:
    ratings: dict[str, Rating] = {}
    aggregates: dict[str, Any] = {}
    aggregate_only: list[str] = []
    for metric, value in annotations.items():
        field = f"annotations.{metric}"
        scale = scales.get(metric)
        if scale is None:
            raise fail(f"metric {metric!r} is not declared in the top-level annotations "
                       f"(declared: {', '.join(scales) or 'none'})", field)
        if not isinstance(value, dict):
            raise fail(f"expected an object, found {json_type(value)}", field)
        # A missing key and an empty list both mean: no individual scores in this record.
        individual = value.get(INDIVIDUAL, [])
        if not isinstance(individual, list):
            raise fail(f"expected an array, found {json_type(individual)}", f"{field}.{INDIVIDUAL}")
        pooled = {k: v for k, v in value.items() if k != INDIVIDUAL}
        if pooled:
            aggregates[metric] = pooled
        if individual:
            values, subfield = individual, INDIVIDUAL
        else:
            fallback = _aggregate_field(pooled, scale)
            if fallback is None:  # nothing rated this metric for this instance
                exclusions.add(METRIC_MISSING, f"{place}, field '{field}'")
                continue
            values, subfield = [pooled[fallback]], fallback
            aggregate_only.append(metric)
        scores = tuple(_score(v, scale, exclusions, f"{place}, field '{field}.{subfield}"
                              + (f"[{k}]'" if subfield == INDIVIDUAL else "'"))
                       for k, v in enumerate(values))
        ratings[metric] = Rating(scores=scores, scale=scale)
    return ratings, aggregates, aggregate_only


def _aggregate_field(pooled: Mapping[str, Any], scale: Scale) -> str | None:
    order = MAJORITY_FIELDS + MEAN_FIELDS if not scale.is_numeric else MEAN_FIELDS + MAJORITY_FIELDS
    return next((name for name in order if pooled.get(name) is not None), None)


def _score(value: Any, scale: Scale, exclusions: Exclusions, place: str) -> Any:
    """One annotator's value; a value fault is left out (None) and counted with its place."""
    if scale.is_numeric and isinstance(value, str):
        number = _number(value)
        if number is None:
            exclusions.add(NOT_A_NUMBER, f"{place}: {value!r}")
            return None
        value = number
    return checked_value(value, scale, exclusions, place)


register_format(DatasetFormat(
    name="judge-bench", priority=30, is_json=True, layout="a JUDGE-BENCH object (with 'instances')",
    recognise=lambda file: looks_like_judge_bench(file.json),
    read=lambda file: judge_bench_dataset(file.json, file.path, name=file.name)))
