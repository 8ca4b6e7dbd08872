"""precis's built-in tool vocabularies, one module per tool family, registered in the order
they are asked (a user's own vocabularies go before all of them; see
:func:`precis.events.register_tools`). The domain family comes last: it reads any tool by
its name (``get_…`` looks something up, ``cancel_…`` changes something)."""

from __future__ import annotations

from precis.events._registry import register_tools
from precis.events.tools.agents import AgentTools
from precis.events.tools.domain import DomainTools
from precis.events.tools.files import FileTools
from precis.events.tools.patch import PatchTools
from precis.events.tools.search import SearchTools
from precis.events.tools.shell import ShellTools
from precis.events.tools.tasks import TaskTools
from precis.events.tools.web import WebTools

__all__ = ["AgentTools", "DomainTools", "FileTools", "PatchTools", "SearchTools", "ShellTools",
           "TaskTools", "WebTools"]

for _vocabulary in (PatchTools(), FileTools(), ShellTools(), SearchTools(), TaskTools(),
                    WebTools(), AgentTools(), DomainTools()):
    register_tools(_vocabulary, builtin=True)
