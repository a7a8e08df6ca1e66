"""Two ingress variants side by side: CPU per request of each, same load, same window.

The machines here change speed by 10-30% within an hour, so two separate runs cannot tell a few percent from the
machine. Here two ingresses run at once against one mock cluster (three brokers, the raw topic's partitions), each
posted to by a load generator of its own at the same rate (`asnp-bench loadgen`, signed bodies as the e2e bench's);
each one's CPU (/proc/PID/stat) over the same window is divided by the requests it answered 200 in it
(`asnp_ingress_requests_total` from /metrics on its status port). Runs alternate which variant starts first; two identical variants
read within ~3% of each other in one run, ~1-2% over two. Nothing consumes the raw topic: only the ingress is measured.

A variant is an `asnp` executable (by default the one beside asnp-bench) and environment assignments for it.

    python3 compare_ingresses.py OUTDIR --release DIR [--a-env 'K=V ...'] [--b-env 'K=V ...'] [--a-executable PATH]
        [--b-executable PATH] [--rate 2500] [--window 30] [--runs 2] [--connections 32] [--partitions 64]
"""

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

from side_by_side import counter_total, parser, stat_seconds, summarize


def answered(port):
    return counter_total(port, "asnp_ingress_requests_total", 'status="200"')


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_ready(port, process):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"an ingress exited with status {process.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"the ingress on port {port} was not ready within 60 s")


def p99(report):
    lines = [line for line in open(report) if line.startswith("{")]
    return json.loads(lines[-1])["p99Milliseconds"] if lines else float("nan")


def run(args, executables, environments, number, order):
    mock = subprocess.Popen(
        [executables["A"], "kafka-mock", "--brokers", "3", "--topic",
         f"appstore.notifications.raw:{args.partitions}", "--log-level", "error"],
        stdout=subprocess.PIPE, text=True)
    servers = mock.stdout.readline().strip()
    ingresses, ports, status_ports, generators = {}, {}, {}, {}
    try:
        for variant in order:
            ports[variant], status_ports[variant] = free_port(), free_port()
            environment = dict(os.environ, KAFKA_BOOTSTRAP_SERVERS=servers, APPS_NAMES="notes",
                               APPS_NOTES_BUNDLE_ID="com.example.notes", INGRESS_HOST="127.0.0.1",
                               INGRESS_PORT=str(ports[variant]), INGRESS_STATUS_HOST="127.0.0.1",
                               INGRESS_STATUS_PORT=str(status_ports[variant]))
            environment.update(a.split("=", 1) for a in shlex.split(environments[variant]))
            ingresses[variant] = subprocess.Popen([executables[variant], "ingress", "--log-level", "error"],
                                                  env=environment)
        for variant in order:
            wait_ready(status_ports[variant], ingresses[variant])
        # Enough bodies to outlast the window: the generator adds 10% duplicates.
        count = int(args.rate * (args.window + 30) / 1.1)
        for variant in order:
            generators[variant] = subprocess.Popen(
                [f"{args.release}/asnp-bench", "loadgen", "--count", str(count), "--rate", str(args.rate),
                 "--connections", str(args.connections), "--json",
                 "--url", f"http://127.0.0.1:{ports[variant]}/v2/notifications/sandbox"],
                stdout=open(f"{args.outdir}/loadgen-{number}-{variant}.txt", "w"), stderr=subprocess.STDOUT)
        # The window starts once both have answered five seconds' worth (the generators sign first).
        while min(answered(status_ports[variant]) for variant in order) < args.rate * 5:
            for variant, generator in generators.items():
                if generator.poll() is not None:
                    raise SystemExit(f"the load generator of {variant} exited early: {args.outdir}/loadgen-{number}-{variant}.txt")
            time.sleep(0.5)
        before = {v: (stat_seconds(ingresses[v].pid), answered(status_ports[v])) for v in order}
        time.sleep(args.window)
        after = {v: (stat_seconds(ingresses[v].pid), answered(status_ports[v])) for v in order}
        for generator in generators.values():
            generator.wait(timeout=300)
    finally:
        for process in list(generators.values()) + list(ingresses.values()):
            if process.poll() is None:
                process.terminate()
        for process in list(generators.values()) + list(ingresses.values()):
            process.wait()
        mock.terminate()
        mock.wait()
    cost = {}
    for variant in order:
        requests = after[variant][1] - before[variant][1]
        if requests <= 0:
            raise SystemExit(f"ingress {variant} answered nothing in the window")
        cost[variant] = ((after[variant][0] - before[variant][0]) / requests * 1e6, requests)
    latency = {v: p99(f"{args.outdir}/loadgen-{number}-{v}.txt") for v in order}
    print(f"run {number} ({' then '.join(order)} first): A {cost['A'][0]:.1f} µs/request ({cost['A'][1]:.0f}, p99 "
          f"{latency['A']:.1f} ms), B {cost['B'][0]:.1f} µs/request ({cost['B'][1]:.0f}, p99 {latency['B']:.1f} ms): "
          f"B/A {cost['B'][0] / cost['A'][0]:.3f}", flush=True)
    return cost["B"][0] / cost["A"][0]


def main():
    arguments = parser(__doc__.split("\n")[0], rate=2500)
    arguments.add_argument("--a-executable")
    arguments.add_argument("--window", type=int, default=30, help="seconds measured")
    arguments.add_argument("--connections", type=int, default=32, help="connections per load generator")
    arguments.add_argument("--partitions", type=int, default=64)
    args = arguments.parse_args()
    args.outdir = os.path.abspath(args.outdir)
    os.makedirs(args.outdir, exist_ok=True)
    # Copies, so a build during the runs changes neither variant.
    executables = {}
    for variant, given in (("A", args.a_executable), ("B", args.b_executable)):
        executables[variant] = f"{args.outdir}/asnp.{variant.lower()}"
        shutil.copy2(given or f"{args.release}/asnp", executables[variant])
    environments = {"A": args.a_env, "B": args.b_env}
    ratios = [run(args, executables, environments, number, ["A", "B"] if number % 2 else ["B", "A"])
              for number in range(1, args.runs + 1)]
    summarize(ratios)


if __name__ == "__main__":
    sys.exit(main())
