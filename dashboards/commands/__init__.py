"""The CLI's commands, one module per group, each thin over the library.

The typer modules (``log``, ``synth``, ``board``, ``dash``, ``config``, ``diff``,
``forget``, ``promote``, ``retention``) register their commands on ``dashboards.app``;
the per-action commands an agent runs many times (``act_log``, ``act_synth``,
``act_board``, ``act_stats``) are declared without typer so ``dashboards.fastpath`` can
run them without importing it (CLI start time). Loaded by ``dashboards.cli`` as needed.
"""
