"""Views of a :class:`Proposal` for notebooks: the 2-D projection of its units, item and cluster
tables, metrics, and an ipywidgets browser to tick items and write the proposal file. The
figures drawn from these (cluster map, similarity histogram) are in :mod:`memlab.plots`.

The notebook (notebooks/05-review.ipynb) only calls these and :mod:`memlab.plots`; everything
here works on the proposal's own data (``units``, ``vectors``, ``similarities``), so it needs
no store or model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memlab._escape import html
from memlab.errors import MemlabError
from memlab.reviews._proposal import SECTIONS, Proposal

__all__ = ["projection", "proposal_table", "cluster_table", "browse", "metrics"]


def projection(proposal: Proposal, *, seed: int = 0) -> pd.DataFrame:
    """A 2-D map of the units: the first two principal components of their embeddings.

    PCA rather than t-SNE/UMAP: deterministic, no extra dependency, and distances along the
    axes keep their meaning (near-duplicates land on top of each other).
    """
    units = proposal.units if proposal.units is not None else pd.DataFrame(columns=["uid"])
    vecs = proposal.vectors if proposal.vectors is not None else np.zeros((0, 2))
    n = len(units)
    if n == 0:
        xy = np.zeros((0, 2))
    elif n == 1:
        xy = np.zeros((1, 2))
    else:
        centred = vecs - vecs.mean(axis=0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        xy = centred @ vt[:2].T
        # SVD signs are arbitrary; fix them so the same data always draws the same map.
        xy *= np.where(xy[np.abs(xy).argmax(axis=0), [0, 1]] < 0, -1, 1)
        if xy.shape[1] == 1:
            xy = np.hstack([xy, np.zeros((n, 1))])
    cluster_of = {uid: c["id"] for c in proposal.clusters for uid in c["members"]}
    survivors = {c["survivor"] for c in proposal.clusters}
    acted: dict[Any, Any] = {}
    for it in proposal.items:
        acted.setdefault(it.target.get("uid"), it.section)
    uids = units["uid"].astype(str).tolist()
    return pd.DataFrame(
        {
            "uid": uids,
            "x": xy[:, 0] if n else [],
            "y": xy[:, 1] if n else [],
            "title": units["title"].astype(str).tolist() if n else [],
            "cluster": [cluster_of.get(u) for u in uids],
            "survivor": [u in survivors for u in uids],
            "protected": units["protected"].astype(bool).tolist() if n else [],
            "proposed": [acted.get(u) for u in uids],
        }
    )


def proposal_table(proposal: Proposal) -> pd.DataFrame:
    """The items, one row each, in file order (id, section, action, summary, evidence, change)."""
    df = proposal.items_frame()
    return df[["id", "section", "action", "summary", "similarity", "change", "appliable"]]


def cluster_table(proposal: Proposal) -> pd.DataFrame:
    """One row per cluster member: its title, whether it survives and why, its best similarity."""
    rows = []
    titles = {}
    if proposal.units is not None:
        titles = dict(zip(proposal.units["uid"].astype(str), proposal.units["title"].astype(str)))
    for c in proposal.clusters:
        for uid in c["members"]:
            best = max(
                (p["similarity"] for p in c["pairs"] if uid in (p["a"], p["b"])), default=None
            )
            rows.append(
                {
                    "cluster": c["id"],
                    "uid": uid,
                    "title": titles.get(uid, ""),
                    "survivor": uid == c["survivor"],
                    "why": c["why"] if uid == c["survivor"] else "",
                    "best_similarity": best,
                }
            )
    return pd.DataFrame(
        rows, columns=["cluster", "uid", "title", "survivor", "why", "best_similarity"]
    )


def metrics(proposal: Proposal) -> dict[str, Any]:
    """Flat numbers for metrics.json (report trends across dated runs)."""
    counts = proposal.counts()
    return {
        "units": 0 if proposal.units is None else len(proposal.units),
        "items": len(proposal.items),
        "findings": len(proposal.findings),
        "duplicate_clusters": len(proposal.clusters),
        "duplicate_units": sum(len(c["members"]) for c in proposal.clusters),
        "choices": len(proposal.choices),
        **{f"{k}_choices": v for k, v in counts.items()},
        "stale_evidence": sum(1 for f in proposal.findings if f.section == "stale_evidence"),
        "protected_units": 0 if proposal.units is None else int(proposal.units["protected"].sum()),
        "digest": proposal.to_dict()["digest"][:16],
    }


def browse(proposal: Proposal, folder: str | Path) -> Any:
    """An ipywidgets view: pick a section or cluster, tick items, write the proposal file.

    Ticks live on ``proposal.ticked``; "Write proposal" calls ``proposal.write(folder)``, which
    renders them as ``- [x]`` in the markdown (the JSON twin is the same either way). The
    writer's rule holds here too: a tick a person made in the file by hand is never erased,
    and a different proposal of the day is not replaced; the refusal (naming the file) is
    shown beside the button and nothing is written. Ticks written from here and unticked
    here since are this browser's own, and are taken back.
    """
    import ipywidgets as w

    options = [("all items", "*")] + [
        (f"{SECTIONS[s]} ({n})", f"section:{s}") for s, n in proposal.counts().items() if n
    ]
    options += [
        (f"choice {n}: {c.kind}: {c.title[:40]}", f"cluster:{c.id}")
        for n, c in enumerate(proposal.choices, start=1)
        if len(c.options) > 1
    ]
    chooser = w.Dropdown(options=options, description="show", layout=w.Layout(width="70%"))
    box = w.VBox()
    status = w.HTML()
    button = w.Button(description="Write proposal", button_style="primary")
    boxes: dict[str, Any] = {}

    def _matches(it: Any, key: str) -> bool:
        if key == "*":
            return True
        kind, _, value = key.partition(":")
        return it.section == value if kind == "section" else it.group == value

    def _toggle(change: dict, item_id: str) -> None:
        if change["new"]:
            # One option per choice: ticking one unticks the others.
            for other in proposal.choice_of(item_id).options:
                if other != item_id and other in proposal.ticked:
                    proposal.untick(other)
                    if other in boxes:
                        boxes[other].value = False
            proposal.tick(item_id)
        else:
            proposal.untick(item_id)
        status.value = f"{len(proposal.ticked)} option(s) ticked"

    def _show(*_: Any) -> None:
        rows = []
        for it in proposal.items:
            if not _matches(it, chooser.value):
                continue
            cb = boxes.get(it.id)
            if cb is None:
                cb = w.Checkbox(
                    value=it.id in proposal.ticked,
                    indent=False,
                    description=f"{it.id} {it.option}",
                    disabled=not it.appliable,
                    layout=w.Layout(width="260px"),
                )
                cb.observe(lambda ch, i=it.id: _toggle(ch, i), names="value")
                boxes[it.id] = cb
            # Item text is store text: escaped, so markup in it is shown, never rendered.
            evidence = ", ".join(f"{k} {v}" for k, v in it.evidence.items())
            detail = w.HTML(
                f"<b>{html(it.summary)}</b><br><small>change: "
                f"{html(it.change.get('text', ''))}"
                + (f"<br>evidence: {html(evidence)}" if evidence else "")
                + "</small>"
            )
            rows.append(w.HBox([cb, detail]))
        box.children = rows or [w.HTML("<i>no items</i>")]

    def _write(_: Any) -> None:
        try:
            path = proposal.write(folder)
        except MemlabError as exc:
            status.value = f"<b>not written</b>: {html(exc)}"
            return
        status.value = f"wrote {html(path)} with {len(proposal.ticked)} item(s) ticked"

    chooser.observe(_show, names="value")
    button.on_click(_write)
    _show()
    return w.VBox([chooser, box, w.HBox([button, status])])
