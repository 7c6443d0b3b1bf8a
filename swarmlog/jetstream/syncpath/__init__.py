"""Appends on the caller's own thread: a blocking NATS publish beside the loop (cheaper appends).

``conn`` is a minimal synchronous NATS connection (publish with a reply inbox, wait for
the PubAck and the stream's republished stamp on the same socket); ``fast`` is one log
handle's use of it: who may use it when, what falls back to the async client, and the
seal kicks and idle reads it leaves to the loop thread.
"""
