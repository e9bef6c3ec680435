// The widget against a chat endpoint with the bot check on (BOT_CHECK=pow): it fetches a
// challenge when the panel opens, solves it with WebCrypto in real Chromium while the
// visitor types, and sends the solution with its questions, so the visitor sees nothing of
// it. Prints the solve time at the function's default difficulty (median of POW_RUNS fresh
// pages, default 7; POW_DIFFICULTY=n for another); no test asserts on time.
// Run: cd tests/widget && npm ci && node --test bot-check.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from './server.mjs';
import { W, openWidget, ask } from './page.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// The function's default, read from its source so the measurement follows it
// (POW_DIFFICULTY=n measures another).
const source = fs.readFileSync(path.resolve(here, '../../shared/src/limits/bot_check.rs'), 'utf8');
const DIFFICULTY = Number(process.env.POW_DIFFICULTY ||
  /pub const DEFAULT_DIFFICULTY: u8 = (\d+);/.exec(source)[1]);

let browser, on, off;

before(async () => {
  on = await startServer({ botCheck: DIFFICULTY });
  off = await startServer();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  await on?.close();
  await off?.close();
});

const openPage = (server) => openWidget(browser, `${server.base}/`);

// Whether `proof` solves `challenge` at `bits`, checked here with Node's SHA-256.
function solves(proof, challenge, bits) {
  if (!proof.startsWith(`${challenge}:`)) return false;
  const h = crypto.createHash('sha256').update(proof).digest();
  let z = 0;
  for (const b of h) { if (b) { z += Math.clz32(b) - 24; break; } z += 8; }
  return z >= bits;
}

test(`bot check on (difficulty ${DIFFICULTY}): questions are answered as usual, with one solved challenge`, async () => {
  const { context, page } = await openPage(on);
  const first = on.requests.length;
  const answer = await ask(page, '请介绍一下 Partial FC');
  assert.equal(await answer.getAttribute('data-status'), 'done');
  assert.match(await answer.textContent(), /Partial FC 是一种训练超大规模人脸识别模型的方法/);
  assert.equal(await page.locator(`${W} .err`).count(), 0, 'no error shown');
  // Exactly one request reached the endpoint (no refused first try), carrying a solution.
  assert.equal(on.requests.length, first + 1);
  const sent = on.requests[first];
  assert.equal(on.challenges.length, 1);
  assert.ok(solves(sent.proof, on.challenges[0], DIFFICULTY), sent.proof);
  const ms = Number(await page.locator(W).getAttribute('data-proof-ms'));
  console.log(`# widget solve time at difficulty ${DIFFICULTY}: ${ms} ms (fetch + solve, one run)`);

  // The next question reuses the solution: no new challenge.
  await ask(page, 'And ArcFace?');
  assert.equal(on.requests[first + 1].proof, sent.proof);
  assert.equal(on.challenges.length, 1);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('an expired proof is solved again and the question still answered', async () => {
  const issued = on.challenges.length;
  const { context, page } = await openPage(on);
  const first = on.requests.length;
  const answer = await ask(page, 'EXPIRE please');
  assert.equal(await answer.getAttribute('data-status'), 'done');
  assert.equal(await page.locator(`${W} .err`).count(), 0, 'no error shown');
  // Refused once as expired, then sent again with a new solution.
  const [refused, resent] = on.requests.slice(first);
  assert.equal(on.requests.length, first + 2);
  assert.notEqual(refused.proof, resent.proof);
  assert.ok(solves(resent.proof, on.challenges[on.challenges.length - 1], DIFFICULTY));
  assert.equal(on.challenges.length, issued + 2);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('bot check off: no proof is sent', async () => {
  const { context, page } = await openPage(off);
  const answer = await ask(page, '请介绍一下 Partial FC');
  assert.equal(await answer.getAttribute('data-status'), 'done');
  assert.equal(off.requests.length, 1);
  assert.equal(off.requests[0].proof, undefined);
  assert.equal(await page.locator(W).getAttribute('data-proof-ms'), null);
  await context.close();
});

test('solve time over fresh pages (printed, not asserted)', async () => {
  const runs = Number(process.env.POW_RUNS || 7);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const { context, page } = await openPage(on);
    // Solving starts when the panel opens; the time is set once the proof is found.
    await page.waitForFunction((sel) => document.querySelector(sel).dataset.proofMs, W);
    times.push(Number(await page.locator(W).getAttribute('data-proof-ms')));
    await context.close();
  }
  times.sort((a, b) => a - b);
  assert.equal(times.length, runs);
  console.log(`# widget solve time at difficulty ${DIFFICULTY} over ${runs} pages: median ${times[runs >> 1]} ms, ` +
    `min ${times[0]} ms, max ${times[runs - 1]} ms (${times.join(', ')})`);
});
