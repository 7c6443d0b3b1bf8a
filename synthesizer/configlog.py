"""The swarm's configuration, kept in its log (docs/design.md §4): ``swarm.configured`` events.

The first ``swarm.configured`` (``swarmlog init --set``, or the first ``Swarm.open(target,
config=…)`` on an empty log) fixes the configuration; a later one (``swarmlog config
set``) takes effect from its seq. Each event carries the whole configuration and the CAS
key ``swarm.config``, so the configuration in force is one ``log.version`` and one read
away, and two concurrent changes never lose one another. The fold switches at the event
(``synthesizer.state.handlers.on_configured``); a log that records none folds under the defaults.

Settings are dotted keys of ``SynthConfig`` (``pool.capacity=50000``, ``embedder=hash``),
validated by the model; a bad key or value is a one-line ``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from swarmlog import Event, Log, SwarmlogError, VersionConflict
from swarmlog.file import RetentionError
from synthesizer import events as T
from synthesizer.config import SynthConfig, ValidationError
from synthesizer.errors import ConfigError

CONFIG_AGENT = "swarm"
"""Agent name on the configuration events this module writes."""

_RETRIES = 8


# ---------------------------------------------------------------- keys and values


KEYS: dict[str, str] = SynthConfig.leaves()
"""Every settable dotted key and what it accepts, e.g. ``pool.capacity: int >= 1``."""


def parse_settings(items: Iterable[str]) -> dict[str, str]:
    """``["pool.capacity=5", …]`` -> ``{"pool.capacity": "5", …}`` (keys checked)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"expected KEY=VALUE, got {item!r} (keys: {', '.join(KEYS)})")
        _check_key(key)
        out[key] = value.strip()
    return out


def _check_key(key: str) -> None:
    if key not in KEYS:
        raise ConfigError(f"unknown configuration key {key!r}; allowed: {', '.join(KEYS)}")


def with_settings(base: SynthConfig, settings: Mapping[str, Any]) -> SynthConfig:
    """``base`` with the dotted ``settings`` applied, validated by the model."""
    data = base.model_dump(mode="json")
    for key, value in settings.items():
        _check_key(key)
        node = data
        *parents, leaf = key.split(".")
        for p in parents:
            node = node[p]
        node[leaf] = value
    try:
        return SynthConfig.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err.get("loc", ()))
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        got = settings.get(key, err.get("input"))
        raise ConfigError(
            f"bad value {got!r} for {key}: {msg} (allowed: {KEYS.get(key, '?')})"
        ) from None


def flatten(config: SynthConfig) -> dict[str, Any]:
    """The configuration as ``{dotted key: value}``, in the model's field order."""
    data = config.model_dump(mode="json")
    out: dict[str, Any] = {}
    for key in KEYS:
        node: Any = data
        for p in key.split("."):
            node = node[p]
        out[key] = node
    return out


def differences(a: SynthConfig, b: SynthConfig) -> dict[str, tuple[Any, Any]]:
    """Dotted keys whose values differ: key -> (value in a, value in b)."""
    fa, fb = flatten(a), flatten(b)
    return {k: (fa[k], fb[k]) for k in fa if fa[k] != fb[k]}


# ---------------------------------------------------------------- the log's configuration


@dataclass(frozen=True)
class Configured:
    """The configuration in force at the end of a log, and where it was recorded.

    ``seq`` is 0 when the log records none (then ``config`` is the defaults).
    """

    config: SynthConfig
    seq: int
    changed: dict[str, Any]

    @property
    def recorded(self) -> bool:
        """True when a ``swarm.configured`` event fixed this configuration."""
        return self.seq > 0


def log_config(log: Log) -> Configured:
    """The configuration in force now: the last ``swarm.configured`` (or the defaults)."""
    v = log.version(T.CONFIG_KEY)
    if v == 0:
        return Configured(SynthConfig(), 0, {})
    try:
        ev = next(iter(log.read(v, v)), None)
    except RetentionError:
        return _checkpointed(log, v)
    if ev is None or ev.type != T.SWARM_CONFIGURED:
        kind = "nothing" if ev is None else f"a {ev.type} event"
        raise ConfigError(
            f"the configuration key {T.CONFIG_KEY!r} was last written at seq {v} by {kind},"
            " not swarm.configured"
        )
    body = ev.body
    return Configured(SynthConfig.model_validate(body["config"]), v, dict(body.get("changed", {})))


