"""Tool calls and their results kept in valid pairs: where a verbatim tail may start, and the
repair that makes any message list acceptable to both the OpenAI and Anthropic APIs.

Pairing rule (shared by both functions)
    A :class:`ToolResult` answers the nearest earlier message holding a :class:`ToolCall`
    with its ``call_id`` (parts are read in order, so a call earlier in the same message
    counts); within that message it takes the first call with that id still unanswered.
    A result with no such call before it is an *orphan*; one whose calls there are all
    answered already is a *duplicate*. Ids reused across turns (some providers number
    calls ``0, 1, ...`` per turn) therefore pair with the right turn.

:func:`window_start`
    Moves a proposed start of the kept-verbatim tail so the tail holds no result whose
    call lies before it. See its docstring.

:func:`repair`
    Returns a list in *canonical form*, which :func:`~precis.formats.export.to_openai` and
    :func:`~precis.formats.export.to_anthropic` turn into payloads each API accepts:

    1. tool calls sit only in ``assistant`` messages and tool results only in ``tool``
       messages, which hold nothing else (other parts are split off into messages of their
       own, in the original order);
    2. every call id is unique in the list and fits both APIs (``[A-Za-z0-9_-]``, at most
       40 characters: Anthropic's pattern, OpenAI's length);
    3. each assistant message with calls is followed directly by ``tool`` messages
       answering exactly its calls, one result per call, before any other message;
    4. no ``user`` / ``assistant`` / ``tool`` message is empty: a user message needs
       non-blank text or an image, an assistant message non-blank text, an image or a call
       (thinking alone does not count: OpenAI drops it); blank text parts are removed
       (Anthropic rejects white-space-only text blocks). System messages are never touched;
    5. the first non-system message, if any, is a ``user`` message.

    A list already in canonical form comes back equal, with no repairs, and ``repair`` is
    idempotent. Every change is reported as a :class:`Repair`.

Decisions
    - A result whose call is not earlier in the list is **removed**, not turned into a text
      note: a note in a user message would put the tool's words in the user's mouth, and
      would add tokens after the budget was fitted. Nothing is silently lost: the
      :class:`Repair` carries the removed part, so a caller can summarize it.
    - A call with no result **keeps** its call and gets a synthetic result
      (``[no result recorded]``, ``is_error=False``, the message marked
      ``metadata["precis_repair"] = "add-missing-result"``). Dropping the call would hide
      an action the model took and that later turns may refer to; the stub says truthfully
      that the outcome is not in the record. (A history cut right after a call the caller
      is still running gets a stub too: compact before the calls, or drop the stub.)
    - Duplicate or unusable call ids are **renamed** (``call_1`` -> ``call_1_2``), the
      results that answer them follow; keeping only the first call would lose real
      actions when a provider reuses ids per turn. A second result for one call is dropped.
    - Results already directly after their call keep their place, order and grouping
      (neither API needs them in call order); results brought from elsewhere and synthetic
      ones follow them, in call order, one ``tool`` message each (a moved result keeps the
      id, timestamp and metadata of the message it came from).
    - A list with no non-system message is returned as it is: there is no conversation to
      open, and a caller compacting it adds the summary message itself.

Inputs are never mutated. The output's messages are new :class:`Message` objects (metadata
copied shallowly); parts are frozen and shared.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from precis.errors import ConfigError
from precis.model import Image, Message, Part, Role, Text, ToolCall, ToolResult

__all__ = [
    "NO_RESULT_TEXT",
    "OPENING_TEXT",
    "Repair",
    "RepairAction",
    "repair",
    "window_start",
]

OPENING_TEXT = "(earlier conversation summarized above)"
"""Text of the user message :func:`repair` puts first when the conversation opens with
another role (Anthropic requires the first message to come from the user)."""

NO_RESULT_TEXT = "[no result recorded]"
"""Content of the synthetic result :func:`repair` gives a call that has none."""

MAX_ID_LENGTH = 40  # OpenAI rejects longer tool_call ids
_ID_OK = re.compile(r"[A-Za-z0-9_-]{1,40}")
_ID_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_MARK = "precis_repair"

RepairAction = Literal[
    "split-message",
    "drop-blank-text",
    "drop-empty",
    "rename-call",
    "drop-orphan-result",
    "drop-duplicate-result",
    "move-result",
    "add-missing-result",
    "insert-opening",
]

_Pos = tuple[int, int]  # (message or piece index, part index)


@dataclass(frozen=True)
class Repair:
    """One change :func:`repair` made.

    ``index`` is the index in the *input* list of the message concerned (the calling
    message for ``add-missing-result``, the message the opening was put before for
    ``insert-opening``); ``call_id`` the call's id as written in the input, when the change
    concerns a call or a result; ``parts`` what was removed (dropped results, blank text,
    the parts of an empty message) or added (the synthetic result).
    """

    index: int
    call_id: str | None
    action: RepairAction
    reason: str
    parts: tuple[Part, ...] = ()

    def __str__(self) -> str:
        return f"message {self.index}: {self.reason}"


# -- pairing ---------------------------------------------------------------------------


def _link(containers: Sequence[Sequence[Part]]) -> tuple[dict[_Pos, _Pos], dict[_Pos, str]]:
    """Results paired with calls by the module's rule.

    Returns ``links`` (result position -> call position) and ``unlinked`` (result
    position -> ``"orphan"`` or ``"duplicate"``).
    """
    latest: dict[str, int] = {}
    waiting: dict[tuple[int, str], list[int]] = {}
    links: dict[_Pos, _Pos] = {}
    unlinked: dict[_Pos, str] = {}
    for ci, parts in enumerate(containers):
        for pi, part in enumerate(parts):
            if isinstance(part, ToolCall):
                latest[part.id] = ci
                waiting.setdefault((ci, part.id), []).append(pi)
            elif isinstance(part, ToolResult):
                owner = latest.get(part.call_id)
                if owner is None:
                    unlinked[(ci, pi)] = "orphan"
                    continue
                queue = waiting[(owner, part.call_id)]
                if queue:
                    links[(ci, pi)] = (owner, queue.pop(0))
                else:
                    unlinked[(ci, pi)] = "duplicate"
    return links, unlinked


def _first_conversational(messages: Sequence[Message]) -> int:
    return next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))


def _forbidden(messages: Sequence[Message]) -> list[list[int]]:
    """Merged ranges ``[low, high]`` of tail starts that would split a tool exchange."""
    links, _ = _link([m.parts for m in messages])
    # A pair with its call in message i and its result in message j > i forbids every
    # start in i+1..j. Merge those ranges (touching ones too: moving to i may land in the
    # next range) and step out of the one holding the start.
    ranges = sorted(
        {(call[0] + 1, result[0]) for result, call in links.items() if call[0] < result[0]}
    )
    merged: list[list[int]] = []
    for low, high in ranges:
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return merged


def valid_starts(messages: Sequence[Message]) -> list[bool]:
    """``valid[s]``: whether a tail ``messages[s:]`` splits no tool exchange (for every
    ``s`` in ``0..len(messages)``), computed in one pass."""
    valid = [True] * (len(messages) + 1)
    for low, high in _forbidden(messages):
        for s in range(low, high + 1):
            valid[s] = False
    return valid


def window_start(messages: Sequence[Message], start: int, *, floor: int | None = None) -> int:
    """Where a kept-verbatim tail proposed as ``messages[start:]`` may begin.

    A start is *valid* when no tool result in the tail answers (by the module's pairing
    rule) a call before the tail. The rule:

    1. ``start`` is clamped to ``[floor, len(messages)]``; ``floor`` defaults to the index
       of the first non-system message (the leading system prompt is never part of the
       tail); a given ``floor`` is clamped to ``[0, len(messages)]``;
    2. if ``start`` is valid it is returned;
    3. otherwise the nearest valid start below it: the tail grows back to take in the
       message(s) holding the calls (and, transitively, the calls of any result that
       growing took in);
    4. if that would go below ``floor``, the nearest valid start *above* ``start`` instead:
       the tail begins after the exchange (it is then shorter than proposed).

    Calls without results and results without calls never move the start (:func:`repair`
    deals with them). Runs in O(n log n) for n messages.
    """
    size = len(messages)
    lowest = _first_conversational(messages) if floor is None else max(0, min(floor, size))
    position = min(max(start, lowest), size)
    merged = _forbidden(messages)
    found = bisect_right([low for low, _ in merged], position) - 1
    if found < 0 or position > merged[found][1]:
        return position
    low, high = merged[found]
    return low - 1 if low - 1 >= lowest else high + 1


# -- repair ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Piece:
    """A message, or a run of a message's parts that had to become a message of its own."""

    source: int
    role: Role
    parts: list[Part]
    origin: Message
    number: int  # 0 for the first piece of its message


