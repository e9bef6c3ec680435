#!/usr/bin/env bash
# Runs every retrieval dev set and prints one markdown table of nDCG@10 and Recall@3 per set
# and question language. See eval/README.md.
#
#   eval/run.sh [--json-dir DIR] [--compare DIR] [--work DIR] [--only NAME]... [--no-install]
#               [any other args are passed to every `rag eval`, e.g. --rewrites FILE]
#
# RAG: the rag binary (default target/release/rag of this checkout).
# SHARED_EVAL: the team's BEIR sets (default ../shared/eval, or ../../shared/eval from a
#   worktree); skipped when absent.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rag="${RAG:-$repo/target/release/rag}"
work="${TMPDIR:-/tmp}/rag-eval"
json_dir=""
compare=""
install=1
only=()
extra=()
while (($#)); do
  case "$1" in
    --json-dir) json_dir="$2"; shift 2 ;;
    --compare) compare="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --no-install) install=0; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done
[[ -x "$rag" ]] || { echo "no rag binary at $rag (cargo build --release -p rag, or set RAG)" >&2; exit 1; }
rag="$(cd "$(dirname "$rag")" && pwd)/$(basename "$rag")"
shared="${SHARED_EVAL:-}"
if [[ -z "$shared" ]]; then
  for d in "$repo/../shared/eval" "$repo/../../shared/eval"; do
    [[ -d "$d" ]] && { shared="$(cd "$d" && pwd)"; break; }
  done
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
results="$work/results"
rm -rf "$results"
mkdir -p "$results"

