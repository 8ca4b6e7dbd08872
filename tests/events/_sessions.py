"""Small agent sessions written out in the formats users have (a Claude Code JSONL log, an
OpenAI message list), for the events and handover tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class ClaudeLog:
    """A Claude Code session log built line by line (timestamps one second apart)."""

    def __init__(self, cwd: str = "/home/dev/shop") -> None:
        self.cwd = cwd
        self.lines: list[dict[str, Any]] = []
        self.second = 0
        self.calls = 0

    def _stamp(self) -> str:
        self.second += 1
        return f"2026-02-11T10:{self.second // 60:02d}:{self.second % 60:02d}.000Z"

    def _entry(self, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        uuid = f"u-{len(self.lines)}"
        entry = {"type": kind, "uuid": uuid, "sessionId": "s-1", "cwd": self.cwd,
                 "timestamp": self._stamp(), "message": {"role": kind, "content": content},
                 **extra}
        if kind == "assistant":
            entry["message"]["id"] = f"msg_{len(self.lines)}"
        self.lines.append(entry)
        return entry

    def user(self, text: str, **extra: Any) -> ClaudeLog:
        self._entry("user", text, **extra)
        return self

    def say(self, text: str) -> ClaudeLog:
        self._entry("assistant", [{"type": "text", "text": text}])
        return self

    def call(self, name: str, args: dict[str, Any], result: str, *, said: str = "",
             is_error: bool = False) -> ClaudeLog:
        """An assistant message (``said`` then a tool call) and the tool's result."""
        self.calls += 1
        call_id = f"toolu_{self.calls:03d}"
        blocks: list[dict[str, Any]] = []
        if said:
            blocks.append({"type": "text", "text": said})
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
        self._entry("assistant", blocks)
        self._entry("user", [{"type": "tool_result", "tool_use_id": call_id,
                              "content": result, "is_error": is_error}])
        return self

    def queued(self, text: str) -> ClaudeLog:
        """A prompt the user typed while the agent worked (enqueued, then handed over)."""
        for op, extra in (("enqueue", {"content": text}), ("remove", {})):
            self.lines.append({"type": "queue-operation", "operation": op, "sessionId": "s-1",
                               "timestamp": self._stamp(), **extra})
        return self

    def write(self, path: Path) -> Path:
        path.write_text("\n".join(json.dumps(x) for x in self.lines) + "\n", encoding="utf-8")
        return path


def coding_session(cwd: str = "/home/dev/shop") -> ClaudeLog:
    """A coding session: a request, a tracker item, reads, a failing test fixed by an edit,
    a commit, a todo list, injected content, a queued follow-up and work in progress."""
    log = ClaudeLog(cwd)
    log.user("Work on bead shop-abc. Run bd show shop-abc and start with the first ready task.")
    log.call("Bash", {"command": "bd show shop-abc.1", "description": "Show the task"},
             "○ shop-abc.1 · Add a discount field to orders   [● P2 · OPEN]\n"
             "DESCRIPTION\nAdd `discount_cents` to the Order schema.\n\n"
             "Architecture constraints:\n- Never change the public `Order.total/1` signature.\n"
             "- Keep the migration reversible.\n")
    log.call("Bash", {"command": "bd update shop-abc.1 --status in_progress"},
             "✓ Updated issue: shop-abc.1")
    log.call("Read", {"file_path": f"{cwd}/lib/shop/order.ex"},
             "     1→defmodule Shop.Order do\n     2→  # this step failed before\n"
             "     3→  def total(order), do: order.amount\n     4→end\n")
    log.call("Edit", {"file_path": f"{cwd}/lib/shop/order.ex",
                      "old_string": "  def total(order), do: order.amount",
                      "new_string": "  field :discount_cents, :integer, default: 0\n"
                                    "  def total(order), do: order.amount - order.discount_cents\n"
                                    "  def discounted?(order), do: order.discount_cents > 0"},
             "The file has been updated successfully.",
             said="The discount must be subtracted in total/1, so I'll add the field there.")
    log.call("Bash", {"command": "mix test test/shop/order_test.exs 2>&1",
                      "description": "Run the order tests"},
             "Exit code 2\n** (CompileError) test/shop/order_test.exs:12: undefined function "
             "build_order/1\n\n3 tests, 1 failure", is_error=True)
    log.say("The test helper build_order/1 is missing because the factory was never imported.")
    log.call("Edit", {"file_path": f"{cwd}/test/shop/order_test.exs",
                      "old_string": "use ExUnit.Case",
                      "new_string": "use ExUnit.Case\n  import Shop.Factory"},
             "The file has been updated successfully.")
    log.call("Bash", {"command": "mix test test/shop/order_test.exs 2>&1"},
             "Finished in 0.1 seconds\n3 tests, 0 failures")
    log.call("Bash", {"command": "git commit -am 'feat: discount field (shop-abc.1)'"},
             "[shop-abc 3f2a9c1] feat: discount field (shop-abc.1)\n 2 files changed")
    log.call("Bash", {"command": "bd close shop-abc.1"}, "✓ Closed shop-abc.1: done")
    log.user("<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
             "</task-notification>\nRead the output file to retrieve the result: /tmp/b1.out")
    log.queued("also make the discount show on the receipt")
    log.call("TodoWrite", {"todos": [
        {"content": "Show the discount on the receipt", "status": "in_progress",
         "activeForm": "Showing the discount"},
        {"content": "Document the discount field", "status": "pending",
         "activeForm": "Documenting"}]}, "Todos have been modified successfully.")
    log.call("Write", {"file_path": f"{cwd}/lib/shop/receipt.ex",
                       "content": "defmodule Shop.Receipt do\n  def render(order) do\n"
                                  "    \"Discount: #{order.discount_cents}\"\n  end\nend\n"},
             "File created successfully.", said="Now the receipt module.")
    log.say("Next I'll run the receipt tests and then document the field.")
    return log
