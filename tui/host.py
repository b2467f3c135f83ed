"""What screens and widgets may use of the app: its services, its controllers and the workspace.

Screens reach the app through this protocol instead of importing the App
class, so the App can import its screens (through :mod:`.navigation`)
without an import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from .controllers.adversarial import AdversarialController
    from .controllers.datasets import DatasetController
    from .controllers.decisions import DecisionController
    from .controllers.history import StoredRunsController
    from .controllers.lab import LabController
    from .controllers.label_estimates import LabelEstimatesController
    from .controllers.labels import LabelReportController
    from .controllers.pairwise import PairwiseReportController
    from .controllers.review import ReviewController
    from .controllers.runs import RunController
    from .controllers.tune import TuneController
    from .scores_view_model import Workspace
    from .services import Services


@runtime_checkable
class DialjudgeHost(Protocol):
    """The dialjudge app as its screens see it."""

    services: Services
    datasets: DatasetController
    runs: RunController
    lab: LabController
    review: ReviewController
    stored_runs: StoredRunsController
    adversarial: AdversarialController
    labels: LabelReportController
    label_estimates: LabelEstimatesController
    decisions: DecisionController
    pairwise: PairwiseReportController
    tune: TuneController

    @property
    def workspace(self) -> Workspace:
        """The open dataset with every evaluator's scores."""
        ...


#: App classes already found to be hosts: a protocol check costs tens of microseconds, and screens
#: ask for their app at every redraw.
_HOST_CLASSES: set[type] = set()


def dialjudge_app(node: DOMNode) -> DialjudgeHost:
    """The app ``node`` belongs to, typed (screens reach the controllers through it)."""
    app = node.app
    if type(app) not in _HOST_CLASSES:
        if not isinstance(app, DialjudgeHost):
            raise TypeError(f"{type(node).__name__} runs outside the dialjudge app")
        _HOST_CLASSES.add(type(app))
    return cast(DialjudgeHost, app)
