#!/usr/bin/env python3
"""Builds the public retrieval dev sets `rag eval` is measured on, in BEIR layout
(corpus.jsonl, queries.jsonl, qrels/dev.tsv). Standard library only. See docs/evaluation.md.

  infra/eval_data.py xquad xquad.zh.json xquad.en.json OUT
      OUT/xquad-zh-zh   Chinese questions -> Chinese paragraphs (a Chinese site)
      OUT/xquad-en-zh   English questions -> Chinese paragraphs (English visitors)
      OUT/xquadr-zh-en  Chinese questions -> English paragraphs (an English site)
      OUT/xquad-mixed   both languages' questions -> every paragraph in both languages
                        (a bilingual site; both versions of the paragraph are relevant)

  infra/eval_data.py scifact SCIFACT_DIR OUT
      OUT/scifact       the BEIR SciFact folder with qrels/test.tsv (copied, checked)

XQuAD's two files hold the same 48 articles and 240 paragraphs in the same order, with the
same question ids. Paragraphs get ids aNNpMM (article NN, paragraph MM, from 0); the dev
split is the questions of the even-numbered articles (the odd half is kept for held-out
checks, so don't tune on it). Every corpus holds all paragraphs.
"""
import json
import os
import shutil
import sys


def articles(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["data"]


def paragraphs(data):
    """(article index, paragraph id, title, context, [(question id, question)])."""
    for a, article in enumerate(data):
        for p, para in enumerate(article["paragraphs"]):
            qas = [(qa["id"], qa["question"]) for qa in para["qas"]]
            yield a, f"a{a:02d}p{p:02d}", article["title"], para["context"], qas


def write_set(out, corpus, queries, qrels):
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for doc_id, title, text in corpus:
            f.write(json.dumps({"_id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as f:
        for qid, text in queries:
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "qrels", "dev.tsv"), "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, doc_id in qrels:
            f.write(f"{qid}\t{doc_id}\t1\n")
    print(f"{out}: {len(corpus)} documents, {len(queries)} queries, {len(qrels)} judgments")


def xquad(zh_path, en_path, out):
    zh = list(paragraphs(articles(zh_path)))
    en = list(paragraphs(articles(en_path)))
    if [(a, p) for a, p, *_ in zh] != [(a, p) for a, p, *_ in en]:
        sys.exit("the two files do not hold the same articles and paragraphs")
    for z, e in zip(zh, en):
        if [q for q, _ in z[4]] != [q for q, _ in e[4]]:
            sys.exit(f"{z[1]}: the two files' question ids differ")
    # Paragraphs alone, as a site's pages would be; the English-site set (XQuAD-R's
    # layout) keeps the article title.
    zh_corpus = [(p[1], "", p[3]) for p in zh]
    en_corpus = [(p[1], p[2], p[3]) for p in en]
    dev_zh = [(a, pid, qas) for a, pid, _, _, qas in zh if a % 2 == 0]
    dev_en = [(a, pid, qas) for a, pid, _, _, qas in en if a % 2 == 0]

    def single(dev):
        queries = [(q, text) for _, _, qas in dev for q, text in qas]
        qrels = [(q, pid) for _, pid, qas in dev for q, _ in qas]
        return queries, qrels

    write_set(os.path.join(out, "xquad-zh-zh"), zh_corpus, *single(dev_zh))
    write_set(os.path.join(out, "xquad-en-zh"), zh_corpus, *single(dev_en))
    write_set(os.path.join(out, "xquadr-zh-en"), en_corpus, *single(dev_zh))
    corpus = [(f"{pid}-en", "", x) for pid, _, x in en_corpus]
    corpus += [(f"{pid}-zh", t, x) for pid, t, x in zh_corpus]
    queries, qrels = [], []
    for lang, dev in (("zh", dev_zh), ("en", dev_en)):
        for _, pid, qas in dev:
            for q, text in qas:
                queries.append((f"{lang}-{q}", text))
                qrels += [(f"{lang}-{q}", f"{pid}-en"), (f"{lang}-{q}", f"{pid}-zh")]
    write_set(os.path.join(out, "xquad-mixed"), corpus, queries, qrels)


def scifact(src, out):
    for name in ("corpus.jsonl", "queries.jsonl", os.path.join("qrels", "test.tsv")):
        if not os.path.exists(os.path.join(src, name)):
            sys.exit(f"{src} has no {name}: expected BEIR's scifact folder")
    dest = os.path.join(out, "scifact")
    shutil.copytree(src, dest, dirs_exist_ok=True)
    print(f"{dest}: copied")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "xquad":
        xquad(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "scifact":
        scifact(*sys.argv[2:])
    else:
        sys.exit(__doc__)
