"""``python -m dashboards`` runs the swarmlog CLI."""

from dashboards.app import main

main()
