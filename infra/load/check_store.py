"""Checks the store after infra/load.sh's chat runs against what the clients were answered.

Reads, per chat phase, the "<status> <request_id>" lines the wrk threads wrote and the ids
left in flight, then scans the conversation and audit tables in moto (the endpoint and
table names come from the same environment the functions use) and requires:
  - every request answered 200: exactly one audit record (outcome "ok", or "cached" for a
    question answered from the answer cache, which the load's repeated questions hit) and
    exactly two turns, its question and its answer;
  - every request answered 429: nothing stored;
  - a request left in flight by the duration cap: at most one record of each kind;
  - nothing stored under an id no client sent;
  - the table totals (Scan with Select=COUNT) equal the sums of the above, so the per-id
    reading missed nothing (the answer cache's items, which share the conversations table,
    are counted apart);
  - with --limit PHASE=N: exactly N requests of that phase admitted (stored).
Prints one JSON object per phase plus the totals; exits 1 on any violation.

Usage: python check_store.py OUT_DIR PHASE... [--limit PHASE=N]
"""

import collections
import glob
import json
import os
import sys

import boto3


def client_id(stored):
    """The id the client sent, from the key a turn is stored under: the chat records a
    turn under "<client id>.<digest of session and question>" (shared::idempotency_key),
    so a retry maps to the same key; the load's client ids hold no dot."""
    return stored.split(".", 1)[0]


def scan(client, table, **kwargs):
    """Every page of a Scan (a single Scan stops at 1 MB)."""
    for page in client.get_paginator("scan").paginate(TableName=table, **kwargs):
        yield page


def count(client, table):
    return sum(page["Count"] for page in scan(client, table, Select="COUNT"))


def main(argv):
    limits = {}
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--limit":
            phase, n = argv[i + 1].split("=")
            limits[phase] = int(n)
            i += 2
        else:
            args.append(argv[i])
            i += 1
    out, phases = args[0], args[1:]

    dynamo = boto3.client("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    conversations = os.environ["CONVERSATIONS_TABLE"]
    audit_table = os.environ["AUDIT_TABLE"]

    audit = collections.Counter()
    outcomes = {}
    for page in scan(dynamo, audit_table, ProjectionExpression="request_id, outcome"):
        for item in page["Items"]:
            rid = client_id(item["request_id"]["S"])
            audit[rid] += 1
            outcomes[rid] = item.get("outcome", {}).get("S")
    turns = collections.Counter()
    # The conversations table also holds the answer cache's items (session id
    # "answer-cache#<key>", no request id): counted apart, never read as turns.
    cached_answers = 0
    for page in scan(
        dynamo,
        conversations,
        ProjectionExpression="session_id, request_id, #r",
        ExpressionAttributeNames={"#r": "role"},
    ):
        for item in page["Items"]:
            if item["session_id"]["S"].startswith("answer-cache#"):
                cached_answers += 1
                continue
            turns[(client_id(item["request_id"]["S"]), item["role"]["S"])] += 1

    problems = []
    known = set()
    reports = []
    for phase in phases:
        answers = {}
        for path in sorted(glob.glob(f"{out}/{phase}-ids-*.txt")):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    status, rid = line.split()
                    if rid in answers:
                        problems.append(f"{phase}: {rid} answered twice")
                    answers[rid] = int(status)
        inflight_path = f"{out}/{phase}-inflight.txt"
        inflight = set()
        if os.path.exists(inflight_path):
            with open(inflight_path, encoding="utf-8") as f:
                inflight = {line.strip() for line in f if line.strip()}
        known |= set(answers) | inflight

        admitted = [r for r, s in answers.items() if s == 200]
        refused = [r for r, s in answers.items() if s == 429]
        for rid in admitted:
            got = (audit[rid], turns[(rid, "user")], turns[(rid, "assistant")])
            if got != (1, 1, 1):
                problems.append(f"{phase}: {rid} answered 200 but stored (audit, user, assistant) = {got}")
            elif outcomes.get(rid) not in ("ok", "cached"):
                problems.append(f"{phase}: {rid} answered 200 but audited as {outcomes.get(rid)!r}")
        for rid in refused:
            if audit[rid] or turns[(rid, "user")] or turns[(rid, "assistant")]:
                problems.append(f"{phase}: {rid} answered 429 but something was stored")
        inflight_audit = sum(audit[r] for r in inflight)
        inflight_turns = sum(turns[(r, "user")] + turns[(r, "assistant")] for r in inflight)
        for rid in inflight:
            got = (audit[rid], turns[(rid, "user")], turns[(rid, "assistant")])
            if max(got) > 1:
                problems.append(f"{phase}: in-flight {rid} stored more than once: {got}")
        phase_audit = sum(audit[r] for r in answers) + inflight_audit
        phase_turns = sum(turns[(r, "user")] + turns[(r, "assistant")] for r in answers)
        phase_turns += inflight_turns
        if phase in limits and phase_audit != limits[phase]:
            problems.append(f"{phase}: {phase_audit} requests admitted, the limit is {limits[phase]}")
        reports.append({
            "phase": phase,
            "answered_200": len(admitted),
            "answered_429": len(refused),
            "other_status": len(answers) - len(admitted) - len(refused),
            "inflight": len(inflight),
            "audit_records": phase_audit,
            "turns": phase_turns,
            "inflight_audit": inflight_audit,
            "inflight_turns": inflight_turns,
        })

    unexpected = {r for r in audit if r not in known} | {r for (r, _) in turns if r not in known}
    if unexpected:
        problems.append(f"{len(unexpected)} stored request ids no client sent, e.g. {sorted(unexpected)[:3]}")
    totals = {
        "audit_records": count(dynamo, audit_table),
        "turns": count(dynamo, conversations) - cached_answers,
        "cached_answers": cached_answers,
    }
    if totals["audit_records"] != sum(audit.values()) or totals["turns"] != sum(turns.values()):
        problems.append(f"table counts {totals} differ from the items read")
    admitted = sum(r["answered_200"] for r in reports)
    extra_audit = sum(r["inflight_audit"] for r in reports)
    extra_turns = sum(r["inflight_turns"] for r in reports)
    # The count check proper: whatever the per-id reading says, the tables' own counts must
    # be two turns and one audit record per admitted request (plus what requests cut off
    # in flight by the duration cap got stored, if any were).
    if totals["turns"] != 2 * admitted + extra_turns:
        problems.append(f"{totals['turns']} turns stored for {admitted} admitted requests")
    if totals["audit_records"] != admitted + extra_audit:
        problems.append(f"{totals['audit_records']} audit records for {admitted} admitted requests")
    totals["admitted"] = admitted
    totals["inflight_audit"] = extra_audit
    totals["inflight_turns"] = extra_turns
    for r in reports:
        print(json.dumps(r))
    print(json.dumps({"totals": totals}))
    for p in problems[:20]:
        print("STORE CHECK FAILED:", p, file=sys.stderr)
    if len(problems) > 20:
        print(f"... and {len(problems) - 20} more", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
