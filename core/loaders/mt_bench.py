"""MT-Bench human judgments (Zheng et al., 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot
Arena"; FastChat's ``human_judgments``), one JSON object per line::

    {"question_id": 81, "model_a": "alpaca-13b", "model_b": "gpt-3.5-turbo",
     "winner": "model_a" | "model_b" | "tie" | "tie (bothbad)", "judge": "expert_3", "turn": 1,
     "conversation_a": [{"role": "user", "content": ...}, {"role": "assistant", "content": ...}, ...],
     "conversation_b": [...]}

Each line is one expert's vote. The lines of one question, turn and pair of models (in either order) are
one pair with every vote kept (see :mod:`.preference`). Turn 1: the prompt is the first question and the
replies the two first answers. Turn 2: the prompt is both questions and each reply is that model's two
answers ("First answer: ...", "Second answer: ..."), since the follow-up answers build on the model's own
first answer. Pairs of one question share a group (their ``question_id``), so intervals resample questions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..gc_pause import gc_paused
from ..model import Dataset, Turn
from ._common import json_lines, json_type, read_text_file
from .exclusions import EMPTY_VERDICT, Exclusions
from .formats import DatasetFile, DatasetFormat, register_format
from .preference import PairRecord, merge_pairs, vote_of

REQUIRED = ("question_id", "model_a", "model_b", "winner", "conversation_a", "conversation_b")
KNOWN = (*REQUIRED, "judge", "turn")


def looks_like_mt_bench(first_record: Any) -> bool:
    return isinstance(first_record, dict) and all(k in first_record for k in ("question_id", "model_a", "model_b",
                                                                                "winner"))


def read_mt_bench(path: str | Path, *, name: str | None = None) -> Dataset:
    path = Path(path)
    return mt_bench_dataset(read_text_file(path), path, name=name)


def mt_bench_dataset(text: str, path: Path, *, name: str | None = None) -> Dataset:
    where = str(path)
    exclusions = Exclusions()
    with gc_paused():
        records = [_record(obj, line, where) for line, obj in json_lines(text, where)
                   if not _empty_winner(obj, line, exclusions)]
        if not records:
            raise DataError("no judgments: the file has no records" if not exclusions.counts else
                            "no judgments: every record's winner is empty", path=where)
        examples, meta = merge_pairs(records, where, id_field="question_id")
    meta = {"format": "mt-bench", **meta}
    exclusions.record_into(meta)
    return Dataset(name=name or path.stem, examples=examples, source=where,
                   description="MT-Bench human judgments (pairwise votes of experts)", meta=meta)


def _empty_winner(obj: Any, line: int, exclusions: Exclusions) -> bool:
    """A judgment whose winner is empty (or null) is no vote: left out and counted (the data contract)."""
    if isinstance(obj, dict) and "winner" in obj and (obj["winner"] is None or obj["winner"] == ""):
        exclusions.add(EMPTY_VERDICT, f"line {line}, field 'winner'")
        return True
    return False


def _record(obj: Any, line: int, where: str) -> PairRecord:
    def fail(message: str, field: str | None = None) -> DataError:
        return DataError(message, path=where, line=line, field=field)

    if not isinstance(obj, dict):
        raise fail(f"expected an object, found {json_type(obj)}")
    for key in REQUIRED:
        if key not in obj:
            raise fail("missing required field", key)
    question = obj["question_id"]
    if isinstance(question, bool) or not isinstance(question, (int, str)) or question == "":
        raise fail(f"expected a number or a string, found {json_type(question)}", "question_id")
    models = []
    for key in ("model_a", "model_b"):
        if not isinstance(obj[key], str) or not obj[key]:
            raise fail(f"expected a model name, found {json_type(obj[key])}", key)
        models.append(obj[key])
    model_a, model_b = models
    turn = obj.get("turn", 1)
    if turn not in (1, 2) or isinstance(turn, bool):
        raise fail(f"expected 1 or 2, found {turn!r}", "turn")
    judge = obj.get("judge")
    if judge is not None and not isinstance(judge, str):
        raise fail(f"expected a string, found {json_type(judge)}", "judge")
    questions_a, answers_a = _conversation(obj["conversation_a"], turn, fail, "conversation_a")
    questions_b, answers_b = _conversation(obj["conversation_b"], turn, fail, "conversation_b")
    if questions_a != questions_b:
        raise fail("the two conversations ask different questions", "conversation_b")
    vote = vote_of(obj["winner"], where, line, "winner", model_a=model_a, model_b=model_b)
    low, high = sorted((model_a, model_b))
    prompt = tuple(Turn("user", q) for q in questions_a)
    extra = {k: v for k, v in obj.items() if k not in KNOWN}
    return PairRecord(
        line=line, pair_id=f"q{question}-t{turn}-{low}-vs-{high}", prompt=prompt,
        response_a=_reply(answers_a), response_b=_reply(answers_b), vote=vote, as_written=str(obj["winner"]),
        annotator=judge, prompt_id=f"q{question}", model_a=model_a, model_b=model_b,
        extra={"turn": turn, **({"record": extra} if extra else {})})


def _conversation(value: Any, turn: int, fail: Any, field: str) -> tuple[list[str], list[str]]:
    """The user's questions and the assistant's answers up to ``turn``."""
    if not isinstance(value, list):
        raise fail(f"expected an array of messages, found {json_type(value)}", field)
    questions: list[str] = []
    answers: list[str] = []
    for k, message in enumerate(value):
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise fail("expected a message with a 'role' and a text 'content'", f"{field}[{k}]")
        role = message.get("role")
        if role == "user":
            questions.append(message["content"])
        elif role == "assistant":
            answers.append(message["content"])
        else:
            raise fail(f"expected role 'user' or 'assistant', found {role!r}", f"{field}[{k}].role")
    if len(questions) < turn or len(answers) < turn:
        raise fail(f"turn {turn} needs {turn} question(s) and answer(s); found {len(questions)} and "
                   f"{len(answers)}", field)
    return questions[:turn], answers[:turn]


def _reply(answers: list[str]) -> str:
    if len(answers) == 1:
        return answers[0]
    return f"First answer: {answers[0]}\n\nSecond answer: {answers[1]}"


def _recognise(file: DatasetFile) -> bool:
    try:
        return looks_like_mt_bench(json.loads(file.head.partition("\n")[0] or "null"))
    except (json.JSONDecodeError, RecursionError):
        return False


register_format(DatasetFormat(
    name="mt-bench", priority=60, shares_suffixes=(".jsonl",),
    layout="MT-Bench human judgments (.jsonl: question_id, model_a, model_b, winner, conversation_a/_b)",
    recognise=_recognise, read=lambda file: mt_bench_dataset(file.text, file.path, name=file.name)))

__all__ = ["looks_like_mt_bench", "read_mt_bench", "mt_bench_dataset"]
