"""The markdown report's charts as PNG files beside it (matplotlib, the ``charts`` extra).

Three charts: activity over time (events/s, with the synthesizer's decision latency on a
second axis), the strength distribution (facts per strength decile) and per-agent
contributions (shared, recalls, reinforcements, board writes). matplotlib is imported
only here, with its non-interactive Agg backend, so neither the CLI's start nor a
machine without a display pays for it; without the extra, ``write_charts`` raises
ImportError and the report says how to install it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dashboards.activity import Activity
from dashboards.safe import when
from synthesizer.metrics import SwarmMetrics

SIZE = (7.5, 3.2)
DPI = 110


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _activity(plt: Any, act: Activity, path: Path) -> None:
    fig, ax = plt.subplots(figsize=SIZE, dpi=DPI)
    n = len(act.rate)
    w = act.bucket_s
    xs = [i * w for i in range(n)]
    ax.bar(xs, act.rate, width=w * 0.9, align="edge", color="#4C72B0", label="events/s")
    since = when(act.start, "%Y-%m-%d %H:%M:%S")
    ax.set_xlabel(f"seconds since {since} UTC (the log's ts; its last {act.events} events)")
    ax.set_ylabel("events / s")
    lat = [(x + w / 2, v * 1000) for x, v in zip(xs, act.latency, strict=True) if v is not None]
    if lat:
        ax2 = ax.twinx()
        ax2.plot([p[0] for p in lat], [p[1] for p in lat], "o-", color="#DD8452",
                 markersize=3, label="decision latency")  # fmt: skip
        ax2.set_ylabel("decision latency (ms, median)")
        ax2.set_ylim(bottom=0)
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper right", fontsize=8, framealpha=0.9)
    ax.set_title("Activity over time")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _strength(plt: Any, m: SwarmMetrics, path: Path) -> None:
    fig, ax = plt.subplots(figsize=SIZE, dpi=DPI)
    hist = m.strength_hist
    labels = [f"{i / len(hist):.1f}–{(i + 1) / len(hist):.1f}" for i in range(len(hist))]
    bars = ax.bar(labels, hist, color="#55A868")
    ax.bar_label(bars, fontsize=8)
    ax.set_xlabel("strength")
    ax.set_ylabel("facts")
    ax.set_title(f"Strength distribution ({m.facts_total} facts, average {m.average_strength:.2f})")
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _agents(plt: Any, m: SwarmMetrics, path: Path, most: int = 15) -> None:
    agents = m.agents[:most]
    names = [a.agent for a in agents][::-1]
    parts = (
        ("shared", [a.shared for a in agents][::-1], "#4C72B0"),
        ("recalls", [a.recalls for a in agents][::-1], "#55A868"),
        ("reinforced", [a.reinforced for a in agents][::-1], "#C44E52"),
        ("board writes", [a.cas_attempts for a in agents][::-1], "#8172B3"),
    )
    fig, ax = plt.subplots(figsize=(SIZE[0], max(2.2, 0.45 * len(names) + 1.2)), dpi=DPI)
    left = [0] * len(names)
    for label, vals, color in parts:
        ax.barh(names, vals, left=left, color=color, label=label)
        left = [a + b for a, b in zip(left, vals, strict=True)]
    ax.set_xlabel("events")
    more = f" (busiest {most} of {len(m.agents)})" if len(m.agents) > most else ""
    ax.set_title(f"Contributions per agent{more}")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_charts(m: SwarmMetrics, act: Activity, report: Path) -> list[tuple[str, str]]:
    """Render the charts as ``<report stem>-<chart>.png`` beside ``report``; return
    (title, file name relative to the report) for each. ImportError without matplotlib."""
    plt = _plt()
    report.parent.mkdir(parents=True, exist_ok=True)
    out: list[tuple[str, str]] = []
    jobs = (
        ("Activity over time", "activity", lambda p: _activity(plt, act, p), bool(act.rate)),
        ("Strength distribution", "strength", lambda p: _strength(plt, m, p), m.facts_total > 0),
        ("Contributions per agent", "agents", lambda p: _agents(plt, m, p), bool(m.agents)),
    )
    for title, name, draw, wanted in jobs:
        if not wanted:
            continue
        path = report.with_name(f"{report.stem}-{name}.png")
        draw(path)
        out.append((title, path.name))
    return out


__all__ = ["write_charts"]
