"""What compare_workers.py and compare_ingresses.py share: two variants (an `asnp` executable and environment
assignments each) measured at once, each one's CPU from /proc, and B's cost over A's."""

import argparse
import os
import urllib.request


def stat_seconds(pid):
    """The CPU seconds (user and system) process `pid` has used."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def counter_total(port, name, label=""):
    """The sum of counter `name`'s series (those holding `label`, e.g. 'status="200"') on 127.0.0.1:`port`/metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name) and label in line)


def parser(description, rate):
    """The arguments both take: where to write, the release directory, the variants, the rate, the runs."""
    arguments = argparse.ArgumentParser(description=description)
    arguments.add_argument("outdir")
    arguments.add_argument("--release", required=True, help="the directory holding asnp and asnp-bench")
    arguments.add_argument("--a-env", default="")
    arguments.add_argument("--b-env", default="")
    arguments.add_argument("--b-executable")
    arguments.add_argument("--rate", type=int, default=rate)
    arguments.add_argument("--runs", type=int, default=2)
    return arguments


def summarize(ratios):
    print(f"B/A over {len(ratios)} runs: mean {sum(ratios) / len(ratios):.3f} "
          f"(runs {', '.join(f'{r:.3f}' for r in ratios)})")
