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
