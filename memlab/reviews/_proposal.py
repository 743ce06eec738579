"""The proposal file: markdown to tick, a JSON twin to check it against.

This module is the proposal's model (items, findings, choices, the JSON twin and its digest,
writing and reading the pair); :mod:`memlab.reviews._markdown` renders the markdown from the
twin alone, deterministically, so apply can tell a ticked checkbox from any other edit: it
resets every ``- [x]`` to ``- [ ]``, renders the twin again and compares the two texts line by
line. The twin carries a digest of its own content, so an edited twin is caught too.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal

import numpy as np
import pandas as pd

from memlab._escape import md_line, split_lines, terminal_lines
from memlab.errors import InvalidArgument, OutputExists, ProposalError, StaleProposal
from memlab.formats import _json
from memlab.reviews._markdown import (
    proposal_stem,
    refuse_other_ticks,
    render_markdown,
    ticked_ids,
    unticked,
)

__all__ = [
    "FORMAT",
    "SECTIONS",
    "READ_SECONDS_PER_CHOICE",
    "TOP_N",
    "Item",
    "Finding",
    "Choice",
    "item_id",
    "json_value",
    "Proposal",
    "read_proposal",
]

FORMAT = "memlab-review/2"

SECTIONS: dict[str, str] = {
    "duplicates": "Duplicate clusters",
    "contradictions": "Contradictions",
    "stale": "Stale candidates",
    "drift": "Constitutional drift",
    "limits": "Over-limit files",
    "rules": "Frontmatter rule violations",
}

#: Choices the markdown opens with: about 40 s of reading each, so ~10 minutes.
READ_SECONDS_PER_CHOICE = 40
TOP_N = 10 * 60 // READ_SECONDS_PER_CHOICE


@dataclass
class Item:
    """One proposed action: tick it in the markdown to have ``apply_proposal`` make ``change``."""

    id: str
    section: str
    action: str
    summary: str
    target: dict[str, Any]
    evidence: dict[str, Any]
    change: dict[str, Any]
    group: str | None = None
    #: Alternatives of one decision (keep A / keep B): at most one of a group may be ticked.
    exclusive: bool = False
    #: False for stores memlab has no way to change (agent files, plain folders): a checklist.
    appliable: bool = True
    #: Which option of its choice this is: keep / keep_both / merge / restore / keep_current / fix.
    option: str = "fix"


@dataclass
class Finding:
    """Something the reviewer should know that has no automatic change (no checkbox)."""

    id: str
    section: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class Choice:
    """One decision for the reader: its options are items, and at most one may be ticked.

    A duplicate cluster (keep one of its members / keep all / merge), a contradiction (keep A /
    keep B / keep both), a constitutional restore (restore / keep the paraphrase), or a single
    fix (archive a stale unit, repair a frontmatter rule). ``impact`` ranks choices for triage:
    ``tokens_saved`` (about chars/4 of what the first option removes), ``share`` (of the
    store's tokens, or of the prompt for memfs), ``risk`` (low/medium/high) and ``score``.
    """

    id: str
    section: str
    kind: str
    title: str
    options: list[str]
    evidence: dict[str, Any] = field(default_factory=dict)
    impact: dict[str, Any] = field(default_factory=dict)


def item_id(prefix: str, *parts: Any) -> str:
    """A stable id: the same store state and thresholds give the same ids on every run."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:10]}"


def json_value(value: Any) -> Any:
    """JSON-safe, deterministic values: timestamps as ISO UTC, floats rounded, NA as None."""
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        seq = sorted(value) if isinstance(value, set) else value
        return [json_value(v) for v in seq]
    if isinstance(value, np.ndarray):
        return [json_value(v) for v in value.tolist()]
    if value is None:
        return None
    if isinstance(value, (pd.Timestamp, dt.datetime)):
        if pd.isna(value):
            return None
        ts = pd.Timestamp(value)
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
        return ts.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        if np.isnan(value):
            return None
        return round(float(value), 4)
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def _canonical(data: dict[str, Any]) -> str:
    return _json.dumps(data, sort_keys=True, separators=(",", ":"))


@dataclass
class Proposal:
    """What a review found, as items to tick. ``write`` saves it; ``apply_proposal`` applies it.

    ``units``, ``vectors`` and ``similarities`` are the working data a notebook plots; they are
    not part of the file.
    """

    store: dict[str, Any]
    fingerprint: dict[str, Any]
    made_at: str
    as_of: str
    thresholds: dict[str, Any]
    items: list[Item] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    clusters: list[dict[str, Any]] = field(default_factory=list)
    #: Decisions, highest impact first; every item is an option of exactly one choice.
    choices: list[Choice] = field(default_factory=list)
    #: How many choices the markdown shows in full (None: all); the JSON twin holds every one.
    top: int | None = TOP_N
    ticked: set[str] = field(default_factory=set)
    units: pd.DataFrame | None = field(default=None, repr=False)
    vectors: np.ndarray | None = field(default=None, repr=False)
    similarities: np.ndarray | None = field(default=None, repr=False)
    source: Path | None = None
    #: The ticks ``source`` held when this object last read it (:func:`read_proposal`) or
    #: wrote it: a tick there that the object no longer holds was unticked by its holder,
    #: not made by a person since (see :meth:`write`).
    _file_ticks: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    # ---- views ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return (
            f"<Proposal {self.store.get('kind')} {self.store.get('path')}: "
            f"{len(self.items)} items, {len(self.findings)} findings, {len(self.ticked)} ticked>"
        )

    def item(self, item_id: str) -> Item:
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)

    def counts(self) -> dict[str, int]:
        """Choices per section."""
        out = {name: 0 for name in SECTIONS}
        for c in self.choices:
            out[c.section] = out.get(c.section, 0) + 1
        return out

    def choice_of(self, item_id: str) -> Choice:
        for c in self.choices:
            if item_id in c.options:
                return c
        raise KeyError(item_id)

    def choices_frame(self) -> pd.DataFrame:
        """One row per choice, in rank order: rank, id, section, kind, title, options and impact."""
        rows = [
            {
                "rank": n,
                "id": c.id,
                "section": c.section,
                "kind": c.kind,
                "title": c.title,
                "options": len(c.options),
                "tokens_saved": c.impact.get("tokens_saved"),
                "share": c.impact.get("share"),
                "risk": c.impact.get("risk"),
                "score": c.impact.get("score"),
            }
            for n, c in enumerate(self.choices, start=1)
        ]
        return pd.DataFrame(
            rows,
            columns=[
                "rank",
                "id",
                "section",
                "kind",
                "title",
                "options",
                "tokens_saved",
                "share",
                "risk",
                "score",
            ],
        )

    def items_frame(self) -> pd.DataFrame:
        """One row per item: id, section, action, summary, target, key evidence, ticked."""
        rows = []
        for it in self.items:
            rows.append(
                {
                    "id": it.id,
                    "section": it.section,
                    "action": it.action,
                    "summary": it.summary,
                    "file": it.target.get("file"),
                    "uid": it.target.get("uid"),
                    "group": it.group,
                    "similarity": it.evidence.get("similarity"),
                    "appliable": it.appliable,
                    "ticked": it.id in self.ticked,
                    "change": it.change.get("text"),
                }
            )
        df = pd.DataFrame(
            rows,
            columns=[
                "id",
                "section",
                "action",
                "summary",
                "file",
                "uid",
                "group",
                "similarity",
                "appliable",
                "ticked",
                "change",
            ],
        )
        for col in ("id", "summary", "file", "uid", "group", "change"):
            df[col] = df[col].astype("string")
        df["section"] = df["section"].astype("category")
        df["action"] = df["action"].astype("category")
        df["similarity"] = pd.to_numeric(df["similarity"], errors="coerce").astype("float64")
        df["appliable"] = df["appliable"].astype("boolean")
        df["ticked"] = df["ticked"].astype("boolean")
        return df

    def clusters_frame(self) -> pd.DataFrame:
        rows = [
            {
                "cluster": c["id"],
                "uid": uid,
                "survivor": uid == c["survivor"],
                "why": c["why"] if uid == c["survivor"] else None,
            }
            for c in self.clusters
            for uid in c["members"]
        ]
        df = pd.DataFrame(rows, columns=["cluster", "uid", "survivor", "why"])
        df["survivor"] = df["survivor"].astype("boolean")
        return df

    def summary(self) -> str:
        c = self.counts()
        dup_members = sum(len(cl["members"]) for cl in self.clusters)
        lines = [
            f"Review of {self.store.get('name')} ({self.store.get('kind')}), "
            f"as of {self.as_of[:10]}",
            f"  {len(self.clusters)} duplicate clusters "
            f"({dup_members} units -> {len(self.clusters)}), "
            f"{c['duplicates']} duplicate choices",
            f"  {c['contradictions']} contradiction choices",
            f"  {c['stale']} stale candidates",
            f"  {c['drift']} constitutional drifts",
            f"  {c['limits'] + c['rules']} limit / frontmatter fixes",
            f"  {sum(f.section == 'stale_evidence' for f in self.findings)} recorded relations "
            "not confirmed on today's text (stale evidence: proposes nothing as recorded)",
            f"  {sum(f.section != 'stale_evidence' for f in self.findings)} findings without an "
            "automatic change",
        ]
        return terminal_lines(lines)

    def tick(self, *ids: str) -> "Proposal":
        for i in ids:
            self.item(i)  # KeyError for an unknown id
        self.ticked.update(ids)
        return self

    def untick(self, *ids: str) -> "Proposal":
        self.ticked.difference_update(ids)
        return self

    # ---- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        body = {
            "format": FORMAT,
            "store": json_value(self.store),
            "fingerprint": json_value(self.fingerprint),
            "made_at": self.made_at,
            "as_of": self.as_of,
            "thresholds": json_value(self.thresholds),
            "counts": self.counts(),
            "items": [json_value(asdict(it)) for it in self.items],
            "findings": [json_value(asdict(f)) for f in self.findings],
            "clusters": json_value(self.clusters),
            "choices": [json_value(asdict(c)) for c in self.choices],
            "top": self.top,
        }
        body["digest"] = hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
        return body

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: Path | None = None) -> "Proposal":
        if data.get("format") != FORMAT:
            raise ProposalError(
                f"not a memlab review proposal (format {data.get('format')!r})",
                path=source,
                hint=f"expected format {FORMAT!r}",
            )
        body = {k: v for k, v in data.items() if k != "digest"}
        digest = hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
        if digest != data.get("digest"):
            raise StaleProposal(
                "the JSON twin was edited after it was written (digest mismatch)",
                path=source,
                hint="run `memlab review` again; tick items only in the markdown file",
            )
        return cls(
            store=data["store"],
            fingerprint=data["fingerprint"],
            made_at=data["made_at"],
            as_of=data["as_of"],
            thresholds=data["thresholds"],
            items=[Item(**it) for it in data["items"]],
            findings=[Finding(**f) for f in data["findings"]],
            clusters=data["clusters"],
            choices=[Choice(**c) for c in data["choices"]],
            top=data["top"],
            source=source,
        )

    def markdown(self, ticked: Iterable[str] | None = None) -> str:
        return render_markdown(self.to_dict(), set(self.ticked if ticked is None else ticked))

    def file_stem(self) -> str:
        return proposal_stem(self.made_at, self.top)

    def write(self, folder: str | Path, *, overwrite: bool | Literal["unticked"] = False) -> Path:
        """Write ``review-YYYY-MM-DD.md`` and its ``.json`` twin into ``folder``; returns the .md.

        One rule for every writer: a person's tick is never erased without an explicit
        ``overwrite=True``. A hand tick is a tick in the existing markdown (read by
        :func:`ticked_ids`, the reader ``memlab apply`` uses) that this object neither holds
        nor saw there itself (its last :func:`read_proposal` or write of the same file and
        proposal): a tick it wrote and has unticked since is its own to take back. Ticks
        are refused, not adopted: the file's ticks and this object's are two sets of
        decisions, and quietly keeping either drops the other; like git refusing to overwrite
        local changes, the writer names the file and leaves the choice to the caller
        (:class:`OutputExists`; ``read_proposal(path)`` loads the ticked file).

        ``overwrite`` says what else may be replaced:

        - ``False``: the same proposal (same digest) only; a different proposal of the same
          day is refused. For a writer holding the proposal already in the file (the
          review notebook's *Write proposal* button).
        - ``"unticked"``: any proposal of the same day whose markdown holds no hand tick, as
          a fresh review run replaces its own earlier, untouched output (the review
          notebook, so ``memlab report review`` and scheduled runs). A ticked file fails the
          run, loudly and by name, rather than being kept with the new proposal written
          beside it: an unattended run then reports a failure (and notifies) instead of
          leaving two proposals of one day to choose from, and the person decides (apply
          the ticked file, or move it away and run again).
        - ``True``: anything (``memlab review --force``), ticks included.
        """
        if not (overwrite is True or overwrite is False or overwrite == "unticked"):
            raise InvalidArgument(
                f"overwrite must be False, 'unticked' or True, not {overwrite!r}",
                hint="'unticked' replaces a proposal of the day unless a person ticked it",
            )
        folder = Path(folder).expanduser()
        folder.mkdir(parents=True, exist_ok=True)
        md_path = folder / f"{self.file_stem()}.md"
        json_path = md_path.with_suffix(".json")
        data = self.to_dict()
        same = not json_path.exists()
        if json_path.exists() and overwrite is not True:
            try:
                old = json.loads(json_path.read_text(encoding="utf-8")).get("digest")
            except (OSError, ValueError, AttributeError):
                old = None
            same = old == data["digest"]
            if not same and overwrite is False:
                raise OutputExists(
                    f"a different review proposal for {self.made_at[:10]} is already here",
                    path=json_path,
                    hint="apply or remove it first, or pass overwrite=True (memlab review --force)",
                )
        if md_path.exists() and overwrite is not True:
            seen = self._file_ticks if same and self._is_source(md_path) else set()
            refuse_other_ticks(md_path, self.ticked | seen)
        json_path.write_text(_json.dumps(data, indent=2) + "\n", encoding="utf-8")
        md_path.write_text(render_markdown(data, self.ticked), encoding="utf-8")
        self.source = md_path
        self._file_ticks = set(self.ticked)
        return md_path

    def _is_source(self, md_path: Path) -> bool:
        """Whether ``md_path`` is the file this object last read or wrote."""
        if self.source is None:
            return False
        try:
            return self.source.resolve() == md_path.resolve()
        except OSError:
            return False


