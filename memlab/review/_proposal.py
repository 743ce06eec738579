"""The proposal file: markdown to tick, a JSON twin to check it against.

``review-YYYY-MM-DD.md`` is rendered from the JSON twin alone, deterministically, so apply can
tell a ticked checkbox from any other edit: it resets every ``- [x]`` to ``- [ ]``, renders the
twin again and compares the two texts line by line. The twin carries a digest of its own
content, so an edited twin is caught too.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from memlab._escape import md_line, split_lines
from memlab.errors import OutputExists, ProposalError, StaleProposal

FORMAT = "memlab-review/1"

SECTIONS: dict[str, str] = {
    "duplicates": "Duplicate clusters",
    "contradictions": "Contradictions",
    "stale": "Stale candidates",
    "drift": "Constitutional drift",
    "limits": "Over-limit files",
    "rules": "Frontmatter rule violations",
}

ITEM_LINE_RE = re.compile(r"^- \[(?P<mark>[ xX])\] `(?P<id>[a-z]+-[0-9a-f]{10})`")


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
    #: False for stores memlab does not write (elfmem databases, agent files): a checklist.
    appliable: bool = True


@dataclass
class Finding:
    """Something the reviewer should know that has no automatic change (no checkbox)."""

    id: str
    section: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)


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
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _inline(text: Any, width: int | None = 90, *, code: bool = False) -> str:
    """One markdown line (:func:`memlab._escape.md_line`), cut to ``width``; backticks kept
    only where ``code`` spans are ours."""
    return md_line(text, width, code=code)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value) if value else "none"
    if value is None:
        return "none"
    return _inline(value, 120)


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
    ticked: set[str] = field(default_factory=set)
    units: pd.DataFrame | None = field(default=None, repr=False)
    vectors: np.ndarray | None = field(default=None, repr=False)
    similarities: np.ndarray | None = field(default=None, repr=False)
    source: Path | None = None

    # ---- views ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return (f"<Proposal {self.store.get('kind')} {self.store.get('path')}: "
                f"{len(self.items)} items, {len(self.findings)} findings, {len(self.ticked)} ticked>")

    def item(self, item_id: str) -> Item:
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)

    def counts(self) -> dict[str, int]:
        out = {name: 0 for name in SECTIONS}
        for it in self.items:
            out[it.section] = out.get(it.section, 0) + 1
        return out

    def items_frame(self) -> pd.DataFrame:
        """One row per item: id, section, action, summary, target, key evidence, ticked."""
        rows = []
        for it in self.items:
            rows.append({"id": it.id, "section": it.section, "action": it.action,
                         "summary": it.summary, "file": it.target.get("file"),
                         "uid": it.target.get("uid"), "group": it.group,
                         "similarity": it.evidence.get("similarity"),
                         "appliable": it.appliable, "ticked": it.id in self.ticked,
                         "change": it.change.get("text")})
        df = pd.DataFrame(rows, columns=["id", "section", "action", "summary", "file", "uid",
                                         "group", "similarity", "appliable", "ticked", "change"])
        for col in ("id", "summary", "file", "uid", "group", "change"):
            df[col] = df[col].astype("string")
        df["section"] = df["section"].astype("category")
        df["action"] = df["action"].astype("category")
        df["similarity"] = pd.to_numeric(df["similarity"], errors="coerce").astype("float64")
        df["appliable"] = df["appliable"].astype("boolean")
        df["ticked"] = df["ticked"].astype("boolean")
        return df

    def clusters_frame(self) -> pd.DataFrame:
        rows = [{"cluster": c["id"], "uid": uid, "survivor": uid == c["survivor"],
                 "why": c["why"] if uid == c["survivor"] else None}
                for c in self.clusters for uid in c["members"]]
        df = pd.DataFrame(rows, columns=["cluster", "uid", "survivor", "why"])
        df["survivor"] = df["survivor"].astype("boolean")
        return df

    def summary(self) -> str:
        c = self.counts()
        dup_members = sum(len(cl["members"]) for cl in self.clusters)
        lines = [f"Review of {self.store.get('name')} ({self.store.get('kind')}), as of {self.as_of[:10]}",
                 f"  {len(self.clusters)} duplicate clusters ({dup_members} units -> {len(self.clusters)}), "
                 f"{c['duplicates']} removals proposed",
                 f"  {c['contradictions']} contradiction choices",
                 f"  {c['stale']} stale candidates",
                 f"  {c['drift']} constitutional drifts",
                 f"  {c['limits'] + c['rules']} limit / frontmatter fixes",
                 f"  {len(self.findings)} findings without an automatic change"]
        return "\n".join(lines)

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
        }
        body["digest"] = hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
        return body

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: Path | None = None) -> "Proposal":
        if data.get("format") != FORMAT:
            raise ProposalError(f"not a memlab review proposal (format {data.get('format')!r})",
                                path=source, hint=f"expected format {FORMAT!r}")
        body = {k: v for k, v in data.items() if k != "digest"}
        digest = hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
        if digest != data.get("digest"):
            raise StaleProposal("the JSON twin was edited after it was written (digest mismatch)",
                                path=source, hint="run `memlab review` again; tick items only in "
                                                  "the markdown file")
        return cls(store=data["store"], fingerprint=data["fingerprint"], made_at=data["made_at"],
                   as_of=data["as_of"], thresholds=data["thresholds"],
                   items=[Item(**it) for it in data["items"]],
                   findings=[Finding(**f) for f in data["findings"]],
                   clusters=data["clusters"], source=source)

    def markdown(self, ticked: Iterable[str] | None = None) -> str:
        return render_markdown(self.to_dict(), set(self.ticked if ticked is None else ticked))

    def file_stem(self) -> str:
        return f"review-{self.made_at[:10]}"

    def write(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write ``review-YYYY-MM-DD.md`` and its ``.json`` twin into ``folder``; returns the .md.

        An existing file from the same proposal (same digest) is rewritten with the current
        ticks; a different proposal of the same day is refused unless ``overwrite``.
        """
        folder = Path(folder).expanduser()
        folder.mkdir(parents=True, exist_ok=True)
        md_path = folder / f"{self.file_stem()}.md"
        json_path = md_path.with_suffix(".json")
        data = self.to_dict()
        if json_path.exists() and not overwrite:
            try:
                old = json.loads(json_path.read_text(encoding="utf-8")).get("digest")
            except (OSError, ValueError):
                old = None
            if old != data["digest"]:
                raise OutputExists(f"a different review proposal for {self.made_at[:10]} is already "
                                   "here", path=json_path,
                                   hint="apply or remove it first, or pass overwrite=True")
        json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        md_path.write_text(render_markdown(data, self.ticked), encoding="utf-8")
        self.source = md_path
        return md_path


