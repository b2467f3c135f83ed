"""Whether a generate run's answers are held to the template's answer format (see core.judges.prompts.grammar)."""

from __future__ import annotations

import enum


class AnswerConstraint(str, enum.Enum):
    OFF = "off"
    #: The answer alone ("Score: 4", the InCA JSON object).
    ANSWER = "answer"
    #: One line of free reasoning, then the answer on its own line.
    REASONING = "reasoning"
