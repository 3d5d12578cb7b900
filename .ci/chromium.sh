#!/usr/bin/env bash
# Source this from .ci/run: installs headless Chromium if missing, for the report browser test
# and exports CTXMODEL_CHROMIUM with the binary's path.
# Usage:  . .ci/chromium.sh
_ctxmodel_find_chromium() {
    for name in chromium chromium-browser google-chrome-stable google-chrome; do
        if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
    done
    return 1
}
if ! _ctxmodel_find_chromium >/dev/null; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        $SUDO apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
    fi
fi
if CTXMODEL_CHROMIUM="$(_ctxmodel_find_chromium)"; then
    export CTXMODEL_CHROMIUM
    echo "== chromium at $CTXMODEL_CHROMIUM"
else
    echo "== chromium unavailable: the report browser test will be skipped"
fi
