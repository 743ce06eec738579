"""Apply for an elfmem database: ``elfmem_script`` writes the reviewable script (rendered by
:mod:`memlab.reviews._elfmem_script`) that makes the ticked changes through elfmem's own API;
memlab never writes the database."""

from __future__ import annotations

from pathlib import Path

from memlab.errors import ProposalRejected
from memlab.reviews._apply_result import ApplyResult
from memlab.reviews._proposal import Item, Proposal

__all__ = ["elfmem_script"]


def elfmem_script(
    proposal: Proposal,
    ticked: list[Item],
    md_path: Path,
    *,
    script: str | Path | None,
    dry_run: bool,
) -> ApplyResult:
    """For an elfmem database: write the script that makes the ticked changes through elfmem."""
    from memlab.errors import OutputExists
    from memlab.reviews._elfmem_script import render_script, script_steps
    from memlab.reviews._markdown import ELFMEM_APPLY_SCHEMA

    schema = proposal.store.get("schema_version")
    if schema is None or int(schema) < ELFMEM_APPLY_SCHEMA:
        raise ProposalRejected(
            f"this database has elfmem schema {schema}, written by a release before 0.20 whose "
            "API has no edit or forget",
            path=md_path,
            hint="make the ticked changes by hand, or upgrade the agent to elfmem 0.20+ (it "
            "migrates the schema), review again and apply that proposal",
        )
    steps = script_steps(ticked)
    result = ApplyResult(md_path, [it.id for it in ticked], [], "", dry_run=dry_run)
    if not any(s for _, s in steps):
        result.message = "no ticked option changes the database; no script written"
        return result
    digest = proposal.to_dict()["digest"]
    text = render_script(database=proposal.store["path"], digest=digest, items=ticked)
    out = Path(script).expanduser() if script else md_path.with_name(md_path.stem + ".apply.py")
    result.diff = text
    result.script = out
    if dry_run:
        return result
    if out.exists():
        raise OutputExists(
            "an apply script is already here",
            path=out,
            hint="read it and run it, or move it away and apply again",
        )
    out.write_text(text, encoding="utf-8")
    n = sum(len(s) for _, s in steps)
    result.notes.append(
        f"wrote {out}: {n} elfmem call(s); read it, then run it with the Python "
        "where your agent's elfmem is installed (memlab did not touch the database)"
    )
    return result
