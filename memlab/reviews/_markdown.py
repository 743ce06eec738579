"""The proposal's markdown: ``review-YYYY-MM-DD.md``, rendered from the JSON twin alone.

Rendering is deterministic, so apply can tell a ticked checkbox from any other edit: it resets
every ``- [x]`` to ``- [ ]`` (:func:`unticked`), renders the twin again and compares the two
texts line by line (:func:`memlab.reviews._proposal.read_proposal`). The apply notes say, per
store, what ``memlab apply`` does; :func:`refuse_other_ticks` keeps a writer from erasing a
person's ticks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from memlab import kinds
from memlab._escape import md_line, split_lines
from memlab.errors import OutputExists

__all__ = [
    "ELFMEM_APPLY_SCHEMA",
    "ITEM_LINE_RE",
    "apply_note",
    "render_markdown",
    "ticked_ids",
    "unticked",
    "refuse_other_ticks",
    "checklist_note",
    "commit_note",
    "script_note",
    "proposal_stem",
    "excerpt",
]

#: The first elfmem schema whose release (0.20) has ``edit`` and ``forget``.
ELFMEM_APPLY_SCHEMA = 9


def excerpt(text: str, width: int = 70) -> str:
    """``text`` on one line (runs of whitespace as one space), at most ``width`` characters
    (cut with "…"): a memory's text quoted in a proposal. A backquote becomes ``'`` so an
    excerpt never opens a markdown code span of its own."""
    s = " ".join(str(text).split()).replace("`", "'")
    return s if len(s) <= width else s[: width - 1] + "…"


ITEM_LINE_RE = re.compile(r"^- \[(?P<mark>[ xX])\] `(?P<id>[a-z]+-[0-9a-f]{10})`")


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


def _item_lines(it: dict[str, Any], ticked: set[str]) -> list[str]:
    mark = "x" if it["id"] in ticked else " "
    lines = [
        f"- [{mark}] `{_inline(it['id'], None)}` **{_inline(it['option'], None)}**: "
        f"{_inline(it['summary'], 200, code=True)}"
    ]
    lines.append(f"  - change: {_inline(it['change'].get('text', ''), 400)}")
    if not it["appliable"]:
        lines.append("  - (checklist only: make this change by hand)")
    return lines


def _evidence_line(evidence: dict[str, Any]) -> str:
    return "; ".join(f"{_inline(k, None)} {_fmt(v)}" for k, v in evidence.items())


def _quote(value: Any) -> str:
    import shlex

    return _inline(shlex.quote(str(value)), None)


def apply_note(data: dict[str, Any]) -> list[str]:
    """What ``memlab apply`` does for this store, in words that are true when followed: the
    note of the kind's :class:`~memlab.kinds.Apply`."""
    review = getattr(kinds.lookup(data["store"].get("kind")), "review", None)
    if review is None:
        return checklist_note()
    return list(
        review.resolved.apply.note(data, proposal_stem(data["made_at"], data.get("top")) + ".md")
    )


def commit_note(data: Mapping[str, Any], name: str) -> list[str]:
    """The note of a store applied as one git commit."""
    if data["store"].get("bundle"):
        return [
            f"**Apply:** this proposal was made from the git bundle "
            f"`{_inline(data['store']['bundle'], None)}`, which is not a working repository, "
            "so `memlab apply` refuses it: clone the bundle (`git clone BUNDLE repo`), review "
            "the clone and apply there, or make the ticked changes by hand."
        ]
    fp = data["fingerprint"]
    if not fp.get("head_sha"):
        return [
            "**Apply:** this store is not a git repository, so `memlab apply` refuses it: "
            "make the ticked changes by hand."
        ]
    return [
        f"**Apply:** tick one option per choice, then run `memlab apply {name} --dry-run` "
        f"in this folder to see the diff, and `memlab apply {name}` to make the ticked "
        f"changes in `{_inline(fp.get('repo'), None)}` as one commit on branch "
        f"`{_inline(fp.get('branch') or '(detached)', None)}` "
        "(no hooks run; `--branch NAME` commits on a "
        "new branch instead). Two ticks in one choice, or any edit besides ticking, are "
        "refused."
    ]