wanted() {
  ((${#only[@]} == 0)) && return 0
  local o
  for o in "${only[@]}"; do [[ "$o" == "$1" ]] && return 0; done
  return 1
}

# The real sites: name, Debian package, the built site it installs, the site's public base URL,
# and any further `rag build` options (a site made of some folders of a package).
# Questions were judged on Debian 12 (bookworm) versions of these packages (README). A site
# given as `extract:PATH` is not installed: the package is downloaded and unpacked into the
# work dir (`PATH` inside it), as nodejs-doc would conflict with another source's nodejs (and
# python-typer-doc would pull mkdocs and theme packages its text does not need,
# libcommons-lang3-java-doc the whole default-jdk-doc, and rust-doc JavaScript and font packages;
# erlang-doc, vim-doc, gnuplot-doc, debian-handbook, scala-doc, python-pandas-doc,
# imagemagick-6-doc, gimp-help-en, python-scrapy-doc, ffmpeg-doc, cppreference-doc-en-html and
# python3.11-doc are pinned to the versions their questions were judged on). A site given as
# `markdown:PATH` is unpacked so too and built from the Markdown sources in PATH (`rag build
# --markdown`).
sites=(
  "docs-site-git|git-doc|/usr/share/doc/git-doc|https://git-scm.com/docs/"
  "docs-site-postgresql|postgresql-doc-15|/usr/share/doc/postgresql-doc-15/html|https://www.postgresql.org/docs/15/"
  "docs-site-octave|octave-doc|/usr/share/doc/octave/octave.html|https://docs.octave.org/v7.3.0/"
  "docs-site-sqlite|sqlite3-doc|/usr/share/doc/sqlite3|https://www.sqlite.org/"
  "docs-site-django|python-django-doc|/usr/share/doc/python-django-doc/html|https://docs.djangoproject.com/en/3.2/"
  "docs-site-doxygen|doxygen-doc|/usr/share/doc/doxygen/html|https://www.doxygen.nl/manual/"
  "docs-site-nodejs|nodejs-doc=18.20.4+dfsg-1~deb12u3|extract:usr/share/doc/nodejs/api|https://nodejs.org/docs/latest-v18.x/api/"
  "docs-site-typer|python-typer-doc=0.7.0-1|extract:usr/share/doc/python-typer-doc/html|https://typer.tiangolo.com/"
  "docs-site-commons-lang|libcommons-lang3-java-doc=3.12.0-2+deb12u1|extract:usr/share/doc/libcommons-lang3-java/api|https://commons.apache.org/proper/commons-lang/apidocs/"
  "docs-site-rust|rust-doc=1.63.0+dfsg1-2|extract:usr/share/doc/rust-doc/html|https://doc.rust-lang.org/1.63.0/"
  "docs-site-erlang|erlang-doc=1:25.2.3+dfsg-1+deb12u4|extract:usr/share/doc/erlang-doc|https://www.erlang.org/doc/"
  "docs-site-racket|racket-doc=8.7+dfsg1-1|extract:usr/share/doc/racket|https://docs.racket-lang.org/"
  "docs-site-qt|qtbase5-doc-html=5.15.8+dfsg-11+deb12u3|extract:usr/share/qt5/doc|https://doc.qt.io/qt-5/"
  "docs-site-glib|libglib2.0-doc=2.74.6-2+deb12u9|extract:usr/share/gtk-doc/html|https://developer-old.gnome.org/"
  "docs-site-apache|apache2-doc=2.4.71-1~deb12u1|extract:usr/share/doc/apache2-doc/manual/en|https://httpd.apache.org/docs/2.4/"
  "docs-site-haddock|ghc-doc=9.0.2-4|extract:usr/share/doc/ghc-doc/html/libraries|https://downloads.haskell.org/ghc/9.0.2/docs/html/libraries/"
  "docs-site-vim|vim-doc=2:9.0.1378-2+deb12u2|extract:usr/share/doc/vim/html|http://vimdoc.sourceforge.net/htmldoc/"
  "docs-site-gnuplot|gnuplot-doc=5.4.4+dfsg1-2|extract:usr/share/doc/gnuplot/htmldocs|http://www.gnuplot.info/docs_5.4/htmldocs/"
  "docs-site-debian-handbook|debian-handbook=11.20220922|extract:usr/share/doc/debian-handbook/html/zh-CN|https://debian-handbook.info/browse/zh-CN/stable/"
  "docs-site-debian-handbook-bilingual|debian-handbook=11.20220922|extract:usr/share/doc/debian-handbook/html|https://debian-handbook.info/browse/|--include /browse/en-US/** --include /browse/stable/** --include /browse/zh-CN/**"
  "docs-site-scala|scala-doc=2.11.12-5|extract:usr/share/doc/scala-2.11/api/library|https://www.scala-lang.org/api/2.11.12/"
  "docs-site-pandas|python-pandas-doc=1.5.3+dfsg-2|extract:usr/share/doc/python-pandas-doc/html|https://pandas.pydata.org/pandas-docs/version/1.5.3/"
  "docs-site-imagemagick|imagemagick-6-doc=8:6.9.11.60+dfsg-1.6+deb12u15|extract:usr/share/doc/imagemagick-6-common/html|https://legacy.imagemagick.org/"
  "docs-site-gimp|gimp-help-en=2.10.34-2|extract:usr/share/gimp/2.0/help/en|https://docs.gimp.org/2.10/en/"
  "docs-site-scrapy|python-scrapy-doc=2.8.0-2|extract:usr/share/doc/python-scrapy-doc/html|https://docs.scrapy.org/en/2.8/"
  "docs-site-ffmpeg|ffmpeg-doc=7:5.1.9-0+deb12u1|extract:usr/share/doc/ffmpeg|https://ffmpeg.org/documentation/"
  "docs-site-cppreference|cppreference-doc-en-html=20170409-2|extract:usr/share/cppreference/doc/html/en|https://en.cppreference.com/w/"
  "docs-site-python|python3.11-doc=3.11.2-6+deb12u9|extract:usr/share/doc/python3.11/html|https://docs.python.org/3.11/"
  # The same Node.js pages from the Markdown sources the package ships beside them (`rag build
  # --markdown`), with docs-site-nodejs's questions.
  "docs-site-nodejs-markdown|nodejs-doc=18.20.4+dfsg-1~deb12u3|markdown:usr/share/doc/nodejs/api|https://nodejs.org/docs/latest-v18.x/api/|--permalink /{path}.html"
  # Hugo's own documentation (gohugo.io), the `docs/` folder of Debian's hugo source package,
  # built by that package's hugo: `hugo-docs:SOURCE TARBALL:ITS SHA-256` (below).
  "docs-site-hugo|hugo=0.111.3-1|hugo-docs:hugo_0.111.3.orig.tar.gz:b6eeb13d9ed2e5d5c6895bae56480bf0fec24a564ad9d17c90ede14a7b240999|https://gohugo.io/"
  # JSON for Modern C++'s documentation, the `docs/` folder of Debian's nlohmann-json3 source
  # package, built by the set's own `build.sh` (Debian's MkDocs with the Material theme):
  # `build-script:SOURCE TARBALL:ITS SHA-256`, the package column the source package.
  "docs-site-nlohmann-json|nlohmann-json3|build-script:nlohmann-json3_3.11.2.orig.tar.gz:d69f9deb6a75e2580465c6c4c5111b89c4dc2fa94e3a85fcd2ffcd9a143d9273|https://json.nlohmann.me/"
  # Jekyll's website (jekyllrb.com), the `docs/` folder of Debian's jekyll source package
  # (the tarball of trixie's 4.3.4, whose `docs/` is the 4.3.1 site: bookworm's is gone from
  # the pool), built by the set's own `build.sh` with bookworm's Jekyll 4.3.1.
  "docs-site-jekyll|jekyll|build-script:jekyll_4.3.4+dfsg.orig.tar.xz:27b9a0629fcb0de02ef8699bb994ca95734d6c952b135308fdde80cbdb23b683|https://jekyllrb.com/"
  # ent's documentation and blog (entgo.io), the `doc/` folder of Debian's golang-entgo-ent
  # source package, built by the set's own `build.sh` with Docusaurus 2.0.1 from the npm
  # registry (upstream's yarn.lock): `build-script:TARBALL:SHA-256:FOLDER` unpacks FOLDER
  # (default `docs`).
  "docs-site-ent|golang-entgo-ent|build-script:golang-entgo-ent_0.11.3.orig.tar.gz:6c857e9bad2fba71edc39e8bc4482131f767da0b419c70b25cab8f3ac3c5088e:doc|https://entgo.io/"
  # Rollup's documentation (rollupjs.org), built by the set's own `build.sh` with VitePress from
  # the npm registry, from the whole tree of Debian's node-rollup source package (trixie's 3.29.5:
  # the site's config imports Rollup's own sources).
  "docs-site-rollup|node-rollup|build-script:node-rollup_3.29.5.orig.tar.gz:338cf141c6c9621f82a6071c1a3b9ad47a006945b71f4322683bee76dfa610a4:.|https://rollupjs.org/"
  # Chart.js 3.9.1's API reference, made by TypeDoc (default theme) from the type declarations in
  # the whole tree of Debian's node-chart.js source package, with upstream's typedoc options.
  "docs-site-chartjs|node-chart.js|build-script:node-chart.js_3.9.1+~0.2.1.orig.tar.xz:ca14a32cc19e29a046ae17d537bc92100b544e2fcb5b6fb1e2dfa6a32d9ec4c6:.|https://www.chartjs.org/docs/3.9.1/api/"
  # Ruby's core and standard-library reference (docs.ruby-lang.org), made by RDoc from the
  # whole tree of Debian's ruby3.1 source package, as Ruby's own `make html` runs it.
  "docs-site-ruby|ruby3.1|build-script:ruby3.1_3.1.2.orig.tar.xz:350013ef6640f15c42eae48d25c035999dcbb32e4be038d27ad891cb48d685a5:.|https://docs.ruby-lang.org/en/3.1/"
)

# pool_source SRCPKG TARBALL SHA256 [FOLDER]: the FOLDER (default `docs`; `.` for the whole
# tree) of a Debian source package's upstream tarball, downloaded once from the pool of the
# archive apt is set up for and checked against its SHA-256 (as the source package's .dsc gives
# it), unpacked into $work/.pkg; prints the folder it is unpacked in (the tarball's top folder,
# holding FOLDER).
pool_source() {
  local srcpkg="$1" tarball="$2" sha="$3" folder="${4:-docs}" src mirror only=()
  [[ "$folder" == . ]] || only=(--wildcards "*/$folder/*")
  src="$work/.pkg/${tarball%.tar.*}"
  if [[ ! -d "$src/$folder" ]]; then
    if ((install == 0)); then echo "$tarball is not unpacked in $src (--no-install)" >&2; return 1; fi
    # Each step checked by hand: `set -e` does not reach into a function called in `||`.
    mkdir -p "$work/.pkg" || return 1
    mirror="$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' |
      grep -E '/debian/$' | head -n 1)"
    [[ -n "$mirror" ]] || { echo "apt names no Debian archive to download $tarball from" >&2; return 1; }
    # The pool's folder is the package's first letter, or `libx` for a `libx...` package.
    local letter="${srcpkg:0:1}"
    [[ "$srcpkg" == lib?* ]] && letter="${srcpkg:0:4}"
    curl -fsSL -o "$work/.pkg/$tarball" "${mirror}pool/main/$letter/$srcpkg/$tarball" ||
      { echo "could not download $tarball from Debian's pool" >&2; return 1; }
    echo "$sha  $work/.pkg/$tarball" | sha256sum -c --quiet - >&2 ||
      { echo "$tarball is not the tarball the questions were judged on" >&2; rm -f "$work/.pkg/$tarball"; return 1; }
    rm -rf "$src.tmp" && mkdir -p "$src.tmp" &&
      tar -xaf "$work/.pkg/$tarball" -C "$src.tmp" --strip-components 1 ${only[@]+"${only[@]}"} &&
      mv "$src.tmp" "$src" || return 1
  fi
  echo "$src"
}

# hugo_docs PKG SRC BASE OUT: builds the `docs/` site of a Hugo source tree SRC (unpacked by
# `pool_source`) with the hugo of the binary package PKG, into OUT. Production settings (a
# page built for development says `noindex`), without reading a git log the tarball has not got.
hugo_docs() {
  local pkg="$1" src="$2" base="$3" out="$4" root lib libroot dir libs=""
  root="$(extract_pkg "$pkg")" || return 1
  # hugo links the shared libraries of its package's Depends; unpacked beside it, not
  # installed, so the run works on a machine without them (a fresh base image has neither).
  for lib in libsass1 libwebp7; do
    libroot="$(extract_pkg "$lib")" || return 1
    for dir in "$libroot"/usr/lib/*-linux-gnu*; do libs="$libs${libs:+:}$dir"; done
  done
  rm -rf "$out"
  LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" HUGO_ENABLEGITINFO=false \
    "$root/usr/bin/hugo" --quiet --source "$src/docs" --baseURL "$base" --destination "$out" >&2 ||
    { echo "hugo could not build $src/docs" >&2; return 1; }
}

updated=0
need_pkg() {
  dpkg -s "$1" >/dev/null 2>&1 && return 0
  if ((install == 0)); then echo "package $1 is not installed (--no-install)" >&2; return 1; fi
  local sudo=""
  ((EUID == 0)) || sudo="sudo"
  if ((updated == 0)); then
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
    --no-install-recommends "$1" >&2
}

# extract_pkg PKG[=VERSION]: unpacks the package (downloaded once) into $work/.pkg/NAME and
# prints that directory.
extract_pkg() {
  local name="${1%%=*}" dest="$work/.pkg/${1%%=*}"
  if [[ ! -d "$dest/root" ]]; then
    if ((install == 0)); then echo "package $name is not unpacked in $dest (--no-install)" >&2; return 1; fi
    mkdir -p "$dest"
    if ! (cd "$dest" && apt-get download "$1" >&2 2>/dev/null); then
      local sudo=""
      ((EUID == 0)) || sudo="sudo"
      $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
      updated=1
      (cd "$dest" && apt-get download "$1" >&2)
    fi
    dpkg-deb -x "$dest"/*.deb "$dest/root.tmp" && mv "$dest/root.tmp" "$dest/root"
  fi
  echo "$dest/root"
}

# eval_one SET LANG CORPUS QUERIES QRELS [CLASSES]: one `rag eval`, result in $results.
eval_one() {
  local set="$1" lang="$2" corpus="$3" queries="$4" qrels="$5" classes="${6:-}"
  local out="$results/$set-$lang.json" run="$results/$set-$lang.run.json"
  "$rag" eval --corpus "$corpus" --queries "$queries" --qrels "$qrels" --json --run "$run" \
    ${extra[@]+"${extra[@]}"} >"$out.raw"
  if [[ -n "$classes" ]] && python3 - "$classes" <<'EOF'
import json, sys
cls = json.load(open(sys.argv[1]))
sys.exit(0 if any(k != v for k, v in cls.items()) else 1)
EOF
  then
    # Some pages are published twice: score with duplicates collapsed (mkset.py).
    python3 "$here/classrun.py" "$run" "$classes" "$qrels" "$out.raw" >"$out"
  else
    mv "$out.raw" "$out"
  fi
  rm -f "$out.raw"
  grep -qx "$set" "$results/order.txt" 2>/dev/null || echo "$set" >>"$results/order.txt"
  echo "  $set $lang: $(cut -c1-120 "$out")" >&2
}

for line in "${sites[@]}"; do
  IFS='|' read -r name pkg dir base opts <<<"$line"
  # Further `rag build` options, split at spaces (no globbing: `read -a` expands nothing).
  read -ra build_opts <<<"${opts:-}"
  wanted "$name" || continue
  source_opt=--site
  w="$work/$name"
  if [[ "$dir" == hugo-docs:* ]]; then
    IFS=':' read -r _ tarball sha <<<"$dir"
    dir="$work/.pkg/$name-public"
    src="$(pool_source hugo "$tarball" "$sha")" || exit 1
    hugo_docs "$pkg" "$src" "$base" "$dir" || exit 1
  elif [[ "$dir" == build-script:* ]]; then
    IFS=':' read -r _ tarball sha folder <<<"$dir"
    dir="$work/.pkg/$name-public"
    src="$(pool_source "$pkg" "$tarball" "$sha" "${folder:-docs}")" || exit 1
    NO_INSTALL=$((1 - install)) bash "$here/$name/build.sh" "$src" "$dir" >&2 ||
      { echo "$name/build.sh could not build the site" >&2; exit 1; }
  elif [[ "$dir" == extract:* || "$dir" == markdown:* ]]; then
    root="$(extract_pkg "$pkg")" || exit 1
    [[ "$dir" == markdown:* ]] && source_opt=--markdown
    dir="$root/${dir#*:}"
  else
    need_pkg "$pkg"
  fi
  [[ -d "$dir" ]] || { echo "$pkg installed but $dir is missing" >&2; exit 1; }
  rm -rf "$w"
  mkdir -p "$w"
  if [[ "$source_opt" == --markdown ]]; then
    # Debian compresses all but the smallest sources: the folder's `.md` files and its
    # `.md.gz` files uncompressed are the site.
    mkdir -p "$w/src"
    cp "$dir"/*.md "$w/src/"
    for f in "$dir"/*.md.gz; do gzip -dc "$f" >"$w/src/$(basename "$f" .gz)"; done
    dir="$w/src"
  fi
  echo "building $name from $dir" >&2
  # From the work dir, so no rag.toml of the caller's directory is picked up.
  (cd "$w" && "$rag" build "$source_opt" "$dir" --base-url "$base" -o "$w/knowledge_base.json" \
    "${build_opts[@]}") \
    >"$w/build.log" 2>&1 || { cat "$w/build.log" >&2; exit 1; }
  tail -n 3 "$w/build.log" | sed 's/^/  /' >&2
  python3 "$here/mkset.py" "$here/$name/questions.tsv" "$w/knowledge_base.json" "$base" \
    "$w/set" --site "$dir" >"$w/mkset.json"
  echo "  mkset: $(cat "$w/mkset.json")" >&2
  for lang in all zh en mixed; do
    q="$w/set/qrels/test.tsv"
    [[ "$lang" == all ]] || q="$w/set/qrels/test-$lang.tsv"
    eval_one "$name" "$lang" "$w/knowledge_base.json" "$w/set/queries.jsonl" "$q" \
      "$w/set/classes.json"
  done
done

if [[ -n "$shared" && -d "$shared" ]]; then
  for set in scifact xquadr-zh-en xquad-zh-zh xquad-en-zh xquad-mixed docs-site-dev; do
    wanted "$set" || continue
    d="$shared/$set"
    [[ -d "$d" ]] || continue
    corpus="$d/corpus.jsonl"
    # docs-site-dev's product numbers are on its knowledge base (its README).
    [[ -f "$d/knowledge_base.json" ]] && corpus="$d/knowledge_base.json"
    split=dev
    [[ -f "$d/qrels/dev.tsv" ]] || split=test
    eval_one "$set" all "$corpus" "$d/queries.jsonl" "$d/qrels/$split.tsv"
    for lang in zh en mixed; do
      [[ -f "$d/qrels/$split-$lang.tsv" ]] || continue
      eval_one "$set" "$lang" "$corpus" "$d/queries.jsonl" "$d/qrels/$split-$lang.tsv"
    done
  done
else
  echo "no shared eval folder (SHARED_EVAL): BEIR sets skipped" >&2
fi

if [[ -n "$json_dir" ]]; then
  mkdir -p "$json_dir"
  cp "$results"/*.json "$results/order.txt" "$json_dir"/
fi
python3 "$here/table.py" "$results" ${compare:+"$compare"}
