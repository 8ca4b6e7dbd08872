"""``ContextMemory``: keeps an agent loop's context under budget (seed 004, done better).

::

    from precis.runtime import ContextMemory

    memory = ContextMemory(max_tokens=32_000)
    memory.add({"role": "user", "content": "..."})        # OpenAI / Anthropic dicts, Messages
    ...
    memory.compress_if_needed()                          # before every model call
    client.chat.completions.create(model=..., messages=memory.to_openai())

It keeps the full history (``original()``, append-only) apart from the working context
(``messages()``). When the working context reaches ``msg_threshold`` messages or
``max_tokens * token_ratio`` tokens, the strategies of seed 004 run in order, lightest first,
and keep running until the context fits (not one per call); if all six are not enough, precis
compacts the whole working context to the budget, so it always fits. Tool calls and results
stay paired after every step. Offloaded originals keep an id that the ``context_reload`` tool
returns; with a store they survive restarts, and ``save()`` / ``ContextMemory.load()`` carry the
whole state over.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from precis._surrogates import clean_text
from precis.compact._pairs import repair
from precis.errors import ConfigError, NotFoundError, StoreError
from precis.model import Message, Part, Text, ToolResult
from precis.runtime.config import ContextConfig
from precis.runtime.convert import message_from_data, message_to_data, to_messages
from precis.runtime.events import STRATEGIES, CompressionEvent
from precis.runtime.strategies import STRATEGY_FUNCTIONS, Outcome, Step, View
from precis.segment._lang import detect_language
from precis.tokens import TokenCounter, get_counter
from precis.trigger import TriggerCues, requested_compaction

if TYPE_CHECKING:
    from precis.memory.store.base import Store

__all__ = ["ContextMemory"]

_STATE_VERSION = 1
_REPAIR_MARK = "precis_repair"  # metadata key precis.compact._pairs marks its stubs with
_LATE_MARK = "precis_late_result"  # a result told as text: its call was compacted
# the strategies' names for seed 004's four prompt slots (precis.llm)
_SLOTS: dict[str, Any] = {"tool_runs": "tool_calls", "summarize_rounds": "previous_round",
                          "current_large": "large_message", "current_round": "current_round"}


class ContextMemory:
    """Working context, full history, offloads and an event log for one agent session."""

    def __init__(
        self,
        max_tokens: int | None = None,
        *,
        config: ContextConfig | None = None,
        tokenizer: str | TokenCounter = "estimate",
        session: str = "default",
        store: Store | None = None,
        llm: Any = None,
        prompts: Any = None,
        plan: Callable[[], str | None] | None = None,
        trigger_cues: TriggerCues | None = None,
    ) -> None:
        if config is not None and max_tokens is not None and config.max_tokens != max_tokens:
            raise ConfigError("give max_tokens either directly or in config, not both",
                              where="context.max_tokens")
        self.config = config or (ContextConfig(max_tokens=max_tokens) if max_tokens
                                 else ContextConfig())
        self.counter = get_counter(tokenizer) if isinstance(tokenizer, str) else tokenizer
        self.session = session
        self.store = store
        self.llm = llm
        self.prompts = prompts
        self.plan = plan
        if trigger_cues is not None and not isinstance(trigger_cues, TriggerCues):
            raise ConfigError("must be a precis.TriggerCues (TriggerCues.none() switches the "
                              "explicit trigger off)", where="context.trigger_cues")
        self.trigger_cues = trigger_cues if trigger_cues is not None else TriggerCues.default()
        self._request: str | None = None  # the words of a user message asking to compact
        self._lock = threading.RLock()
        self._original: list[Message] = []
        self._working: list[Message] = []
        self._tokens: list[int] = []  # per working message, kept in step with _working
        self._offloads: dict[str, list[Message]] = {}
        self._events: list[CompressionEvent] = []
        self._background: threading.Thread | None = None
        self.background_error: BaseException | None = None  # of the last background run

    # -- adding and reading ---------------------------------------------------------------

    def add(self, message: Any) -> None:
        """Append a message (an OpenAI or Anthropic dict, or a precis Message) to both the
        full history and the working context."""
        with self._lock:
            new = to_messages(message, where=f"message {len(self._original)}")
            for m in new:
                self._original.append(m)
                if m.role == "user" and not m.tool_results:
                    self._request = requested_compaction(m, self.trigger_cues)
                for kept in self._late_results(self._fill_stubs(m)):
                    if kept.parts:
                        self._working.append(kept)
                        self._tokens.append(self.counter.count_message(kept))

    def _fill_stubs(self, message: Message) -> Message:
        """Put each result of ``message`` in the place of the stub a compaction gave its
        call while the result was still to come (results of parallel calls arrive one by
        one); the results that had no stub are returned, to be appended."""
        results = message.tool_results
        if not results:
            return message
        stubs: dict[str, int] = {}
        for i in range(len(self._working) - 1, -1, -1):
            m = self._working[i]
            if m.metadata.get(_REPAIR_MARK) == "add-missing-result":
                for r in m.tool_results:
                    stubs.setdefault(r.call_id, i)
        left: list[Part] = []
        for part in message.parts:
            at = stubs.pop(part.call_id, -1) if isinstance(part, ToolResult) else -1
            if at < 0:
                left.append(part)
                continue
            filled = Message(message.role, [part], id=message.id, name=message.name,
                             timestamp=message.timestamp, metadata=dict(message.metadata))
            self._working[at] = filled
            self._tokens[at] = self.counter.count_message(filled)
        return message if len(left) == len(message.parts) else replace(message, parts=left)

    def _late_results(self, message: Message) -> list[Message]:
        """``message``, with each result whose call a compaction took in whole (summarized
        or offloaded, no stub left) told in a user message after it: an API refuses a result
        without its call, and left out on export it would be lost to the model."""
        results = message.tool_results
        if not results:
            return [message]
        live = {c.id for m in self._working for c in m.tool_calls}
        late = [r for r in results if r.call_id not in live]
        if not late:
            return [message]
        called = {c.id: c.name for m in self._original for c in m.tool_calls}
        late = [r for r in late if r.call_id in called]  # a true orphan stays as it is
        if not late:
            return [message]
        notes: list[Part] = [Text(
            f"[the result of {called[r.call_id] or 'a tool'} (call {r.call_id})"
            f"{', an error' if r.is_error else ''}, which arrived after its call was "
            f"compacted]\n{r.content}") for r in late]
        rest = [p for p in message.parts if not (isinstance(p, ToolResult) and p in late)]
        note = Message("user", notes, id=message.id, timestamp=message.timestamp,
                       metadata={**message.metadata, _LATE_MARK: True})
        return [replace(message, parts=rest), note]

    def extend(self, messages: Iterable[Any]) -> None:
        for message in messages:
            self.add(message)

    def messages(self) -> list[Message]:
        """The working context (what to send to the model)."""
        with self._lock:
            return list(self._working)

    def original(self) -> list[Message]:
        """Every message ever added, in order (append-only)."""
        with self._lock:
            return list(self._original)

    def interaction_messages(self) -> list[Message]:
        """The user / assistant conversation of the full history without tool traffic: the
        text of each user and assistant message (calls and results left out)."""
        out: list[Message] = []
        with self._lock:
            for m in self._original:
                if m.role not in ("user", "assistant"):
                    continue
                texts: list[Part] = [p for p in m.parts
                                     if isinstance(p, Text) and p.text.strip()]
                if texts:
                    out.append(Message(m.role, texts, id=m.id, name=m.name,
                                       timestamp=m.timestamp, metadata=dict(m.metadata)))
        return out

    def offloaded(self) -> dict[str, list[Message]]:
        """Offloaded originals by id (this session's, including those in the store)."""
        with self._lock:
            found = dict(self._offloads)
        if self.store is not None:
            for offload_id in self.store.offload_ids(self.session):
                if offload_id not in found:
                    found[offload_id] = self.reload(offload_id)
        return found

    def events(self) -> list[CompressionEvent]:
        with self._lock:
            return list(self._events)

    def token_count(self) -> int:
        """Tokens of the working context as a request (by the configured tokenizer)."""
        with self._lock:
            return sum(self._tokens) + self.counter.overhead.reply_priming

    def delete(self, index: int) -> Message:
        """Remove the working message at ``index`` (the full history keeps it)."""
        with self._lock:
            if not -len(self._working) <= index < len(self._working):
                raise NotFoundError(
                    f"no working message {index} (the working context has "
                    f"{len(self._working)})"
                )
            self._tokens.pop(index)
            return self._working.pop(index)

    def replace(self, index: int, messages: Iterable[Any]) -> Message:
        """Put ``messages`` (any accepted shape, possibly none) in place of the working
        message at ``index``, in one step; the full history is not changed. Returns the
        message replaced."""
        with self._lock:
            if not -len(self._working) <= index < len(self._working):
                raise NotFoundError(
                    f"no working message {index} (the working context has "
                    f"{len(self._working)})"
                )
            index %= len(self._working)
            new = [m for item in messages
                   for m in to_messages(item, where=f"replacement of message {index}")]
            old = self._working[index]
            self._working[index:index + 1] = new
            self._tokens[index:index + 1] = [self.counter.count_message(m) for m in new]
            return old

    def clear(self) -> None:
        """Forget everything: working context, history, offloads (also in the store), events."""
        with self._lock:
            self._original.clear()
            self._working.clear()
            self._tokens.clear()
            self._offloads.clear()
            self._events.clear()
            if self.store is not None:
                self.store.delete_offloads(self.session)

    def to_openai(self) -> list[dict[str, Any]]:
        """The working context as OpenAI messages, valid whatever state it is in: calls
        still waiting for a result get a stub, results whose call is gone are left out
        (in the export only; the working context keeps them, and a late result pairs)."""
        from precis.formats.export import to_openai

        return to_openai(repair(self.messages())[0])

    def to_anthropic(self) -> dict[str, Any]:
        """The working context in Anthropic shape (repaired as for :meth:`to_openai`)."""
        from precis.formats.export import to_anthropic

        return to_anthropic(repair(self.messages())[0])

    # -- offload / reload -----------------------------------------------------------------

    def reload(self, offload_id: str) -> list[Message]:
        """The original messages behind an offload id (NotFoundError if unknown)."""
        if not isinstance(offload_id, str) or not offload_id.strip():
            raise NotFoundError("an offload id must be a non-empty string")
        offload_id = clean_text(offload_id)  # a model may write a lone surrogate
        with self._lock:
            if offload_id in self._offloads:
                return list(self._offloads[offload_id])
        if self.store is not None:
            data = self.store.get_offload(offload_id)
            if data is not None:
                try:
                    return [message_from_data(d, where=f"offload {offload_id}")
                            for d in json.loads(data)]
                except (ValueError, TypeError):
                    raise StoreError(f"the offloaded context {offload_id!r} is damaged",
                                     where=self.store.location) from None
        raise NotFoundError(f"no offloaded context {offload_id!r}")

    def _offload(self, offload_id: str, messages: list[Message]) -> None:
        self._offloads[offload_id] = messages
        if self.store is not None:
            self.store.put_offload(offload_id, self.session, json.dumps(
                [message_to_data(m) for m in messages], ensure_ascii=False))

    # -- compaction -----------------------------------------------------------------------

    def over(self) -> bool:
        """Whether the working context has reached a threshold (messages or tokens)."""
        with self._lock:
            return (len(self._working) >= self.config.msg_threshold
                    or self.token_count() >= self.config.budget)

    @property
    def requested(self) -> str | None:
        """The words of the latest user message when it asks for a compaction ("这阶段总结
        一下", "let's recap"): the next :meth:`compress_if_needed` compacts the history
        then, thresholds or not. ``None`` once done, or when no one asked."""
        return self._request

    def _why(self) -> str:
        """What made the context due: the message count or the tokens."""
        count, tokens = len(self._working), self.token_count()
        if count >= self.config.msg_threshold:
            return f"messages {count} >= {self.config.msg_threshold}"
        return f"tokens {tokens} >= {self.config.budget}"

    def fits(self) -> bool:
        with self._lock:
            return (len(self._working) < self.config.msg_threshold
                    and self.token_count() <= self.config.budget)

    def compress_if_needed(self, *, background: bool = False) -> list[CompressionEvent]:
        """Apply the strategies in order until the working context fits; the events of
        this call (empty when nothing was needed).

        With ``background=True`` (for slow LLM strategies) the work runs in a thread on a
        copy of the working context while the caller goes on; the result is swapped in
        when it is done (messages added meanwhile are kept after it). Only when the
        context is over the model's whole window (``max_tokens``) or twice the message
        threshold does the call compact at once, so a model call is never sent over it."""
        if background and self.background_error is not None:
            self.background_error = None  # it failed last time: compact here, now
            background = False
        if background:
            with self._lock:
                urgent = (self.token_count() > self.config.max_tokens
                          or len(self._working) >= 2 * self.config.msg_threshold
                          or self._request is not None)  # asked for: done now, in view
                if not urgent:
                    self._start_background()
                    return []
            self.wait()
        with self._lock:
            return self._compress_now()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background compaction to finish; whether none is running."""
        thread = self._background
        if thread is not None:
            thread.join(timeout)
        return self._background is None or not self._background.is_alive()

    def _start_background(self) -> None:
        if not self.over() or (self._background is not None and self._background.is_alive()):
            return
        shadow = ContextMemory(config=self.config, tokenizer=self.counter,
                               session=self.session, llm=self.llm, prompts=self.prompts,
                               plan=self.plan)
        shadow._working = list(self._working)
        shadow._tokens = list(self._tokens)
        shadow._offloads = dict(self._offloads)
        snapshot = list(self._working)

        def run() -> None:
            try:
                events = shadow._compress_now()
            except Exception as err:  # kept for the caller; the next call compacts in place
                self.background_error = err
                return
            with self._lock:
                now = self._working
                if len(now) < len(snapshot) or any(a is not b for a, b in zip(now, snapshot)):
                    return  # the working context was edited meanwhile: drop the result
                added = now[len(snapshot):]
                self._working = shadow._working + added
                self._tokens = shadow._tokens + self._tokens[len(snapshot):]
                for offload_id, originals in shadow._offloads.items():
                    if offload_id not in self._offloads:
                        self._offload(offload_id, originals)
                self._events.extend(events)

        self._background = threading.Thread(target=run, name="precis-compaction", daemon=True)
        self._background.start()

    def _compress_now(self) -> list[CompressionEvent]:
        with self._lock:
            done: list[CompressionEvent] = []
            request, self._request = self._request, None
            if request is not None:
                # the user asked for it: the rounds before the latest reply become one
                # summary (a stage summary), even when the context is under every threshold
                event = self._apply("summarize_rounds", trigger=f"request: {request}",
                                    force=True)
                if event is not None:
                    done.append(event)
            if not self.over():
                return done
            trigger = self._why()
            for name in STRATEGIES:
                if self.fits():
                    break
                # "fit" is the last resort: only when the six could not make room
                while True:
                    event = self._apply(name, trigger=trigger)
                    if event is None:
                        break
                    done.append(event)
                    if self.fits() or name in ("fit", "summarize_rounds"):
                        break
            return done

    def _apply(self, name: str, *, trigger: str = "", force: bool = False
               ) -> CompressionEvent | None:
        """Apply strategy ``name``; its event, or None when it had nothing to do or saved
        nothing (``force``: a step that saves nothing is applied all the same)."""
        started = time.perf_counter()
        before_msgs = len(self._working)
        before_tokens = self.token_count()
        view = View(list(self._working), self.config, self.counter, self._language(),
                    self._summarizer())
        step: Step | None = STRATEGY_FUNCTIONS[name](view)
        if step is None:
            return None
        fixed, _repairs = repair(step.messages)
        tokens = [self.counter.count_message(m) for m in fixed]
        if not force and sum(tokens) >= sum(self._tokens) and len(fixed) >= len(self._working):
            return None  # it saved nothing: do not churn the context or log it
        for offload_id, originals in step.offloads.items():
            self._offload(offload_id, self._expand(originals))
        old = self._working
        self._working, self._tokens = fixed, tokens
        outcomes: list[Outcome] = step.outcomes
        event = CompressionEvent(
            strategy=name,
            at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            messages_before=before_msgs,
            messages_after=len(fixed),
            tokens_before=before_tokens,
            tokens_after=self.token_count(),
            replaced=step.replaced,
            before_id=_id_of(old, step.first - 1),
            after_id=_id_of(old, step.last + 1),
            offload_ids=tuple(step.offloads),
            used_llm=any(o.used_llm for o in outcomes),
            llm_tokens=sum(o.llm_tokens for o in outcomes),
            llm_error=next((o.error for o in outcomes if o.error), None),
            elapsed_ms=(time.perf_counter() - started) * 1000,
            note=step.note,
            trigger=trigger,
        )
        self._events.append(event)
        return event

    def _expand(self, messages: list[Message]) -> list[Message]:
        """``messages`` with every earlier offload note replaced by what it stands for, so
        one reload gives the originals (never a preview of a preview)."""
        out: list[Message] = []
        for m in messages:
            inner = m.metadata.get("offload_id")
            if isinstance(inner, str) and inner in self._offloads:
                out.extend(self._offloads[inner])
            else:
                out.append(m)
        return out

    def _language(self) -> str:
        sample = " ".join(m.text[:200] for m in self._working[-20:])
        return "zh" if detect_language(sample) == "zh" else "en"

    def _summarizer(self) -> Callable[[str, str, Callable[[], str]], Outcome]:
        llm, prompts, plan = self.llm, self.prompts, self.plan
        language = self._language()

        def summarize(slot: str, content: str, rule: Callable[[], str]) -> Outcome:
            if llm is None:
                return Outcome(rule())
            from precis.llm import summarize as ask

            outcome = ask(llm, _SLOTS[slot], content, prompts=prompts,
                          plan_hint=plan() if plan is not None else None,
                          fallback=rule, language=language)
            return Outcome(outcome.text, outcome.used_llm, outcome.llm_tokens, outcome.error)

        return summarize

    # -- persistence ----------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The whole state as JSON data (working, original, offloads, events, config)."""
        with self._lock:
            return {
                "version": _STATE_VERSION,
                "session": self.session,
                "config": self.config.__dict__,
                "tokenizer": getattr(self.counter, "name", "estimate"),
                "original": [message_to_data(m) for m in self._original],
                "working": [message_to_data(m) for m in self._working],
                "offloads": {k: [message_to_data(m) for m in v]
                             for k, v in self._offloads.items()},
                "events": [e.to_dict() for e in self._events],
                "request": self._request,
            }

    def save(self) -> None:
        """Write the state to the store (``store=`` is required)."""
        if self.store is None:
            raise ConfigError("save() needs a store: ContextMemory(store=SQLiteStore(...))",
                              where="context.store")
        self.store.save_state(self.session, json.dumps(self.state(), ensure_ascii=False))

    @classmethod
    def load(cls, store: Store, session: str = "default", **options: Any
             ) -> ContextMemory:
        """The session saved by :meth:`save` (NotFoundError if there is none)."""
        data = store.load_state(session)
        if data is None:
            raise NotFoundError(f"no saved context for session {session!r}",
                                where=store.location)
        try:
            state = json.loads(data)
            if state.get("version") != _STATE_VERSION:
                raise StoreError(f"saved context version {state.get('version')!r} is not "
                                 f"{_STATE_VERSION}", where=store.location)
            memory = cls(config=ContextConfig(**state["config"]),
                         tokenizer=options.pop("tokenizer", state["tokenizer"]),
                         session=session, store=store, **options)
            where = f"saved context {session!r}"
            memory._original = [message_from_data(d, where=where) for d in state["original"]]
            memory._working = [message_from_data(d, where=where) for d in state["working"]]
            memory._tokens = [memory.counter.count_message(m) for m in memory._working]
            memory._offloads = {k: [message_from_data(d, where=where) for d in v]
                                for k, v in state["offloads"].items()}
            memory._events = [CompressionEvent.from_dict(e) for e in state["events"]]
            memory._request = state.get("request")
        except (KeyError, TypeError, ValueError) as err:
            raise StoreError(f"the saved context {session!r} is damaged ({err!r})",
                             where=store.location) from None
        return memory


def _id_of(messages: list[Message], index: int) -> str | None:
    if 0 <= index < len(messages):
        m = messages[index]
        return m.id or f"#{index}"
    return None
