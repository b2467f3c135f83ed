"""What `datasets show` reports about a dataset: counts, splits, systems and each quality's scale."""

from __future__ import annotations

from pathlib import Path

from dialjudge.core.config import Config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.describe import QualitySummary, describe
from dialjudge.core.model import BINARY_01, Dataset, Example, Level, Perturbation, Rating, Scale, ScaleKind, Turn
from shared_data import require_file


def test_sample_dataset_summary() -> None:
    summary = describe(open_dataset("sample", Config()))
    assert (summary.name, summary.examples, summary.turn_level, summary.dialog_level) == ("sample", 60, 60, 0)
    assert summary.groups == 12
    assert summary.references_as_candidates == 12
    assert summary.with_references == 60 and summary.with_fact == 50
    assert (summary.open_ended, summary.closed_ended, summary.untagged) == (30, 30, 0)
    assert summary.adversarial == 12
    assert summary.adversarial_kinds == {"date": 2, "place": 3, "number": 5, "negation": 2}
    assert list(summary.systems.items())[:2] == [("reference", 12), ("adversarial", 12)]
    assert list(summary.systems.values()) == sorted(summary.systems.values(), reverse=True)  # most first
    assert sum(summary.systems.values()) == 60
    assert summary.languages == {"en": 60}
    assert summary.illustrative
    assert [q.name for q in summary.qualities] == ["coherence", "relevance", "consistency", "fluency", "overall"]
    assert all((q.scale_text, q.rated_items, q.annotators, q.missing_values) == ("ordinal 1–5", 60, 3, 0)
               for q in summary.qualities)


def test_kpi_sample_is_binary_and_untagged() -> None:
    summary = describe(open_dataset("incar-kpi", Config()))
    assert summary.examples == 45 and summary.untagged == 45 and summary.references_as_candidates == 0
    harmful = next(q for q in summary.qualities if q.name == "harmful-input")
    assert (harmful.scale_text, harmful.rated_items, harmful.annotators) == ("binary 0–1", 15, 5)


def test_missing_values_annotators_and_unlabelled_items_are_counted() -> None:
    ordinal = Scale(ScaleKind.ORDINAL, 1, 5)
    examples = [
        Example("a", "g1", (Turn("A", "hi"),), "one", system="bot", tags=frozenset({"open"}), language="en",
                ratings={"Overall": Rating((1, None, 3), ordinal), "Safe": Rating((1, 1), BINARY_01)}),
        Example("b", "g1", (Turn("A", "hi"),), "two", references=("ref",), fact="a fact",
                adversarial=Perturbation("negation", "a"),
                ratings={"Overall": Rating((None, None, None, None), ordinal)}),
        Example("c", "g2", (Turn("A", "hi"), Turn("B", "yo")), None, level=Level.DIALOG,
                ratings={"Overall": Rating((2, 4), ordinal)}),
    ]
    summary = describe(Dataset("toy", examples))
    assert (summary.examples, summary.turn_level, summary.dialog_level, summary.groups) == (3, 2, 1, 2)
    assert (summary.with_references, summary.with_fact, summary.adversarial) == (1, 1, 1)
    assert summary.adversarial_kinds == {"negation": 1}
    assert (summary.open_ended, summary.closed_ended, summary.untagged) == (1, 0, 2)
    assert summary.systems == {"(none)": 2, "bot": 1}
    assert summary.languages == {"en": 1, "(unspecified)": 2}
    assert not summary.illustrative

    rows = {(q.name, q.level): q for q in summary.qualities}
    assert set(rows) == {("Overall", Level.TURN), ("Safe", Level.TURN), ("Overall", Level.DIALOG)}
    turn_overall = rows[("Overall", Level.TURN)]
    assert turn_overall.rated_items == 1  # item b has no value at all
    assert turn_overall.annotators == 4
    assert turn_overall.missing_values == 5
    assert rows[("Overall", Level.DIALOG)].rated_items == 1


def test_scale_text() -> None:
    def text(scale: Scale) -> str:
        return QualitySummary("q", scale, Level.TURN, 0, 0, 0).scale_text

    assert text(Scale(ScaleKind.ORDINAL, 1, 5)) == "ordinal 1–5"
    assert text(Scale(ScaleKind.CONTINUOUS, 0, 0.5)) == "continuous 0–0.5"
    assert text(Scale(ScaleKind.CATEGORICAL, labels=("bad", "ok", "good"))) == "categorical: bad, ok, good"


def test_fed_summary_has_both_levels(shared_data: Path) -> None:
    require_file(shared_data, "fed/fed_data.json")
    summary = describe(open_dataset("fed"))
    assert (summary.examples, summary.turn_level, summary.dialog_level) == (500, 375, 125)
    rows = {(q.name, q.level.value): q for q in summary.qualities}
    assert len([k for k in rows if k[1] == "turn"]) == 9
    assert len([k for k in rows if k[1] == "dialog"]) == 11
    assert rows[("Overall", "turn")].scale_text == "ordinal 0–4"
    assert rows[("Understandable", "turn")].scale_text == "binary 0–1"
    assert rows[("Overall", "dialog")].annotators == 5
    # FED's "N/A" answers are missing values, never imputed.
    assert rows[("Error recovery", "dialog")].missing_values > 0
