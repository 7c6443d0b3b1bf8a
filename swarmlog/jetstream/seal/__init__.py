"""The hash chain of a JetStream log: computed once, by whoever holds the sealer's lease.

``chain`` keeps each record's chain value in the seal stream; ``lease`` decides who
seals; ``role`` is one handle's part (seal while holding the lease, else stand by).
"""