def read_proposal(path: str | Path) -> Proposal:
    """Load a proposal from its markdown (or JSON) path, with the ticks from the markdown.

    Raises :class:`StaleProposal` when the markdown differs from its twin in anything but the
    ticks, naming the first line that differs.
    """
    path = Path(path).expanduser()
    md_path = path.with_suffix(".md")
    json_path = path.with_suffix(".json")
    for p in (md_path, json_path):
        if not p.is_file():
            raise ProposalError(
                "proposal file not found",
                path=p,
                hint="a proposal is a review-YYYY-MM-DD.md with its .json twin "
                "beside it, as Proposal.write() leaves them",
            )
    try:
        data = json.loads(json_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise StaleProposal(f"the JSON twin is not valid JSON ({exc})", path=json_path) from exc
    proposal = Proposal.from_dict(data, source=md_path)
    text = md_path.read_text(encoding="utf-8")
    expected = split_lines(render_markdown(data))
    found = split_lines(unticked(text))
    if expected != found:
        line = next(
            (n for n, (a, b) in enumerate(zip(expected, found), start=1) if a != b),
            min(len(expected), len(found)) + 1,
        )
        want = expected[line - 1] if line <= len(expected) else "(end of file)"
        got = found[line - 1] if line <= len(found) else "(end of file)"
        raise StaleProposal(
            f"edited beyond ticking at line {line}: expected {md_line(want, 100)!r}, "
            f"found {md_line(got, 100)!r}",
            path=md_path,
            hint="only change '- [ ]' to '- [x]'; run `memlab review` again for a fresh file",
        )
    proposal.ticked = ticked_ids(text)
    proposal._file_ticks = set(proposal.ticked)
    return proposal
