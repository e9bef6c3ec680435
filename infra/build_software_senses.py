#!/usr/bin/env python3
"""Build shared/data/lexicon_software.tsv: the software senses of Chinese words, learnt from
the Simplified Chinese translations that free programs ship.

Why: CC-CEDICT gives a word's everyday senses (检出 "detect", 重载 "heavy load", 拣选 "select"),
not the one a documentation site means (checkout, overloaded, cherry-pick), and has no entry
at all for many software words (描述符 descriptor, 左值 lvalue, 符号表 symbol table). The
programs' translators wrote those senses down, sentence by sentence: every gettext catalog
(``.mo``) of a Debian package pairs an English message with its Chinese translation.

How (deterministic; the numbers are the constants below):
1. Read every ``zh_CN`` catalog under the given directories: (English message, Chinese
   message) pairs, each distinct pair once.
2. English side: words of three or more letters that are not function words, folded to a
   crude stem (``-s``, ``-es``, ``-ies``, ``-ed``, ``-ing`` off), and each two consecutive
   such words as a phrase ("regular expression"). Placeholders (``%s``, ``{name}``), markup
   and ``--options`` are dropped first. Chinese side: every 2 to 6 character run of Han
   characters.
3. For each (Chinese run, English word or phrase) seen together in at least ``MIN_PAIRS``
   messages, the Dice coefficient 2·both / (Chinese + English) over messages. A Chinese
   run keeps the English of its best Dice when that is at least ``MIN_DICE``, plus any
   English whose own best Chinese run it is (at most ``MAX_SENSES``).
4. A run is kept only when it is a word: one of jieba's dictionary words or a CC-CEDICT
   headword, not a Chinese function word, and not mostly a piece across two words (a run
   seen at least half the times inside a run a character longer that jieba's words split
   elsewhere: 认字 of 默认字体, split 默认 + 字; 描述符 of 文件描述符 stays).
5. Words of the curated general lexicon (``lexicon_general.tsv``) are left alone: it was
   written for software sites. The research lexicon (``lexicon_research.tsv``) was written
   for research homepages, and its senses hide the software ones there (引用 "citation",
   not "reference"; 排序 "ranking", not "sort"). A sense the word already has is not
   written again. Each line holds the learnt senses alone; ``shared/build.rs`` merges them
   with the word's current entry when it compiles the tables: after a research word's own
   senses, so a site's usage picks, and before a CC-CEDICT word's (检出 → "checkout|detect").
6. A sense added to a word that already has senses needs a Dice of ``MIN_DICE_KNOWN`` and
   must be one word: a common word's two-word partner comes from a message template (完全
   "incomplete type", 前后 "suggest parentheses"). A two-word sense of a new word needs
   ``MIN_DICE_PHRASE`` and must not be only the senses of the word's two halves (外部命令
   "external command" is 外部 + 命令, matched word by word already). A sense negating one
   of the word's own is left out (预期 "expect" learning "unexpected" from 非预期).
The English written is the commonest spelling of the stem in the messages.

Typical use, from the repo root (the package list is ``infra/software_senses_packages.txt``):

    infra/build_software_senses.sh            # downloads and unpacks the packages, runs this

or directly: ``build_software_senses.py --jieba DICT UNPACKED_DIR...``.
"""

from __future__ import annotations

import argparse
import collections
import gettext
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "shared" / "data"
CURATED = "lexicon_general"
RESEARCH = "lexicon_research"
MIN_PAIRS = 5
MIN_DICE = 0.4
# Stronger evidence to add a sense to a word CC-CEDICT already has, and for a two-word
# phrase (whose second word is often only the next word of a message template: 从不 is
# not "signed overflow").
MIN_DICE_KNOWN = 0.5
MIN_DICE_PHRASE = 0.6
MAX_SENSES = 2
# A message with more distinct English words than this is prose, whose words pair with
# every Chinese run in it: left out.
MAX_WORDS = 15
STOP = set(
    """the a an of to in for and or is are be not no on with by from at as this that it its
    can cannot could was were has have had you your all any will use used using may must
    should does did do than then there their which what when where who how into only also
    more most such but if so some other been being""".split()
)
HAN_RUN = re.compile(r"[\u4e00-\u9fff]+")
ENGLISH_WORD = re.compile(r"[A-Za-z][a-z]+|[^A-Za-z\s]+")
NOISE = re.compile(r"%[-+ #0-9.]*[a-zA-Z]|\{[^}]*\}|<[^>]*>|--?[a-z-]+")


