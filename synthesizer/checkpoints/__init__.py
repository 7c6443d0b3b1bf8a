"""Checkpoints of the folded state, beyond the payload the fold itself encodes.

``writer`` writes them off the decision path (a forked child writes the frozen state),
``vectors`` saves the fact index's vectors beside them as side files a reader maps, and
``check`` says whether one loads (what retention may trust and ``verify`` reports).
"""
