#!/usr/bin/env python3
"""Build shared/data/zh_freq.tsv, the Chinese word frequencies segmentation weighs by.

The source is the word list of jieba (PyPI ``jieba``, MIT licence): ``jieba/dict.txt``,
one ``word frequency part-of-speech`` line per word, counted by jieba's authors over
their corpus. Segmentation (shared/src/retrieval/lexicon.rs) picks the path of words
that is most probable under a unigram model, each word costing -ln(frequency / total);
these counts are what make 读 + 数据 "read data" cheaper than 读数 "meter reading" + 据.

Only what segmentation can use is kept: the words that are keys of the compiled-in
tables (``shared/data/lexicon_research.tsv``, ``lexicon_general.tsv``,
``lexicon_software.tsv``, ``cedict.tsv``),
the words of the Chinese stopword list (``shared/src/retrieval/zh_stopwords.rs``) and
every single character jieba counts. The first line is ``#total<TAB>N``, the sum of all
of jieba's counts (the model's denominator, over the whole list and not only the words
kept); then ``word<TAB>count`` lines sorted by the word's UTF-8 bytes.

Typical use, from the repo root:

    python3 -m venv /tmp/jieba-venv
    /tmp/jieba-venv/bin/pip install jieba==0.42.1
    /tmp/jieba-venv/bin/python infra/build_zh_freq.py

``--source FILE`` reads another jieba-format dictionary; ``--output FILE`` writes
elsewhere. The output is deterministic.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ["lexicon_research", "lexicon_general", "lexicon_software", "cedict"]
HAN = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+$")


def packaged_source() -> Path:
    try:
        import importlib.resources as resources

        import jieba  # noqa: F401
    except ImportError:
        sys.exit(
            "jieba is not importable; set up a venv:\n"
            "  python3 -m venv /tmp/jieba-venv\n"
            "  /tmp/jieba-venv/bin/pip install jieba==0.42.1\n"
            "  /tmp/jieba-venv/bin/python infra/build_zh_freq.py"
        )
    return Path(str(resources.files("jieba").joinpath("dict.txt")))


def wanted_words() -> set[str]:
    words: set[str] = set()
    for name in TABLES:
        for line in (ROOT / "shared" / "data" / f"{name}.tsv").read_text("utf-8").splitlines():
            if line:
                words.add(line.split("\t", 1)[0])
    stopwords = (ROOT / "shared" / "src" / "retrieval" / "zh_stopwords.rs").read_text("utf-8")
    words.update(re.findall(r'"([\u3400-\u9fff]+)"', stopwords))
    return words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path)
    parser.add_argument("--output", type=Path, default=ROOT / "shared" / "data" / "zh_freq.tsv")
    args = parser.parse_args()
    source = args.source or packaged_source()
    counts: dict[str, int] = {}
    total = 0
    for line in source.read_text("utf-8").splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[1].isdigit():
            continue
        word, count = parts[0], int(parts[1])
        total += count
        if HAN.match(word):
            counts[word] = counts.get(word, 0) + count
    wanted = wanted_words()
    kept = sorted(
        ((w, c) for w, c in counts.items() if c > 0 and (len(w) == 1 or w in wanted)),
        key=lambda wc: wc[0].encode("utf-8"),
    )
    with open(args.output, "w", encoding="utf-8", newline="\n") as out:
        out.write(f"#total\t{total}\n")
        for word, count in kept:
            out.write(f"{word}\t{count}\n")
    size = args.output.stat().st_size
    print(f"read {len(counts)} words (total count {total}); kept {len(kept)}; {size} bytes")


if __name__ == "__main__":
    main()
