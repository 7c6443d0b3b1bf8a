"""Other frameworks' interfaces over a swarm: ``langgraph`` (``SwarmStore``, a LangGraph
``BaseStore``; extra ``langgraph``). The MCP server lives with the CLI (``dashboards.mcp``).
"""
