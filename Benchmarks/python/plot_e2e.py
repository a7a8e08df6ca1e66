#!/usr/bin/env python3
"""Plots `asnp-bench e2e --csv FILE`: rate posted and stored, ingress latency and where the CPU went, against the
offered rate; or, with --memory, `asnp-bench e2e --memory-csv FILE`: each process's RSS over time (a soak).

    pip install matplotlib
    python3 Benchmarks/python/plot_e2e.py e2e.csv Docs/images/e2e.png
    python3 Benchmarks/python/plot_e2e.py --memory soak-memory.csv Docs/images/e2e-soak-memory.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(text: str) -> float:
    """A CSV cell as a number; "-" (not measured) as 0."""
    return 0.0 if text == "-" else float(text)


def main(source: str, target: str) -> None:
    with open(source, newline="") as handle:
        rows = list(csv.DictReader(handle))
    offered = [float(row["offered"]) for row in rows]
    figure, (rates, latency, cpu) = plt.subplots(1, 3, figsize=(16, 4.4))

    rates.plot(offered, offered, linestyle=":", color="grey", label="offered")
    rates.plot(offered, [float(row["posted"]) for row in rows], marker="o", label="posted (answered 200)")
    rates.plot(offered, [float(row["stored"]) for row in rows], marker="s", label="stored (committed rows)")
    rates.set_xlabel("offered notifications/s")
    rates.set_ylabel("notifications/s")
    rates.set_title("Throughput")
    rates.legend()
    rates.grid(alpha=0.3)

    latency.plot(offered, [float(row["p50_ms"]) for row in rows], marker="o", label="p50")
    latency.plot(offered, [float(row["p99_ms"]) for row in rows], marker="s", label="p99")
    latency.axhline(50, linestyle=":", color="red", label="p99 target, 50 ms")
    latency.set_yscale("log")
    latency.set_xlabel("offered notifications/s")
    latency.set_ylabel("ingress latency, ms (from when due)")
    latency.set_title("Ingress latency")
    latency.legend()
    latency.grid(alpha=0.3, which="both")

    parts = [
        ("cpu_ingress", "asnp ingress"),
        ("cpu_workers", "asnp workers"),
        ("cpu_mock_broker", "mock broker (asnp kafka-mock)"),
        ("cpu_postgres", "PostgreSQL"),
        ("cpu_load_generator", "load generator"),
    ]
    cpu.stackplot(
        offered,
        [[number(row[column]) for row in rows] for column, _ in parts],
        labels=[label for _, label in parts],
        alpha=0.8,
    )
    cpu.axhline(2, linestyle=":", color="red", label="the machine: 2 cores")
    cpu.set_xlabel("offered notifications/s")
    cpu.set_ylabel("cores")
    cpu.set_title("Where the CPU went")
    cpu.legend(loc="upper left", fontsize="small")
    cpu.grid(alpha=0.3)

    figure.suptitle("asnp-bench e2e: broker, ingress, workers, PostgreSQL and the load generator on 2 cores")
    figure.tight_layout()
    figure.savefig(target, dpi=100)


def memory(source: str, target: str) -> None:
    with open(source, newline="") as handle:
        rows = list(csv.DictReader(handle))
    seconds = [float(row["second"]) / 60 for row in rows]
    figure, axes = plt.subplots(figsize=(9, 4.4))
    for column, label in [
        ("ingress_rss_mb", "asnp ingress"),
        ("worker_rss_mb", "asnp worker (the larger)"),
        ("mock_rss_mb", "mock broker (keeps ~5 MB per partition)"),
    ]:
        axes.plot(seconds, [float(row[column]) for row in rows], label=label)
    axes.set_xlabel("minutes")
    axes.set_ylabel("RSS, MB")
    axes.set_ylim(bottom=0)
    axes.set_title("asnp-bench e2e soak: resident memory of each process, once a second")
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(target, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--memory":
        memory(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3:
        main(sys.argv[1], sys.argv[2])
    else:
        sys.exit("usage: plot_e2e.py STEPS.csv OUT.png | plot_e2e.py --memory MEMORY.csv OUT.png")
