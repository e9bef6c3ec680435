#!/usr/bin/env bash
# Rebuilds the committed outputs of the real generators the `rag build` tests read:
# src/hugo → hugo/ (Hugo, Debian package `hugo`, tested with 0.111.3),
# src/mkdocs → mkdocs/ (MkDocs from PyPI, pinned below) and src/doxygen → doxygen/
# (Doxygen, Debian package `doxygen`, tested with 1.9.4) and src/docusaurus → docusaurus/
# (Docusaurus 3.10 from npm), and records what Pagefind (npm, pinned below) indexes of the
# hand-written pagefind/ site. The outputs are committed so the
# test suite needs neither generator; run this after changing a source site.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

command -v hugo >/dev/null || { echo "needs hugo (apt-get install hugo)" >&2; exit 1; }
command -v doxygen >/dev/null || { echo "needs doxygen (apt-get install doxygen)" >&2; exit 1; }
rm -rf "$here/hugo"
hugo --source "$here/src/hugo" --destination "$here/hugo" --quiet --cleanDestinationDir

venv="$(mktemp -d)"
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mkdocs==1.6.1"
rm -rf "$here/mkdocs"
"$venv/bin/mkdocs" build --quiet --config-file "$here/src/mkdocs/mkdocs.yml" --site-dir "$here/mkdocs"
# Only the HTML pages and the sitemap are read by the tests; keep the fixture small.
(cd "$here/mkdocs" && rm -rf search sitemap.xml.gz css js img webfonts)

# Doxygen writes beside its sources; only the HTML pages are kept.
dox_out="$(mktemp -d)"
(cd "$here/src/doxygen" && { cat Doxyfile; echo "OUTPUT_DIRECTORY = $dox_out"; } | doxygen -)
rm -rf "$here/doxygen"
mkdir "$here/doxygen"
cp "$dox_out"/html/*.html "$here/doxygen/"
rm -rf "$dox_out"

# What Pagefind itself indexes of the hand-written Pagefind-annotated site (pagefind/):
# the test compares rag build's extraction with it.
npm_dir="$(mktemp -d)"
trap 'rm -rf "$venv" "$npm_dir"' EXIT
(cd "$npm_dir" && npm init -y >/dev/null && npm install --silent "pagefind@1.6.0")
cp "$here/pagefind-dump.mjs" "$npm_dir/"
node "$npm_dir/pagefind-dump.mjs" "$here/pagefind" > "$here/pagefind.expected.json"

# src/docusaurus → docusaurus/ (Docusaurus, npm, pinned in its package.json): the blog's
# index, two tag pages, the posts they list and the doc page.
docu_dir="$(mktemp -d)"
trap 'rm -rf "$venv" "$npm_dir" "$docu_dir"' EXIT
cp -r "$here/src/docusaurus/." "$docu_dir/"
(cd "$docu_dir" && npm install --silent --no-audit --no-fund && npx docusaurus build >/dev/null)
rm -rf "$here/docusaurus"
for page in blog blog/tags/release blog/tags/charts blog/offline-charts blog/station-alerts \
  blog/community-stations docs/intro; do
  mkdir -p "$here/docusaurus/$page"
  cp "$docu_dir/build/$page/index.html" "$here/docusaurus/$page/"
done