def _side(part: Part, role: Role) -> Role:
    if isinstance(part, ToolCall):
        return "assistant"
    if isinstance(part, ToolResult):
        return "tool"
    return "user" if role == "tool" else role


def _call_id(part: Part) -> str | None:
    if isinstance(part, ToolCall):
        return part.id
    return part.call_id if isinstance(part, ToolResult) else None


def _split(index: int, message: Message, repairs: list[Repair]) -> list[_Piece]:
    role = message.role
    if all(_side(part, role) == role for part in message.parts):  # the usual case
        return [_Piece(index, role, list(message.parts), message, 0)]
    runs: list[tuple[Role, list[Part]]] = []
    for part in message.parts:
        side = _side(part, message.role)
        if runs and runs[-1][0] == side:
            runs[-1][1].append(part)
        else:
            runs.append((side, [part]))
    moved = [p for p in message.parts if _side(p, role) != role]
    call_id = next(filter(None, (_call_id(p) for p in moved)), None)
    roles = ", ".join(side for side, _ in runs)
    repairs.append(
        Repair(
            index,
            call_id,
            "split-message",
            f"{role} message held parts another role carries; split into {roles} messages",
        )
    )
    return [_Piece(index, side, parts, message, n) for n, (side, parts) in enumerate(runs)]