def _checkpointed(log: Log, v: int) -> Configured:
    """The configuration recorded at seq ``v`` once retention deleted that event: from a
    checkpoint's state (it carries its configuration and the seq that recorded it)."""
    from synthesizer.state.payload import state_dict  # numpy and the fold: only on this rare path

    for info in reversed(log.checkpoints.list()):
        if info.seq < v:
            break
        try:
            d = state_dict(log.checkpoints.load(info).data)
        except (SwarmlogError, OSError, ValueError, KeyError):
            continue
        if isinstance(d, dict) and d.get("config_seq") == v:
            return Configured(SynthConfig.model_validate(d["config"]), v, {})
    raise ConfigError(
        f"the configuration recorded at seq {v} was deleted by retention and no checkpoint holds it"
    )


def record_config(
    log: Log, config: SynthConfig, expect: int, changed: Mapping[str, Any] | None = None
) -> Event:
    """Append a ``swarm.configured`` carrying ``config``; the config key must be at ``expect``."""
    from synthesizer.search.embed import (
        embedder_for,
    )  # numpy: only when a configuration is recorded

    embedder_for(config.embedder)  # one-line error (e.g. the extra missing), nothing written
    body = {"config": config.model_dump(mode="json"), "changed": dict(changed or {})}
    ev = Event(agent=CONFIG_AGENT, type=T.SWARM_CONFIGURED, key=T.CONFIG_KEY, body=body)
    return log.append(ev, expect={T.CONFIG_KEY: expect})


def _differs(cur: Configured, wanted: SynthConfig) -> ConfigError:
    diff = differences(cur.config, wanted)
    shown = "; ".join(f"{k} is {a!r}, not {b!r}" for k, (a, b) in list(diff.items())[:3])
    more = f" (and {len(diff) - 3} more)" if len(diff) > 3 else ""
    where = f"recorded at seq {cur.seq}" if cur.recorded else "the defaults: none recorded"
    return ConfigError(
        f"the swarm's configuration ({where}) differs: {shown}{more}; open it without"
        " config=, or change it with `swarmlog config set KEY=VALUE`"
    )


def settle_config(log: Log, config: SynthConfig) -> Configured:
    """Make ``config`` the swarm's, as ``Swarm.open(target, config=…)`` asks.

    On an empty log it is recorded (the first event); on a swarm that has a
    configuration (recorded, or the defaults once it has events) it must be equal,
    else ConfigError. Safe against a concurrent first open: the CAS on the config key
    lets one record and the others compare with it.
    """
    for _ in range(_RETRIES):
        cur = log_config(log)
        if cur.recorded or log.last_seq > 0:
            if cur.config != config:
                raise _differs(cur, config)
            return cur
        try:
            ev = record_config(log, config, expect=0)
        except VersionConflict:
            continue
        return Configured(config, ev.seq or 0, {})
    raise ConfigError("the configuration kept changing while this swarm was opened; retry")


def change_config(log: Log, settings: Mapping[str, Any]) -> tuple[Configured, bool]:
    """Apply dotted ``settings`` to the configuration in force and record the result.

    Returns the configuration now in force and whether an event was appended (nothing
    is appended when the settings change nothing). ``swarmlog config set`` and
    ``swarmlog init --set`` call this; concurrent changes are serialised by CAS.
    """
    for _ in range(_RETRIES):
        cur = log_config(log)
        new = with_settings(cur.config, settings)
        if new == cur.config and (cur.recorded or not settings):
            return cur, False
        changed = {k: flatten(new)[k] for k in settings}
        try:
            ev = record_config(log, new, expect=cur.seq, changed=changed)
        except VersionConflict:
            continue
        return Configured(new, ev.seq or 0, changed), True
    raise ConfigError("the configuration kept changing concurrently; retry")


def init_config(log: Log, settings: Mapping[str, Any]) -> tuple[Configured, bool]:
    """``swarmlog init --set …``: record the first configuration (defaults + settings).

    On a swarm that already records one, settings that change it are an error (that is
    ``config set``'s job); equal ones change nothing.
    """
    cur = log_config(log)
    if cur.recorded:
        new = with_settings(cur.config, settings)
        if new != cur.config:
            raise ConfigError(
                f"the swarm is already configured (seq {cur.seq}); change it with"
                " `swarmlog config set KEY=VALUE`"
            )
        return cur, False
    if not settings:
        return cur, False
    return change_config(log, settings)


# ---------------------------------------------------------------- the fold's hook
