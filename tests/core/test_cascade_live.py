"""The live cascade asks the strong judge only where the cheap judge is below its threshold: its run holds
exactly the escalated calibration and checked items, and its report is the stored-run cascade of the two runs
(and decides as a cascade with a strong run on every item would)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dialjudge.core.api.cascade import CascadeRequest, cascade_report
from dialjudge.core.api.cascade_live import LiveCascadeRequest, live_cascade, live_lines
from dialjudge.core.api.judging import judge
from dialjudge.core.api.jury import load_panel
from dialjudge.core.api.requests import RunRequest
from dialjudge.core.api.runs import plan_run
from dialjudge.core.api.session import Session
from dialjudge.core.config import Config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError
from dialjudge.core.judge_config import JudgeConfig
from dialjudge.core.model import Dataset

TARGET, DELTA = 0.8, 0.2


def simulated(name: str, agreement: float) -> JudgeConfig:
    return JudgeConfig(name, "fake", model=name,
                       extra={"agreement": agreement, "dataset": "sample", "quality": "coherence"})


def judged(session: Session, dataset: Dataset, judge_name: str) -> int:
    plan = plan_run(RunRequest("likert-1to5", judges=(judge_name,), mode="logprob", aspect="coherence"), dataset,
                    session.config)
    return judge(session, [plan], dataset).run_ids[-1]


def point(value: float) -> int:
    return 1 + math.floor(4 * value + 0.5)


@pytest.fixture
def setting(tmp_path: Path) -> tuple[Session, Dataset, int, int, Path]:
    """A weak and a strong simulated judge; the weak one's run, the strong one's on every item (the reference),
    and labels on the first 6 contexts: the weak judge's point where it is confident (so that its threshold
    exists and it decides items), the strong judge's elsewhere (so that escalating helps)."""
    session = Session(Config(judges={"weak": simulated("weak", 0.5), "strong": simulated("strong", 0.9)}),
                      store_path=tmp_path / "runs.sqlite3")
    dataset = open_dataset("sample", remember=False)
    weak, strong_everywhere = judged(session, dataset, "weak"), judged(session, dataset, "strong")
    with session.store() as store:
        strong_member, weak_member = load_panel(store, [str(strong_everywhere), str(weak)]).members
    contexts = sorted({ex.group_id for ex in dataset.examples})[:6]
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,label\n" + "".join(
        f"{ex.id},{point((weak_member if weak_member.confidence[ex.id] >= 0.7 else strong_member).scores[ex.id])}\n"
        for ex in dataset.examples if ex.group_id in contexts), encoding="utf-8")
    return session, dataset, weak, strong_everywhere, labels


def test_the_strong_judge_is_asked_only_about_the_escalated_items_and_the_report_is_the_stored_cascades(
        setting: tuple[Session, Dataset, int, int, Path]) -> None:
    session, dataset, weak, strong_everywhere, labels = setting
    live = live_cascade(session, LiveCascadeRequest(str(weak), "strong", labels_file=labels, target=TARGET,
                                                    delta=DELTA))
    with session.store() as store:
        reference = cascade_report(store, CascadeRequest(str(weak), str(strong_everywhere), labels_file=labels,
                                                         target=TARGET, delta=DELTA))
        on_the_two_runs = cascade_report(store, CascadeRequest(str(weak), str(live.strong_run), labels_file=labels,
                                                               target=TARGET, delta=DELTA))
        strong_run = store.runs.get_run(live.strong_run)
        asked = set(store.judgments.load_judgments(live.strong_run)["strong"])
        weak_member = load_panel(store, [str(weak)], minimum=1).members[0]
    # Independently: the labelled items and the items of the contexts no label touched, where the weak judge's
    # confidence is below the threshold the cascade on the full strong run chose.
    labelled = {line.split(",")[0] for line in labels.read_text(encoding="utf-8").splitlines()[1:]}
    touched = {ex.group_id for ex in dataset.examples if ex.id in labelled}
    threshold = reference.thresholds.cheap.threshold
    assert threshold is not None
    expected = {ex.id for ex in dataset.examples if (ex.id in labelled or ex.group_id not in touched)
                and weak_member.confidence[ex.id] < threshold}
    assert 0 < len(expected) < len(dataset.examples)
    assert asked == expected == set(strong_run.run_config.item_ids)
    assert strong_run.run_config.template == "likert-1to5" and strong_run.run_config.mode.value == "logprob"
    assert live.asked == len(expected) and live.n_items == len(dataset.examples)
    assert live.saved == len(dataset.examples) - len(expected)
    assert live.asked_calibration == len(expected & labelled)
    # The report is the stored-run cascade on the same two runs...
    assert live.cascade == on_the_two_runs
    # ... and it decides as the cascade with the strong judge on every item does.
    for field in ("thresholds", "decided_by", "agreement", "escalated", "cheap_alone", "n_checked"):
        assert getattr(live.cascade, field) == getattr(reference, field), field
    assert live.cascade.decided_by["cheap"] > 0 and live.cascade.decided_by["strong"] > 0
    # The strong judge alone: on the checked items it was asked about, not on those it never saw.
    assert live.cascade.n_strong_judged == live.asked_checked < reference.n_strong_judged
    assert f"{live.saved} strong-judge calls saved" in live_lines(live)[0]


def test_asking_the_same_cascade_again_reuses_the_strong_judges_run(
        setting: tuple[Session, Dataset, int, int, Path]) -> None:
    session, _, weak, _, labels = setting
    request = LiveCascadeRequest(str(weak), "strong", labels_file=labels, target=TARGET, delta=DELTA)
    first = live_cascade(session, request)
    with session.store() as store:
        runs = len(store.runs.list_runs())
    again = live_cascade(session, request)
    with session.store() as store:
        assert len(store.runs.list_runs()) == runs
    assert again == first


def test_bad_live_cascade_settings_are_messages(setting: tuple[Session, Dataset, int, int, Path]) -> None:
    session, _, weak, _, labels = setting
    with pytest.raises(ConfigError, match="strong judge"):
        LiveCascadeRequest(str(weak), "")
    with pytest.raises(ConfigError, match="--target"):
        LiveCascadeRequest(str(weak), "strong", target=1.5)
    with pytest.raises(ConfigError, match="no judge 'nobody'|nobody"):
        live_cascade(session, LiveCascadeRequest(str(weak), "nobody", labels_file=labels))
