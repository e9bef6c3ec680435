#!/usr/bin/env bash
# A load run of the locally served functions (its defaults are a developer's run;
# infra/test.sh runs a short one). All of it on 127.0.0.1: moto (DynamoDB tables, the
# knowledge base in S3), the test suite's fake model (shared/examples/fake_llm.rs, paced
# like a real one), the functions under `cargo lambda
# watch`, and wrk with infra/load/wrk.lua, in four bounded phases at 50 connections:
#
#   search         GET ?q= and POST, for LOAD_SEARCH_SECS
#   chat-json      chat POSTs answered as JSON, LOAD_CHAT_REQUESTS of them (capped at
#                  LOAD_CHAT_SECS), one conversation per connection so history is read back
#   chat-stream    the same, answered as Server-Sent Events
#   chat-limited   the functions restarted with RATE_LIMIT_PER_MINUTE=LOAD_RATE_LIMIT, then
#                  3 x that many requests within one clock minute: exactly LOAD_RATE_LIMIT
#                  must be admitted and every other one answered 429
#
# It fails on any status other than 200 (and the limited phase's 429s), any 200 without a
# complete model answer, any socket error or timeout, and unless the store holds exactly one
# audit record and two turns (question, answer) for each admitted request and nothing else
# (infra/load/check_store.py). Prints requests, requests/s, latency percentiles (wrk's,
# whole responses), status counts and store counts; keeps everything in the output directory.
#
# Usage: infra/load.sh [--debug]   (--debug: unoptimised functions; default --release)
# Settings (environment, defaults in brackets): LOAD_CONNECTIONS [50], LOAD_SEARCH_SECS [20],
#   LOAD_CHAT_REQUESTS [1000], LOAD_CHAT_SECS [180], LOAD_RATE_LIMIT [100],
#   LOAD_FUNCTION_CONCURRENCY [5] (instances per function, `cargo lambda watch --concurrency`),
#   LOAD_MODEL_CHUNKS [40] and LOAD_MODEL_DELAY_MS [10] (the fake model's answer and pace),
#   LOAD_OUT [a new /tmp/rag-load.* directory].
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

profile=(--release)
profile_name=release
if [[ "${1:-}" == "--debug" ]]; then
    profile=()
    profile_name=debug
elif [[ -n "${1:-}" ]]; then
    echo "usage: infra/load.sh [--debug]" >&2
    exit 2
fi

conns="${LOAD_CONNECTIONS:-50}"
search_secs="${LOAD_SEARCH_SECS:-20}"
chat_requests="${LOAD_CHAT_REQUESTS:-1000}"
chat_secs="${LOAD_CHAT_SECS:-180}"
rate_limit="${LOAD_RATE_LIMIT:-100}"
concurrency="${LOAD_FUNCTION_CONCURRENCY:-5}"
model_chunks="${LOAD_MODEL_CHUNKS:-40}"
model_delay_ms="${LOAD_MODEL_DELAY_MS:-10}"
out="${LOAD_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/rag-load.XXXXXX")}"
mkdir -p "$out"
# Request ids carry it, so ids of this run never collide with an earlier run's.
LOAD_RUN="$(date +%s)"
export LOAD_RUN

if ! command -v wrk >/dev/null; then
    sudo_cmd=""
    if [[ "$(id -u)" != 0 ]]; then sudo_cmd="sudo"; fi
    $sudo_cmd apt-get install -y wrk || { $sudo_cmd apt-get update && $sudo_cmd apt-get install -y wrk; }
fi
infra/venv.sh
export PATH="$repo/.venv/bin:$PATH"

