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

cat <<MSG
Serving on $base/{chat,search,ingest}/ once the first build finishes:
  curl '$base/search/?q=Partial%20FC'
  curl -N -X POST $base/chat/ -H 'content-type: application/json' \\
       -d '{"message": "请介绍一下 Partial FC", "stream": true}'
Stop with Ctrl-C.
MSG
exec cargo lambda watch --invoke-address 127.0.0.1 --invoke-port "$port"