def _blank(part: Part) -> bool:
    return isinstance(part, Text) and not part.text.strip()


def _has_content(role: Role, parts: Sequence[Part]) -> bool:
    if role == "tool":
        return any(isinstance(p, ToolResult) for p in parts)
    kinds: tuple[type, ...] = (Text, Image, ToolCall) if role == "assistant" else (Text, Image)
    return any(isinstance(p, kinds) and not _blank(p) for p in parts)


def _clean(pieces: list[_Piece], repairs: list[Repair]) -> list[_Piece]:
    kept: list[_Piece] = []
    for piece in pieces:
        if piece.role == "system":
            kept.append(piece)
            continue
        if not _has_content(piece.role, piece.parts):
            what = "no parts" if not piece.parts else "nothing the APIs can carry"
            repairs.append(
                Repair(
                    piece.source,
                    None,
                    "drop-empty",
                    f"{piece.role} message with {what} dropped",
                    tuple(piece.parts),
                )
            )
            continue
        blanks = tuple(p for p in piece.parts if _blank(p))
        if blanks:
            repairs.append(
                Repair(
                    piece.source,
                    None,
                    "drop-blank-text",
                    f"{len(blanks)} empty or white-space-only text part(s) removed",
                    blanks,
                )
            )
            piece.parts = [p for p in piece.parts if not _blank(p)]
        kept.append(piece)
    return kept


