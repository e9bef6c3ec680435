# Sourced (not run) by infra/run.sh --aws and infra/load.sh: the local stand-in for the AWS
# services the functions use when deployed, with no AWS account.
#
# The caller provides `repo` (the repository root, also the working directory) and a `pids`
# array whose processes its EXIT trap stops; what is started here is appended to it.

# A port the OS just handed out and released: free unless something races us for it.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts moto on a free port of 127.0.0.1, points this shell's environment at it (the
# functions started afterwards inherit it), creates the conversation, audit and limits
# tables and a bucket holding knowledge_base.json. Optional $1: moto's log file.
start_local_aws() {
    local moto_port log
    moto_port="$(free_port)"
    log="${1:-${TMPDIR:-/tmp}/rag-moto-$moto_port.log}"
    # Through the wrapper that makes moto's conditional updates atomic, as DynamoDB's are
    # (the rate limits rely on it; see infra/moto_serial.py).
    # Lean transactions: a long local run must not grow moto without bound (see the file).
    MOTO_LEAN_TRANSACTIONS=1 .venv/bin/python infra/moto_serial.py -H 127.0.0.1 -p "$moto_port" >"$log" 2>&1 &
    pids+=("$!")
    local ready=""
    for _ in $(seq 100); do
        if curl -fs "http://127.0.0.1:$moto_port/moto-api/" >/dev/null; then
            ready=1
            break
        fi
        sleep 0.1
    done
    if [[ -z "$ready" ]]; then
        echo "moto did not start on port $moto_port (log: $log)" >&2
        return 1
    fi

    # Dummy credentials and an explicit endpoint: nothing here can reach a real account.
    export AWS_ENDPOINT_URL="http://127.0.0.1:$moto_port"
    export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_SESSION_TOKEN=local
    export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
    export AWS_EC2_METADATA_DISABLED=true
    unset AWS_PROFILE
    export CONVERSATIONS_TABLE=rag-conversations AUDIT_TABLE=rag-audit LIMITS_TABLE=rag-limits
    export KB_SOURCE=s3://rag-kb-local/knowledge_base.json
    # The tables come from the store's own create_tables, the bucket and upload from the
    # S3 source: the same code paths the functions use.
    cargo run --quiet -p shared --example local_aws -- "$repo/knowledge_base.json"
}
