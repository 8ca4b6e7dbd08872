"""A timeline builder over a fixture conversation, as compress makes one (shared by tests)."""

from __future__ import annotations

from precis import Conversation
from precis.analysis import analyze
from precis.compact import get_template
from precis.compact._dates import DateFormatter
from precis.compact._kind import fragment_language
from precis.compact._scope import SummaryScope
from precis.compact.levels import get_level
from precis.compact.timeline import TimelineBuilder
from precis.tokens import get_counter

__all__ = ["timeline_builder"]


def timeline_builder(conv: Conversation) -> TimelineBuilder:
    """The builder of the timeline (template ``log``) of all but the last two messages,
    budgeted, counting with the estimator."""
    analysis = analyze(conv)
    language = fragment_language(analysis.segmentation.fragments)
    n = len(conv.messages)
    scope = SummaryScope(analysis, 0, n - 2, template=get_template("log"),
                         preset=get_level("normal"), language=language,
                         count=get_counter("estimate").count, kept=2,
                         dates=DateFormatter(conv, language), budgeted=True)
    return TimelineBuilder(scope)