pids=()
watch_pid=""
stop_watch() {
    if [[ -n "$watch_pid" ]]; then
        # Its own process group (setsid below): the watcher and the function processes it
        # started, and nothing else.
        kill -TERM -- "-$watch_pid" 2>/dev/null || true
        wait "$watch_pid" 2>/dev/null || true
        watch_pid=""
    fi
}
cleanup() {
    stop_watch
    if ((${#pids[@]})); then
        kill "${pids[@]}" 2>/dev/null || true
        # moto exits from Python on TERM, which waits for the request it is busy with.
        for _ in $(seq 50); do
            kill -0 "${pids[@]}" 2>/dev/null || return 0
            sleep 0.1
        done
        kill -KILL "${pids[@]}" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "==> building ($profile_name functions, the fake model); output in $out"
cargo build --quiet "${profile[@]}" -p chat -p search -p ingest
cargo build --quiet -p shared --features test-util --example fake_llm

echo "==> moto, tables, knowledge base in S3"
source infra/local_aws.sh
start_local_aws "$out/moto.log"

echo "==> fake model ($model_chunks chunks, one every $model_delay_ms ms)"
cargo run --quiet -p shared --features test-util --example fake_llm -- \
    --chunks "$model_chunks" --delay-ms "$model_delay_ms" >"$out/fake_llm.out" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do
    [[ -s "$out/fake_llm.out" ]] && break
    sleep 0.1
done
export LLM_PROVIDER=custom LLM_MODEL=fake-model LLM_API_KEY=load-test
LLM_BASE_URL="$(head -n1 "$out/fake_llm.out")"
if [[ "$LLM_BASE_URL" != http://127.0.0.1:* ]]; then
    echo "the fake model did not start (see $out/fake_llm.out)" >&2
    exit 1
fi
export LLM_BASE_URL
export DAILY_TOKEN_BUDGET=1000000 ALLOWED_ORIGINS='*'

port=""
# Starts the functions with RATE_LIMIT_PER_MINUTE=$1 (read once per cold start, hence a
# restart to change it) and waits until search and chat answer.
start_watch() {
    port="$(free_port)"
    RATE_LIMIT_PER_MINUTE="$1" setsid cargo lambda watch --ignore-changes "${profile[@]}" \
        --invoke-address 127.0.0.1 --invoke-port "$port" --concurrency "$concurrency" \
        >"$out/watch-limit-$1.log" 2>&1 &
    watch_pid="$!"
    local base="http://127.0.0.1:$port/lambda-url"
    for _ in $(seq 600); do
        # Bounded: an invocation the emulator cannot deliver waits forever.
        if curl -fs -m 60 "$base/search/?q=warm" >/dev/null &&
            curl -fs -m 60 "$base/chat/" >/dev/null; then
            # Cold-start every instance now rather than inside the measurements.
            run_wrk "warm-$1-search" 4 30 "$base/search/" LOAD_KIND=search >/dev/null
            run_wrk "warm-$1-chat" 4 30 "$base/chat/" LOAD_KIND=health >/dev/null
            return 0
        fi
        kill -0 "$watch_pid" 2>/dev/null || break
        sleep 1
    done
    echo "the functions did not come up (log: $out/watch-limit-$1.log)" >&2
    return 1
}

# run_wrk PHASE PER_THREAD SECS URL [VAR=VALUE...]: one wrk run, one connection per thread;
# each thread stops after PER_THREAD answers (0: no bound) or at its first answer after SECS
# (see infra/load/wrk.lua for why the threads stop themselves). wrk's own -d is a safety cap
# a minute later; wrk would wait it out, so it is interrupted (and then reports the real
# duration) once every thread is done.
run_wrk() {
    local phase="$1" per_thread="$2" secs="$3" url="$4"
    shift 4
    env LOAD_OUT="$out" LOAD_PHASE="$phase" LOAD_PER_THREAD="$per_thread" LOAD_SECS="$secs" "$@" \
        wrk -t"$conns" -c"$conns" -d"$((secs + 60))s" --timeout 30s --latency \
        -s infra/load/wrk.lua "$url" >"$out/$phase.txt" 2>"$out/$phase.err" &
    local wrk_pid="$!"
    while kill -0 "$wrk_pid" 2>/dev/null; do
        local finished
        finished="$(find "$out" -maxdepth 1 -name "$phase-done-*" | wc -l)"
        if ((finished == conns)); then
            kill -INT "$wrk_pid" 2>/dev/null || true
            break
        fi
        sleep 0.05
    done
    wait "$wrk_pid"
    sed -n '1,/Requests\/sec/p' "$out/$phase.txt" | sed "s/^/    [$phase] /"
}

per_thread=$(((chat_requests + conns - 1) / conns))
limited_per_thread=$(((3 * rate_limit + conns - 1) / conns))

echo "==> functions, no rate limit (cargo lambda watch ${profile[*]} --concurrency $concurrency)"
start_watch 0
base="http://127.0.0.1:$port/lambda-url"

echo "==> search: $conns connections for ${search_secs}s"
run_wrk search 0 "$search_secs" "$base/search/" LOAD_KIND=search
echo "==> chat, JSON: $((per_thread * conns)) requests over $conns connections"
run_wrk chat-json "$per_thread" "$chat_secs" "$base/chat/" \
    LOAD_KIND=chat LOAD_SESSIONS=1
echo "==> chat, streamed: $((per_thread * conns)) requests over $conns connections"
run_wrk chat-stream "$per_thread" "$chat_secs" "$base/chat/" \
    LOAD_KIND=chat LOAD_SESSIONS=1 LOAD_STREAM=1

echo "==> functions, RATE_LIMIT_PER_MINUTE=$rate_limit"
stop_watch
start_watch "$rate_limit"
base="http://127.0.0.1:$port/lambda-url"
# The windows are clock minutes: start in the first seconds of one, so that every request
# of the phase (sent within 20 s, answered within wrk's 30 s timeout) arrives in that window.
sec="$((10#$(date +%S)))"
if ((sec > 5)); then
    echo "    waiting $((61 - sec))s for the next minute"
    sleep "$((61 - sec))"
fi
echo "==> chat, rate limited: $((limited_per_thread * conns)) requests, $rate_limit may pass"
run_wrk chat-limited "$limited_per_thread" 20 "$base/chat/" LOAD_KIND=chat
stop_watch

echo "==> store check"
store_ok=0
.venv/bin/python infra/load/check_store.py "$out" chat-json chat-stream chat-limited \
    --limit "chat-limited=$rate_limit" >"$out/store.json" || store_ok=$?

echo "==> summary ($profile_name functions, $concurrency instances per function, $(nproc) cores)"
.venv/bin/python - "$out" "$store_ok" <<'PY'
import json, sys
out, store_rc = sys.argv[1], int(sys.argv[2])
failures = []
print(f"{'phase':<13} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} "
      f"{'max ms':>8} {'200':>6} {'429':>5} {'other':>5} {'bad':>4} {'sock':>4}")
for phase in ("search", "chat-json", "chat-stream", "chat-limited"):
    with open(f"{out}/{phase}.json", encoding="utf-8") as f:
        r = json.load(f)
    lat, sock = r["latency_ms"], sum(r["socket_errors"].values())
    print(f"{phase:<13} {r['requests']:>8} {r['rps']:>7.1f} {lat['p50']:>8.1f} {lat['p90']:>8.1f} "
          f"{lat['p99']:>8.1f} {lat['max']:>8.1f} {r['ok']:>6} {r['limited']:>5} "
          f"{r['other']:>5} {r['bad_body']:>4} {sock:>4}")
    if r["other"]:
        failures.append(f"{phase}: {r['other']} unexpected statuses ({r['other_codes'].strip()})")
    if r["bad_body"]:
        failures.append(f"{phase}: {r['bad_body']} 200s without a complete model answer")
    if sock:
        failures.append(f"{phase}: socket errors {r['socket_errors']}")
    if r["limited"] and phase != "chat-limited":
        failures.append(f"{phase}: {r['limited']} 429s with the rate limit off")
    if r["unfinished_threads"]:
        failures.append(f"{phase}: wrk's safety cap cut {r['unfinished_threads']} threads "
                        f"short, {r['inflight']} requests left in flight")
    if r["kind"] == "chat" and r["deadline_threads"]:
        print(f"    note: {phase}: {r['deadline_threads']} threads reached the duration "
              "bound before their request count")
with open(f"{out}/store.json", encoding="utf-8") as f:
    lines = [json.loads(line) for line in f if line.strip()]
for line in lines:
    if "totals" in line:
        t = line["totals"]
        print(f"store: {t['turns']} turns, {t['audit_records']} audit records for "
              f"{t['admitted']} admitted chat requests")
    else:
        print(f"store {line['phase']}: {line['answered_200']} admitted, "
              f"{line['answered_429']} refused, {line['turns']} turns, "
              f"{line['audit_records']} audit records")
if store_rc:
    failures.append("the store check failed (see above)")
for f in failures:
    print("FAILED:", f)
print("load run", "FAILED" if failures else "passed", f"(details in {out})")
sys.exit(1 if failures else 0)
PY
