#!/usr/bin/env bash
# Rebuilds shared/data/english_plurals.tsv from WordNet 3.0's noun exceptions (Debian's
# wordnet-base, downloaded and unpacked, not installed) with infra/build_english_plurals.py,
# which needs the Snowball stemmer (snowballstemmer from PyPI, into a throwaway directory).
# Run from anywhere; writes into the repo.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get download wordnet-base=1:3.0-37 >/dev/null
dpkg -x wordnet-base_*.deb unpacked
python3 -m pip install --quiet --target "$work/py" snowballstemmer==2.2.0
PYTHONPATH="$work/py" python3 "$repo/infra/build_english_plurals.py" unpacked/usr/share/wordnet
