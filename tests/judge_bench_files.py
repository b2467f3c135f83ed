"""Small JUDGE-BENCH-format files for tests, written to a temporary folder."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def write_set(folder: Path, name: str, annotations: list[dict[str, Any]], instances: list[dict[str, Any]]) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"dataset": name, "dataset_url": "https://example.invalid", "expert_annotator": "false",
                                "original_prompt": True, "annotations": annotations, "instances": instances}),
                    encoding="utf-8")
    return path


def labelled(item_id: str, context: str, response: str, metric: str, votes: Sequence[Any] | None,
             **pooled: Any) -> dict[str, Any]:
    """One instance with a dialogue context, a response and the votes of ``metric``
    (``votes=None`` leaves the individual_human_scores key out)."""
    scores: dict[str, Any] = dict(pooled)
    if votes is not None:
        scores["individual_human_scores"] = list(votes)
    return {"id": item_id, "instance": {"context": context, "response": response},
            "annotations": {metric: scores}}


SAFETY = [{"metric": "safety", "category": "categorical", "prompt": "Is the response safe? {{ instance }}",
           "labels_list": ["No", "Yes"]}]

#: Six items, three raters, a tie (item s3, whose published majority is "Yes").
SAFETY_VOTES = {
    "s1": ["Yes", "Yes", "No"],
    "s2": ["No", "No", "No"],
    "s3": ["Yes", "No", None],
    "s4": ["Yes", "Yes", "Yes"],
    "s5": ["No", "No", "Yes"],
    "s6": ["No", "Yes", "Yes"],
}


def safety_set(folder: Path) -> Path:
    instances = []
    for k, (item, votes) in enumerate(SAFETY_VOTES.items()):
        pooled = {"majority_human": "Yes"} if item == "s3" else {}
        instances.append(labelled(item, f"A: question {k} ?", f"answer {k} .", "safety", votes, **pooled))
    return write_set(folder, "safety3", SAFETY, instances)


PROTOCOL_METRICS = [
    {"metric": "coherence", "category": "graded", "worst": 1, "best": 5},
    {"metric": "fluency", "category": "graded", "worst": 1, "best": 5},
    {"metric": "safety", "category": "categorical", "labels_list": ["No", "Yes"]},
]
#: The JUDGE-BENCH protocol tests: two graded metrics and a categorical one.
#: item: (coherence votes, fluency votes, safety votes)
PROTOCOL_VOTES = {
    "a": ([1, 1], [1, 3], ["Yes", "Yes", "No"]),
    "b": ([2, 2], [4, 4], ["Yes", "Yes", "Yes"]),
    "c": ([3, 3], [5, 5], ["No", "No", "Yes"]),
    "d": ([4, 4], [1, 1], ["No", "No", "No"]),
    "e": ([5, 5], [3, 3], ["Yes", "No", "Yes"]),
    "f": (None, None, ["No", "No", "Yes"]),
}


def small_protocol_set(folder: Path) -> Path:
    instances = []
    for item, (coherence, fluency, safety) in PROTOCOL_VOTES.items():
        annotations = {"safety": {"individual_human_scores": safety}}
        if coherence is not None:
            annotations["coherence"] = {"individual_human_scores": coherence}
            annotations["fluency"] = {"individual_human_scores": fluency}
        instances.append({"id": item, "instance": {"context": f"A: hello {item}", "response": f"reply {item}"},
                          "annotations": annotations})
    return write_set(folder, "small", PROTOCOL_METRICS, instances)
