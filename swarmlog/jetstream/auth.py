"""Per-agent NATS users for a swarm's stream: a nats-server ``authorization`` block.

With per-agent subjects (``subjects.py``) the agent is a subject token, so nats-server's
per-user publish permissions decide who may write as whom: each agent's user may publish
events only on its own subjects, the synthesizer's user only on the synthesizer's, and the
server refuses anything else (the append fails, nothing is stored). Reading is shared:
every user may read the whole stream and its checkpoints.

What each user may publish (subscribe: ``_INBOX.>``, where replies and a follower's
deliveries arrive, and the stamps of its own appends, stampfeed.py):

* an **agent**: ``swarmlog.S.a.<agent>.>`` except the reserved keys (the synthesizer's
  lease key, the configuration key), the read requests of the stream and its checkpoint
  bucket (stream info, message get, direct get, consumers for ``follow``, flow-control
  replies); no seals (so no agent can forge the hash chain);
* the **synthesizer**: the same for its own agent name, plus writing checkpoints (the
  ``<S>-ckpt`` object store: its chunks, creating and purging its stream) and sealing
  the hash chain (the seal stream ``<S>-chain`` and the seal lease ``<S>-sealer``);
* the **operator** (an administrator: ``swarmlog init``, ``config set``, erasure): its own
  subjects and the configuration agent's, and the whole JetStream API.

Passwords are random (``secrets.token_urlsafe``, URL-safe so they fit in a
``nats://user:password@host`` URL) and appear in the block in clear: keep the file
readable by the server's user only, or replace them with bcrypt hashes
(``nats server passwd``); the server accepts either.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from urllib.parse import quote

from swarmlog.errors import SwarmlogError
from swarmlog.jetstream.proto import parse_target
from swarmlog.jetstream.stampfeed import stamp_filter
from swarmlog.jetstream.subjects import Subjects
from swarmlog.names import check_name

INBOX = "_INBOX.>"


@dataclass
class User:
    """One NATS user of the swarm: name, password and permissions."""

    name: str
    role: str
    password: str
    publish: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    subscribe: list[str] = field(default_factory=lambda: [INBOX])

    def block(self) -> str:
        """This user as an entry of the block's ``users`` list."""
        pub = f"allow: {_list(self.publish)}"
        if self.deny:
            pub += f", deny: {_list(self.deny)}"
        return (
            f"    # {self.role}\n"
            f"    {{user: {_q(self.name)}, password: {_q(self.password)}, permissions: {{\n"
            f"      publish: {{{pub}}}\n"
            f"      subscribe: {{allow: {_list(self.subscribe)}}}\n"
            "    }}"
        )


@dataclass
class Authorization:
    """The users of one swarm's stream and how to print them."""

    stream: str
    users: list[User]

    def block(self) -> str:
        """The nats-server ``authorization { users = [...] }`` block (config syntax)."""
        body = ",\n".join(u.block() for u in self.users)
        return (
            f"# swarmlog: one NATS user per agent of stream {self.stream}\n"
            f"authorization {{\n  users = [\n{body}\n  ]\n}}\n"
        )

    def urls(self, target: str) -> dict[str, str]:
        """Each user's target URL with its credentials (``nats://user:pw@host/STREAM``)."""
        t = parse_target(target)
        out = {}
        for u in self.users:
            cred = f"{quote(u.name, safe='')}:{quote(u.password, safe='')}@"
            hosts = ",".join(_without_user(s) for s in t.servers)
            scheme, _, rest = hosts.partition("://")
            out[u.name] = f"{scheme}://{cred}{rest}/{t.stream}"
        return out


