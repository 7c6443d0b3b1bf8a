"""The package's version: one place (pyproject.toml reads it; ``swarmlog --version`` and
the MCP server's ``serverInfo`` print it)."""

__version__ = "0.1.0"
