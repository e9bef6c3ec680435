#!/usr/bin/env bash
# Rebuilds shared/data/lexicon_software.tsv (and zh_freq.tsv, which must count its words)
# from the zh_CN gettext catalogs of the Debian packages in infra/software_senses_packages.txt.
# Needs apt-get (the packages are downloaded and unpacked, not installed) and pip (jieba's
# word list, as infra/build_zh_freq.py uses). Run from anywhere; writes into the repo.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
grep -v '^#' "$repo/infra/software_senses_packages.txt" | xargs apt-get download >/dev/null
for deb in *.deb; do dpkg -x "$deb" unpacked; done
python3 -m pip download --no-deps --no-binary :all: jieba==0.42.1 -d jieba >/dev/null
tar -xzf jieba/jieba-0.42.1.tar.gz -C jieba
dict="$work/jieba/jieba-0.42.1/jieba/dict.txt"
python3 "$repo/infra/build_software_senses.py" --jieba "$dict" unpacked
python3 "$repo/infra/build_zh_freq.py" --source "$dict"
