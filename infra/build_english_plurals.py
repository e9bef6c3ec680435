#!/usr/bin/env python3
"""Writes shared/data/english_plurals.tsv: English nouns whose plural the stemmer cannot
join to the singular (indices/index, matrices/matrix, vertices/vertex, criteria/criterion),
taken from WordNet 3.0's exception list of noun forms (`noun.exc`), so that a page about
"sparse matrices" matches a question about a "sparse matrix" and the other way round.

Usage: build_english_plurals.py WORDNET_DIR [--out FILE]
WORDNET_DIR holds WordNet's `noun.exc`, `index.noun` and `index.verb` (Debian's
`wordnet-base` unpacks them to usr/share/wordnet). Needs the `snowballstemmer` package
(the Snowball English stemmer, the algorithm retrieval stems with).

A plural is kept when all of these hold (the rules, not a list of words, decide):
- it and its singular are single words of ASCII letters, and WordNet gives it one singular,
  on all its lines ("axes" is the plural of "ax" and of "axis": left alone);
- the stemmer does not already join it to its singular;
- it is not a regular form of another word: not a noun of WordNet's in its own right
  ("data", "people": words with senses of their own), nor, less its -s (or -es after a
  hissing sound), a noun or verb of WordNet's ("ellipses" of "ellipse", "lives" of
  "live", "analyses" of "analyse", "bases" of "base").
Forms already in shared/data/english_forms.tsv (the team's table of irregular forms) are
left to it.
"""
import argparse
import os
import sys

import snowballstemmer


def lemmas(path):
    """The lemmas of a WordNet index file (`index.noun`, `index.verb`)."""
    with open(path, encoding="utf-8") as f:
        return {line.split(" ", 1)[0] for line in f if not line.startswith(" ")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("wordnet")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", default=os.path.join(repo, "shared/data/english_plurals.tsv"))
    args = ap.parse_args()
    stem = snowballstemmer.stemmer("english").stemWord
    nouns = lemmas(os.path.join(args.wordnet, "index.noun"))
    verbs = lemmas(os.path.join(args.wordnet, "index.verb"))
    known = set()
    with open(os.path.join(repo, "shared/data/english_forms.tsv"), encoding="utf-8") as f:
        for line in f:
            known.add(line.split("\t", 1)[0])
    # A plural may stand on several lines, one per singular: its singulars are all of them.
    forms = {}
    with open(os.path.join(args.wordnet, "noun.exc"), encoding="utf-8") as f:
        for line in f:
            plural, *singulars = line.split()
            forms.setdefault(plural, set()).update(singulars)
    kept = []
    for plural, singulars in forms.items():
        words = [plural, *singulars]
        if not all(w.isascii() and w.isalpha() for w in words) or plural in known:
            continue
        if len(singulars) != 1:
            continue
        (singular,) = singulars
        if stem(singular) == stem(plural):
            continue
        # The plural read as a regular form: less its -s, or less its -es after a hissing
        # sound (as English spells "boxes", "matches"; not "indices").
        regular = [plural[:-1]] if plural.endswith("s") else []
        if plural.endswith(("ses", "xes", "zes", "ches", "shes")):
            regular.append(plural[:-2])
        if plural in nouns or any(w in nouns or w in verbs for w in regular):
            continue
        kept.append((plural, singular))
    # Sorted by plural, byte order: retrieval looks the table up by binary search.
    kept.sort()
    with open(args.out, "w", encoding="utf-8") as out:
        for plural, singular in kept:
            out.write(f"{plural}\t{singular}\n")
    print(f"wrote {args.out}: {len(kept)} plurals", file=sys.stderr)


if __name__ == "__main__":
    main()
