"""core.api.align on the bundled sample with a fake judge: the corrections' sources and refusals, and the
corrections kept apart and stored with the template they produced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from align_fixtures import judge_the_sample

from dialjudge.core.api import save_review
from dialjudge.core.api.align import AlignRequest, align, open_align
from dialjudge.core.api.session import Session
from dialjudge.core.config import Config, JudgeConfig
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends.fake import FakeBackend


@pytest.fixture
def judged(tmp_path: Path) -> tuple[Session, int, list[str]]:
    """A session with a fake judge, its run on the sample, and the items of the sample's first 3 contexts."""
    session = Session(Config(judges={"fake": JudgeConfig("fake", "fake")}), store_path=tmp_path / "runs.sqlite3",
                      backend_factory=lambda config: FakeBackend(name=config.name))
    return (session, *judge_the_sample(session))


def test_reviews_become_corrections_and_are_stored_with_the_template_they_produced(
        judged: tuple[Session, int, list[str]], tmp_path: Path) -> None:
    session, run_id, items = judged
    for n, item in enumerate(items):
        save_review(session, run_id, item, "judge-wrong", own_rating=float(1 + n % 5), note="Be strict." if n else "")
    save_review(session, run_id, items[0], "fine")  # its own rating withdrawn: no longer a correction
    report = align(session, AlignRequest(run_id, n_boot=0, save_as="aligned-sample", record_folder=tmp_path / "al"))
    assert report.n_labelled == len(items) - 1 and report.corrections.notes == ("Be strict.",)
    digest = report.corrections.digest
    record = json.loads(Path(report.record_path or "").read_text(encoding="utf-8"))
    assert record["corrections"]["digest"] == digest and len(record["corrections"]["labels"]) == len(items) - 1
    assert f"corrections {digest}" in record["winner_template"]
    saved = Path(report.template_path or "").read_text(encoding="utf-8")
    assert f"corrections digest: {digest}" in saved and 'name = "aligned-sample"' in saved
    # Every run the search made carries the digest in its template text (and so in its fingerprint).
    with session.store() as store:
        texts = [store.runs.get_run(i).run_config.template_text for ids in report.tuning.run_ids.values() for i in ids]
    assert texts and all(f"corrections {digest}" in t for t in texts)


def test_too_few_corrections_labels_off_the_scale_and_no_reviews_are_refused(
        judged: tuple[Session, int, list[str]]) -> None:
    session, run_id, items = judged
    with pytest.raises(ConfigError, match="no reviews with your own rating"):
        align(session, AlignRequest(run_id))
    with pytest.raises(ConfigError, match="at least 10"):
        align(session, AlignRequest(run_id, labels={i: 3.0 for i in items[:9]}, labels_source="labels.csv"))
    with pytest.raises(ConfigError, match="labels.csv: item .*'label': 7 is outside the quality's scale 1-5"):
        align(session, AlignRequest(run_id, labels={items[0]: 7.0}, labels_source="labels.csv"))


def test_an_alignment_told_its_judges_stay_open_leaves_them_open(judged: tuple[Session, int, list[str]],
                                                                 tmp_path: Path) -> None:
    """The judge process's alignment (close_backends=False) judges with judges that stay open for its next job."""
    session, run_id, items = judged
    made: list[FakeBackend] = []

    def make(config: JudgeConfig) -> FakeBackend:
        made.append(FakeBackend(name=config.name))
        return made[-1]

    request = AlignRequest(run_id, labels={i: float(1 + n % 5) for n, i in enumerate(items)}, n_boot=0,
                           record_folder=tmp_path / "al")
    open_align(session.with_backend_factory(make), request, close_backends=False).run_to_end()
    assert made and not any(backend.closed for backend in made)
