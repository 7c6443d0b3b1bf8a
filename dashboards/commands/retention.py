"""``swarmlog compact [--dry-run]``: bounded growth by the swarm's retention policy.

The policy is part of the configuration recorded in the log (``swarmlog config set
retention.keep_checkpoints=2`` …); this command computes the retention point from it and
the checkpoints (``synthesizer.retention``) and compacts (``swarmlog.file.compact``).
"""

from __future__ import annotations

import typer

from dashboards.app import JsonOpt, RootOpt, UrlOpt, app, emit_json, fail, open_target, os_message
from dashboards.progress import working


@app.command()
def compact(
    ctx: typer.Context,
    dry_run: bool = typer.Option(False, "--dry-run", help="Only say what would go"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Archive (or delete, by the policy) segments before the retention point."""
    from synthesizer.configlog import log_config
    from synthesizer.retention import compact_swarm

    log = open_target(ctx, root, url, write=not dry_run)
    try:
        policy = log_config(log).config.retention
        with working("compacting (checkpoint, archive, prune)"):
            res = compact_swarm(log, dry_run)
    except OSError as e:  # (disk full, ...): every step is durable before the next
        fail(
            f"compaction stopped: {os_message(e)}; nothing acknowledged is lost and no"
            " temporary is left: run 'swarmlog compact' again (once there is room) to finish"
        )
    finally:
        log.close()
    if json:
        emit_json({**res.to_dict(), "policy": policy.model_dump(mode="json")})
        return
    if not policy.active:
        typer.echo(
            "no retention policy (set one: swarmlog config set retention.keep_checkpoints=K, "
            "retention.max_age_days=N or retention.max_bytes=M): nothing compacted"
        )
        return
    verb = ("would " if dry_run else "") + ("archive" if res.mode == "archive" else "delete")
    if not res.segments:
        typer.echo(f"nothing to compact (retention point seq {res.point})")
        return
    lo, hi = res.segments[0].first, res.segments[-1].last
    typer.echo(
        f"{verb} {len(res.segments)} segment(s), seq {lo}..{hi}, freeing {res.freed} bytes"
        + (f" (archives: {res.archived} bytes)" if res.archived else "")
        + f"; the log now starts at seq {res.first_seq} ({res.seconds:.2f}s)"
    )
