"""Do two short claims on one topic say opposite things? A word-level polarity rule.

A claim's polarity on a topic is the parity of the negating words in the sentence that carries
the topic: "never", "not", "without", "unless", and verbs of failure such as "breaks" or
"fails". Two negations cancel, so "the build requires the lockfile" (0) and "the build breaks
without the lockfile" (2: breaks, without) agree, as do "deploy only after CI is green" (0) and
"never deploy without green CI" (2); "deploy hotfixes directly on prod" (0) and "never a hotfix
on prod" (1) are opposite.

The rule reads words, not meaning: it is a candidate filter, and the review re-checks every
candidate's similarity before it becomes a choice.
"""

from __future__ import annotations

import re

__all__ = [
    "NEGATIONS",
    "FAILURES",
    "STOP",
    "words",
    "topic_overlap",
    "topic_share",
    "polarity",
    "opposite",
    "sentences",
]

NEGATIONS = frozenset(
    {
        "never",
        "not",
        "no",
        "don't",
        "dont",
        "doesn't",
        "isn't",
        "aren't",
        "wasn't",
        "avoid",
        "cannot",
        "can't",
        "shouldn't",
        "won't",
        "mustn't",
        "without",
        "nor",
        "unless",
        "except",
        "didn't",
        "neither",
        "forbidden",
        "disallowed",
        "prohibited",
        "otherwise",
        "exclude",
        "excludes",
        "excluded",
        "excluding",
        "disable",
        "disables",
        "disabled",
        "lacks",
        "omits",
        "skips",
    }
)
#: "unpinned", "unsigned", "untested": un- + a past participle negates it.
_UN_PARTICIPLE = re.compile(r"^un[a-z]{3,}ed$")
_NOT_UN = frozenset({"unified", "united", "unrelated"})

#: Verbs that state a failure: "breaks without X" negates "works without X".
FAILURES = frozenset(
    {
        "break",
        "breaks",
        "broke",
        "fail",
        "fails",
        "failed",
        "crash",
        "crashes",
        "crashed",
        "corrupt",
        "corrupts",
        "hang",
        "hangs",
        "stall",
        "stalls",
        "refuse",
        "refuses",
        "reject",
        "rejects",
        "lose",
        "loses",
    }
)
STOP = frozenset(
    "the a an and or of to in on for with from by is are be as at it its this that "
    "these those when then than into over under only once after before use uses "
    "used using must should can will may always every all any".split()
)
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9'_-]*")
_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+|\n+")


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower().replace("\u2019", "'"))


def _content(ws: list[str]) -> set[str]:
    return {
        w for w in ws if len(w) >= 3 and w not in STOP and w not in NEGATIONS and w not in FAILURES
    }


def topic_overlap(a: str, b: str) -> set[str]:
    """Content words the two texts share (no stop words, negations or failure verbs)."""
    return _content(words(a)) & _content(words(b))


def topic_share(a: str, b: str) -> float:
    """Shared content words over the content words of the shorter text (0 to 1)."""
    ca, cb = _content(words(a)), _content(words(b))
    if not ca or not cb:
        return 0.0
    return len(ca & cb) / min(len(ca), len(cb))


def polarity(text: str, topic: set[str]) -> int:
    """0 or 1: the parity of negating words in the sentence carrying most of ``topic``."""
    best, best_hits = "", -1
    for sentence in _SENTENCE_RE.split(text):
        hits = len(_content(words(sentence)) & topic)
        if hits > best_hits:
            best, best_hits = sentence, hits
    return _negations(words(best)) % 2


def _negations(ws: list[str]) -> int:
    """Negating words in one sentence, with two composite rules:

    - an un-participle ("unpinned") is a negation;
    - "until" after a negation ("cannot start until X") makes "only after X": one more.

    Conditionals are beyond it: "must be awaited or they are collected" and "a task never
    awaited is collected" agree, but read as opposite (the benchmark counts such misses).
    """
    n = 0
    for w in ws:
        if w in NEGATIONS or w in FAILURES:
            n += 1
        elif _UN_PARTICIPLE.match(w) and w not in _NOT_UN:
            n += 1
        elif w == "until" and n > 0:
            n += 1
    return n


def opposite(a: str, b: str) -> tuple[bool, set[str]]:
    """(opposite polarity on a shared topic, the shared topic words)."""
    shared = topic_overlap(a, b)
    if not shared:
        return False, shared
    return polarity(a, shared) != polarity(b, shared), shared


def sentences(text: str) -> list[str]:
    """The non-empty sentences of ``text`` (split at . ! ? ; and line breaks)."""
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]
