#!/usr/bin/env python3
"""A flood of forged JWS headers, measured on the worker alone: `asnp kafka-mock`, `asnp ingress` and one
`asnp worker` as separate processes on a throwaway PostgreSQL (America/New_York unless FLOOD_TZ says otherwise;
run as root: the server runs as `postgres`); 1,000 ordinary rejected bodies first (the baseline is a worker at
work), then N bodies, each a JWS whose header is a unique ~190 KB base64url segment (rejected: no chain Apple
signed), paced so the mock keeps every message until consumed. Prints one JSON line: the worker's resident memory
at the baseline, after the posting, and over 80 s once every rejection is stored and its dead letter published.
Usage: flood_rejected_headers.py ASNP_BINARY WORKDIR PORT [N]   (PORT, PORT+1 and PORT+2 on 127.0.0.1)"""
import base64, http.client, json, os, re, shutil, signal, subprocess, sys, time

binary, work, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
count = int(sys.argv[4]) if len(sys.argv) > 4 else 4000
pg = "/usr/lib/postgresql/15/bin"
shutil.rmtree(work, ignore_errors=True); os.makedirs(work); shutil.chown(work, "postgres")
def su(cmd): subprocess.run(["su", "postgres", "-c", cmd], check=True, stdout=subprocess.DEVNULL)
su(f"{pg}/initdb -D {work}/data -A trust -U postgres --no-sync -E UTF8 --locale=C")
su(f"{pg}/pg_ctl -D {work}/data -l {work}/pg.log -w -o '-p {port+1} -k {work} -c listen_addresses=127.0.0.1 -c timezone={os.environ.get('FLOOD_TZ', 'America/New_York')} -c fsync=off' start")
db = f"postgres://postgres@127.0.0.1:{port+1}/postgres?sslmode=disable"
subprocess.run([binary, "migrate", "--database-url", db], check=True, stdout=subprocess.DEVNULL)
topics = ["asnp.notifications.raw", "asnp.notifications.decoded", "asnp.subscriptions.state", "asnp.notifications.dead-letter"]
mock = subprocess.Popen([binary, "kafka-mock", "--log-level", "error"] + sum((["--topic", f"{t}:64"] for t in topics), []),
                        stdout=subprocess.PIPE, text=True)
bootstrap = mock.stdout.readline().strip()
env = dict(os.environ, KAFKA_BOOTSTRAP_SERVERS=bootstrap, APPS_NAMES="notes", APPS_NOTES_BUNDLE_ID="com.example.notes")
ingress = subprocess.Popen([binary, "ingress", "--log-level", "error"], env=dict(env, INGRESS_HOST="127.0.0.1", INGRESS_PORT=str(port), INGRESS_STATUS_HOST="127.0.0.1", INGRESS_STATUS_PORT=str(port + 3)))
worker = subprocess.Popen([binary, "worker", "--log-level", "error"], env=dict(env, DATABASE_URL=db,
    WORKER_ROOT_CERTIFICATES="/work/shared/apple/AppleRootCA-G3.cer", WORKER_STATUS_HOST="127.0.0.1", WORKER_STATUS_PORT=str(port + 2)))
def rss(p):
    with open(f"/proc/{p.pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) // 1024
def psql(sql):
    return subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port + 1), "-U", "postgres", "-Atq", "-c", sql], capture_output=True, text=True).stdout.strip()
for _ in range(600):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port + 3, timeout=2); c.request("GET", "/health/ready")
        if c.getresponse().status == 200: break
    except OSError: pass
    time.sleep(0.1)
conn = http.client.HTTPConnection("127.0.0.1", port)
# Warm-up: 1,000 ordinary rejected bodies (~12 KB, as Apple's are) through the same paths (verify, reject, dead
# letter), so that the baseline is a worker at work, its pools and buffers in use, not one just started.
for i in range(1000):
    body = json.dumps({"signedPayload": "eyJhbGciOiJFUzI1NiJ9." + "A" * 12_000 + f".{i}"})
    conn.request("POST", "/v2/notifications/sandbox", body, {"Content-Type": "application/json"})
    r = conn.getresponse(); r.read()
for _ in range(600):
    if psql("SELECT count(*) FROM rejected_notifications") == "1000" and psql("SELECT count(*) FROM outbox") == "0": break
    time.sleep(0.5)
time.sleep(10)
start = rss(worker)
statuses = {}
began = time.time()
for i in range(count):
    header = base64.urlsafe_b64encode(json.dumps({"alg": "ES256", "x5c": [os.urandom(70_000).hex(), str(i)]}).encode()).rstrip(b"=").decode()
    payload = base64.urlsafe_b64encode(b'{"notificationType":"TEST","data":{"bundleId":"com.example.notes"}}').rstrip(b"=").decode()
    body = json.dumps({"signedPayload": header + "." + payload + ".c2lnbmF0dXJl"})
    conn.request("POST", "/v2/notifications/sandbox", body, {"Content-Type": "application/json"})
    r = conn.getresponse(); r.read()
    statuses[r.status] = statuses.get(r.status, 0) + 1
    # Paced so the mock's ~5 MB a partition keeps every message until the worker consumed it.
    if i % 50 == 49:
        while int(psql("SELECT count(*) FROM rejected_notifications") or 0) < 1000 + i - 200: time.sleep(0.2)
posted = rss(worker)
for _ in range(1200):
    if psql("SELECT count(*) FROM rejected_notifications") == str(count + 1000) and psql("SELECT count(*) FROM outbox") == "0": break
    time.sleep(0.5)
# The pool closes connections idle for a minute (with the buffers they grew); the sampler trims the heap.
settled = []
for _ in range(8):
    time.sleep(10)
    settled.append(rss(worker))
result = {"binary": binary, "posted": count, "statuses": statuses, "seconds": round(time.time() - began),
    "rejected_rows": psql("SELECT count(*) FROM rejected_notifications"), "outbox_left": psql("SELECT count(*) FROM outbox"),
    "jws_headers": psql("SELECT count(*) FROM jws_headers"),
    "worker_rss_start_mb": start, "worker_rss_after_posting_mb": posted, "worker_rss_settling_mb": settled, "worker_rss_end_mb": settled[-1]}
print(json.dumps(result), flush=True)
for p in (ingress, worker): p.send_signal(signal.SIGTERM)
for p in (ingress, worker): p.wait(timeout=120)
mock.send_signal(signal.SIGTERM); mock.wait(timeout=60)
su(f"{pg}/pg_ctl -D {work}/data -m fast stop")
