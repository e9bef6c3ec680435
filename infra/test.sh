#!/usr/bin/env bash
# Runs every test: installs what the tests need (pinned tools in .venv), then the SAM template
# checks, the format, lint and doc-link gates, the whole workspace's tests (including those
# against a moto server each test binary starts on a free port), the MCP endpoint under the
# official MCP client, the widget's browser tests and a short load run.
# Usage: infra/test.sh   (CI: CI=true infra/test.sh)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

# Free space where target/ grows, printed before the steps that fill it: a run here peaked
# at about 4.2 GiB of target/ (the load run's rebuild of the functions last), and a full disk
# otherwise shows up only as a compiler's "No space left on device" in whichever crate it hit.
disk() {
  local free
  free="$(df -Pk "$repo" | awk 'NR == 2 {print int($4 / 1048576)}')"
  echo "==> disk: ${free} GiB free, target/ $(du -sh "$repo/target" 2>/dev/null | cut -f1 || echo 0)"
  if ((free < 6)); then
    echo "warning: under 6 GiB free; the build may run out of disk" >&2
  fi
}
disk

echo "==> tools"
infra/venv.sh
export MOTO_SERVER="$repo/.venv/bin/moto_server"
# A clean clone never reuses incremental state, which took ~2 GB of the CI run's ~7 GB target/
# (a run once failed on a full disk).
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0; fi
# The tests must never reach real AWS or wait on instance metadata.
export AWS_EC2_METADATA_DISABLED=true

# Offline template checks (no credentials): cfn-lint applies the SAM transform itself;
# `sam validate` needs a region, and telemetry off keeps it from calling home.
echo "==> cfn-lint template.yaml"
.venv/bin/cfn-lint template.yaml
echo "==> sam validate --lint"
AWS_DEFAULT_REGION=us-east-1 SAM_CLI_TELEMETRY=0 \
    .venv/bin/sam validate --lint --region us-east-1 --template-file template.yaml
# The same checks with Bedrock as the default provider (its conditional IAM grant on).
echo "==> cfn-lint + sam validate, LlmProvider=bedrock"
bedrock_template="$(mktemp --suffix=.yaml)"
sed -e '/^  LlmProvider:/,/Default:/ s/Default: dashscope/Default: bedrock/' \
    -e '/^  LlmModel:/,/Default:/ s/Default: ""/Default: amazon.nova-lite-v1:0/' \
    template.yaml >"$bedrock_template"
grep -q 'Default: bedrock' "$bedrock_template"
grep -q 'Default: amazon.nova-lite-v1:0' "$bedrock_template"
.venv/bin/cfn-lint "$bedrock_template"
AWS_DEFAULT_REGION=us-east-1 SAM_CLI_TELEMETRY=0 \
    .venv/bin/sam validate --lint --region us-east-1 --template-file "$bedrock_template"
rm -f "$bedrock_template"

echo "==> cargo fmt --check"
cargo fmt --all --check

echo "==> cargo clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings

echo "==> cargo doc (broken or private intra-doc links)"
# After clippy, whose check builds it reuses: only the workspace's own docs are written.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --quiet

disk
echo "==> cargo test"
cargo test --workspace --all-features

echo "==> MCP client tests"
# The official MCP SDK's client (npm, pinned in tests/mcp/package.json) against the search
# function's /mcp path under `cargo lambda watch` (from .venv, installed above).
(cd tests/mcp && npm ci --no-audit --no-fund && node --test)

echo "==> widget browser tests"
# Headless Chromium from Debian (never a browser download); playwright-core drives it. The
# small CJK font is checked on its own: a machine that already has Chromium may lack it, and
# Chinese then renders as boxes (tests/widget/demo-mobile.test.mjs fails on that).
if [ ! -x /usr/bin/chromium ] || ! dpkg-query -W -f='${Status}' fonts-wqy-microhei 2>/dev/null | grep -q 'ok installed'; then
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update
  $sudo_cmd apt-get install -y chromium fonts-wqy-microhei
fi
(cd tests/widget && npm ci --no-audit --no-fund && node --test)

disk
echo "==> short load run"
# infra/load.sh at a small size (a few minutes, mostly its wait for a fresh clock minute
# before the rate-limited phase): every answer checked against what the store holds, so
# the script and its store check cannot rot unnoticed. Debug functions: already built.
LOAD_CONNECTIONS=4 LOAD_SEARCH_SECS=3 LOAD_CHAT_REQUESTS=40 LOAD_CHAT_SECS=60 \
    LOAD_RATE_LIMIT=10 LOAD_FUNCTION_CONCURRENCY=2 infra/load.sh --debug