def stem(word: str) -> str:
    for suffix in ("ies", "es", "s", "ed", "ing"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def catalog_pairs(roots: list[Path]) -> set[tuple[str, str]]:
    """Every distinct (English, Chinese) message pair of the zh_CN catalogs under roots."""
    pairs = set()
    for root in roots:
        for path in sorted(root.glob("**/zh_CN/**/*.mo")):
            try:
                with path.open("rb") as f:
                    catalog = gettext.GNUTranslations(f)._catalog
            except (OSError, gettext.error, UnicodeDecodeError) as e:
                print(f"skipped {path}: {e}", file=sys.stderr)
                continue
            for key, value in catalog.items():
                if isinstance(key, tuple):  # a plural form: (msgid, n)
                    if key[1] != 0:
                        continue
                    key = key[0]
                if not key or not value or key == value:
                    continue
                key = key.split("\x04", 1)[-1]  # drop a msgctxt
                pairs.add((key, value))
    return pairs


def english_units(message: str, spelled: dict) -> set[str]:
    """The message's content-word stems and two-word phrases; records their spellings."""
    units = set()
    previous = None
    for token in ENGLISH_WORD.findall(NOISE.sub("", message)):
        word = token.lower()
        if not token[0].isalpha() or word in STOP or len(word) <= 2:
            previous = None
            continue
        s = stem(word)
        spelled[s][word] += 1
        units.add(s)
        if previous:
            phrase = f"{previous[0]} {s}"
            spelled[phrase][f"{previous[1]} {word}"] += 1
            units.add(phrase)
        previous = (s, word)
    return units


def chinese_runs(message: str) -> set[str]:
    runs = set()
    for run in HAN_RUN.findall(message):
        for n in range(2, 7):
            runs.update(run[i : i + n] for i in range(len(run) - n + 1))
    return runs


def negates(english: str, senses: set[str]) -> bool:
    """Whether english is one of a word's own senses negated (预期 "expect" learning
    "unexpected"): error messages write 非/未/不 + word for un-/in-/non- + word, so the
    positive Chinese word is seen with the negative English one."""
    word = english.split()[0]
    return any(
        word.startswith(prefix) and stem(word[len(prefix) :]) in senses
        for prefix in ("un", "in", "non", "dis", "im")
    )


def read_table(name: str) -> dict[str, str]:
    table = {}
    with (DATA / f"{name}.tsv").open(encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                table.setdefault(parts[0], parts[1])
    return table


def zh_stopwords() -> set[str]:
    text = (ROOT / "shared" / "src" / "retrieval" / "zh_stopwords.rs").read_text("utf-8")
    return set(re.findall(r'"([\u4e00-\u9fff]+)"', text))


def segment(text: str, counts: dict[str, int], total: int) -> list[str]:
    """The most probable split of text into jieba's words (unigram model, as jieba's own)."""
    unknown = math.log(total) + 10.0
    best = [(0.0, 0)] * (len(text) + 1)
    for i in range(len(text) - 1, -1, -1):
        pick = (math.inf, i + 1)
        for j in range(i + 1, min(len(text), i + 8) + 1):
            n = counts.get(text[i:j])
            if n is None and j > i + 1:
                continue
            cost = (math.log(total) - math.log(n) if n else unknown) + best[j][0]
            if cost < pick[0]:
                pick = (cost, j)
        best[i] = pick
    words, i = [], 0
    while i < len(text):
        words.append(text[i : best[i][1]])
        i = best[i][1]
    return words


def learn(pairs: set[tuple[str, str]], counts: dict[str, int]) -> tuple[dict, dict]:
    """Each Chinese run's learnt senses [(dice, english unit)], and the spellings."""
    spelled = collections.defaultdict(collections.Counter)
    en_count, zh_count, both = collections.Counter(), collections.Counter(), collections.Counter()
    for english, chinese in sorted(pairs):
        units, runs = english_units(english, spelled), chinese_runs(chinese)
        if not units or not runs or len(units) > MAX_WORDS:
            continue
        en_count.update(units)
        zh_count.update(runs)
        for z in runs:
            for e in units:
                both[(z, e)] += 1
    best_zh, best_en = {}, {}
    for (z, e), n in both.items():
        if n < MIN_PAIRS:
            continue
        dice = 2 * n / (zh_count[z] + en_count[e])
        if dice < MIN_DICE:
            continue
        if (dice, e) > best_zh.get(z, (0.0, "")):
            best_zh[z] = (dice, e)
        if (dice, z) > best_en.get(e, (0.0, "")):
            best_en[e] = (dice, z)
    # The runs a character longer that each run is seen inside at least half the times.
    inside = collections.defaultdict(list)
    for y, n in zh_count.items():
        if len(y) >= 3:
            for z in {y[1:], y[:-1]}:
                if n * 2 >= zh_count[z]:
                    inside[z].append(y)
    total = sum(counts.values())
    senses = collections.defaultdict(list)
    for z, (dice, e) in best_zh.items():
        if any(z not in segment(y, counts, total) for y in inside[z]):
            continue  # mostly a piece across two words: 认字 of 默认字体
        senses[z].append((dice, e))
    for e, (dice, z) in best_en.items():
        if z in senses and all(x[1] != e for x in senses[z]):
            senses[z].append((dice, e))
    return senses, spelled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="+", type=Path, help="unpacked packages")
    parser.add_argument("--jieba", type=Path, required=True, help="jieba's dict.txt")
    parser.add_argument("--output", type=Path, default=DATA / "lexicon_software.tsv")
    args = parser.parse_args()

    with args.jieba.open(encoding="utf-8") as f:
        counts = {w: int(n) for w, n, *_ in (line.split() for line in f)}
    pairs = catalog_pairs(args.roots)
    senses, spelled = learn(pairs, counts)
    cedict = read_table("cedict")
    curated = read_table(CURATED)
    research = read_table(RESEARCH)
    known = {**cedict, **curated, **research}

    def word_stems(word: str) -> set[str]:
        return {stem(w.lower()) for sense in known.get(word, "").split("|") for w in sense.split()}

    def by_parts(z: str, english: str) -> bool:
        """Whether the two-word sense is the senses of z's two halves (外部命令 "external
        command" is 外部 "external" + 命令 "command"), which match it word by word already;
        as a phrase it would only ask for both words together."""
        first, _, second = english.partition(" ")
        return any(
            stem(first) in word_stems(z[:i]) and stem(second) in word_stems(z[i:])
            for i in range(1, len(z))
        )

    stop = zh_stopwords()

    lines = []
    for z in sorted(senses, key=lambda w: w.encode()):
        if z in curated or z in stop or (z not in counts and z not in known):
            continue
        floor = MIN_DICE_KNOWN if z in known else MIN_DICE
        chosen = [
            (d, e)
            for d, e in sorted(senses[z], reverse=True)[:MAX_SENSES]
            if d >= floor and (" " not in e or (d >= MIN_DICE_PHRASE and z not in known))
        ]
        learnt = [spelled[e].most_common(1)[0][0] for _, e in chosen]
        learnt = [e for e in learnt if " " not in e or not by_parts(z, e)]
        old = known[z].split("|") if z in known else []
        old_stems = {stem(w.lower()) for w in old}
        old_words = {stem(w.lower()) for sense in old for w in sense.split()}
        learnt = [
            e
            for e in learnt
            if stem(e) not in old_stems and e not in old and not negates(e, old_words)
        ]
        if not learnt:
            continue
        lines.append(f"{z}\t{'|'.join(dict.fromkeys(learnt))}\n")
    args.output.write_text("".join(lines), encoding="utf-8")
    print(f"{len(pairs)} message pairs, {len(lines)} words written to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
