#!/usr/bin/env bash
# Builds the site of docs-site-ruby: Ruby 3.1's core and standard-library reference as
# docs.ruby-lang.org publishes it (https://docs.ruby-lang.org/en/3.1/), RDoc's darkfish HTML of
# Ruby's own source tree, from the whole tree of Debian's ruby3.1 source package (orig tarball
# of 3.1.2), with the rdoc of Debian's ruby3.1 package (README.md beside this file).
#
#   build.sh SOURCE_DIR OUT     (called by eval/run.sh)
#
# SOURCE_DIR: the whole source tarball unpacked (run.sh's `pool_source` with the folder `.`):
# rdoc reads the tree's `.document` files from its root down. OUT: where the HTML goes.
# The generator's packages are installed at the pinned versions the questions were judged on
# (root or sudo), unless NO_INSTALL=1. No network is used by the build itself.
set -euo pipefail
src="${1%/}"
# Absolute, since rdoc runs from inside the copy below.
out="$(realpath -m "$2")"
[[ -f "$src/.document" && -f "$src/common.mk" && -f "$src/doc/.document" && -f "$src/string.c" ]] ||
  { echo "$src is not Ruby's whole source tree" >&2; exit 1; }
grep -q '^#define RUBY_VERSION_TEENY 2$' "$src/version.h" &&
  grep -q '^#define RUBY_API_VERSION_MINOR 1$' "$src/include/ruby/version.h" ||
  { echo "$src is not the Ruby 3.1.2 tree the questions were judged on" >&2; exit 1; }

# Debian's `ruby3.1` ships /usr/bin/rdoc3.1 (to which /usr/bin/rdoc of `ruby` points) and
# `libruby3.1` the rdoc library itself, as the default gem rdoc 6.4.1.1 (Debian's security
# update of Ruby 3.1.2; its rdoc differs from the 6.4.0 in the tarball only in a fix to loading
# ri data and in writing gzip files without a time stamp, see README.md).
tools=(ruby3.1=3.1.7+really3.1.2-0+deb12u1 libruby3.1=3.1.7+really3.1.2-0+deb12u1)

# shellcheck source=../pinned.sh
. "$(dirname "$0")/../pinned.sh"
install_pinned "${tools[@]}"

# Built in a copy, so the unpacked source stays as it came.
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
tree="$copy/ruby"
mkdir -p "$tree"
cp -a "$src/." "$tree/"

# Debian's rdoc with Debian's gems only: GEM_PATH keeps the gem folders of Debian's packages
# (under /usr) and GEM_HOME is an empty folder, so an rdoc gem installed by `gem install`
# cannot stand in for the pinned one; RDOCOPT (options rdoc reads from the environment) is
# dropped.
gem_path="$(/usr/bin/ruby3.1 -e 'puts Gem.path.grep(%r{\A/usr/(lib|share)/}).join(":")')"
rdoc=(env -u RDOCOPT -u BUNDLE_GEMFILE -u RUBYGEMS_GEMDEPS GEM_HOME="$copy/gems"
  GEM_PATH="$gem_path" LANG=C.UTF-8 LC_ALL=C.UTF-8 /usr/bin/rdoc3.1)
version="$("${rdoc[@]}" --version)"
[[ "$version" == 6.4.1.1 ]] || { echo "rdoc is $version, not the pinned 6.4.1.1" >&2; exit 1; }

rm -rf "$out"
# As Ruby's `make html` runs it (common.mk: `$(RDOC) --op $(HTMLOUT) $(RDOC_GEN_OPTS)
# $(RDOCFLAGS) $(srcdir)`, with RDOC `rdoc --root $(srcdir) --encoding=UTF-8 --all` and
# RDOC_GEN_OPTS `--page-dir $(srcdir)/doc --no-force-update`), with the title and main page
# docs.ruby-lang.org gives it ("Documentation for Ruby 3.1", README.md). `--all` documents
# private methods too; `--page-dir doc` puts the pages of doc/ at the site's root
# (doc/syntax/literals.rdoc as syntax/literals_rdoc.html). rdoc follows the `.document` files
# of the tree: the C sources and core .rb files at the root, all of lib/ (less the folders
# whose `.document` leaves them out: bundler, rubygems' vendored libraries), the extensions
# ext/.document lists, the guides of doc/ and NEWS, README and licence files.
(cd "$tree" && "${rdoc[@]}" --quiet --root . --encoding=UTF-8 --all --page-dir doc \
  --no-force-update --title "Documentation for Ruby 3.1" --main README.md --op "$out" .) >&2

# created.rid is rdoc's record for updating the output later (`--no-force-update`): the time of
# the build and of every source file read, not a page; with it two builds always differ.
rm -f "$out/created.rid"
# rdoc hard-links its static files (css/, fonts/, images/, js/) to its template folder under
# /usr/lib when the output is on the same file system; copied, so the site stands alone.
while IFS= read -r -d '' f; do
  cp -p "$f" "$f.copy" && mv -f "$f.copy" "$f"
done < <(find "$out" -type f -links +1 -print0)
# Debian's template replaces four Lato fonts and jQuery by symbolic links into fonts-lato and
# libjs-jquery (relative to /usr/lib/ruby/3.1.0/...), which rdoc copies as links that point
# nowhere from the output. The fonts (named by css/fonts.css) are put back from the template
# in the tarball, as Ruby's own rdoc installs them; jquery.js, which no page loads (darkfish
# 6.4 has no jQuery), is left out.
darkfish="$src/lib/rdoc/generator/template/darkfish"
for f in "$out"/fonts/Lato-*.ttf; do
  [[ -L "$f" ]] || continue
  rm -f "$f" && cp "$darkfish/fonts/$(basename "$f")" "$f"
done
if [[ -L "$out/js/jquery.js" ]]; then rm -f "$out/js/jquery.js"; fi
if [[ -n "$(find "$out" -type l -print -quit)" ]]; then
  echo "the output still has symbolic links:" >&2
  find "$out" -type l >&2
  exit 1
fi
