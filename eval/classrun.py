#!/usr/bin/env python3
"""Score a `rag eval --run` with duplicate pages collapsed to their equivalence class.

Usage: classrun.py RUN.json CLASSES.json QRELS.tsv [REPORT.json]

Each document of the run is replaced by its class's representative (classes.json from
mkset.py) and later members of a class already ranked are dropped, so a system that shows one
page twice gains nothing and one that collapses duplicates loses nothing. The metrics are
computed exactly as `rag eval` computes them (graded gains, nDCG@10 against the ideal order of
the judged documents, Recall@k over positive judgments, MRR@10, judged queries only).
With REPORT.json (rag eval --json output), its other keys (qps, index_ms) are kept.
Prints one JSON object with the same keys as `rag eval --json`."""
import json
import math
import sys


def ndcg_at(ranked, rel, k):
    dcg = sum(max(rel.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in rel.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked, rel, k):
    relevant = sum(1 for g in rel.values() if g > 0)
    if not relevant:
        return 0.0
    return sum(1 for d in ranked[:k] if rel.get(d, 0) > 0) / relevant


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    with open(argv[0]) as f:
        run = json.load(f)
    with open(argv[1]) as f:
        cls = json.load(f)
    qrels = {}
    with open(argv[2]) as f:
        for n, line in enumerate(f):
            cols = line.rstrip('\n').split('\t')
            if n == 0 and cols[0] == 'query-id' or not line.strip():
                continue
            qrels.setdefault(cols[0], {})[cols[1]] = int(cols[2])
    report = {}
    if len(argv) == 4:
        with open(argv[3]) as f:
            report = json.load(f)
    judged = [q for q in run if q in qrels]
    sums = {'ndcg@10': 0.0, 'recall@3': 0.0, 'recall@10': 0.0, 'recall@100': 0.0,
            'mrr@10': 0.0}
    for q in judged:
        seen, ranked = set(), []
        for doc, _score in run[q]:
            c = cls.get(doc, doc)
            if c not in seen:
                seen.add(c)
                ranked.append(c)
        rel = qrels[q]
        sums['ndcg@10'] += ndcg_at(ranked, rel, 10)
        sums['recall@3'] += recall_at(ranked, rel, 3)
        sums['recall@10'] += recall_at(ranked, rel, 10)
        sums['recall@100'] += recall_at(ranked, rel, 100)
        first = next((i for i, d in enumerate(ranked[:10]) if rel.get(d, 0) > 0), None)
        sums['mrr@10'] += 0.0 if first is None else 1.0 / (first + 1)
    n = max(len(judged), 1)
    report.update({k: v / n for k, v in sums.items()})
    report['queries'] = len(judged)
    print(json.dumps(report))


if __name__ == '__main__':
    main(sys.argv[1:])