def authorization(
    stream: str,
    agents: list[str],
    *,
    operator: str = "operator",
    synthesizer: str = "synthesizer",
    config_agent: str = "swarm",
    reserved_keys: tuple[str, ...] = ("synthesizer", "swarm.config"),
    synth_keys: tuple[str, ...] = ("synthesizer",),
    config_keys: tuple[str, ...] = ("swarm.config",),
    passwords: dict[str, str] | None = None,
) -> Authorization:
    """The users of ``stream``: one per agent, the synthesizer's and the operator's.

    ``reserved_keys`` no agent may write (the synthesizer may write ``synth_keys``, the
    operator ``config_keys``): a keyed write moves that key's version, so an agent
    writing the lease key could stall the synthesizer's CAS. The names of the
    synthesizer, the configuration agent and these keys come from the layer above
    (``synthesizer.events``); ``passwords`` fixes some (tests), the rest are random.
    """
    names = [check_name("agent", a) for a in agents]
    check_name("agent", operator)
    special = {synthesizer, operator, config_agent}
    for a in names:
        if a in special:
            raise SwarmlogError(f"agent name {a!r} is reserved (synthesizer/operator/config)")
    dup = sorted({a for a in names if names.count(a) > 1})
    if dup:
        raise SwarmlogError(f"agent {dup[0]!r} is listed twice")
    if not names:
        raise SwarmlogError("--agents names no agent")
    pw = dict(passwords or {})
    sub = Subjects(f"swarmlog.{stream}")
    read = [
        "$JS.API.INFO",
        "$JS.API.STREAM.NAMES",
        *_read_api(stream),
        *_read_api(_bucket_stream(stream)),
        *_read_api(f"{stream}-chain"),  # the hash chain's seals (seal/chain.py)
        *_read_api(f"{stream}-redact"),  # erased records' stand-ins (side.py)
    ]
    # sealing the hash chain: the seal stream and the seal lease (seal/chain.py, seal/lease.py);
    # only the synthesizer and the operator may (an agent cannot forge a seal)
    seal = [
        f"swarmlog-chain.{stream}",
        f"$JS.API.STREAM.CREATE.{stream}-chain",
        f"swarmlog-sealer.{stream}",
        f"$JS.API.STREAM.CREATE.{stream}-sealer",
        *_read_api(f"{stream}-sealer"),
    ]

    def user(name: str, role: str, writes: list[str], allowed: tuple[str, ...]) -> User:
        deny = [sub.of(w, k) for w in writes for k in reserved_keys if k not in allowed]
        pub = [sub.agent(w) for w in writes]
        password = pw.get(name) or secrets.token_urlsafe(24)
        stamps = [stamp_filter(sub.agent(w)) for w in writes]  # its appends' times
        return User(name, role, password, pub, deny, [INBOX, *stamps])

    users = [user(a, f"agent {a}", [a], ()) for a in names]
    for u in users:
        u.publish += read  # agents do not seal (the synthesizer does: seal/role.py)
    s = user(synthesizer, "the synthesizer (lease holder)", [synthesizer], synth_keys)
    s.publish += read + seal + _ckpt_write(stream)
    op = user(operator, "the operator (administrator)", [operator, config_agent], config_keys)
    op.publish += ["$JS.API.>", "$JS.FC.>", "$JS.ACK.>", "$O.>", *seal]
    op.publish += [f"swarmlog-redact.{stream}.>"]  # erasure (redact.py)
    return Authorization(stream, [*users, s, op])


def _bucket_stream(stream: str) -> str:
    """The checkpoint bucket's stream (``checkpoint.py``: bucket ``<S>-ckpt``)."""
    return f"OBJ_{stream}-ckpt"


def _read_api(stream: str) -> list[str]:
    """The JetStream API requests a reader of ``stream`` makes."""
    api = "$JS.API"
    return [
        f"{api}.STREAM.INFO.{stream}",
        f"{api}.STREAM.MSG.GET.{stream}",
        f"{api}.DIRECT.GET.{stream}",
        f"{api}.DIRECT.GET.{stream}.>",
        f"{api}.CONSUMER.CREATE.{stream}",
        f"{api}.CONSUMER.CREATE.{stream}.>",
        f"{api}.CONSUMER.DELETE.{stream}.>",
        f"{api}.CONSUMER.INFO.{stream}.>",
        f"$JS.FC.{stream}.>",
    ]


def _ckpt_write(stream: str) -> list[str]:
    """What writing checkpoints takes: the bucket's subjects and its stream's setup."""
    bs = _bucket_stream(stream)
    return [
        f"$O.{stream}-ckpt.>",
        f"$JS.API.STREAM.CREATE.{bs}",
        f"$JS.API.STREAM.UPDATE.{bs}",
        f"$JS.API.STREAM.PURGE.{bs}",
        f"$JS.API.STREAM.MSG.DELETE.{bs}",
    ]


def _without_user(server: str) -> str:
    """A server URL without any ``user:password@`` it had."""
    scheme, sep, rest = server.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}"


def _q(s: str) -> str:
    """A quoted string in nats-server config syntax (JSON's escapes are accepted)."""
    return json.dumps(s)


def _list(items: list[str]) -> str:
    return "[" + ", ".join(_q(i) for i in items) + "]"
