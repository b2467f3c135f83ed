"""The use cases that read or write the run store, as functions of a :class:`Session`.

Each opens its own connection to the store for as long as it runs (on the calling
thread) and closes it; the functions they wrap take that open store and stay where
they are (``stored.py``, ``comparison.py``, ...), so use cases can call each other on
one connection.
"""

from __future__ import annotations

from ..judges.run.config import RunConfig
from ..judges.run.stopping import StopRule
from ..judges.store.run_store import Review, RunRecord
from ..judges.types import Judgment
from ..model import Aggregation, Dataset
from . import comparison as _comparison
from . import html_report as _html_report
from . import imports as _imports
from . import interrupted as _interrupted
from . import labels_estimates as _labels_estimates
from . import leaderboards as _leaderboard
from . import preferences as _preferences
from . import probability_lines as _probability_lines
from . import protocol_judge_bench as _protocol_judge_bench
from . import reports as _reports
from . import review as _review
from . import run_list as _run_list
from . import runs as _runs
from . import stored as _stored
from .preferences import PreferenceReport, PreferenceRequest, VersusRow
from .requests import StopRequest
from .runs import RunPlan
from .session import Session, uses_store

# -- stored runs ------------------------------------------------------------------------------
list_runs = uses_store(_stored.list_runs)
run_list = uses_store(_run_list.run_list)
run_details = uses_store(_stored.run_details)
usage_of_run = uses_store(_stored.usage_of_run)
judge_columns = uses_store(_stored.judge_columns)
rescore = uses_store(_stored.rescore)
# Every export format, the HTML report among them (core/api/html_report.py).
export = uses_store(_html_report.export_files)
judgment_rows = uses_store(_stored.judgment_rows)
delete = uses_store(_stored.delete)
judgment_page = uses_store(_stored.judgment_page)
judgments_of_items = uses_store(_stored.judgments_of_items)
score_columns = uses_store(_stored.score_columns)
write_judgments_file = uses_store(_stored.write_judgments_file)
compare = uses_store(_comparison.compare)
mass_lines = uses_store(_probability_lines.mass_lines)
import_scores = uses_store(_imports.import_scores)
find_interrupted_run = uses_store(_interrupted.find_interrupted_run)
leaderboard = uses_store(_leaderboard.leaderboard)

# -- runs -------------------------------------------------------------------------------------
find_resumable = uses_store(_runs.find_resumable)
find_finished = uses_store(_runs.find_finished)
prepare_retry = uses_store(_runs.prepare_retry)
run_reports = uses_store(_reports.run_reports)
review_data = uses_store(_review.review_data)

# -- what a run's answers say -----------------------------------------------------------------
alt_test_for_run = uses_store(_labels_estimates.alt_test_for_run)
estimate_for_run = uses_store(_labels_estimates.estimate_for_run)
label_next = uses_store(_labels_estimates.label_next)
stored_preference_report = uses_store(_preferences.stored_preference_report)
judge_bench_table = uses_store(_protocol_judge_bench.judge_bench_table)


def run_record(session: Session, run_id: int) -> RunRecord:
    """Stored run ``run_id``: its settings (``.run_config``), status and provenance."""
    with session.store() as store:
        return store.runs.get_run(run_id)


def run_config_of(session: Session, run_id: int) -> RunConfig:
    """The configuration stored run ``run_id`` was judged with."""
    return run_record(session, run_id).run_config


def run_judgments(session: Session, run_id: int) -> dict[str, dict[str, Judgment]]:
    """Every judgment of stored run ``run_id``: item id -> judge -> judgment (first repeat)."""
    with session.store() as store:
        return store.judgments.load_judgments(run_id)


def save_review(session: Session, run_id: int, item_id: str, verdict: str, *, note: str = "",
                own_rating: float | None = None) -> Review:
    """Store a reviewer's verdict (with a note and their own rating) on one item of run ``run_id``."""
    with session.store() as store:
        return store.reviews.set_review(run_id, item_id, verdict, note=note, own_rating=own_rating)


def versus(session: Session, report: PreferenceReport, other_run: int, dataset: Dataset,
           request: PreferenceRequest) -> list[VersusRow]:
    """This report's judges against run ``other_run``'s on the same pairs (ties counted)."""
    with session.store() as store:
        return _preferences.versus(report, store, other_run, dataset, request)


def stop_rule_for(session: Session, request: StopRequest, plan: RunPlan, dataset: Dataset, *,
                  aggregation: Aggregation = Aggregation.MEAN) -> StopRule | None:
    """The stop rule ``request`` asks for on ``plan``'s items, or None when it asks for none."""
    with session.store() as store:
        return _runs.stop_rule_for(request, plan, dataset, store, aggregation=aggregation)


__all__ = [
    "alt_test_for_run", "compare", "delete", "estimate_for_run", "export", "find_finished", "find_interrupted_run",
    "find_resumable", "import_scores", "judge_bench_table", "judge_columns", "judgment_page", "judgment_rows",
    "judgments_of_items", "label_next", "leaderboard", "list_runs", "mass_lines", "prepare_retry", "rescore", "review_data",
    "run_config_of", "run_details", "run_list", "run_judgments", "run_record", "run_reports", "save_review", "score_columns",
    "stop_rule_for", "stored_preference_report", "usage_of_run", "versus", "write_judgments_file",
]
