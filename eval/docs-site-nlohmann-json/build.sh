#!/usr/bin/env bash
# Builds the site of docs-site-nlohmann-json: the documentation of JSON for Modern C++
# (nlohmann/json 3.11.2) from the `docs/mkdocs` folder of Debian's nlohmann-json3 source
# package, with Debian's MkDocs and its Material theme (README.md beside this file).
#
#   build.sh SOURCE_DIR OUT     (called by eval/run.sh)
#
# SOURCE_DIR: the source tarball unpacked (run.sh's `pool_source`); OUT: where the HTML goes.
# The generator's packages are installed at the pinned versions the questions were judged on
# (root or sudo), unless NO_INSTALL=1.
set -euo pipefail
src="$1" out="$2"
tools=(mkdocs=1.4.2+dfsg-2 mkdocs-material=8.2.5-1 mkdocs-material-extensions=1.1.1-1
  mkdocs-redirects=1.2.0-2 python3-pymdownx=9.5-2)

# shellcheck source=../pinned.sh
. "$(dirname "$0")/../pinned.sh"
install_pinned "${tools[@]}"

# Upstream's `make prepare_files` (docs/mkdocs/Makefile): the example programs and their
# output, which the pages include, and the logo, copied into the docs tree; in a copy, so
# the unpacked source stays as it came.
# Pages include them by paths relative to the tarball's `docs/mkdocs/docs/api/...`, so the
# whole `docs/` folder is copied.
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp -r "$src/docs" "$copy/"
tree="$copy/docs/mkdocs"
rm -rf "$tree/docs/examples"
mkdir -p "$tree/docs/examples" "$tree/docs/images"
cp "$copy/docs/json.gif" "$tree/docs/images/"
cp "$copy"/docs/examples/*.cpp "$copy"/docs/examples/*.output "$tree/docs/examples/"
# Three plugins Debian does not package are left out: `minify` (whitespace only),
# `git-revision-date-localized` (reads a git history the tarball has not got) and
# `plantuml_markdown` (its two diagrams stay as code).
sed -i \
  -e '/^    - minify:$/,/^        minify_html: true$/d' \
  -e '/^    - git-revision-date-localized$/d' \
  -e '/^  - plantuml_markdown:$/,/^      format: svg$/d' \
  "$tree/mkdocs.yml"
if grep -Eq 'minify|git-revision-date|plantuml' "$tree/mkdocs.yml"; then
  echo "mkdocs.yml still names a plugin Debian lacks" >&2
  exit 1
fi
rm -rf "$out"
# Debian's interpreter, where Debian's mkdocs is installed (not a python3 earlier on PATH);
# the date of the Debian upload, so the sitemap is the same on every build.
(cd "$tree" && SOURCE_DATE_EPOCH=1660576813 /usr/bin/python3 -m mkdocs build --quiet \
  -f mkdocs.yml -d "$out")
