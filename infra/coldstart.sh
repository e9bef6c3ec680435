#!/usr/bin/env bash
# Measures the functions' cold start the way Lambda starts them: release binaries of search
# and chat, each spawned under a fake Runtime API on 127.0.0.1 (shared/examples/cold_start.rs)
# with one function-URL event, RUNS times; prints the medians of the init (spawn → first
# /next), the first response-body byte and the complete response (from the event being
# handed out), and the peak RSS, plus the binaries' sizes.
#
# Knowledge bases: the sample (29 documents) and synthetic ones of 1k, 10k and 50k pages
# (infra/gen_kb.py; generated into $WORK, never committed), each read from a file and from
# S3 on a moto server started here (with the tables: chat "as deployed", with
# CONVERSATIONS_TABLE, AUDIT_TABLE, LIMITS_TABLE and no CLIENT_HASH_SALT; its health GET
# also with a model key, so its init builds the model client as deployed, though the model
# is never called). Chat's POST answers offline (no model key), so it measures retrieval,
# the limits (and the salt's lookup) and the store, not a model.
#
# From a file, each size is measured twice: from the JSON alone (`file`) and with the
# prebuilt index `rag index` writes beside it (`file+index`). In S3 (`s3`) the knowledge
# base has its prebuilt index beside it, as ingest and `rag sync` leave it (the upload,
# shared/examples/local_aws.rs, writes both).
#
# Any knowledge base, e.g. a real site built with `rag build`: give its file in SIZES (or
# KBS) instead of a number; it is copied into $WORK (the index written beside the copy) and
# labelled by its directory and file name.
#
# Usage: infra/coldstart.sh
#        SIZES="10000 /path/to/site/knowledge_base.json" SOURCES=file+index infra/coldstart.sh
# Env: RUNS (default 5), SIZES (default "29 1000 10000 50000"; numbers or knowledge-base
#      files), KBS (files added after SIZES), SOURCES (default "file file+index s3"),
#      PROFILE (cargo profile of the functions, default release), WORK (default a temp dir),
#      NO_BUILD=1 (use the binaries already built), BIN (directory of the search and chat
#      binaries to measure, default target/$PROFILE: e.g. copies from another commit).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
runs="${RUNS:-5}"
sizes="${SIZES:-29 1000 10000 50000} ${KBS:-}"
sources="${SOURCES:-file file+index s3}"
profile="${PROFILE:-release}"
work="${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/rag-coldstart.XXXXXX")}"
mkdir -p "$work"
target="${CARGO_TARGET_DIR:-$repo/target}"
bin="${BIN:-$target/$profile}"

# Nothing from the caller's environment may change what is measured: no model key (answers
# stay offline), no tables or salt unless set below.
unset DASHSCOPE_API_KEY OPENAI_API_KEY LLM_API_KEY LLM_BASE_URL LLM_PROVIDER CLIENT_HASH_SALT \
    CONVERSATIONS_TABLE AUDIT_TABLE LIMITS_TABLE KB_SOURCE AWS_ENDPOINT_URL AWS_PROFILE
export RUST_LOG="${RUST_LOG:-info}" ALLOWED_ORIGINS="https://site.example"

if [[ -z "${NO_BUILD:-}" ]]; then
    echo "building search and chat ($profile) and the harness..." >&2
    cargo build --quiet --profile "$profile" -p search -p chat
    # Built apart (in one command its `test-util` feature would be unified into the
    # functions' `shared`) and in debug, like the tests: an example also enables the
    # dev-dependencies' features, so in release it would recompile the dependency tree.
    cargo build --quiet -p shared --features test-util --example cold_start
    cargo build --quiet -p rag
fi
harness="$target/debug/examples/cold_start"
rag="$target/debug/rag"

# Events: the fixtures' function-URL payloads; chat's GET (health) and POST come from its
# POST fixture with the method changed.
cp functions/search/tests/data/function_url_get.json "$work/search_get.json"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
post = json.load(open("functions/chat/tests/data/function_url_post.json"))
get = dict(post, body=None)
get["requestContext"] = dict(post["requestContext"], http=dict(post["requestContext"]["http"], method="GET"))
json.dump(get, open(f"{work}/chat_get.json", "w"))
post["body"] = json.dumps({"message": "What is Partial FC?"})
json.dump(post, open(f"{work}/chat_post.json", "w"))
PY