# ---- markdown ---------------------------------------------------------------------------------

def _item_lines(it: dict[str, Any], ticked: set[str]) -> list[str]:
    mark = "x" if it["id"] in ticked else " "
    lines = [f"- [{mark}] `{_inline(it['id'], None)}` **{_inline(it['action'], None)}**: "
             f"{_inline(it['summary'], 200, code=True)}"]
    if it["evidence"]:
        ev = "; ".join(f"{_inline(k, None)} {_fmt(v)}" for k, v in it["evidence"].items())
        lines.append(f"  - evidence: {ev}")
    lines.append(f"  - change: {_inline(it['change'].get('text', ''), 400)}")
    if not it["appliable"]:
        lines.append("  - (checklist only: memlab does not write this kind of store)")
    return lines


def render_markdown(data: dict[str, Any], ticked: set[str] | None = None) -> str:
    """The proposal as markdown, from its JSON form only (so apply can re-render and compare)."""
    ticked = ticked or set()
    store, fp, th = data["store"], data["fingerprint"], data["thresholds"]
    # Every value from the store (names, paths, branch names: untrusted) is one md_line.
    out = [f"# memlab review: {_inline(store.get('name'), None)}", ""]
    out.append(f"- store: `{_inline(store.get('path'), None)}`")
    layout = f" (layout `{_inline(store['layout'], None)}`)" if store.get("layout") else ""
    out.append(f"- kind: `{_inline(store.get('kind'), None)}`{layout}")
    if fp.get("head_sha"):
        out.append(f"- made from: commit `{_inline(fp['head_sha'], None)}` on branch "
                   f"`{_inline(fp.get('branch') or '(detached)', None)}`")
    elif fp.get("sha256"):
        out.append(f"- made from: file sha256 `{_inline(fp['sha256'], None)}`")
    out.append(f"- made at: {_inline(data['made_at'], None)}; as of: {_inline(data['as_of'], None)}")
    out.append("- thresholds: " + ", ".join(f"{k} {_fmt(v)}" for k, v in th.items()))
    out.append(f"- proposal digest: `{data['digest'][:16]}`")
    out.append("")
    out.append("Tick `- [x]` the items you want, then run `memlab apply` on this file. "
               "Change nothing else: apply compares this file with its JSON twin and refuses "
               "any other edit.")
    out.append("")
    out.append("| section | items |")
    out.append("|---|---|")
    for name, title in SECTIONS.items():
        out.append(f"| {title} | {data['counts'].get(name, 0)} |")
    out.append(f"| Findings without an automatic change | {len(data['findings'])} |")
    items_by_section: dict[str, list[dict[str, Any]]] = {}
    for it in data["items"]:
        items_by_section.setdefault(it["section"], []).append(it)
    clusters = {c["id"]: c for c in data["clusters"]}
    for name, title in SECTIONS.items():
        items = items_by_section.get(name, [])
        if name == "duplicates":
            if not clusters and not items:
                continue
            members = sum(len(c["members"]) for c in clusters.values())
            out += ["", f"## {title} ({len(clusters)} clusters, {members} units -> {len(clusters)})"]
            for cid, c in clusters.items():
                out += ["", f"### Cluster `{_inline(cid, None)}` ({len(c['members'])} members)", ""]
                out.append(f"Survivor `{_inline(c['survivor'], None)}` \"{_inline(c['survivor_title'], 80)}\": "
                           f"{_inline(c['why'], None)}.")
                for p in c["pairs"]:
                    rec = f", recorded {_fmt(p['recorded'])}" if p.get("recorded") is not None else ""
                    out.append(f"- pair `{_inline(p['a'], None)}` ~ `{_inline(p['b'], None)}`: "
                               f"cosine {_fmt(p['similarity'])}{rec}")
                out.append("")
                for it in items:
                    if it["group"] == cid:
                        out += _item_lines(it, ticked)
            # Every item gets a checkbox, even one whose cluster is not in the file.
            loose = [it for it in items if it["group"] not in clusters]
            if loose:
                out += ["", "### Other duplicate items", ""]
                for it in loose:
                    out += _item_lines(it, ticked)
            continue
        if not items:
            continue
        out += ["", f"## {title} ({len(items)})", ""]
        for it in items:
            out += _item_lines(it, ticked)
    if data["findings"]:
        out += ["", "## Findings without an automatic change", ""]
        for f in data["findings"]:
            ev = "; ".join(f"{_inline(k, None)} {_fmt(v)}" for k, v in f["evidence"].items())
            out.append(f"- `{_inline(f['id'], None)}` ({_inline(f['section'], None)}) "
                       f"{_inline(f['summary'], 240, code=True)}"
                       + (f" [{ev}]" if ev else ""))
    return "\n".join(out) + "\n"


