#!/usr/bin/env bash
# Runs the product locally with no AWS account: the three functions under `cargo lambda
# watch` (hot reload) on the sample knowledge base, the in-memory store, and offline answers
# unless a model key (DASHSCOPE_API_KEY / OPENAI_API_KEY / LLM_API_KEY) is in the environment.
#
# --aws: the same functions against the AWS APIs they use when deployed, emulated by a moto
# server started here on a free port (stopped on exit): DynamoDB tables and an S3 bucket
# holding knowledge_base.json, created as the SAM template would. Still no AWS account.
#
# Usage: infra/run.sh [--aws]
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
infra/venv.sh
export PATH="$repo/.venv/bin:$PATH"

export KB_SOURCE="${KB_SOURCE:-$repo/knowledge_base.json}"
export ALLOWED_ORIGINS="${ALLOWED_ORIGINS:-*}"
port="${PORT:-9000}"
base="http://127.0.0.1:$port/lambda-url"
widget_port="${WIDGET_PORT:-8080}"

# The chat widget's demo page, served as static files next to the functions; stopped with
# them (cargo lambda runs in the foreground, not exec'd, so this trap still fires).
python3 -m http.server "$widget_port" --bind 127.0.0.1 --directory "$repo/widget" >/dev/null 2>&1 &
pids=("$!")
# One cleanup for everything started here (a second `trap ... EXIT` would replace it).
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM

if [[ "${1:-}" == "--aws" ]]; then
    # moto on a free port, the tables and the bucket with the knowledge base.
    source infra/local_aws.sh
    start_local_aws
    echo "moto server on $AWS_ENDPOINT_URL (state is lost when this stops)"
fi

cat <<MSG
Serving on $base/{chat,search,ingest}/ once the first build finishes:
  curl '$base/search/?q=Partial%20FC'
  curl -N -X POST $base/chat/ -H 'content-type: application/json' \\
       -d '{"message": "请介绍一下 Partial FC", "stream": true}'
Chat widget demo: http://127.0.0.1:$widget_port/demo.html
Stop with Ctrl-C.
MSG
# Not exec: the EXIT trap must outlive the watcher to stop the servers started here.
cargo lambda watch --invoke-address 127.0.0.1 --invoke-port "$port"