def _fresh_id(old: str, taken: set[str]) -> str:
    base = _ID_BAD_CHARS.sub("_", old)[:MAX_ID_LENGTH] or "call"
    if base not in taken:
        return base
    number = 2
    while True:
        suffix = f"_{number}"
        candidate = base[: MAX_ID_LENGTH - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
        number += 1


def _assign_ids(pieces: list[_Piece], repairs: list[Repair]) -> dict[_Pos, str]:
    """The id each call ends up with; usable ids are kept, the rest renamed."""
    taken = {
        call_id
        for piece in pieces
        for part in piece.parts
        if (call_id := _call_id(part)) is not None
    }
    used: set[str] = set()
    ids: dict[_Pos, str] = {}
    for pi, piece in enumerate(pieces):
        for k, part in enumerate(piece.parts):
            if not isinstance(part, ToolCall):
                continue
            new = part.id
            if not _ID_OK.fullmatch(part.id) or part.id in used:
                new = _fresh_id(part.id, taken)
                taken.add(new)
                why = "is used by an earlier call" if part.id in used else "is not a usable id"
                repairs.append(
                    Repair(
                        piece.source,
                        part.id,
                        "rename-call",
                        f"call id {part.id!r} {why} (APIs need unique ids of "
                        f"[A-Za-z0-9_-], at most {MAX_ID_LENGTH} characters); "
                        f"renamed {new!r}",
                    )
                )
            used.add(new)
            ids[(pi, k)] = new
    return ids


def _message(piece: _Piece, parts: list[Part]) -> Message:
    origin = piece.origin
    same_role = piece.role == origin.role
    ident = origin.id if origin.id is None or piece.number == 0 else f"{origin.id}#{piece.number}"
    return Message(
        role=piece.role,
        parts=parts,
        id=ident,
        name=origin.name if same_role else None,
        timestamp=origin.timestamp,
        metadata=dict(origin.metadata),
    )


def _check_text(value: str, key: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{key} must be non-blank text (got {value!r})", where=key)


def repair(
    messages: Sequence[Message],
    *,
    opening_text: str = OPENING_TEXT,
    missing_result_text: str = NO_RESULT_TEXT,
) -> tuple[list[Message], list[Repair]]:
    """``messages`` in canonical form (see the module docs), and the repairs that took.

    ``opening_text`` is the text of the user message put first when the conversation
    opens with another role; ``missing_result_text`` the content of the synthetic result
    of a call that has none. Both must be non-blank (:class:`~precis.errors.ConfigError`).
    Repairs are listed in input order.
    """
    _check_text(opening_text, "opening_text")
    _check_text(missing_result_text, "missing_result_text")
    repairs: list[Repair] = []
    pieces: list[_Piece] = []
    for index, message in enumerate(messages):
        pieces.extend(_split(index, message, repairs))
    pieces = _clean(pieces, repairs)
    ids = _assign_ids(pieces, repairs)
    links, unlinked = _link([p.parts for p in pieces])
    answer = {call: result for result, call in links.items()}

    for (pi, k), kind in unlinked.items():
        result = pieces[pi].parts[k]
        assert isinstance(result, ToolResult)
        if kind == "orphan":
            action: RepairAction = "drop-orphan-result"
            why = "answers no call earlier in the list"
        else:
            action = "drop-duplicate-result"
            why = "answers a call that already has a result"
        repairs.append(
            Repair(
                pieces[pi].source,
                result.call_id,
                action,
                f"tool result for call {result.call_id!r} {why}; removed",
                (result,),
            )
        )

    def renamed(pos: _Pos) -> ToolResult:
        result = pieces[pos[0]].parts[pos[1]]
        assert isinstance(result, ToolResult)
        new = ids[links[pos]]
        return result if new == result.call_id else replace(result, call_id=new)

    out: list[Message] = []
    sources: list[int] = []
    for pi, piece in enumerate(pieces):
        if piece.role == "tool":
            continue  # results are written in the block of the call they answer
        parts = [
            replace(part, id=ids[(pi, k)])
            if isinstance(part, ToolCall) and part.id != ids[(pi, k)]
            else part
            for k, part in enumerate(piece.parts)
        ]
        out.append(_message(piece, parts))
        sources.append(piece.source)
        calls = [(k, p) for k, p in enumerate(piece.parts) if isinstance(p, ToolCall)]
        if not calls:
            continue
        placed: set[_Pos] = set()
        after = pi + 1
        while after < len(pieces) and pieces[after].role == "tool":
            here = [
                (after, k)
                for k in range(len(pieces[after].parts))
                if links.get((after, k), (-1, -1))[0] == pi
            ]
            if here:
                placed.update(links[pos] for pos in here)
                out.append(_message(pieces[after], [renamed(pos) for pos in here]))
                sources.append(pieces[after].source)
            after += 1
        for k, call in calls:
            if (pi, k) in placed:
                continue
            found = answer.get((pi, k))
            if found is not None:
                source = pieces[found[0]]
                out.append(_message(source, [renamed(found)]))
                sources.append(source.source)
                repairs.append(
                    Repair(
                        source.source,
                        call.id,
                        "move-result",
                        f"tool result for call {call.id!r} moved to follow its call "
                        f"(message {piece.source})",
                    )
                )
                continue
            stub = ToolResult(ids[(pi, k)], missing_result_text, name=call.name)
            out.append(Message("tool", [stub], metadata={_MARK: "add-missing-result"}))
            sources.append(piece.source)
            repairs.append(
                Repair(
                    piece.source,
                    call.id,
                    "add-missing-result",
                    f"tool call {call.id!r} ({call.name}) has no result; "
                    f"added {missing_result_text!r}",
                    (stub,),
                )
            )

    first = _first_conversational(out)
    if first < len(out) and out[first].role != "user":
        opening = Message("user", [Text(opening_text)], metadata={_MARK: "insert-opening"})
        out.insert(first, opening)
        repairs.append(
            Repair(
                sources[first],
                None,
                "insert-opening",
                f"conversation opened with a {out[first + 1].role} message; "
                f"put a user message {opening_text!r} before it",
                (opening.parts[0],),
            )
        )
    repairs.sort(key=lambda r: r.index)
    return out, repairs