def script_note(data: Mapping[str, Any], name: str) -> list[str]:
    """The note of an elfmem database, applied by a script through elfmem's API."""
    schema = data["store"].get("schema_version")
    if schema is None or int(schema) < ELFMEM_APPLY_SCHEMA:
        return [
            f"**Apply:** `memlab apply` refuses this database: it was written by elfmem "
            f"before 0.20 (schema {schema}), whose API has no edit or forget. Use this file as "
            "a checklist, or upgrade the agent to elfmem 0.20 or later (it migrates the "
            "schema), review again and apply that proposal."
        ]
    return [
        f"**Apply:** memlab never writes this database. Tick one option per choice, then "
        f"run `memlab apply {name}` in this folder: it writes `{name[: -len('.md')]}"
        f".apply.py` beside this file, a script that checks each ticked block still holds "
        "the text reviewed here, backs the database up with `VACUUM INTO`, then makes "
        "exactly the ticked changes through elfmem's own API (`forget`, `edit`, "
        "`remember`; elfmem 0.20 or later). Read it, then run it with the Python where "
        "your agent's elfmem is installed and configured (`edit` re-embeds the new text "
        "with your embedding settings; `ELFMEM_CONFIG` names the config file)."
    ]


def checklist_note() -> list[str]:
    """The note of a store memlab does not write (a Letta agent file)."""
    return [
        "**Apply:** memlab does not write Letta agent files, and `memlab apply` refuses this "
        "proposal. Use it as a checklist: make the ticked changes in Letta (the ADE or the "
        "blocks API)."
    ]


def proposal_stem(made_at: str, top: Any) -> str:
    """The file name of a proposal, less ``.md``/``.json``: ``review-YYYY-MM-DD``, with
    ``-all`` for the full list (another file, so asking for it never replaces a ticked
    proposal)."""
    return f"review-{made_at[:10]}" + ("-all" if top is None else "")


def _choice_lines(
    n: int, c: dict[str, Any], items: dict[str, dict[str, Any]], ticked: set[str]
) -> list[str]:
    how = "tick one option" if len(c["options"]) > 1 else "tick to accept"
    out = [
        "",
        f"### {n}. {_inline(c['kind'], None)}: {_inline(c['title'], 160, code=True)} ({how})",
        "",
    ]
    im = c["impact"]
    out.append(
        f"Impact: {_fmt(im.get('tokens_saved', 0))} tokens saved "
        f"({100 * float(im.get('share') or 0):.1f}% of "
        f"{_inline(im.get('share_of', 'the store'), None)}), "
        f"risk {_inline(im.get('risk'), None)}; choice `{_inline(c['id'], None)}`."
    )
    if c["evidence"]:
        out.append(f"Evidence (measured at review time): {_evidence_line(c['evidence'])}.")
    out.append("")
    for oid in c["options"]:
        out += _item_lines(items[oid], ticked)
    return out


