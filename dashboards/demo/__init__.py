"""The demo swarm, a face of the library: ``run`` drives it, ``agent`` is one agent process.

``swarmlog demo`` (dashboards/commands/dash.py) runs it; ``scenarios/`` holds the scripted tasks.
"""
