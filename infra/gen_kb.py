#!/usr/bin/env python3
"""Writes a synthetic knowledge base of N pages for cold-start and scale measurements.

Usage: gen_kb.py N OUT.json [--seed S]

The text is made up but shaped like a site's: pages of 100-300 words drawn from a vocabulary
of 20,000 invented words with a Zipf-like frequency (a few words are everywhere, most are
rare), in sentences and paragraphs, with a title and a few keywords each, plus a small
glossary. Nothing is read from elsewhere, so the output depends only on N and the seed and is
never committed (50,000 pages is about 80 MB).
"""

import argparse
import bisect
import itertools
import json
import os
import random

VOCABULARY = 20_000
SYLLABLES = [
    c + v
    for c in ["b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "sh", "tr"]
    for v in ["a", "e", "i", "o", "u", "ai", "ou"]
]


def vocabulary(rng):
    words = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", type=int)
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.pages < 1:
        parser.error("pages must be at least 1")

    rng = random.Random(args.seed)
    words = vocabulary(rng)
    rng.shuffle(words)
    # Zipf-like: the word of rank r has weight 1/r.
    cumulative = list(itertools.accumulate(1.0 / r for r in range(1, len(words) + 1)))
    total = cumulative[-1]

    def word():
        rank = bisect.bisect(cumulative, rng.random() * total)
        return words[min(rank, len(words) - 1)]

    def sentence():
        text = " ".join(word() for _ in range(rng.randint(6, 18)))
        return text[0].upper() + text[1:] + "."

    documents = []
    for i in range(args.pages):
        paragraphs = []
        remaining = rng.randint(100, 300)
        while remaining > 0:
            para = [sentence() for _ in range(rng.randint(2, 6))]
            remaining -= sum(s.count(" ") + 1 for s in para)
            paragraphs.append(" ".join(para))
        title = " ".join(word().capitalize() for _ in range(rng.randint(2, 6)))
        documents.append({
            "id": f"page_{i:06d}",
            "type": "page",
            "title": title,
            "url": f"https://site.example/pages/{i}",
            "keywords": sorted({word() for _ in range(rng.randint(2, 5))}),
            "content": "\n\n".join(paragraphs),
        })
    glossary = {word(): [word() + " " + word()] for _ in range(20)}
    # Written aside and renamed: an interrupted run leaves no truncated file to be reused.
    partial = args.out + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        json.dump({"documents": documents, "glossary": glossary}, f, ensure_ascii=False)
    os.replace(partial, args.out)


if __name__ == "__main__":
    main()