def render_markdown(data: dict[str, Any], ticked: set[str] | None = None) -> str:
    """The proposal as markdown, from its JSON form only (so apply can re-render and compare)."""
    ticked = ticked or set()
    store, fp, th = data["store"], data["fingerprint"], data["thresholds"]
    choices = data["choices"]
    top = len(choices) if data.get("top") is None else min(data["top"], len(choices))
    shown, rest = choices[:top], choices[top:]
    # Every value from the store (names, paths, branch names: untrusted) is one md_line.
    out = [f"# memlab review: {_inline(store.get('name'), None)}", ""]
    layout = f", layout `{_inline(store['layout'], None)}`" if store.get("layout") else ""
    out.append(
        f"- store: `{_inline(store.get('path'), None)}` (kind "
        f"`{_inline(store.get('kind'), None)}`{layout})"
    )
    if fp.get("head_sha"):
        out.append(
            f"- made from: commit `{_inline(fp['head_sha'], None)}` on branch "
            f"`{_inline(fp.get('branch') or '(detached)', None)}`"
        )
    elif fp.get("sha256"):
        out.append(f"- made from: file sha256 `{_inline(fp['sha256'], None)}`")
    out.append(
        f"- made at: {_inline(data['made_at'], None)}; as of: {_inline(data['as_of'], None)}; "
        f"proposal digest `{_inline(data['digest'][:16], None)}`"
    )
    out.append("- thresholds: " + ", ".join(f"{k} {_fmt(v)}" for k, v in th.items()))
    out.append("")
    what = f"all {len(choices)}" if not rest else f"the top {top} of {len(choices)}"
    out.append(f"## {what} choices, ranked by impact")
    out.append("")
    if shown:
        out.append("| # | kind | what | tokens saved | risk |")
        out.append("|---|---|---|---|---|")
        for n, c in enumerate(shown, start=1):
            out.append(
                f"| {n} | {_inline(c['kind'], None)} | "
                f"{_inline(c['title'], 70).replace('|', '/')} | "
                f"{_fmt(c['impact'].get('tokens_saved', 0))} | "
                f"{_inline(c['impact'].get('risk'), None)} |"
            )
    else:
        out.append(
            "Nothing to decide: no duplicates, contradictions, stale units, drift or rule "
            "breaches were found."
        )
    if rest:
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for c in rest:
            by_kind.setdefault(c["kind"], []).append(c)
        out += [
            "",
            f"Not listed here: {len(rest)} more choice(s) of lower impact (every one is in "
            "the JSON twin). To list them all, run `memlab review "
            f"{_quote(store.get('path'))} --all --as-of {_inline(data['as_of'], None)} "
            f"--near-duplicate {th.get('near_duplicate')} --stale-after-days "
            f"{th.get('stale_after_days')} --contradiction-min "
            f"{th.get('contradiction_min')} --out .` (it writes a separate "
            "`review-DATE-all.md`).",
            "",
            "| kind | choices | tokens saved |",
            "|---|---|---|",
        ]
        for kind, cs in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
            out.append(
                f"| {_inline(kind, None)} | {len(cs)} | "
                f"{sum(c['impact'].get('tokens_saved', 0) for c in cs)} |"
            )
    out.append("")
    out += apply_note(data)
    items = {it["id"]: it for it in data["items"]}
    if shown:
        out += ["", "## Choices"]
        for n, c in enumerate(shown, start=1):
            out += _choice_lines(n, c, items, ticked)
    stale = [f for f in data["findings"] if f["section"] == "stale_evidence"]
    if stale:
        out += [
            "",
            "## Stale evidence (recorded relations that no longer hold; never used to "
            "propose a change)",
            "",
        ]
        for f in stale:
            out.append(
                f"- `{_inline(f['id'], None)}` {_inline(f['summary'], 240, code=True)}"
                + (f" [{_evidence_line(f['evidence'])}]" if f["evidence"] else "")
            )
    other = [f for f in data["findings"] if f["section"] != "stale_evidence"]
    if other:
        out += ["", "## Findings without an automatic change", ""]
        for f in other:
            out.append(
                f"- `{_inline(f['id'], None)}` ({_inline(f['section'], None)}) "
                f"{_inline(f['summary'], 240, code=True)}"
                + (f" [{_evidence_line(f['evidence'])}]" if f["evidence"] else "")
            )
    return "\n".join(out) + "\n"


def ticked_ids(markdown: str) -> set[str]:
    """Ids of ticked items. Lines are :func:`memlab._escape.split_lines` (``\\n`` only), the
    same rule the tamper check in :func:`memlab.reviews._proposal.read_proposal` compares by."""
    return {
        m.group("id")
        for line in split_lines(markdown)
        if (m := ITEM_LINE_RE.match(line)) and m.group("mark") in "xX"
    }


def refuse_other_ticks(md_path: Path, ticked: set[str]) -> None:
    """:class:`OutputExists` when ``md_path`` holds a tick that ``ticked`` lacks, one writing
    would erase (see :meth:`memlab.reviews._proposal.Proposal.write`; ``ticked`` is what the
    writer holds or saw there itself); a file without ticks, or whose ticks ``ticked`` all
    covers, passes."""
    try:
        # Tick lines are ASCII: a byte that is not UTF-8 elsewhere does not hide one.
        found = ticked_ids(md_path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        raise OutputExists(
            f"cannot read the proposal here to check it for ticks ({exc.strerror or exc})",
            path=md_path,
            hint="move it away, or pass overwrite=True (memlab review --force) to replace it",
        ) from exc
    lost = sorted(found - ticked)
    if lost:
        ids = ", ".join(lost[:3]) + (", ..." if len(lost) > 3 else "")
        raise OutputExists(
            f"the proposal here has {len(lost)} tick(s) ({ids}) that writing this one would erase",
            path=md_path,
            hint="apply it or move it away, or load it with memlab.reviews.read_proposal(path), "
            "or pass overwrite=True (memlab review --force) to replace it",
        )


def unticked(markdown: str) -> str:
    lines = []
    for line in split_lines(markdown):
        m = ITEM_LINE_RE.match(line)
        if m and m.group("mark") in "xX":
            line = "- [ ]" + line[len("- [x]") :]
        lines.append(line)
    return "\n".join(lines).rstrip("\n") + "\n"
