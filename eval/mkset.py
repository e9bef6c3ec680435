#!/usr/bin/env python3
"""Turn a real site's questions.tsv into a BEIR set over the knowledge base `rag build` wrote.

Usage: mkset.py QUESTIONS KB BASE_URL OUTDIR [--site DIR]

QUESTIONS has a header line, then per line: id, language (zh|en|mixed), question, and the
relevant pages as `path:grade,...` (2 = the page that answers it, 1 = a page that helps), paths
relative to BASE_URL. Each path is mapped to the id `rag build` gave that page (through each
entry's `url`). Writes OUTDIR/queries.jsonl, OUTDIR/qrels/test.tsv and test-{zh,en,mixed}.tsv,
and OUTDIR/classes.json (entry id -> its class's representative entry id).

Equivalence classes: one page published under several paths counts as one page, so collapsing
duplicates is neither rewarded nor punished. Two sources, both generic:
  - path rules for sites that publish a page twice (rustdoc's core/alloc re-exports under std/
    and std::collections' inlined re-exports, an mdBook's older editions under book/<edition>/);
  - with --site DIR, redirect stubs (`<meta http-equiv="refresh" content="0; url=...">`, which
    Texinfo, Hugo, Jekyll and Sphinx write for aliases) join the class of the page they send to.
A page `rag build` collapsed into another as a near-duplicate (the untranslated pages of a
bilingual site) is found through that entry's `alternates`, and with --site a page the build
published under the URL its `<link rel="canonical">` names (Debian moved ImageMagick's
`api/*.html` to `www/api/`, and the pages still name their old place) through that link.
Qrels name representatives; classrun.py maps a run onto them before scoring. On a site without
such duplicates every entry is its own class and the qrels are plain entry ids.

Prints one JSON line: entries mapped and judged paths that no entry has (a typo in the
questions, or a page the build skipped: those judgments are dropped, so look at them)."""
import html
import json
import os
import re
import sys
from urllib.parse import urljoin, urlsplit

PATH_RULES = [
    (r'^(core|alloc)/', 'std/'),
    # rustdoc inlines std::collections' re-exports: std/collections/struct.HashMap.html is a
    # full copy of std/collections/hash_map/struct.HashMap.html (likewise the other six).
    (r'^std/collections/(?:hash_map|hash_set|btree_map|btree_set|vec_deque|linked_list|'
     r'binary_heap)/struct\.(HashMap|HashSet|BTreeMap|BTreeSet|VecDeque|LinkedList|'
     r'BinaryHeap)\.html$', r'std/collections/struct.\1.html'),
    (r'^book/(2018-edition|second-edition|first-edition)/', 'book/'),
]
CANONICAL = re.compile(r'<link\b[^>]*>', re.I)
REFRESH = re.compile(
    r'<meta[^>]+http-equiv=["\']?refresh["\']?[^>]*content=["\'][^"\']*url=([^"\'>]+)',
    re.I)


def entries(kb):
    """Every entry with an id, whether the file is a list or {"documents": [...], ...}."""
    if isinstance(kb, list):
        yield from kb
        return
    for v in kb.values():
        if isinstance(v, list) and v and isinstance(v[0], dict) and 'id' in v[0]:
            yield from v


def norm(p):
    """A page path as judged: no anchor or query, `dir/` and `dir/index.html` the same."""
    p = p.split('#')[0].split('?')[0]
    return p + 'index.html' if p == '' or p.endswith('/') else p


def redirects(site):
    """Path of each redirect stub under `site` -> the path it sends to (same site only)."""
    out = {}
    for root, _, files in os.walk(site):
        for f in files:
            if not f.endswith(('.html', '.htm')):
                continue
            full = os.path.join(root, f)
            with open(full, encoding='utf-8', errors='replace') as fh:
                head = fh.read(4096)
            m = REFRESH.search(head)
            if not m:
                continue
            rel = os.path.relpath(full, site).replace(os.sep, '/')
            target = urljoin('http://site/' + rel, html.unescape(m.group(1).strip()))
            parts = urlsplit(target)
            if parts.netloc == 'site':
                out[rel] = norm(parts.path.lstrip('/'))
    return out


