#!/usr/bin/env bash
# Builds the site of docs-site-jekyll: jekyllrb.com, the website and documentation of the
# Jekyll static site generator, from the `docs/` folder of Debian's jekyll source package
# (orig tarball of 4.3.4+dfsg, whose `docs/` is the 4.3.1 site), with Debian's Jekyll 4.3.1
# and its plugin packages (README.md beside this file).
#
#   build.sh SOURCE_DIR OUT     (called by eval/run.sh)
#
# SOURCE_DIR: the source tarball unpacked (run.sh's `pool_source`); OUT: where the HTML goes.
# The generator's packages are installed at the pinned versions the questions were judged on
# (root or sudo), unless NO_INSTALL=1.
set -euo pipefail
src="$1"
# Absolute, since jekyll runs from inside the copy below.
out="$(realpath -m "$2")"
# Jekyll and six of the seven plugins of the site's `_config.yml` (jemoji is not packaged,
# see below).
tools=(jekyll=4.3.1+dfsg-3+deb12u1 ruby-jekyll-avatar=0.8.0-2 ruby-jekyll-feed=0.17.0-1
  ruby-jekyll-mentions=1.6.0-1 ruby-jekyll-redirect-from=0.16.0-2 ruby-jekyll-seo-tag=2.8.0-1
  ruby-jekyll-sitemap=1.4.0-2)

# shellcheck source=../pinned.sh
. "$(dirname "$0")/../pinned.sh"
install_pinned "${tools[@]}"

# Built in a copy, so the unpacked source stays as it came (jekyll also leaves its
# `.jekyll-cache` in the source folder).
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp -r "$src/docs" "$copy/"
tree="$copy/docs"
# `jemoji` (GitHub emoji shortcodes as images) is not packaged by Debian, nor is the `gemoji`
# gem it needs: it is left out, so the 25 or so pages that use a shortcode show it as text
# (`:tada:`). The site's other plugins are all Debian's.
# `time`: Jekyll takes `site.time` from the clock unless the config sets it (it does not read
# SOURCE_DATE_EPOCH), and the docs and tutorials, which have no date of their own, the feed,
# the sitemap and the footer's copyright year carry it. Set to the time every file of the
# tarball carries, the v4.3.4 commit (2024-09-16 16:05:27 UTC), so two builds give the same
# files.
sed -i -e '/^- jemoji$/d' "$tree/_config.yml"
if grep -q 'jemoji' "$tree/_config.yml"; then
  echo "_config.yml still names jemoji, which Debian lacks" >&2
  exit 1
fi
printf 'time: 2024-09-16T16:05:27Z\n' >>"$tree/_config.yml"
rm -rf "$out"
# Debian's jekyll with Debian's gems only: GEM_PATH keeps the gem folders of Debian's packages
# (under /usr) and GEM_HOME is an empty folder, so a gem installed by `gem install` or a
# Gemfile (neither of which the site has) cannot stand in for a pinned package.
# JEKYLL_ENV=production, as upstream publishes it (with this site and these plugins a
# development build gives the same files).
gem_path="$(/usr/bin/ruby -e 'puts Gem.path.grep(%r{\A/usr/(lib|share)/}).join(":")')"
(cd "$tree" && env -u BUNDLE_GEMFILE -u RUBYGEMS_GEMDEPS GEM_HOME="$copy/gems" \
  GEM_PATH="$gem_path" JEKYLL_NO_BUNDLER_REQUIRE=true JEKYLL_ENV=production \
  /usr/bin/jekyll build --quiet -s "$tree" -d "$out")
