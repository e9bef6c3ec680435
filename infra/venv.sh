#!/usr/bin/env bash
# Creates <repo>/.venv with the pinned Python-packaged tools the project runs: moto's server
# (the local DynamoDB/S3 API the tests talk to), cargo-lambda and zig (`cargo lambda watch`
# for the local run), cfn-lint and the SAM CLI (offline checks of template.yaml). Idempotent and quiet: a venv whose requirements hash matches the marker
# file is left alone, so CI, `infra/test.sh` and `infra/run.sh` call this on every run for free.
# Needs python3 (with venv) and access to PyPI; nothing else is downloaded.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
marker="$venv/.requirements.sha256"

# Pinned: moto's behaviour (TransactWriteItems cancellation reasons, TTL, conditional S3
# writes) is what the store and knowledge-base tests assert against. Change a pin here and
# the venv is refreshed on the next run.
requirements=(
    "moto[server]==5.2.5"
    "cargo-lambda==1.9.2"
    "ziglang==0.17.1"
    "cfn-lint==1.58.0"
    "aws-sam-cli==1.170.0"
)

want="$(printf '%s\n' "${requirements[@]}" | sha256sum | cut -d' ' -f1)"
if [[ -f "$marker" && "$(cat "$marker")" == "$want" ]]; then
    exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
# --disable-pip-version-check: the check is a network call that only prints advice.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}"
printf '%s\n' "$want" >"$marker"
