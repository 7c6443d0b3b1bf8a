"""Global memory (docs/design.md §12): knowledge that outlives one task's swarm.

``promote`` copies a task swarm's qualifying facts into a global memory with their
origins, ``harvest`` does it when sessions end, ``bootstrap`` seeds a new swarm from the
global one, ``propagate`` follows an erasure to promoted knowledge and ``provenance``
walks a global fact back to the raw events it came from.
"""
