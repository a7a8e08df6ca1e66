#!/usr/bin/env python3
"""Baseline benchmark / oracle: Apple's app-store-server-library (Python).

For every input line (JSONL, field `body` = raw HTTP POST body
`{"signedPayload": "..."}`, optional `id`, optional `kind`) it does what our
Swift verifier does per notification:

  1. parse the body as JSON and take `signedPayload`
  2. SignedDataVerifier.verify_and_decode_notification(signedPayload)
  3. if payload.data.signedTransactionInfo -> verify_and_decode_signed_transaction
  4. if payload.data.signedRenewalInfo     -> verify_and_decode_renewal_info

(a subscription notification therefore costs 3 JWS verifications).

Online checks are off, so the library judges the x5c chain at the payload's
`signedDate` (see SignedDataVerifier._decode_signed_object) and does NOT use
its verified-chain cache (the cache is only consulted when online checks are
on), i.e. every JWS pays for a full chain build + ECDSA verification.

Modes:
  default      repeat over the inputs until --seconds elapsed, report rate
  --per-case   one pass, print library status vs `expect.status` per case
"""

import argparse
import json
import platform
import sys
import time
from importlib import metadata

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import (
    SignedDataVerifier,
    VerificationException,
)


class MalformedBody(Exception):
    pass


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", action="append", required=True, help="DER root certificate (repeatable)")
    p.add_argument("--bundle-id", required=True)
    p.add_argument("--app-apple-id", type=int, default=None)
    p.add_argument("--environment", choices=["Sandbox", "Production"], default="Sandbox")
    p.add_argument("--input", required=True, help="JSONL file, one object per line with a `body` string")
    p.add_argument("--only-kind", default=None, help="keep only lines whose `kind` equals this (lines without `kind` are kept)")
    p.add_argument("--seconds", type=float, default=5.0, help="run at least this long (default 5)")
    p.add_argument("--json", action="store_true", help="print a single JSON result line")
    p.add_argument("--per-case", action="store_true", help="one pass; report status per case vs expect.status")
    return p.parse_args(argv)


def load_cases(path, only_kind):
    cases = []
    with open(path, "r", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            if only_kind is not None and "kind" in obj and obj["kind"] != only_kind:
                continue
            cases.append({
                "id": obj.get("id", "line-%d" % n),
                "body": obj["body"],
                "expect": (obj.get("expect") or {}).get("status"),
            })
    return cases


def verify_body(verifier, body):
    """Returns number of JWS verified. Raises MalformedBody / VerificationException."""
    try:
        obj = json.loads(body)
    except ValueError as e:
        raise MalformedBody() from e
    if not isinstance(obj, dict) or "signedPayload" not in obj:
        raise MalformedBody()
    payload = verifier.verify_and_decode_notification(obj["signedPayload"])
    n = 1
    data = payload.data
    if data is not None:
        if data.signedTransactionInfo:
            verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
            n += 1
        if data.signedRenewalInfo:
            verifier.verify_and_decode_renewal_info(data.signedRenewalInfo)
            n += 1
    return n


def make_verifier(args):
    roots = []
    for r in args.root:
        with open(r, "rb") as f:
            roots.append(f.read())
    env = Environment(args.environment)
    return SignedDataVerifier(roots, False, env, args.bundle_id, args.app_apple_id)


def run_per_case(verifier, cases):
    mismatches = 0
    rows = []
    for c in cases:
        try:
            verify_body(verifier, c["body"])
            got = "OK"
        except MalformedBody:
            got = "MALFORMED_BODY"
        except VerificationException as e:
            got = e.status.name
        except Exception as e:  # anything the library lets escape unwrapped
            got = "EXCEPTION:" + type(e).__name__
        ok = got == c["expect"]
        mismatches += 0 if ok else 1
        rows.append((c["id"], got, c["expect"], ok))
    w = max(len(r[0]) for r in rows) if rows else 10
    for cid, got, exp, ok in rows:
        print("%-*s  %-26s expect=%-26s %s" % (w, cid, got, exp, "" if ok else "MISMATCH"))
    print("cases=%d mismatches=%d" % (len(rows), mismatches))
    return 0 if mismatches == 0 else 1


def run_bench(verifier, cases, seconds):
    notifications = jws = rejected = malformed = errors = 0
    bodies = [c["body"] for c in cases]
    clock = time.perf_counter
    start = clock()
    deadline = start + seconds
    while True:
        for body in bodies:
            try:
                jws += verify_body(verifier, body)
            except VerificationException:
                rejected += 1
            except MalformedBody:
                malformed += 1
            except Exception:
                errors += 1
            notifications += 1
        if clock() >= deadline:
            break
    elapsed = clock() - start
    return {
        "notifications": notifications,
        "jws": jws,
        "seconds": round(elapsed, 3),
        "per_second": round(notifications / elapsed, 1),
        "jws_per_second": round(jws / elapsed, 1),
        "rejected": rejected,
        "malformed": malformed,
        "errors": errors,
    }


def main(argv=None):
    args = parse_args(argv)
    verifier = make_verifier(args)
    cases = load_cases(args.input, args.only_kind)
    if not cases:
        print("no input cases", file=sys.stderr)
        return 2
    if args.per_case:
        return run_per_case(verifier, cases)

    res = run_bench(verifier, cases, args.seconds)
    out = {
        "impl": "apple-python",
        "version": metadata.version("app-store-server-library"),
        "python": platform.python_version(),
        "inputs": len(cases),
    }
    out.update(res)
    if args.json:
        print(json.dumps(out))
    else:
        print("apple-python app-store-server-library %s (Python %s)" % (out["version"], out["python"]))
        print("inputs=%d notifications=%d jws=%d seconds=%.3f" % (len(cases), res["notifications"], res["jws"], res["seconds"]))
        print("notifications/s=%.1f jws/s=%.1f rejected=%d malformed=%d errors=%d"
              % (res["per_second"], res["jws_per_second"], res["rejected"], res["malformed"], res["errors"]))
    return 0 if (res["rejected"] == 0 and res["malformed"] == 0 and res["errors"] == 0) else 1


if __name__ == "__main__":
    sys.exit(main())
