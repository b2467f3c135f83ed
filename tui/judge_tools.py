"""The background work of the Run, Prompt lab, Review and Runs screens, as one mixin of the App.

Every worker belongs to the app, so a failure reaches the app's one handler
(``on_worker_state_changed``) like the shell's own workers; results go back
as messages to the screen that asked.
"""

from __future__ import annotations

from .lab_control import LabControl
from .review_control import ReviewControl
from .run_control import RunControl


class JudgeToolsControl(RunControl, LabControl, ReviewControl):
    """Mixed into :class:`WorkspaceController`; holds no state until a screen asks for something."""
