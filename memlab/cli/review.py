"""``memlab review`` and ``apply``: a proposal for a person to tick, and its ticks applied."""

from __future__ import annotations

import argparse

from memlab import constants as C
from memlab.cli._command import argument, command, shared
from memlab.cli._output import output_folder

__all__ = ["cmd_apply", "cmd_review"]


@command(
    "review",
    "Write a review proposal (markdown checklist + JSON twin) for a store.",
    "memlab review data/samples/elfmem/elfmem-0.20.0-schema9.db --out reviews/",
)
@argument("path", help="the store to review")
@shared("out", "review-YYYY-MM-DD.md and .json", default="here, .", value=".")
@argument(
    "--near-duplicate",
    type=float,
    default=C.NEAR_DUP_THRESHOLD,
    help="cosine at or above which two items are near-duplicates "
    f"(default {C.NEAR_DUP_THRESHOLD:.2f}, elfmem's)",
)
@argument(
    "--stale-after-days",
    type=int,
    default=C.STALE_AFTER_DAYS,
    help=f"days without evidence of use before an item is stale (default {C.STALE_AFTER_DAYS})",
)
@argument(
    "--contradiction-min",
    type=float,
    default=C.CONTRADICTION_MIN,
    help="cosine at or above which a negated pair is a contradiction candidate "
    f"(default {C.CONTRADICTION_MIN:.2f})",
)
@shared("as_of")
@shared("force", "today's proposal file")
@argument(
    "--all",
    action="store_true",
    help="list every choice in full, not only the top ones (review-DATE-all.md)",
)
def cmd_review(args: argparse.Namespace) -> int:
    from memlab.reviews import review

    out = output_folder(args.out)
    if not args.force:
        _refuse_existing(out, args.all)  # before minutes of work, not after
    proposal = review(
        args.path,
        near_duplicate=args.near_duplicate,
        stale_after_days=args.stale_after_days,
        as_of=args.as_of,
        contradiction_min=args.contradiction_min,
        all=args.all,
    )
    path = proposal.write(out, overwrite=args.force)
    shown = (
        len(proposal.choices) if proposal.top is None else min(proposal.top, len(proposal.choices))
    )
    print(f"{len(proposal.choices)} choice(s), the top {shown} listed in full; wrote {path}")
    return 0


def _refuse_existing(out, full: bool) -> None:
    """Today's proposal (``review-YYYY-MM-DD[-all].md`` or its ``.json``, UTC) already in ``out``
    is refused without ``--force``: it may carry a person's ticks."""
    import datetime as dt

    from memlab.errors import OutputExists

    stem = f"review-{dt.datetime.now(dt.timezone.utc):%Y-%m-%d}" + ("-all" if full else "")
    for name in (f"{stem}.md", f"{stem}.json"):
        if (out / name).exists():
            raise OutputExists(
                "today's review proposal is already here (it may hold ticks)",
                path=out / name,
                hint="apply or move it first, or pass --force to replace it",
            )


@command(
    "apply",
    "Apply a proposal's ticks: one commit to a memory repo, a script for an elfmem DB.",
    "memlab apply reviews/review-$(date -u +%F).md --dry-run   # today's proposal (UTC date)",
)
@argument("proposal", help="a review-*.md file with items ticked")
@argument("--repo", help="the memfs repo (default: the one the proposal names)")
@shared("branch")
@argument("--dry-run", action="store_true", help="print the diff, change nothing")
@argument(
    "--script",
    help="elfmem databases: where to write the apply script "
    "(default: <proposal>.apply.py beside it)",
)
def cmd_apply(args: argparse.Namespace) -> int:
    from memlab.reviews import apply_proposal

    result = apply_proposal(
        args.proposal, repo=args.repo, branch=args.branch, dry_run=args.dry_run, script=args.script
    )
    print(result)
    return 0