# kb_label SIZE_OR_FILE: a number as it is; a file as its directory and stem, e.g.
# `jdk-knowledge_base` (letters, digits, `-`, `_` and `.`: it names an S3 key).
kb_label() {
    if [[ "$1" =~ ^[0-9]+$ ]]; then
        echo "$1"
    else
        local dir stem
        dir="$(basename "$(dirname "$1")")"
        stem="$(basename "$1" .json)"
        echo "$dir-$stem" | tr -c 'A-Za-z0-9._\n-' '_'
    fi
}

kb_file() {
    if [[ ! "$1" =~ ^[0-9]+$ ]]; then
        [[ -s "$1" ]] || { echo "no knowledge base at $1" >&2; exit 2; }
        local copy
        copy="$work/kb-$(kb_label "$1").json"
        [[ -s "$copy" ]] || cp "$1" "$copy"
        echo "$copy"
    elif [[ "$1" == 29 ]]; then
        # A copy, so the index written beside it stays out of the repository.
        cp "$repo/knowledge_base.json" "$work/kb-29.json"
        echo "$work/kb-29.json"
    else
        [[ -s "$work/kb-$1.json" ]] || python3 infra/gen_kb.py "$1" "$work/kb-$1.json"
        echo "$work/kb-$1.json"
    fi
}

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
if [[ " $sources " == *" s3 "* ]]; then
    infra/venv.sh
    # moto, the three tables and the sample in S3 (the same code paths the functions use).
    source infra/local_aws.sh
    start_local_aws "$work/moto.log" >/dev/null
    tables=(CONVERSATIONS_TABLE="$CONVERSATIONS_TABLE" AUDIT_TABLE="$AUDIT_TABLE"
        LIMITS_TABLE="$LIMITS_TABLE")
    unset KB_SOURCE CONVERSATIONS_TABLE AUDIT_TABLE LIMITS_TABLE
fi

# measure LABEL EVENT EXPECTED_STATUS BINARY [VAR=VALUE...]
measure() {
    local label="$1" event="$2" status="$3" exe="$4"
    shift 4
    env "$@" "$harness" --runs "$runs" --label "$label" --status "$status" "$exe" "$event" \
        2>>"$work/runs.log"
}

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) profile=$profile runs=$runs (medians)"
for name in search chat; do
    printf '# %s binary: %s bytes\n' "$name" "$(stat -c %s "$bin/$name")"
done
for entry in $sizes; do
    file="$(kb_file "$entry")"
    size="$(kb_label "$entry")"
    for source in $sources; do
        if [[ "$source" == s3 ]]; then
            key="kb-$size.json"
            # A failed upload to moto (see runs.log) skips the S3 rows; the file rows still
            # stand, so say so and go on.
            if ! env "${tables[@]}" KB_SOURCE="s3://rag-kb-local/$key" \
                cargo run --quiet -p shared --example local_aws -- "$file" \
                >>"$work/runs.log" 2>&1; then
                echo "# kb=$size s3: the upload to moto failed (see $work/runs.log), skipped"
                continue
            fi
            kb=(KB_SOURCE="s3://rag-kb-local/$key")
            deployed=("${tables[@]}")
            # Never called by a health check; port 9 (discard) is closed anyway.
            model=(DASHSCOPE_API_KEY=unused LLM_BASE_URL=http://127.0.0.1:9/v1)
        else
            # The index beside the file is written for `file+index` and removed for `file`.
            if [[ "$source" == file+index ]]; then
                "$rag" index "$file" >>"$work/runs.log" 2>&1
            else
                rm -f "${file%.json}.index"
            fi
            kb=(KB_SOURCE="$file")
            deployed=()
            model=()
        fi
        measure "search kb=$size $source GET" "$work/search_get.json" 200 "$bin/search" "${kb[@]}"
        measure "chat kb=$size $source GET" "$work/chat_get.json" 200 "$bin/chat" "${kb[@]}" \
            "${deployed[@]}" "${model[@]}"
        measure "chat kb=$size $source POST" "$work/chat_post.json" 200 "$bin/chat" "${kb[@]}" \
            "${deployed[@]}"
    done
done
echo "# every run: $work/runs.log"
