"""``python -m dashboards`` runs the swarmlog CLI."""

from dashboards.cli import main

main()
