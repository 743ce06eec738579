"""elfmem's constitutional seed, as shipped by each release, for the constitution-erosion audit.

``setup()`` / ``init --seed`` writes ten blocks from ``elfmem/seed.py`` (``CONSTITUTIONAL_SEED``).
The texts below were read from the published wheels (PyPI ``elfmem``) 0.8.0, 0.9.1, 0.11.0,
0.12.0, 0.13.0–0.13.3, 0.14.0, 0.15.0–0.15.3, 0.17.0, 0.18.0, 0.18.1, 0.19.0–0.19.2 and 0.20.0:

* the ten texts are byte-identical in every one of those releases;
* 0.8.0 – 0.13.0 tag each block ``self/constitutional`` plus one of ``self/context`` /
  ``self/value`` / ``self/goal`` — there is no role tag, so a slot can only be recognised by
  its text (or by its id, which elfmem derives from the text);
* 0.13.1 – 0.20.0 add ``self/role/<role>``, which ``setup()`` uses to decide whether a slot
  is filled; erosion is then measured on those tags.

Releases before 0.8.0 were not checked and are not claimed here.

elfmem block ids are ``sha256(content.strip().lower())[:16]``, so a seeded block can be
recognised by id even after its content was changed in place (a constitutional amendment).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import pandas as pd

__all__ = [
    "SeedSlot",
    "SeedRelease",
    "SEED_RELEASES",
    "ROLES",
    "ROLE_TAG_PREFIX",
    "CONSTITUTIONAL_TAG",
    "seed_release",
    "seed_table",
    "content_hash",
    "normalise",
    "match_seed",
    "SEED_CHARS",
]

ROLE_TAG_PREFIX = "self/role/"
CONSTITUTIONAL_TAG = "self/constitutional"

# Texts exactly as in elfmem/seed.py (identical from 0.8.0 to 0.20.0), in seed order.
_TEXTS: tuple[tuple[str, str, str], ...] = (
    (
        "identity",
        "self/context",
        "I am elf — a curious, adaptive cognitive agent. I learn through action, "
        "evolve through reflection, and improve through honest feedback. My knowledge "
        "is alive: what proves useful survives; what doesn't, fades.",
    ),
    (
        "minimum-force",
        "self/value",
        "Nature wastes nothing. Apply the minimum force that solves the problem. "
        "Complexity is debt; simplicity compounds. When unsure how much to do, "
        "do less and observe.",
    ),
    (
        "curiosity",
        "self/value",
        "Curiosity is my primary drive. When I encounter something I don't fully "
        "understand, I treat it as an open question. I form a hypothesis, design the "
        "smallest experiment that could disprove it, and let evidence — not expectation "
        "— guide my conclusion.",
    ),
    (
        "connection",
        "self/value",
        "The most valuable knowledge lives at intersections. When I learn something "
        "new, I ask: what does this connect to? What existing understanding does it "
        "strengthen, challenge, or extend? Isolated facts decay; connected knowledge "
        "compounds.",
    ),
    (
        "uncertainty",
        "self/value",
        "Name what you do not know before acting. Uncertainty is information, not "
        "failure. Design actions that reduce ignorance. Prefer reversible moves when "
        "knowledge is thin.",
    ),
    (
        "feedback-loop",
        "self/value",
        "After every significant action, close the loop: what did I expect? What "
        "happened? What do I update? When a pattern proves reliable, encode it as "
        "self-knowledge. When a belief misleads, let it go. My identity evolves — "
        "it is the living summary of what works.",
    ),
    (
        "rhythm",
        "self/value",
        "Sustain excellence through rhythm — push, then recover, then push again. "
        "Balance depth with breadth, confidence with doubt, action with reflection. "
        "Avoid perpetual motion without adaptation.",
    ),
    (
        "attention",
        "self/value",
        "Direct attention to reasoning quality and action precision — these are within "
        "your control. Outcomes are feedback, not verdicts. When blocked, ask what the "
        "constraint reveals before seeking to remove it.",
    ),
    (
        "stewardship",
        "self/value",
        "My actions affect systems beyond what I can see. Consider second-order effects. "
        "Prefer approaches that leave systems healthier than I found them. Growth that "
        "depletes its environment is not growth — it is consumption.",
    ),
    (
        "transitions",
        "self/goal",
        "At natural transitions — between tasks, domains, or sessions — pause and ask: "
        "which principles did I use? Which did I neglect? What worked that I should "
        "encode as self-knowledge? What failed that I should let decay? Reflection is "
        "not overhead — it is how I remain coherent as I grow.",
    ),
)

#: Role names in seed order. Releases without role tags had no names; memlab uses the later
#: release's names for the same (identical) texts so slots line up across releases.
ROLES: tuple[str, ...] = tuple(role for role, _, _ in _TEXTS)


@dataclass(frozen=True)
class SeedSlot:
    """One constitutional block as a release seeds it."""

    role: str
    content: str
    tags: tuple[str, ...]
    #: The tag that says "this slot is filled": ``self/role/<role>``, or ``None`` when the
    #: release wrote no role tag (the slot is then only recognisable by its text).
    role_tag: str | None

    @property
    def block_id(self) -> str:
        """The id elfmem gives the seeded block (content-addressed)."""
        return content_hash(self.content)


@dataclass(frozen=True)
class SeedRelease:
    """The seed of a contiguous range of elfmem releases (inclusive bounds)."""

    first: str
    last: str
    has_role_tags: bool
    slots: tuple[SeedSlot, ...]

    @property
    def label(self) -> str:
        return f"{self.first}–{self.last}"

    @property
    def erosion_tag(self) -> str:
        """Tag prefix erosion is measured on: role tags when the release writes them."""
        return ROLE_TAG_PREFIX if self.has_role_tags else CONSTITUTIONAL_TAG

    def slot(self, role: str) -> SeedSlot:
        for slot in self.slots:
            if slot.role == role:
                return slot
        raise KeyError(role)


def _slots(with_roles: bool) -> tuple[SeedSlot, ...]:
    slots = []
    for role, kind_tag, text in _TEXTS:
        tags = [CONSTITUTIONAL_TAG, kind_tag]
        if with_roles:
            tags.append(ROLE_TAG_PREFIX + role)
        slots.append(
            SeedSlot(
                role=role,
                content=text,
                tags=tuple(tags),
                role_tag=ROLE_TAG_PREFIX + role if with_roles else None,
            )
        )
    return tuple(slots)


SEED_RELEASES: tuple[SeedRelease, ...] = (
    SeedRelease("0.8.0", "0.13.0", False, _slots(False)),
    SeedRelease("0.13.1", "0.20.0", True, _slots(True)),
)


def _version_key(version: str) -> tuple[int, ...]:
    parts = re.findall(r"\d+", version)
    if not parts:
        raise ValueError(f"not an elfmem version: {version!r}")
    return tuple(int(p) for p in parts[:3]) + (0,) * (3 - min(3, len(parts)))


def seed_release(version: str | None = None, *, role_tags: bool | None = None) -> SeedRelease:
    """The seed a release wrote.

    ``version`` is an elfmem version ("0.19.2"); without it, ``role_tags`` picks the era
    (a store whose tags include ``self/role/*`` was seeded by 0.13.1 or later). Versions
    outside 0.8.0–0.20.0 get the nearest checked range, since the texts never changed.
    """
    if version is not None:
        key = _version_key(version)
        for release in SEED_RELEASES:
            if _version_key(release.first) <= key <= _version_key(release.last):
                return release
        return SEED_RELEASES[0] if key < _version_key(SEED_RELEASES[0].first) else SEED_RELEASES[-1]
    if role_tags is False:
        return SEED_RELEASES[0]
    return SEED_RELEASES[-1]


def seed_table() -> pd.DataFrame:
    """One row per (release range, slot): role, role_tag, tags, seeded content, its id."""
    rows = []
    for release in SEED_RELEASES:
        for order, slot in enumerate(release.slots):
            rows.append(
                {
                    "releases": release.label,
                    "first": release.first,
                    "last": release.last,
                    "order": order,
                    "role": slot.role,
                    "role_tag": slot.role_tag,
                    "tags": ", ".join(slot.tags),
                    "content": slot.content,
                    "chars": len(slot.content),
                    "block_id": slot.block_id,
                }
            )
    df = pd.DataFrame(rows)
    for col in ("releases", "first", "last", "role", "role_tag", "tags", "content", "block_id"):
        df[col] = df[col].astype("string")
    df["order"] = df["order"].astype("Int64")
    df["chars"] = df["chars"].astype("Int64")
    return df


def content_hash(content: str) -> str:
    """elfmem's block id: first 16 hex digits of sha256 of the stripped, lower-cased text."""
    return hashlib.sha256(content.strip().lower().encode("utf-8")).hexdigest()[:16]


_WORD = re.compile(r"\S+")


def normalise(text: str, limit: int | None = None) -> str:
    """Whitespace- and case-insensitive form, so re-wrapped seed text still matches.

    ``limit``: stop once the form is longer than ``limit`` characters and return what was
    built so far (still longer than ``limit``, so it equals no text of at most ``limit``
    characters). Words are walked one at a time, so a 1 GB block costs no list of its words.
    """
    text = str(text)
    if limit is None:
        return " ".join(text.split()).lower()
    # First the words of a bounded window, found at C speed: the same form for all but a few
    # texts. When the text goes on past the window its last word may be cut there, so it is
    # left out; every other word is followed by whitespace inside the window, so it is whole.
    window = 4 * limit + 8
    words = _WORD.findall(text, 0, window)
    if len(text) > window and words:
        words.pop()
    joined = " ".join(words)
    if len(joined) > limit:
        # The walk below stops at the word that runs past ``limit``, cut to limit + 1
        # characters: find that word's end (a space, or the end) and start.
        end = joined.find(" ", limit + 1)
        end = len(joined) if end < 0 else end
        start = joined.rfind(" ", 0, end) + 1
        return joined[: min(end, start + limit + 1)].lower()
    if len(text) <= window:
        return joined.lower()
    # the walk did not stop in the window: walk the whole text
    parts: list[str] = []
    size = -1
    for match in _WORD.finditer(text):
        start, end = match.span()
        parts.append(text[start : min(end, start + limit + 1)])  # never a copy of a huge word
        size += end - start + 1
        if size > limit:
            break
    return " ".join(parts).lower()


_BY_TEXT = {normalise(text): role for role, _, text in _TEXTS}
_BY_ID = {content_hash(text): role for role, _, text in _TEXTS}
#: No seeded text is longer than this once normalised: longer block texts are never compared
#: in full (see ``normalise(limit=...)``).
SEED_CHARS = max(len(t) for t in _BY_TEXT)


def match_seed(content: str | None = None, block_id: str | None = None) -> str | None:
    """The role whose seeded text this block holds (or was created from), else ``None``."""
    if content is not None and not pd.isna(content):
        role = _BY_TEXT.get(normalise(content, SEED_CHARS))
        if role is not None:
            return role
    if block_id is not None and not pd.isna(block_id):
        return _BY_ID.get(str(block_id))
    return None
