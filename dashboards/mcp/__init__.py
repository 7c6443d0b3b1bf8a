"""``swarmlog mcp``: the swarm's memory as an MCP server (official ``mcp`` SDK, stdio).

``command`` is the CLI command, ``server`` the MCP server and its tool declarations,
``tools`` what each tool does as a plain call over one Swarm, ``guard`` what is checked
before a tool runs. Needs the ``mcp`` extra.
"""