def canonical(site, base, p):
    """The path under BASE_URL that the page at `p` names as its canonical URL, if any."""
    try:
        with open(os.path.join(site, p), encoding='utf-8', errors='replace') as fh:
            head = fh.read(16384)
    except OSError:
        return None
    for tag in CANONICAL.findall(head):
        rel = re.search(r'rel=["\']?([^"\'>]+)', tag, re.I)
        href = re.search(r'href=["\']?([^"\'>\s]+)', tag, re.I)
        if rel and href and 'canonical' in rel.group(1).lower().split():
            u = urljoin(base + p, html.unescape(href.group(1)))
            return norm(u[len(base):]) if u.startswith(base) else None
    return None


def main(argv):
    site = None
    if '--site' in argv:
        i = argv.index('--site')
        site = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) != 4:
        sys.exit(__doc__)
    qs, kbp, base, out = argv
    with open(kbp, encoding='utf-8') as f:
        kb = json.load(f)
    by_path = {}
    for e in entries(kb):
        u = e.get('url') or ''
        if u.startswith(base):
            by_path.setdefault(norm(u[len(base):]), e['id'])
    # A near-duplicate the build collapsed into an entry is listed in its `alternates`: a
    # judgment of its path (one no entry has) is one of that entry.
    alternate = {}
    for e in entries(kb):
        for u in e.get('alternates') or []:
            if u.startswith(base):
                alternate.setdefault(norm(u[len(base):]), e['id'])

    stub = redirects(site) if site else {}

    def klass(p):
        for _ in range(5):  # a redirect chain of a few hops at most
            if p not in stub:
                break
            p = stub[p]
        for pat, repl in PATH_RULES:
            p = re.sub(pat, repl, p)
        return p

    key = {p: klass(p) for p in by_path}
    rep = {}
    for p, i in sorted(by_path.items()):
        k = key[p]
        # The entry at the class's own path represents it; else the first in path order.
        if p == k or k not in rep:
            rep[k] = i
    cls = {i: rep[key[p]] for p, i in by_path.items()}
    os.makedirs(out + '/qrels', exist_ok=True)
    with open(out + '/classes.json', 'w') as f:
        json.dump(cls, f)

    missing = []
    rows = {'all': [], 'zh': [], 'en': [], 'mixed': []}
    with open(qs, encoding='utf-8') as f:
        lines = f.read().splitlines()[1:]
    with open(out + '/queries.jsonl', 'w', encoding='utf-8') as fq:
        for n, line in enumerate(lines, 2):
            if not line.strip():
                continue
            cols = line.split('\t')
            if len(cols) != 4 or cols[1] not in rows:
                sys.exit(f'{qs}:{n}: expected id, zh|en|mixed, question, relevant')
            qid, lang, text, rel = cols
            fq.write(json.dumps({'_id': qid, 'text': text}, ensure_ascii=False) + '\n')
            for pg in rel.split(','):
                p, g = pg.strip().rsplit(':', 1)
                p = norm(p)
                i = by_path.get(p)
                if i is None and klass(p) in rep:
                    i = rep[klass(p)]
                if i is None:
                    i = alternate.get(p)
                if i is None and site:
                    i = by_path.get(canonical(site, base, p) or '')
                if i is None:
                    missing.append(p)
                    continue
                c = cls.get(i, i)
                rows['all'].append((qid, c, int(g)))
                rows[lang].append((qid, c, int(g)))
    for k, r in rows.items():
        best = {}
        for q, c, g in r:
            best[(q, c)] = max(best.get((q, c), 0), g)
        name = 'test.tsv' if k == 'all' else f'test-{k}.tsv'
        with open(f'{out}/qrels/{name}', 'w') as f:
            f.write('query-id\tcorpus-id\tscore\n')
            for (q, c), g in best.items():
                f.write(f'{q}\t{c}\t{g}\n')
    print(json.dumps({'entries': len(by_path),
                      'classes': len(set(cls.values())),
                      'missing_targets': sorted(set(missing))}))


if __name__ == '__main__':
    main(sys.argv[1:])
