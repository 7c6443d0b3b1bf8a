"""The embedded backend: a directory of JSONL segments shared by the processes of one machine.

``FileLog`` is the Log contract here (``log``: the handle; ``writer``/``sync``: appends and
group commit; ``reader``: reads and follow; ``view/``: the writer's view and the shared
writer index). Beside it: compaction and archives (``compact``, ``archive``), erasure
(``redact``), verification (``verify``, ``verifyscan``, ``chainwalk``, ``anchors``) and
the guards on where a log lives (``fsguard``). Code above ``swarmlog`` imports these names
from here, never the modules themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from swarmlog.file.anchors import check as check_anchor
    from swarmlog.file.anchors import keyed as check_keyed
    from swarmlog.file.anchors import parse as parse_anchor
    from swarmlog.file.anchors import seal as seal_head
    from swarmlog.file.archive import RetentionError, chain_key
    from swarmlog.file.archive import load as load_archives
    from swarmlog.file.compact import Result as CompactResult
    from swarmlog.file.compact import compact as compact_log
    from swarmlog.file.compact import compactable, eligible, retained_first, spans
    from swarmlog.file.log import FileLog
    from swarmlog.file.redact import step as crash_step
    from swarmlog.file.segment import list_segments, segment_name
    from swarmlog.file.tmpclean import clean as clean_temporaries

__all__ = [
    "CompactResult",
    "FileLog",
    "RetentionError",
    "chain_key",
    "check_anchor",
    "check_keyed",
    "clean_temporaries",
    "compact_log",
    "compactable",
    "crash_step",
    "eligible",
    "list_segments",
    "load_archives",
    "parse_anchor",
    "retained_first",
    "seal_head",
    "segment_name",
    "spans",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "CompactResult": ".compact:Result",
        "FileLog": ".log",
        "RetentionError": ".archive",
        "chain_key": ".archive",
        "check_anchor": ".anchors:check",
        "check_keyed": ".anchors:keyed",
        "clean_temporaries": ".tmpclean:clean",
        "compact_log": ".compact:compact",
        "compactable": ".compact",
        "crash_step": ".redact:step",
        "eligible": ".compact",
        "list_segments": ".segment",
        "load_archives": ".archive:load",
        "parse_anchor": ".anchors:parse",
        "retained_first": ".compact",
        "seal_head": ".anchors:seal",
        "segment_name": ".segment",
        "spans": ".compact",
    },
)
