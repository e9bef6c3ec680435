#!/usr/bin/env bash
# Runs the product locally with no AWS account: the three functions under `cargo lambda
# watch` (hot reload) on the sample knowledge base, the in-memory store, and offline answers
# unless a model key (DASHSCOPE_API_KEY / OPENAI_API_KEY / LLM_API_KEY) is in the environment.
# Usage: infra/run.sh
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
widget_pid=$!
trap 'kill "$widget_pid" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM

cat <<MSG
Serving on $base/{chat,search,ingest}/ once the first build finishes:
  curl '$base/search/?q=Partial%20FC'
  curl -N -X POST $base/chat/ -H 'content-type: application/json' \\
       -d '{"message": "请介绍一下 Partial FC", "stream": true}'
Chat widget demo: http://127.0.0.1:$widget_port/demo.html
Stop with Ctrl-C.
MSG
cargo lambda watch --invoke-address 127.0.0.1 --invoke-port "$port"
