"""A FileLog writer's view of the log: its end, event ids and key versions.

``state`` declares the fields a handle keeps; ``catchup`` brings them up to what other
writers appended; ``writerindex`` is the shared writer index (one mapped file all
writers update under the append lock), ``index`` is how a handle trusts, catches up or
rebuilds it; ``columns`` and ``snapshot`` save and load a view as sorted columns.
Internal to the file backend: nothing above ``swarmlog`` imports it.
"""
