"""Board commands: ``swarmlog board [FACT_ID]`` and ``swarmlog board cas FACT_ID --expect V``.

``board`` is a group that also runs on its own (it lists the board) and treats a first
word that is not a subcommand as a fact id: ``board f12`` is routed to a hidden ``show``
command, so both ``board f12`` and ``board cas f12 --expect 7`` work. (A fact literally
named ``cas`` or ``show`` is shown with ``board show cas``.) --root/--url work before or
after ``board`` and after the subcommand, like everywhere else. The commands themselves
are declared, typer-free, in ``act_board``.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperGroup

from dashboards.app import command_group, register
from dashboards.commands.act_board import BOARD, CAS, SHOW, fact_json


class _BoardGroup(TyperGroup):
    """A group whose unknown first word is a FACT_ID for the hidden ``show`` command."""

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "show", self.commands["show"], args
        return super().resolve_command(ctx, args)


board_app = command_group(
    "board", "The board: facts with versions; compare-and-swap writes.", cls=_BoardGroup
)
register(BOARD, board_app, callback=True)
register(SHOW, board_app, hidden=True)
register(CAS, board_app)

__all__ = ["board_app", "fact_json"]
