#!/usr/bin/env python3
"""Print the markdown table of a run.sh results dir: nDCG@10 and Recall@3 per set and question
language. Usage: table.py RESULTS [BEFORE]; with BEFORE (an earlier --json-dir), each cell also
shows the change against it."""
import json
import os
import sys

LANGS = ['all', 'zh', 'en', 'mixed']


def load(d):
    out = {}
    order = []
    if os.path.exists(os.path.join(d, 'order.txt')):
        order = open(os.path.join(d, 'order.txt')).read().split()
    for f in sorted(os.listdir(d)):
        if not f.endswith('.json') or f.endswith('.run.json'):
            continue
        name, lang = f[:-5].rsplit('-', 1)
        if lang not in LANGS:
            continue
        with open(os.path.join(d, f)) as fh:
            out[(name, lang)] = json.load(fh)
        if name not in order:
            order.append(name)
    return order, out


def main(argv):
    if len(argv) not in (1, 2):
        sys.exit(__doc__)
    order, now = load(argv[0])
    before = load(argv[1])[1] if len(argv) == 2 else {}

    def cell(name, lang, key):
        r = now.get((name, lang))
        if r is None:
            return ''
        s = f'{r[key]:.3f}'
        b = before.get((name, lang))
        if b is not None:
            s += f' ({r[key] - b[key]:+.3f})'
        return s

    head = ['set', 'queries'] + [f'nDCG@10 {l}' for l in LANGS] + [f'R@3 {l}' for l in LANGS]
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for name in order:
        q = now.get((name, 'all'), {}).get('queries', '')
        row = [name, str(q)]
        row += [cell(name, l, 'ndcg@10') for l in LANGS]
        row += [cell(name, l, 'recall@3') for l in LANGS]
        print('| ' + ' | '.join(row) + ' |')


if __name__ == '__main__':
    main(sys.argv[1:])
