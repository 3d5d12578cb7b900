#!/usr/bin/env bash
# Source this from .ci/run: installs redis-server if missing, starts one on 127.0.0.1 on a free port,
# and exports CTXMODEL_REDIS_URL for the distributed-campaign test. The server dies with
# the shell that started it (trap), and keeps no state on disk (no RDB/AOF).
# Usage:  . .ci/redis.sh
if ! command -v redis-server >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        $SUDO apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
    fi
fi
if command -v redis-server >/dev/null 2>&1; then
    CTXMODEL_REDIS_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
    redis-server --bind 127.0.0.1 --port "$CTXMODEL_REDIS_PORT" --save '' --appendonly no \
        --daemonize no --loglevel warning >/dev/null 2>&1 &
    CTXMODEL_REDIS_PID=$!
    trap 'kill "$CTXMODEL_REDIS_PID" 2>/dev/null || true' EXIT
    for _ in $(seq 1 50); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$CTXMODEL_REDIS_PORT") 2>/dev/null; then break; fi
        sleep 0.1
    done
    export CTXMODEL_REDIS_URL="redis://127.0.0.1:$CTXMODEL_REDIS_PORT/0"
    echo "== redis-server on $CTXMODEL_REDIS_URL (pid $CTXMODEL_REDIS_PID)"
else
    echo "== redis-server unavailable: the distributed-campaign test will be skipped"
fi
