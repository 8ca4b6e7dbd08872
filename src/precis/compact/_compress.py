"""``compress()``: a conversation -> system prompt + structured summary + recent messages.

Steps (one pass, no LLM):

1. count every message (by the chosen tokenizer) and analyse the conversation (types,
   importance, duplicates, requirement chains); a conversation that is mostly small talk
   gets the ``log`` template (a timeline) instead of the default ``sections``;
2. choose the recent messages kept verbatim: the level's ``keep_last``, never starting
   inside a tool exchange, and with a budget only as many as fit its tail share (smaller
   under a timeline, which tells the latest messages too; when even
   the last message does not fit, its long parts are cut to their core; when that is still
   more than the share, it is summarized with the rest);
3. summarize every older non-system message into the template's sections within the
   token allowance that is left (the level's share of the older messages, or what the
   budget leaves); a timeline with little room is written in note style (``_terse``);
4. check what was lost (exact facts and HIGH fragments of the summarized messages); below
   the floor, re-fit the summary with priority for the fragments whose facts were lost and
   all the room the list of exact details needs;
5. repair tool-call pairs and role order so both APIs accept the list, and verify the
   budget on the final list and on its text (shrinking the summary while either is over).
   Without a budget, a result that would be no shorter than the input is the input.
6. only when asked (``llm=``): a model rewrites the summary into prose, checked by rules
   (``_rewrite``): what it lost is put back, and it fits where the summary fitted, or the
   summary stands.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from precis._gc import collector_paused
from precis.analysis import AnalysisConfig, analyze
from precis.analysis.classify import TypeVoter
from precis.compact._dates import DateFormatter
from precis.compact._emitted import TextCounts, check_outputs, emitted_tokens
from precis.compact._emitted import list_tokens as _list_tokens
from precis.compact._kind import choose_template, fragment_language
from precis.compact._pairs import repair
from precis.compact._rewrite import LLMRewrite, rewrite_summary, skipped
from precis.compact._scope import SummaryScope
from precis.compact._session import TERSE_ROOM, make_builder
from precis.compact._tail import SUMMARY_MIN, choose_tail, grow_tail
from precis.compact.handover import HandoverBuilder
from precis.compact.levels import get_level
from precis.compact.quality import Retention, measure_retention
from precis.compact.result import CompressionResult, render_messages
from precis.compact.summary import Summary
from precis.compact.templates import Template, get_template
from precis.compact.timeline import DETAILS_SHARE, TimelineBuilder
from precis.errors import ConfigError, EmptyInputError
from precis.events import extract_events
from precis.model import Conversation, Message, Text
from precis.tokens import TokenCounter, get_counter
from precis.tokens.lines import LineMemo

if TYPE_CHECKING:
    from precis.llm import ChatModel

__all__ = ["DEFAULT_QUALITY_FLOOR", "compress"]

DEFAULT_QUALITY_FLOOR = 0.95
TAIL_SHARE = 0.3  # with a budget, recent messages take at most this share of what is left
TIMELINE_TAIL_SHARE = 0.1  # ... and this share under a timeline (it tells the latest too)
CHAT_TAIL_SHARE = 0.2  # ... under a chat's summary
HANDOVER_TAIL_SHARE = 0.12  # ... and this share under an agent's handover (its current work
# and next step tell the latest; the room goes to the summary)
_TEXT_FRAME = 4  # tokens of "\n\nuser: " that join the summary to the rest of the text
_GENEROUS_SHARE = 0.6  # the most of a budget the verbatim tail takes (when it is generous)
_SPARE = 0.25  # a handover that leaves this share of the budget unused gives it to the tail
_SPARE_USE = 0.6  # ... this share of what it leaves (the summary made again may need more)
_REFITS = 2
_BOOST = 6.0


@collector_paused()  # see precis._gc
def compress(
    conversation: Conversation | Sequence[Message],
    *,
    level: str = "normal",
    budget: int | None = None,
    template: str | Template = "auto",
    tokenizer: str | TokenCounter = "estimate",
    keep_last: int | None = None,
    quality_floor: float = DEFAULT_QUALITY_FLOOR,
    analysis_config: AnalysisConfig | None = None,
    voter: TypeVoter | None = None,
    note_style: bool | None = None,
    llm: ChatModel | None = None,
    outputs: Sequence[str] | str | None = None,
    _slack: int = 0,
) -> CompressionResult:
    """Compact ``conversation`` (see the module docs).

    ``level`` is ``light``, ``normal`` (default), ``heavy`` or ``emergency``; ``budget`` is
    a token limit the output is guaranteed to fit, counted by ``tokenizer`` (a name for
    :func:`precis.get_counter` or a :class:`~precis.tokens.TokenCounter`). ``keep_last``
    overrides the level's number of recent messages kept verbatim. ``quality_floor`` is the
    share of exact facts the summary must keep before a re-fit is tried. ``template`` is a
    built-in name, a JSON file or a :class:`Template`; ``"auto"`` (the default) chooses
    by what happened: an agent session with file and shell tools gets ``claude`` (the
    handover), a service dialogue with domain tools ``service``, a chat ``sections`` and a
    conversation that is mostly small talk ``log`` (a timeline); the name ``"sections"``
    also gives small talk the timeline (pass ``get_template("sections")`` to keep the
    sections regardless).

    ``llm`` (a :class:`~precis.llm.ChatClient` or any :class:`~precis.llm.ChatModel`)
    rewrites the summary into prose within the same budget; every request and exact value
    of the rule summary that the prose lacks is put back, and on any failure the rule
    summary stands (``result.llm`` says what happened). Without it the output is the same
    bytes as always.

    ``outputs`` names the emitted forms the budget holds for, each counted as emitted
    (``"openai"``, ``"anthropic"``, ``"text"``, ``"markdown"``; by default the first three);
    ``compressed_tokens`` is then the largest of them.
    """
    started = time.perf_counter()
    timings: dict[str, float] = {}
    conv = conversation if isinstance(conversation, Conversation) else Conversation(
        messages=list(conversation))
    preset = get_level(level)
    if keep_last is not None:
        if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 0:
            raise ConfigError(f"keep_last must be a whole number >= 0, not {keep_last!r}")
        preset = replace(preset, keep_last=keep_last)
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)
                               or budget <= 0):
        raise ConfigError(f"budget must be a positive whole number of tokens, not {budget!r}")
    if not 0.0 <= quality_floor <= 1.0:
        raise ConfigError(f"quality_floor must be between 0 and 1, not {quality_floor!r}")
    if note_style is not None and not isinstance(note_style, bool):
        raise ConfigError(f"note_style must be True, False or None, not {note_style!r}")
    forms = check_outputs(outputs)
    tmpl = get_template("sections" if template == "auto" else template)
    counter = get_counter(tokenizer) if isinstance(tokenizer, str) else tokenizer
    messages = conv.messages
    if not messages:
        raise EmptyInputError("the conversation has no messages")

    t = time.perf_counter()
    count = LineMemo(counter)  # the summary's text is counted after every round of a fill
    texts = TextCounts(counter, count)  # the emitted forms are counted from these texts
    sizes = texts.count_each(messages)
    tokens_of = _list_tokens(messages, sizes, count)
    priming = counter.overhead.reply_priming
    original = sum(sizes) + priming
    timings["count"] = time.perf_counter() - t
    t = time.perf_counter()
    analysis = analyze(conv, analysis_config, voter=voter)
    timings["analyze"] = time.perf_counter() - t
    fragments = analysis.segmentation.fragments
    language = fragment_language(fragments)
    t = time.perf_counter()
    events = extract_events(conv, fragments)
    timings["events"] = time.perf_counter() - t
    tmpl = choose_template(template if template in ("auto", "sections") else tmpl, events,
                           analysis)
    system = [i for i, m in enumerate(messages) if m.role == "system"]
    dialog = [i for i, m in enumerate(messages) if m.role != "system"]
    system_tokens = sum(sizes[i] for i in system)
    base = dict(level=preset.name, budget=budget, template=tmpl.name, tokenizer=counter.name,
                language=language, input_messages=len(messages),
                fragments_total=len(fragments), timestamp=_latest_timestamp(conv))

    # the input as it is, made valid for both APIs (a valid list comes back equal)
    as_is, as_is_repairs = repair(messages)
    if not as_is:
        raise EmptyInputError("no message of the conversation holds anything to send (text, "
                              "an image or a tool call)")
    as_is_tokens = tokens_of(as_is) if as_is_repairs else original
    as_is_origin = _realign(as_is, messages, list(range(len(messages))))

    def provisional(msgs: list[Message], origin: list[int | None], s: Summary | None,
                    retention: Retention | None, tokens: int) -> CompressionResult:
        """A result with the figures known so far (its Markdown is what will be shown,
        give or take a digit; the final one is checked again)."""
        b = builders[-1] if builders else None
        check = b.check(s, {o for o in origin if o is not None}) \
            if isinstance(b, HandoverBuilder) else None
        return CompressionResult(
            messages=msgs, origin=origin, summary=s, original_tokens=original,
            compressed_tokens=tokens,
            kept_messages=sum(1 for o in origin if o is not None and messages[o].role != "system"),
            summarized_count=0 if s is None else len(dialog), dropped_count=0,
            system_prompt_preserved=bool(system), retention=retention,
            repairs=[], timings={}, handover=check, **base)  # type: ignore[arg-type]

    def size(msgs: list[Message], origin: list[int | None] | None = None,
             s: Summary | None = None, retention: Retention | None = None) -> int:
        """Tokens of the list as sent, and of each emitted form asked for when that is
        larger (with a budget): the budget holds for every one."""
        tokens = tokens_of(msgs)
        if budget is None or tokens > budget:
            return tokens
        org: list[int | None] = origin if origin is not None else [None] * len(msgs)
        counts = emitted_tokens(
            msgs, forms, texts,
            lambda: provisional(msgs, org, s, retention, budget).to_markdown(),
            stop_over=budget)
        return max(tokens, *counts.values())

    builders: list[TimelineBuilder | HandoverBuilder] = []  # the summary's, once made
    as_is_size = size(as_is, as_is_origin) if budget is not None else as_is_tokens

    def unchanged() -> CompressionResult:
        if budget is not None and as_is_size > budget:
            raise ConfigError(f"budget {budget} is too small: the messages take "
                              f"{as_is_size} tokens and none can be summarized")
        timings["total"] = time.perf_counter() - started
        return CompressionResult(
            messages=as_is, origin=as_is_origin,
            summary=None, original_tokens=original, compressed_tokens=as_is_size,
            kept_messages=len(dialog), summarized_count=0, dropped_count=0,
            system_prompt_preserved=bool(system), retention=None,
            repairs=[str(r) for r in as_is_repairs], timings=timings,
            llm=None if llm is None else skipped(llm, "nothing was summarized"),
            **base)  # type: ignore[arg-type]

    if budget is not None and as_is_size <= budget:
        return unchanged()
    if budget is not None and system_tokens + priming + SUMMARY_MIN > budget:
        need = system_tokens + priming + SUMMARY_MIN
        held = (f"the system prompt ({system_tokens} tokens) and a summary of at least "
                f"{priming + SUMMARY_MIN} tokens ({need} in all)" if system_tokens else
                f"a summary of at least {need} tokens")
        raise ConfigError(f"budget {budget} is too small: it must hold {held}")

    t = time.perf_counter()
    share = (TIMELINE_TAIL_SHARE if tmpl.timeline else
             HANDOVER_TAIL_SHARE if events.kind != "chat" else CHAT_TAIL_SHARE)
    if budget is not None and not tmpl.timeline:
        # a budget that holds much of the conversation keeps much of it verbatim: the
        # summary is of the older part only (a handover of everything says less)
        share = max(share, min(_GENEROUS_SHARE, 0.75 * budget / max(1, as_is_tokens)))
    start, tail, tail_tokens = choose_tail(messages, sizes, dialog, preset, budget,
                                            system_tokens + priming, counter, share)
    first = dialog[0] if dialog else len(messages)
    if start <= first:
        if budget is None or as_is_tokens <= budget:
            return unchanged()  # nothing older than the kept messages
        start, tail, tail_tokens = len(messages), [], 0  # not even those fit: summary only
    timings["tail"] = time.perf_counter() - t

    t = time.perf_counter()
    dates = DateFormatter(conv, language)

    def summarize(start: int, tail: list[Message], tail_tokens: int) -> tuple[
            TimelineBuilder | HandoverBuilder, Summary, int, str, list[int]]:
        """The builder of the messages before ``start``, its summary in the room that
        the budget (or the level) leaves next to ``tail``, that room, and the text of
        what else is sent."""
        older = [i for i in dialog if i < start]
        older_tokens = sum(sizes[i] for i in older)
        # what the summary may take: what the budget leaves, or the level's share of the
        # older messages (refined below for an earlier summary among them)
        room = (preset.room * older_tokens if budget is None
                else budget - priming - system_tokens - tail_tokens)
        kept = sum(1 for m in tail if m.role != "system")
        scope = SummaryScope(analysis, first, start, template=tmpl, preset=preset,
                             language=language, count=count, kept=kept, dates=dates,
                             budgeted=budget is not None)
        builder = make_builder(
            scope, events,
            terse=room < TERSE_ROOM * older_tokens if note_style is None else note_style)
        if budget is not None:
            allowance = int(room) - _message_frame(counter) - _slack
        else:
            # an earlier summary in the range is compact already: its size is not cut again
            prior_tokens = sum(sizes[i] for i in older if i in builder.prior)
            allowance = max(preset.min_room, int(preset.room * (older_tokens - prior_tokens)))
            allowance += prior_tokens
        present = render_messages([messages[i] for i in system if i < start] + tail)
        if budget is not None and present:
            # result.text() names speakers and call ids the list as sent does not: the
            # summary leaves room for that too (else the fit below would shrink it again)
            allowance = min(allowance, budget - count(present) - _TEXT_FRAME)
        summary, _ = builder.fill(allowance, present=present)
        builders.append(builder)
        return builder, summary, allowance, present, older

    builder, summary, allowance, present, older = summarize(start, tail, tail_tokens)
    if budget is not None and not tmpl.timeline and start > first:
        # a handover that needs less than its room leaves the rest to more recent messages
        # kept verbatim (their exact words and values), the summary made again without them
        spare = allowance - count(summary.render())
        if spare > _SPARE * budget:
            grown = choose_tail(messages, sizes, dialog, replace(preset, keep_last=len(dialog)),
                                 budget, system_tokens + priming, counter, share,
                                 limit=tail_tokens + int(spare * _SPARE_USE))
            if not first < grown[0] < start:
                # the tail's last message alone is too long to keep whole: the room goes
                # to the messages before it
                grown = grow_tail(messages, sizes, first, start, tail, tail_tokens,
                                  tail_tokens + int(spare * _SPARE_USE), counter)
            if first < grown[0] < start:
                start, tail, tail_tokens = grown
                builder.close()
                builder, summary, allowance, present, older = summarize(start, tail,
                                                                        tail_tokens)
    older_tokens = sum(sizes[i] for i in older)
    timings["summarize"] = time.perf_counter() - t

    def assemble(s: Summary | None) -> tuple[list[Message], list[int | None], list[str]]:
        out: list[Message] = [messages[i] for i in system if i < start]
        origin: list[int | None] = [i for i in system if i < start]
        if s is not None:
            out.append(Message(role="user", parts=[Text(s.render())],
                               metadata={"precis": "summary"}))
            origin.append(None)
        out.extend(tail)
        origin.extend(range(start, len(messages)))
        fixed, repairs = repair(out)
        return fixed, _realign(fixed, out, origin), [str(r) for r in repairs]

    t = time.perf_counter()
    high_facts, high_ids = builder.retention_facts(), builder.high_ids()
    out, origin, repairs = assemble(summary)
    retention = measure_retention(high_facts, high_ids, render_messages(out), summary.sources())
    measured: tuple[list[Message], Summary | None] = (out, summary)  # what retention is of
    initial = allowance
    refit: tuple[dict[str, float] | None, float] = (None, DETAILS_SHARE)
    for _ in range(_REFITS if builder.refits else 0):
        if retention.facts >= quality_floor or not retention.lost_in:
            break
        boost = {fid: _BOOST for fid in retention.lost_in}
        if budget is None:  # no budget: more room for what was lost (once, not compounded,
            # so a heavier level stays smaller than a lighter one)
            allowance = min(int(initial * 1.5), max(initial, older_tokens))
        # and within the room, the list of exact details may take all it needs
        candidate, _ = builder.fill(allowance, boost, present, details_share=1.0)
        c_out, c_origin, c_repairs = assemble(candidate)
        c_ret = measure_retention(high_facts, high_ids, render_messages(c_out), candidate.sources())
        if (c_ret.facts, c_ret.high) <= (retention.facts, retention.high):
            break
        summary, retention, out, origin, repairs = candidate, c_ret, c_out, c_origin, c_repairs
        measured = (out, summary)
        refit = (boost, 1.0)
    timings["quality"] = time.perf_counter() - t

    t = time.perf_counter()
    compressed = size(out, origin, summary, retention)
    while budget is not None and compressed > budget and allowance > 0:
        allowance -= compressed - budget + 8
        summary, _ = builder.fill(max(0, allowance), refit[0], present, details_share=refit[1])
        out, origin, repairs = assemble(summary)
        compressed = size(out, origin, summary, retention)
    final: Summary | None = summary
    if budget is not None and compressed > budget:
        final = None  # only when the tail alone is over: the summary goes
        out, origin, repairs = assemble(None)
        compressed = size(out, origin, None, retention)
    if budget is not None and not any(m.role != "system" for m in out):
        compressed = budget + 1  # nothing but the system prompt: not a compaction
    if budget is not None and compressed > budget:
        if preset.keep_last > 0:  # the recent messages cannot be cut to fit: summarize all
            return compress(conv, level=level, budget=budget, template=tmpl, tokenizer=counter,
                            keep_last=0, quality_floor=quality_floor,
                            analysis_config=analysis_config, voter=voter,
                            note_style=note_style, llm=llm, outputs=forms, _slack=_slack)
        beside = " beside the Markdown report's figures" if "markdown" in forms else ""
        raise ConfigError(f"budget {budget} is too small: no summary fits in it{beside}")
    if budget is None and compressed >= as_is_tokens:
        return unchanged()  # a summary would not make this conversation any shorter
    rewrite: LLMRewrite | None = None
    if llm is not None:
        t_llm = time.perf_counter()
        if final is None:
            rewrite = skipped(llm, "the budget leaves no room for a summary")
        else:
            shown = count(final.render())

            def measure(s: Summary) -> int:
                if budget is None:
                    return count(s.render())
                s_out, s_origin, _ = assemble(s)
                return size(s_out, s_origin, s, retention)

            # with a budget, the output fits it; without, the prose takes no more than the
            # level's room for the summary, and the output stays shorter than the input
            limit = budget if budget is not None else min(
                max(shown, allowance), shown + as_is_tokens - 1 - compressed)
            room = shown + limit - measure(final) - count(final.header())
            prose, rewrite = rewrite_summary(llm, final, room=max(1, room), measure=measure,
                                             limit=limit)
            if prose is not None:
                final = prose
                out, origin, repairs = assemble(final)
                compressed = tokens_of(out) if budget is None else size(out, origin, final,
                                                                       retention)
        timings["llm"] = time.perf_counter() - t_llm
    cited = final.sources() if final else set()
    if out is not measured[0] or final is not measured[1]:  # else it holds as it is
        retention = measure_retention(high_facts, high_ids, render_messages(out), cited)
    timings["fit"] = time.perf_counter() - t - timings.get("llm", 0.0)

    # a fragment an item cites (e.g. the "ok" of a message quoted whole) is not dropped
    dropped = {reason: kept for reason, ids in builder.dropped.items()
               if (kept := [fid for fid in ids if fid not in cited])}
    unused = builder.unused(cited)
    if unused:
        dropped["budget"] = unused
    summarized_msgs = {fragments[i].provenance.message for i in builder.range
                       if fragments[i].id in cited}
    older_with_fragments = {fragments[i].provenance.message for i in builder.range}
    check = builder.check(final, {o for o in origin if o is not None}) \
        if isinstance(builder, HandoverBuilder) else None
    builder.close()
    timings["total"] = time.perf_counter() - started
    result = CompressionResult(
        messages=out, origin=origin, summary=final, original_tokens=original,
        compressed_tokens=compressed,
        kept_messages=sum(1 for o in origin if o is not None and messages[o].role != "system"),
        summarized_count=len(summarized_msgs),
        dropped_count=len(older_with_fragments - summarized_msgs)
        + sum(1 for i in older if i not in older_with_fragments),
        system_prompt_preserved=bool(system),
        retention=_clean(retention), dropped=dropped, repairs=repairs, timings=timings,
        handover=check, llm=rewrite, **base)  # type: ignore[arg-type]
    if budget is not None and "markdown" in forms:
        # the report's figures are final now: a digit more than the provisional ones
        # may take a token or two, then the summary gives them back
        over = count(result.to_markdown()) - budget
        if over > 0:
            if final is None and preset.keep_last == 0:
                raise ConfigError(f"budget {budget} is too small: no summary fits in it "
                                  "beside the Markdown report's figures")
            return compress(conv, level=level, budget=budget, template=template,
                            tokenizer=counter,
                            keep_last=keep_last if final is not None else 0,
                            quality_floor=quality_floor, analysis_config=analysis_config,
                            voter=voter, note_style=note_style, llm=llm, outputs=forms,
                            _slack=_slack + over + 4 if final is not None else _slack)
    return result


def _clean(retention: Retention) -> Retention:
    return replace(retention, lost_in={})


def _latest_timestamp(conv: Conversation) -> str | None:
    for message in reversed(conv.messages):
        if message.timestamp:
            return message.timestamp
    return None


def _message_frame(counter: TokenCounter) -> int:
    return counter.count_message(Message(role="user", parts=[Text("")]))


def _realign(
    fixed: list[Message], before: list[Message], origin: list[int | None]
) -> list[int | None]:
    """``origin`` for the repaired list: a message the repair kept as it was (the same
    object, or an equal one, in order) keeps its index; inserted or changed ones get None."""
    out: list[int | None] = []
    j = 0
    for message in fixed:
        k = j
        while k < len(before) and before[k] is not message and before[k] != message:
            k += 1
        if k < len(before):
            out.append(origin[k])
            j = k + 1
        else:
            out.append(None)
    return out
