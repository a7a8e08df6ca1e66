"""Two worker variants side by side in one `asnp-bench e2e` run: CPU per stored message of each, same window.

The machines here change speed by 10-30% within an hour, so two separate e2e runs cannot tell a 2% change from the
machine. Here the bench's two workers run the two variants at once, under the same load, on the same machine state:
each takes half the raw partitions, and its CPU (/proc/PID/stat) is divided by the messages it stored
(`asnp_worker_messages_total` from its /metrics) over the same 40 s of the step. Two identical variants read within
about 1% of each other. Runs alternate which variant starts first, so a difference between the two workers' shares
cancels out.

A variant is an `asnp` executable (by default the one beside asnp-bench) and environment assignments for it. The bench
starts `asnp` from its own directory, so OUTDIR/bin gets a copy of asnp-bench beside a wrapper named `asnp` that runs
the ingress, mock broker and migrations as the A executable and the workers as A or B in turn.

    python3 compare_workers.py OUTDIR --release DIR [--a-env 'K=V ...'] [--b-env 'K=V ...'] [--b-executable PATH]
        [--rate 2250] [--runs 2] [--database-url URL]
"""

import os
import shlex
import shutil
import subprocess
import sys
import time

from side_by_side import counter_total, parser, stat_seconds, summarize

WRAPPER = """#!/bin/bash
# Written by compare_workers.py: workers alternate between the variants, in the order of FIRST.
if [ "$1" = worker ]; then
  exec 9>>"{bin}/workers.lock"; flock 9
  n=$(( $(cat "{bin}/workers.count" 2>/dev/null || echo 0) + 1 )); echo $n > "{bin}/workers.count"
  flock -u 9
  order=($(cat "{bin}/first"))
  variant=${{order[$(( (n - 1) % 2 ))]}}
  echo "$$ $variant" >> "{bin}/workers.variants"
  if [ "$variant" = A ]; then exec env {a_env} "{a_exe}" "$@"; else exec env {b_env} "{b_exe}" "$@"; fi
fi
exec "{a_exe}" "$@"
"""


def status_port(pid):
    for entry in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
        if entry.startswith(b"WORKER_STATUS_PORT="):
            return entry.split(b"=", 1)[1].decode()
    raise SystemExit(f"worker {pid} has no WORKER_STATUS_PORT")


def stored_messages(port):
    return counter_total(port, "asnp_worker_messages_total")


def run(args, bin_dir, number, first):
    for name in ("workers.count", "workers.variants"):
        if os.path.exists(f"{bin_dir}/{name}"):
            os.remove(f"{bin_dir}/{name}")
    open(f"{bin_dir}/first", "w").write(first)
    report = f"{args.outdir}/run-{number}.txt"
    with open(report, "w") as out:
        bench = subprocess.Popen(
            [f"{bin_dir}/asnp-bench", "e2e", "--database-url", args.database_url, "--rates", str(args.rate),
             "--step-seconds", "60"],
            stdout=out, stderr=subprocess.STDOUT)
    while "step:" not in open(report).read():
        if bench.poll() is not None:
            raise SystemExit(f"the bench ended before its step: {report}")
        time.sleep(0.5)
    time.sleep(8)  # past the step's start
    variants = dict(line.split() for line in open(f"{bin_dir}/workers.variants"))
    ports = {pid: status_port(pid) for pid in variants}
    before = {pid: (stat_seconds(pid), stored_messages(port)) for pid, port in ports.items()}
    time.sleep(40)
    after = {pid: (stat_seconds(pid), stored_messages(port)) for pid, port in ports.items()}
    if bench.wait() != 0:
        raise SystemExit(f"the bench failed: {report}")
    cost = {}
    for pid, variant in variants.items():
        seconds = after[pid][0] - before[pid][0]
        messages = after[pid][1] - before[pid][1]
        if messages <= 0:
            raise SystemExit(f"worker {variant} stored nothing in the window: {report}")
        cost[variant] = (seconds / messages * 1e6, messages)
    line = (f"run {number} ({first.replace(' ', ' then ')} first): A {cost['A'][0]:.0f} µs/message "
            f"({cost['A'][1]:.0f}), B {cost['B'][0]:.0f} µs/message ({cost['B'][1]:.0f}): "
            f"B/A {cost['B'][0] / cost['A'][0]:.3f}")
    print(line, flush=True)
    return cost['B'][0] / cost['A'][0]


def main():
    arguments = parser(__doc__.split("\n")[0], rate=2250)
    arguments.add_argument("--database-url", default="postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable")
    args = arguments.parse_args()
    bin_dir = os.path.abspath(f"{args.outdir}/bin")
    os.makedirs(bin_dir, exist_ok=True)
    # Copies, so a build during the runs changes neither variant.
    shutil.copy2(f"{args.release}/asnp-bench", f"{bin_dir}/asnp-bench")
    shutil.copy2(f"{args.release}/asnp", f"{bin_dir}/asnp.a")
    b_exe = f"{bin_dir}/asnp.a"
    if args.b_executable:
        shutil.copy2(args.b_executable, f"{bin_dir}/asnp.b")
        b_exe = f"{bin_dir}/asnp.b"
    quoted = lambda assignments: " ".join(shlex.quote(a) for a in shlex.split(assignments))
    with open(f"{bin_dir}/asnp", "w") as wrapper:
        wrapper.write(WRAPPER.format(bin=bin_dir, a_exe=f"{bin_dir}/asnp.a", b_exe=b_exe,
                                     a_env=quoted(args.a_env), b_env=quoted(args.b_env)))
    os.chmod(f"{bin_dir}/asnp", 0o755)
    ratios = [run(args, bin_dir, number, "A B" if number % 2 else "B A") for number in range(1, args.runs + 1)]
    summarize(ratios)


if __name__ == "__main__":
    sys.exit(main())