def ticked_ids(markdown: str) -> set[str]:
    """Ids of ticked items. Lines are :func:`memlab._escape.split_lines` (``\\n`` only), the
    same rule the tamper check in :func:`read_proposal` compares by."""
    return {m.group("id") for line in split_lines(markdown)
            if (m := ITEM_LINE_RE.match(line)) and m.group("mark") in "xX"}


def _untick(markdown: str) -> str:
    lines = []
    for line in split_lines(markdown):
        m = ITEM_LINE_RE.match(line)
        if m and m.group("mark") in "xX":
            line = "- [ ]" + line[len("- [x]"):]
        lines.append(line)
    return "\n".join(lines).rstrip("\n") + "\n"


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
            raise ProposalError("proposal file not found", path=p,
                                hint="a proposal is a review-YYYY-MM-DD.md with its .json twin "
                                     "beside it, as Proposal.write() leaves them")
    try:
        data = json.loads(json_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise StaleProposal(f"the JSON twin is not valid JSON ({exc})", path=json_path) from exc
    proposal = Proposal.from_dict(data, source=md_path)
    text = md_path.read_text(encoding="utf-8")
    expected = split_lines(render_markdown(data))
    found = split_lines(_untick(text))
    if expected != found:
        line = next((n for n, (a, b) in enumerate(zip(expected, found), start=1) if a != b),
                    min(len(expected), len(found)) + 1)
        want = expected[line - 1] if line <= len(expected) else "(end of file)"
        got = found[line - 1] if line <= len(found) else "(end of file)"
        raise StaleProposal(
            f"edited beyond ticking at line {line}: expected {_inline(want, 100)!r}, "
            f"found {_inline(got, 100)!r}", path=md_path,
            hint="only change '- [ ]' to '- [x]'; run `memlab review` again for a fresh file")
    proposal.ticked = ticked_ids(text)
    return proposal
