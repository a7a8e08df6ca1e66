"""Per-process top-N tables from `perf script -F pid,comm,ip,sym,dso -G` (one sample a line, its leaf frame).

Samples are attributed to a role by process id (pids.txt: `pgrep -fa` lines of the asnp processes: ingress,
worker, kafka-mock) or by name (postgres backends, asnp-bench); Swift symbols are demangled with `swift demangle`.
Prints Markdown: samples per role, then per role its share by library and its top symbols by self time.

    perf script -i perf.data -F pid,comm,ip,sym,dso -G | python3 perf_top.py --pids pids.txt [--top 25]
"""

import argparse
import collections
import re
import subprocess
import sys

# The signature maths of verification (BoringSSL's P-256, SHA-256, big-number inverses): the work no pipeline skips.
CRYPTO = re.compile(r"ecp_nistz256|CCryptoBoringSSL|sha256_block|bn_|beeu_mod_inverse")
LINE = re.compile(r"^\s*(.+?)\s+(\d+)\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def roles_by_pid(path):
    roles = {}
    for line in open(path):
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        pid, command = parts
        for role in ("ingress", "worker", "kafka-mock"):
            if f" {role}" in command:
                roles[pid] = role
    return roles


def demangled(names):
    try:
        result = subprocess.run(
            ["swift", "demangle", "--simplified", "--compact"], input="\n".join(names), capture_output=True, text=True
        )
        lines = result.stdout.split("\n")
        if len(lines) >= len(names):
            return lines[: len(names)]
    except OSError:
        pass
    return names


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pids", required=True)
    parser.add_argument("--top", type=int, default=25)
    arguments = parser.parse_args()
    roles = roles_by_pid(arguments.pids)
    samples = collections.Counter()
    symbols = collections.defaultdict(collections.Counter)
    libraries = collections.defaultdict(collections.Counter)
    for line in sys.stdin:
        match = LINE.match(line)
        if not match:
            continue
        command, pid, _, symbol, library = match.groups()
        role = roles.get(pid)
        if role is None:
            role = "postgres" if command.startswith("postgres") else "other (load generator, kernel, ...)"
        samples[role] += 1
        symbols[role][symbol] += 1
        libraries[role][library.split("/")[-1]] += 1
    total = sum(samples.values())
    print(f"{total} samples\n\n| process | samples | share |\n| --- | --- | --- |")
    for role, count in samples.most_common():
        print(f"| {role} | {count} | {100 * count / total:.1f}% |")
    for role in ("ingress", "worker", "postgres", "kafka-mock"):
        count = samples[role]
        if not count:
            continue
        crypto = sum(n for name, n in symbols[role].items() if CRYPTO.search(name))
        print(f"\n**{role}** ({count} samples; signature maths {100 * crypto / count:.1f}%): by library "
              + ", ".join(f"{name} {100 * n / count:.1f}%" for name, n in libraries[role].most_common(6)))
        print("\n| self | symbol |\n| --- | --- |")
        top = symbols[role].most_common(arguments.top)
        for (name, n), readable in zip(top, demangled([name for name, _ in top])):
            print(f"| {100 * n / count:.1f}% | `{readable[:140].replace('|', '/')}` |")


if __name__ == "__main__":
    main()
