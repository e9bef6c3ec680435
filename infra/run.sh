#!/usr/bin/env bash
# Runs the product locally with no AWS account: the three functions under `cargo lambda
# watch` (hot reload) on the sample knowledge base, the in-memory store, the widget's demo
# page, and offline answers unless a model key is in the environment (see README, "Real
# model answers", and docs/configuration.md).
#
# It builds the functions first, in this terminal (the first build takes minutes), then
# starts them, checks that they answer, and prints the URLs and the model mode.
#
# --aws: the same functions against the AWS APIs they use when deployed, emulated by a moto
# server started here on a free port (stopped on exit): DynamoDB tables and an S3 bucket
# holding knowledge_base.json, created as the SAM template would. Still no AWS account.
#
# Usage: infra/run.sh [--aws]
# Env: PORT (functions, default 9000), WIDGET_PORT (demo page, default 8080),
#      ALLOWED_ORIGINS (default: the demo page's origins), KB_SOURCE, and every variable of
#      docs/configuration.md.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
infra/venv.sh
export PATH="$repo/.venv/bin:$PATH"

port="${PORT:-9000}"
base="http://127.0.0.1:$port/lambda-url"
widget_port="${WIDGET_PORT:-8080}"
export KB_SOURCE="${KB_SOURCE:-$repo/knowledge_base.json}"
# CORS is the functions' own policy (the emulator's is switched off below), as deployed:
# by default only the demo page may call from a browser. curl sends no Origin and is not
# affected.
export ALLOWED_ORIGINS="${ALLOWED_ORIGINS:-http://127.0.0.1:$widget_port,http://localhost:$widget_port}"

pids=()
# One cleanup for everything started here (a second `trap ... EXIT` would replace it).
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -f "${health:-}" "${watch_log:-}"' EXIT
trap 'exit 130' INT TERM

# Built before anything is served, with cargo's progress here; `cargo lambda watch` then
# finds the binaries up to date and starts a function in well under a second on its first
# request, instead of compiling for minutes while the request waits.
echo "==> building the functions (the first build takes several minutes)"
cargo build --bins -p chat -p search -p ingest

if [[ "${1:-}" == "--aws" ]]; then
    # moto on a free port, the tables and the bucket with the knowledge base.
    source infra/local_aws.sh
    start_local_aws
    echo "moto server on $AWS_ENDPOINT_URL (state is lost when this stops)"
fi

# The chat widget's demo page, served as static files next to the functions.
python3 -m http.server "$widget_port" --bind 127.0.0.1 --directory "$repo/widget" >/dev/null 2>&1 &
pids+=("$!")

# --disable-cors: the emulator would otherwise answer CORS itself, allowing any origin
# with credentials, and hide what ALLOWED_ORIGINS does. Its log and the functions' go to
# this terminal. In the background so this script can check and report; stopped on exit.
# Its output is also copied to a file, where a function that fails its cold start is
# noticed: the emulator then leaves the request waiting instead of answering it.
watch_log="$(mktemp)"
cargo lambda watch --disable-cors --invoke-address 127.0.0.1 --invoke-port "$port" \
    > >(tee -a "$watch_log") 2>&1 &
watch_pid="$!"
pids+=("$watch_pid")

# Ready when the chat function answers its health check (a GET). A cold start that fails
# (a bad variable, a missing knowledge base) is reported in the log above.
health="$(mktemp)"
status=000
while [[ "$status" == 000 ]]; do
    if ! kill -0 "$watch_pid" 2>/dev/null; then
        echo "cargo lambda watch stopped (see its output above)" >&2
        exit 1
    fi
    if grep -q 'cold start failed\|command exited' "$watch_log"; then
        break
    fi
    status="$(curl -sS -o "$health" -w '%{http_code}' --max-time 10 "$base/chat/" 2>/dev/null || true)"
    [[ "$status" == 000 ]] && sleep 0.5
done
if [[ "$status" != 200 ]]; then
    echo >&2
    echo "The chat function did not start: the log above says why (\"cold start failed\")." >&2
    echo "Its variables are listed in docs/configuration.md." >&2
    exit 1
fi
# demo.html talks to port 9000 unless told otherwise.
demo="http://127.0.0.1:$widget_port/demo.html"
if [[ "$port" != 9000 ]]; then
    demo="$demo?endpoint=$base/chat/"
fi
model="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["model"])' "$health")"
rm -f "$health"
if [[ "$model" == "offline" ]]; then
    mode="offline: answers list the matching entries (no model key in the environment)"
else
    mode="model $model from ${LLM_PROVIDER:-dashscope}"
fi

cat <<MSG

Serving on $base/{chat,search,ingest}/
  search:  curl '$base/search/?q=Partial%20FC'
  chat:    curl -N -X POST $base/chat/ -H 'content-type: application/json' \\
                -d '{"message": "请介绍一下 Partial FC", "stream": true}'
  health:  curl $base/chat/
Chat widget demo: $demo
Model mode: $mode
  Real answers: stop, then e.g. DASHSCOPE_API_KEY=sk-... infra/run.sh, or
  LLM_PROVIDER=openai OPENAI_API_KEY=sk-... infra/run.sh, or LLM_PROVIDER=custom
  LLM_BASE_URL=http://127.0.0.1:11434/v1 LLM_MODEL=qwen2.5 infra/run.sh (README).
CORS allows: $ALLOWED_ORIGINS
Stop with Ctrl-C.
MSG
wait "$watch_pid"
