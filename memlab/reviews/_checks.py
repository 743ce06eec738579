"""Constitutional drift and memfs rule checks, as choices (a mixin of the review builder).

Constitution items appear only where the store had a constitution: an elfmem database that
never ran ``setup(seed=True)`` (no block, live or archived, carries a constitutional tag or a
seed's text) gets none. A missing role names any live paraphrase of its seed and offers to keep
it instead of restoring the seed beside it.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import pandas as pd

from memlab.reviews import _repo
from memlab.reviews._build_base import BuilderBase
from memlab.reviews._markdown import excerpt
from memlab.reviews._proposal import Finding, Item
from memlab.reviews._units import CONSTITUTIONAL_TAG, ROLE_TAG_PREFIX, is_identity_path

__all__ = [
    "SEED_PARAPHRASE",
    "archive_path",
    "Checks",
]

#: Cosine at or above which a live block counts as a paraphrase of a missing seed.
SEED_PARAPHRASE = 0.80


def archive_path(path: str) -> str:
    parts = path.split("/")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] in ("notes", "log") and i > 0 and parts[i - 1] == "memory":
            return "/".join(parts[:i] + ["archive"] + parts[i + 1 :])
    raise ValueError(f"{path} is not under memory/notes or memory/log")


class Checks(BuilderBase):
    """The builder's checks for drift and memory rules, on :class:`BuilderBase` (its store,
    review, units, vectors, embedder, repo, option() and add_choice(), typed there).

    The kind's :class:`~memlab.kinds.Drift` and :class:`~memlab.kinds.Rules` objects call the
    public checks here (:meth:`seed_drift`, :meth:`file_drift`, :meth:`file_rules`,
    :meth:`agent_limits`) on the review in progress."""

    # ---- constitutional drift ---------------------------------------------------------------
    def drift(self) -> None:
        if self.review.drift is not None:
            self.review.drift.check(self)

    def had_constitution(self) -> bool:
        """Whether any block, live or archived, ever held a constitutional tag or seed text."""
        from memlab.audits import seeds

        tags = self.store.frames.get("tags")
        if tags is not None and not tags.empty:
            t = tags["tag"].astype(str)
            if (t.eq(CONSTITUTIONAL_TAG) | t.str.startswith(ROLE_TAG_PREFIX)).any():
                return True
        blocks = self.store.blocks
        return any(
            seeds.match_seed(c, i) is not None for c, i in zip(blocks["content"], blocks["id"])
        )

    def seed_drift(self) -> None:
        """Drift of elfmem's seed blocks: a role whose block changed, or has none live."""
        from memlab.audits import seeds

        if not self.had_constitution():
            return  # never seeded: a missing constitution is a choice, not drift
        tags = self.store.frames.get("tags")
        all_tags = set(tags["tag"].astype(str)) if tags is not None and not tags.empty else set()
        release = seeds.seed_release(
            role_tags=any(t.startswith(seeds.ROLE_TAG_PREFIX) for t in all_tags)
        )
        blocks = self.store.blocks
        live = self.units
        seed_vecs = self.embedder.encode([s.content for s in release.slots])
        for slot, svec in zip(release.slots, seed_vecs):
            if slot.role_tag is not None:
                holders = live[live["tags"].map(lambda ts, t=slot.role_tag: t in ts)]
            else:
                holders = live[live["text"].map(lambda x, r=slot.role: seeds.match_seed(x) == r)]
            base = {"role": slot.role, "seed_chars": len(slot.content)}
            key = (slot.role,)
            if holders.empty:
                self._missing_seed(slot, svec, blocks, base, key)
                continue
            for _, h in holders.iterrows():
                if seeds.normalise(h["text"]) == seeds.normalise(slot.content):
                    continue
                uid = str(h["uid"])
                sim = float(self.vectors[self.by_uid[uid]] @ svec)
                edit = self.edit_step(h, slot.content)
                # a kind that cannot replace a unit's text is offered no restore to tick
                restore = (
                    []
                    if edit is None
                    else [
                        self.option(
                            key + (uid,),
                            "drift",
                            "restore",
                            f"write the seed text of `{slot.role}` back into `{uid}`",
                            [edit],
                            target={"uid": uid, "removes": [], "edits": [uid]},
                        )
                    ]
                )
                keep = self.option(
                    key + (uid,),
                    "drift",
                    "keep_current",
                    f"keep `{uid}` as it is now",
                    [],
                    target={"uid": uid, "removes": []},
                    appliable=True,
                )
                self.add_choice(
                    key + (uid,),
                    "drift",
                    "constitution changed",
                    f'role `{slot.role}` in `{uid}` differs from its seed: "{excerpt(h["text"])}"',
                    [*restore, keep],
                    {**base, "similarity": sim, "current_chars": int(h["chars"])},
                    removes=[],
                    certainty=1.0,
                    risk="medium",
                )

    def _missing_seed(
        self, slot: Any, svec: Any, blocks: pd.DataFrame, base: dict[str, Any], key: tuple
    ) -> None:
        from memlab.audits import seeds

        ev = dict(base)
        gone = blocks[
            (blocks["id"].astype(str) == slot.block_id)
            | blocks["content"].map(lambda x, r=slot.role: seeds.match_seed(x) == r)
        ]
        if not gone.empty:
            g = gone.iloc[0]
            ev.update(
                {
                    "seed_block": str(g["id"]),
                    "status": str(g["status"]),
                    "archive_reason": None
                    if pd.isna(g["archive_reason"])
                    else str(g["archive_reason"]),
                    "superseded_by": None
                    if pd.isna(g.get("superseded_by"))
                    else str(g.get("superseded_by")),
                }
            )
        options: list[Item] = []
        paraphrase = None
        if len(self.units):
            sims = self.vectors @ svec
            best = int(sims.argmax())
            if float(sims[best]) >= SEED_PARAPHRASE:
                paraphrase = str(self.units["uid"].iloc[best])
                ev.update(
                    {"live_paraphrase": paraphrase, "paraphrase_similarity": float(sims[best])}
                )
        tags = list(slot.tags)
        restore = {
            "op": "remember",
            "content": slot.content,
            "tags": tags,
            "text": f"learn the seed text of `{slot.role}` again, tagged {', '.join(tags)}: "
            f'"{excerpt(slot.content, 200)}"',
        }
        if not self.review.remember:
            restore["op"] = "none"
        if paraphrase is not None:
            p = self.unit(paraphrase)
            options.append(
                self.option(
                    key,
                    "drift",
                    "keep_paraphrase",
                    f'keep the live paraphrase `{paraphrase}` "{excerpt(p["text"])}" '
                    "(restoring the seed beside it would duplicate it)",
                    [],
                    target={"uid": paraphrase, "removes": []},
                    appliable=True,
                )
            )
        options.append(
            self.option(
                key,
                "drift",
                "restore",
                f"restore the seed of `{slot.role}`",
                [restore],
                target={"uid": slot.role_tag or slot.role, "removes": []},
            )
        )
        if paraphrase is None:
            options.append(
                self.option(
                    key,
                    "drift",
                    "keep_current",
                    f"leave the role `{slot.role}` empty",
                    [],
                    target={"uid": None, "removes": []},
                    appliable=True,
                )
            )
        self.add_choice(
            key,
            "drift",
            "constitution missing",
            f"role `{slot.role}` has no live block"
            + (f"; `{paraphrase}` paraphrases its seed" if paraphrase else ""),
            options,
            ev,
            removes=[],
            certainty=1.0,
            risk="medium",
        )

    def file_drift(self) -> None:
        """Drift of the identity files from their first committed version."""
        files = self.store.files
        head_paths = {str(p): str(s) for p, s in zip(files["path"], files["blob_sha"])}
        hist = self.store.frames.get("history")
        paths = set(head_paths)
        if hist is not None and not hist.empty:
            paths |= set(hist["path"].dropna().astype(str))
        for path in sorted(p for p in paths if is_identity_path(p)):
            commits = _repo.path_commits(self.repo, path)
            if not commits:
                continue
            first_sha, first_date = commits[0]
            first_blob = _repo.blob_at(self.repo, first_sha, path)
            if first_blob is None:
                continue
            first_text = _repo.read_blob(self.repo, first_blob).decode("utf-8", "replace")
            now_blob = head_paths.get(path)
            row = files[files["path"] == path]
            if now_blob is not None and not row.empty and bool(row["read_only"].iloc[0] is True):
                if now_blob != first_blob:
                    self.findings.append(
                        Finding(
                            id=self._id("note", "drift", path),
                            section="drift",
                            summary=f"{path} changed since its first commit but is read-only; "
                            "memlab will not edit it",
                            evidence={"first_commit": first_sha[:12]},
                        )
                    )
                continue
            if now_blob == first_blob:
                continue
            ev = {
                "first_commit": first_sha[:12],
                "first_date": first_date[:10],
                "commits_since": len(commits) - 1,
            }
            if now_blob is None:
                summary = f"identity file `{path}` is gone from HEAD"
                ev["first_chars"] = len(first_text)
            else:
                now_text = _repo.read_blob(self.repo, now_blob).decode("utf-8", "replace")
                if " ".join(now_text.split()) == " ".join(first_text.split()):
                    continue  # whitespace-only rewrap is not drift
                v = self.embedder.encode([first_text, now_text])
                ev.update(
                    {
                        "similarity": float(v[0] @ v[1]),
                        "first_chars": len(first_text),
                        "current_chars": len(now_text),
                    }
                )
                summary = f"identity file `{path}` drifted from its first committed version"
            self.touched.add(path)
            step = {
                "op": "restore_file",
                "file": path,
                "blob": first_blob,
                "commit": first_sha,
                "text": f"write {path} back to its first committed version (commit "
                f"{first_sha[:12]}, {first_date[:10]}, {len(first_text)} chars)",
            }
            restore = self.option(
                (path, first_blob),
                "drift",
                "restore",
                f"restore `{path}`",
                [step],
                target={"uid": path, "file": path, "removes": []},
            )
            keep = self.option(
                (path, first_blob),
                "drift",
                "keep_current",
                f"keep `{path}` as it is now",
                [],
                target={"uid": path, "file": path, "removes": []},
                appliable=True,
            )
            self.add_choice(
                (path, first_blob),
                "drift",
                "identity drift",
                summary,
                [restore, keep],
                ev,
                removes=[],
                certainty=1.0,
                risk="medium",
            )

    def _id(self, *parts: Any) -> str:
        from memlab.reviews._proposal import item_id

        return item_id(*parts)

    # ---- memfs limits and rules -------------------------------------------------------------
    def memfs_rules(self) -> None:
        if self.review.rules is not None:
            self.review.rules.check(self)

    def file_rules(self, violations: Callable[..., list[tuple[str, str]]]) -> None:
        """Every memory file's limit, and the rule breaches ``violations(path, text, *,
        variant, all_paths)`` finds in its text at HEAD (``(rule, message)`` pairs)."""
        from memlab.formats import letta_memfs as fmt

        files = self.store.files
        layout = self.store.meta.get("layout")
        variant = "v2" if layout == "letta_v2" else "current"
        all_paths = set(files["path"].astype(str))
        for _, f in files.iterrows():
            path = str(f["path"])
            if not path.endswith(".md"):
                continue
            read_only = bool(f["read_only"] is True)
            chars = int(f["body_chars"]) if pd.notna(f["body_chars"]) else 0
            if bool(f["over_limit"] is True):
                limit = f["limit"]
                ev = {
                    "chars": chars,
                    "limit": None if pd.isna(limit) else int(limit),
                    "over_by": chars - (int(limit) if pd.notna(limit) else fmt.DEFAULT_LIMIT),
                }
                if read_only or pd.isna(limit):
                    why = (
                        "read-only"
                        if read_only
                        else f"over the server default of {fmt.DEFAULT_LIMIT} chars"
                    )
                    self.findings.append(
                        Finding(
                            id=self._id("note", "limit", path),
                            section="limits",
                            summary=f"{path} is over its limit ({why}); trim it by hand",
                            evidence=ev,
                        )
                    )
                else:
                    new = int(-(-chars // 100) * 100)
                    self.touched.add(path)
                    step = {
                        "op": "set_key",
                        "file": path,
                        "key": "limit",
                        "value": str(new),
                        "raw": True,
                        "text": f"set frontmatter limit: {int(limit)} -> {new} in {path} "
                        "(or trim the body by hand instead of ticking this)",
                    }
                    key = (path, chars, int(limit))
                    self.add_choice(
                        key,
                        "limits",
                        "over limit",
                        f"`{path}` body is {chars} chars, over its limit {int(limit)}",
                        [
                            self.option(
                                key,
                                "limits",
                                "raise_limit",
                                f"raise the limit of `{path}` to {new}",
                                [step],
                                target={"uid": path, "file": path, "removes": []},
                            )
                        ],
                        ev,
                        removes=[],
                        certainty=1.0,
                        risk="low",
                    )
            if read_only:
                continue
            text = self._text(f)
            if text is None:
                continue
            for rule, message in violations(path, text, variant=variant, all_paths=all_paths):
                self._rule_item(f, path, rule, message, variant)

    def agent_limits(self) -> None:
        """A finding for every block of an agent file over its limit."""
        blocks = self.store.blocks
        for _, b in blocks[blocks["over_limit"].fillna(False).astype(bool)].iterrows():
            label = str(b["label"])
            self.findings.append(
                Finding(
                    id=self._id("note", "limit", b["block_id"]),
                    section="limits",
                    summary=f"block {label} is over its limit "
                    f"({int(b['chars'])} > {int(b['limit'])} "
                    "chars); Letta's git-backed write path does not enforce it (letta#3241): "
                    "trim it or raise the limit in Letta",
                    evidence={"chars": int(b["chars"]), "limit": int(b["limit"])},
                )
            )

    def _text(self, f: pd.Series) -> str | None:
        sha = f.get("blob_sha")
        if self.repo is None or sha is None or pd.isna(sha):
            return None
        return _repo.read_blob(self.repo, str(sha)).decode("utf-8", "replace")

    def _rule_item(self, f: pd.Series, path: str, rule: str, message: str, variant: str) -> None:
        label = str(f["label"]) if pd.notna(f.get("label")) else path[:-3]
        ev = {"rule": rule, "hook_says": message}
        change: dict[str, Any] | None = None
        action = rule
        if rule == "unknown_key":
            key = re.search(r"'([^']+)'", message)
            if key:
                k = key.group(1)
                action = "remove_key"
                change = {
                    "op": "remove_key",
                    "file": path,
                    "key": k,
                    "text": f"delete the frontmatter key {k} (and its continuation lines) "
                    f"from {path}; value was {excerpt(str(f.get('fm_' + k, '')), 60)!r}",
                }
        elif rule in ("missing_description", "empty_description"):
            desc = f"Memory block {label}"
            action = "set_description"
            change = {
                "op": "set_key",
                "file": path,
                "key": "description",
                "value": desc,
                "text": f"set description: {desc} in {path} (Letta's own fallback wording; "
                "edit it afterwards)",
            }
        elif rule == "missing_name":
            name = _v2_name(label)
            action = "set_name"
            change = {
                "op": "set_key",
                "file": path,
                "key": "name",
                "value": name,
                "text": f"set name: {name} in {path}",
            }
        elif rule == "missing_frontmatter":
            desc = f"Memory block {label}"
            action = "add_frontmatter"
            value = _v2_name(label) if variant == "v2" else None
            change = {
                "op": "add_frontmatter",
                "file": path,
                "description": desc,
                "name": value,
                "text": f"add frontmatter with description: {desc}"
                + (f" and name: {value}" if value else "")
                + f" to {path}",
            }
        elif rule == "flat_skill":
            name = path.rsplit("/", 1)[-1][:-3]
            prefix = "memory/" if path.startswith("memory/") else ""
            to = f"{prefix}skills/{name}/SKILL.md"
            if to not in set(self.store.files["path"].astype(str)):
                action = "move_file"
                change = {
                    "op": "move_file",
                    "file": path,
                    "to": to,
                    "text": f"move {path} to {to} (skills must be folders)",
                }
        if change is None:
            self.findings.append(
                Finding(
                    id=self._id("note", "rule", path, rule),
                    section="rules",
                    summary=f"{path}: {message}; fix by hand",
                    evidence=ev,
                )
            )
            return
        self.touched.add(path)
        choice_key = (path, rule, message)
        self.add_choice(
            choice_key,
            "rules",
            "frontmatter rule",
            f"`{path}` breaks the pre-commit rule: {message}",
            [
                self.option(
                    choice_key,
                    "rules",
                    action,
                    change["text"],
                    [change],
                    target={"uid": path, "file": path, "removes": []},
                )
            ],
            ev,
            removes=[],
            certainty=1.0,
            risk="low",
        )


def _v2_name(label: str) -> str:
    """The ``name:`` value memfs v2 wants for ``label``: its file name as Letta's own v2 writer
    quotes it (a '"' or '\\' in the name is escaped, not ended on)."""
    from memlab.formats import letta_memfs as fmt

    return fmt.quoted_line(label.rsplit("/", 1)[-1])
