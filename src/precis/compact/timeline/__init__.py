"""The timeline: the summary of a conversation that is mostly talk (the ``log`` template).

Who said what, in time order and by date, each line citing its fragments, with the exact
facts no line shows in an "Exact details" list. One module per job:

- :mod:`~precis.compact.timeline._builder`: the candidates (a line per fragment that says
  something, the items of an earlier summary carried over) and the fill to the room;
- :mod:`~precis.compact.timeline._ranking`: the order of the fill, a greedy for budgeted
  maximum coverage of the conversation's words and facts;
- :mod:`~precis.compact.timeline._details`: the "Exact details" list;
- :mod:`~precis.compact.timeline._candidate`: a possible line.

:class:`TimelineBuilder` offers what :func:`precis.compact.compress` asks of a builder
(``fill``, ``retention_facts``, ``high_ids``, ``unused``, ``dropped``, ``close``); every
other layout is the handover's (:mod:`precis.compact.handover`).
"""

from __future__ import annotations

from precis.compact.timeline._builder import TimelineBuilder
from precis.compact.timeline._details import DETAILS_SHARE

__all__ = ["DETAILS_SHARE", "TimelineBuilder"]
