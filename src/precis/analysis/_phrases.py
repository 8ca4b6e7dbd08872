"""Word lists of consolidation: stop words, confirmations, restatement and change cues.

Kept apart from the classifier's cue tables (``cues.py``): these lists answer different
questions (is this fragment *only* an acknowledgement? does it say something *again*? does it
*replace* an earlier requirement?) and are tuned on the development half of the evaluation set
only with general phrases, never a phrase taken from one example.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate, count
from operator import add

__all__ = [
    "ANSWER_LEAD",
    "CHANGE_CUE",
    "CHANGE_HINT",
    "CJK_FUNCTION_CHARS",
    "CJK_STOP_WORDS",
    "CONFIRMATION",
    "CONFIRMATION_START",
    "EMAIL",
    "RESTATEMENT_CUE",
    "RESTATEMENT_HINT",
    "STOP_WORDS",
    "matching",
    "strip_change_cue",
]

# English function words and fillers; they carry no topic and make unrelated sentences look
# alike. Matched against lower-cased words (apostrophes removed by normalisation: "don't" is
# "don" + "t").
def _words(text: str) -> list[str]:
    return text.split()


STOP_WORDS: frozenset[str] = frozenset(
    _words(
        """
    a about above after again against all also am an and any are around as at be because been
    before being below between both but by can could did do does doing done down during each
    either else even ever every few for from further get gets getting go goes going got had has
    have having he her here hers him his how however i if in into is it its itself just let
    lets ll me might more most much must my myself need needs neither no nor not now of off on
    once one only or other others our ours out over own per please pls re really s same shall
    she should so some still such sure t than that the their theirs them then there these they
    this those though through thus to too under until up upon us ve very via was we well were
    what when where whether which while who whom whose why will with within without would yes
    yet you your yours d m okay ok oh hi hey thanks thank like make made want wants using use
    used also as etc e g ie eg
    """
    )
)

# Chinese characters that mostly act as grammar (particles, pronouns, measure words, common
# adverbs). A CJK bigram holding one of them says little about the topic.
CJK_FUNCTION_CHARS: frozenset[str] = frozenset(
    "的了是在和与或也都就还又很把被让给对从向于着过吗呢吧啊呀嘛哦么这那个些我你他她它们"
    "要会能有没不就再先后来去上下中里得地之其并而且"
)

# Common Chinese words that say nothing about a topic ("可以", "一下", "另外").
CJK_STOP_WORDS: frozenset[str] = frozenset(
    _words(
        "可以 一下 一个 一些 这个 那个 这些 那些 我们 你们 他们 现在 已经 然后 因为 所以 如果 但是 "
        "不过 什么 怎么 没有 不是 就是 还是 这样 那样 时候 需要 应该 可能 问题 另外 的话 看看 帮我 "
        "一起 一样 其他 还有 之后 之前 目前 今天 明天 这边 那边 东西 知道 觉得 感觉 比较 非常 "
        "直接 大概"
    )
)

# Short acknowledgements that carry nothing beyond "received". Deliberately excludes answers
# such as "yes", "no", "可以", "行", "对": after a question they *are* the content.
_CONFIRMATION_PHRASES = (
    # English
    "ok", "okay", "k", "kk", "okie", "okey", "alright", "all right", "got it", "gotcha",
    "sounds good", "sounds great", "looks good", "lgtm", "thanks", "thank you", "thx", "ty",
    "thanks a lot", "many thanks", "thank you very much", "thanks so much", "cheers",
    "noted", "understood", "roger", "roger that", "ack", "will do", "cool", "great", "nice",
    "perfect", "awesome", "good", "fine", "much appreciated", "appreciated", "i see",
    "makes sense", "that makes sense", "sure", "sure thing", "no problem", "np",
    # Chinese
    "好的", "好", "好滴", "好嘞", "好吧", "嗯", "嗯嗯", "嗯呢", "哦", "噢", "收到", "已收到",
    "明白", "明白了", "了解", "了解了", "知道了", "懂了", "谢谢", "谢谢你", "谢谢您", "多谢",
    "感谢", "非常感谢", "辛苦了", "辛苦", "好的谢谢", "ok的", "没问题", "麻烦了",
)
# A prompt to go on with what is under way ("continue", "继续"): nothing new either. (Not an
# answer lead: "continue with the import" says what to do.)
_CONTINUE_PHRASES = (
    "continue", "please continue", "go on", "please go on", "keep going", "carry on",
    "proceed", "please proceed", "继续", "请继续", "继续吧",
)
_EMOJI = (  # thumbs up, OK hand, folded hands, check mark, smiles, handshake, 100
    "\U0001f44d\U0001f44c\U0001f64f\u2705\U0001f642\U0001f60a\U0001f600\U0001f601\u263a"
    "\U0001f91d\U0001f4af"
)

# The first character of every acknowledgement phrase (lower case): a text starting with
# anything else is no confirmation.
CONFIRMATION_START: frozenset[str] = frozenset(
    p[0] for p in (*_CONFIRMATION_PHRASES, *_CONTINUE_PHRASES))

# The whole fragment is one or more acknowledgements, separated by punctuation or spaces.
# Applied to NFKC, lower-cased text of bounded length, so the alternation stays cheap.
_ACK = "|".join(
    re.escape(p) for p in sorted((*_CONFIRMATION_PHRASES, *_CONTINUE_PHRASES), key=len,
                                 reverse=True)
)
CONFIRMATION = re.compile(
    rf"(?:(?:{_ACK})(?![a-z])|[{_EMOJI}\ufe0f])"
    rf"(?:[\s.,!~…。，！、~:;)(\-]*(?:(?:{_ACK})(?![a-z])|[{_EMOJI}\ufe0f]))*"
    r"[\s.,!~…。，！、~:;)(\-]*"
)

# A reply that opens with an acknowledgement or a yes ("ok keep ours.", "yes, turn it off",
# "可以，压缩加上。"): what follows it is the content (see classify's
# ``_answer_then_order``). Run on lower-cased text; the acknowledgements above plus answers
# that are no confirmation alone.
_ANSWER_WORDS = (
    *_CONFIRMATION_PHRASES, "yes", "yep", "yeah", "yup", "right", "agreed", "correct",
    "exactly", "可以", "行", "对", "对的", "是的", "同意", "有道理",
)
ANSWER_LEAD = re.compile(
    "(?:(?:" + "|".join(re.escape(p) for p in sorted(_ANSWER_WORDS, key=len, reverse=True))
    + r")(?![a-z])[\s.,!~…。，！、:;-]*)+"
)

# An e-mail address: an identifier a reply may consist of, dense information in a sentence.
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]*\w")

# A fragment that says something again ("as I said", "again", "我再强调一下"). With such a cue
# a looser similarity suffices to call it a duplicate of the best-matching earlier fragment.
# Both cue patterns run on *normalised* text (lower case, punctuation turned into spaces).
RESTATEMENT_CUE = re.compile(
    r"\b(?:again|as (?:i|we) (?:said|mentioned|noted|agreed)|as (?:mentioned|noted|said|"
    r"discussed|agreed)(?: (?:before|earlier|above))?|to repeat|i repeat|once more|"
    r"reminder|remember|just to confirm|to reiterate|reiterate|same as before)\b"
    r"|再(?:强调|提醒|重申|说一[下遍次]|确认一下)|重申|还是那句话|(?:前面|之前|刚才|上面)(?:说|提|讲)(?:过|的)"
    r"|也就是说|再说一遍"
)

# Every text RESTATEMENT_CUE finds a match in holds one of these words (the cue without its
# word boundaries): a literal-only pattern that runs at C speed over many texts at once.
RESTATEMENT_HINT = re.compile(
    r"again|as (?:i|we) (?:said|mentioned|noted|agreed)|as (?:mentioned|noted|said|discussed|"
    r"agreed)|to repeat|i repeat|once more|reminder|remember|just to confirm|to reiterate|"
    r"reiterate|same as before|再|重申|还是那句话|前面|之前|刚才|上面|也就是说"
)

# A fragment that replaces an earlier version of a requirement ("actually", "change to",
# "改成", "不用…了"). Not enough on its own: the topic must match too.
CHANGE_CUE = re.compile(
    r"\b(?:actually|instead|rather than|no longer|not anymore|anymore|scratch that|"
    r"on second thought|make it|go(?:ing)? with|"
    r"(?:change|switch|move|bump|upgrade|downgrade|raise|lower|set|update|increase|decrease|"
    r"reduce|extend|push|relax|tighten|revert)(?:s|d|ed|ing)? (?P<o1>(?:\S+ ){0,2}?)to|"
    r"replace[sd]? (?P<o2>(?:\S+ ){0,2}?)with|not \d+)\b"
    r"|改成|改为|改到|换成|换为|变成|调整为|调整到|调到|改用|换用|不用(?P<o3>.{0,12}?)了|还是用|"
    r"还是按|还是先|还是(?P<o4>.{0,6}?)吧|放宽到|收紧到|提高到|提升到|降到|降低到|缩短到|延长到|"
    r"推到|推迟到|提前到|不对|算了|改一下|改写|换一下|不要(?P<o5>.{0,10}?)了|而不是|其实|定为|定成"
)

# Every text CHANGE_CUE finds a match in holds one of these (the cue's words without their
# boundaries, the Chinese cues by their first characters): a literal-only pattern that runs
# at C speed over many texts at once.
CHANGE_HINT = re.compile(
    r"actually|instead|rather than|no longer|anymore|scratch that|on second thought|make it|"
    r"go with|going with|change|switch|move|bump|upgrade|downgrade|raise|lower|set|update|"
    r"increase|decrease|reduce|extend|push|relax|tighten|revert|replace|not |"
    r"改|换|变成|调|不用|还是|放宽到|收紧到|提高到|提升到|降|缩短到|延长到|推|提前到|不对|算了|不要|"
    r"而不是|其实|定为|定成"
)


def strip_change_cue(normalized: str) -> str:
    """``normalized`` without its change-cue words, keeping what they frame ("switch the
    orders database to" keeps "the orders database"; "不用 MySQL 了" keeps "MySQL")."""
    return CHANGE_CUE.sub(_keep_objects, normalized)


def _keep_objects(m: re.Match[str]) -> str:
    return " " + " ".join(g for g in m.groups() if g) + " "


def matching(pattern: re.Pattern[str], texts: Sequence[str]) -> list[int]:
    """Indices of the ``texts`` in which ``pattern.search`` finds a match, in order.

    One regex pass over the texts joined by ``"\\x00"`` instead of one call per text (the
    call overhead dominates for short texts). Exact only for a pattern that uses no ``^`` /
    ``$`` / ``\\A`` / ``\\Z`` anchor and no part of which (lookarounds included) can match
    ``"\\x00"``: then no match spans two texts, and ``\\b`` and lookarounds see the separator
    as they see the edge of a text. A text holding ``"\\x00"`` itself is no problem.
    """
    if not texts:
        return []
    joined = "\x00".join(texts)
    ends = list(map(add, accumulate(map(len, texts)), count(1)))  # one past each separator
    out: list[int] = []
    search = pattern.search
    pos = 0
    while (m := search(joined, pos)) is not None:
        i = bisect_right(ends, m.start())
        out.append(i)
        pos = ends[i]  # the next text: one hit per text is enough
    return out
