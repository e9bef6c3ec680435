#!/usr/bin/env bash
# Times `rag build` (release) on a synthetic 1,000-page HTML site with a sitemap: each page
# has a header, a nav, a footer and a main part of ~1,500 words under headings, like a
# generator's output. The site is generated into a temporary directory (not committed).
# Usage: infra/bench_build.sh [pages]   (default 1000)
# (JDK 17's API docs, 10,137 pages: see docs/build.md, "Speed and cost".)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pages="${1:-1000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$work/site" "$pages" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
words = ("retrieval ranking index query passage token vision language model training "
         "face recognition embedding cluster discrimination dataset benchmark encoder "
         "decoder attention transformer pretraining multimodal image video text").split()
def para(k):
    return " ".join(rng.choice(words) for _ in range(k)).capitalize() + "."
urls = []
for i in range(n):
    path = f"posts/{i // 100}/post-{i}/"
    os.makedirs(os.path.join(root, path), exist_ok=True)
    body = []
    for s in range(6):
        body.append(f"<h2>Section {s} of post {i}</h2>")
        body += [f"<p>{para(60)}</p>" for _ in range(4)]
    html = (f'<!doctype html><html lang="en"><head><title>Post {i} | Bench</title>'
            f'<meta name="description" content="Synthetic post {i}">'
            f'<link rel="canonical" href="https://bench.example.org/{path}"></head><body>'
            '<header><a href="/">Bench</a></header><nav>' + "".join(f'<a href="/p{k}/">Link {k}</a>' for k in range(30)) +
            f'</nav><main><article><h1>Post {i}</h1>{"".join(body)}</article></main>'
            '<footer>Footer</footer><script>var x = 1;</script></body></html>')
    with open(os.path.join(root, path, "index.html"), "w") as f:
        f.write(html)
    urls.append(f"https://bench.example.org/{path}")
with open(os.path.join(root, "sitemap.xml"), "w") as f:
    f.write('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')
    f.write("".join(f"<url><loc>{u}</loc></url>" for u in urls))
    f.write("</urlset>")
PY
echo "site: $pages pages, $(du -sh "$work/site" | cut -f1)"

cargo build --release -p rag --quiet
bin="${CARGO_TARGET_DIR:-$repo/target}/release/rag"
# Run 1 writes the build cache (.rag-build-cache) next to the output, run 2 reuses it (no
# file changed), run 3 goes without it.
for run in "1 cold" "2 cached" "3 --no-cache"; do
    flag=()
    [[ "$run" == *--no-cache ]] && flag=(--no-cache)
    /usr/bin/time -f "run $run: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
        "$bin" build --site "$work/site" --base-url https://bench.example.org/ -o "$work/kb.json" \
        "${flag[@]}" >/dev/null
done
echo "output: $(du -h "$work/kb.json" | cut -f1)"
