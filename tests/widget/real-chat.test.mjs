// The widget (through demo.html) against the REAL chat function, served by `cargo lambda
// watch` in offline mode (no model key) on the sample knowledge base, with the bot check on
// (BOT_CHECK=pow at its default difficulty): the widget must solve the function's challenge. Skipped when
// cargo-lambda is not installed (infra/venv.sh installs it into .venv; infra/test.sh runs
// that first). The first run may have to build the function: allow a long wait.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from './server.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cargoLambda = path.join(repo, '.venv/bin/cargo-lambda');
const skip = fs.existsSync(cargoLambda) ? false : 'cargo-lambda not installed (run infra/venv.sh)';

let watch, browser, server, chatUrl;

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

before(async () => {
  if (skip) return;
  const port = await freePort();
  const env = { ...process.env, PATH: `${path.dirname(cargoLambda)}:${process.env.PATH}`,
    KB_SOURCE: path.join(repo, 'knowledge_base.json'), ALLOWED_ORIGINS: '*', BOT_CHECK: 'pow' };
  // Offline answers: no model key reaches the function.
  for (const k of ['DASHSCOPE_API_KEY', 'OPENAI_API_KEY', 'LLM_API_KEY']) delete env[k];
  // The owner's contact: handoff on a question the site has nothing on, and in health.
  env.CONTACT_URL = 'mailto:owner@example.com';
  // Its own process group, so the whole tree (watcher + function) is stopped afterwards.
  watch = spawn(cargoLambda, ['lambda', 'watch', '--invoke-address', '127.0.0.1', '--invoke-port', String(port)],
    { cwd: repo, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  // Stop it even if the run ends without after() (a failed hook, a signal to this process).
  const stop = () => { try { process.kill(-watch.pid, 'SIGTERM'); } catch { /* gone */ } };
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => { stop(); process.exit(130); });
  let log = '';
  watch.stderr.on('data', (d) => { log = (log + d).slice(-4000); });
  chatUrl = `http://127.0.0.1:${port}/lambda-url/chat/`;
  const deadline = Date.now() + 20 * 60 * 1000;   // a cold build on 2 cores is slow
  for (;;) {
    try {
      const r = await fetch(chatUrl);
      if (r.ok && (await r.json()).status === 'ok') break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline || watch.exitCode !== null) throw new Error(`chat function did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  server = await startServer();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}, { timeout: 21 * 60 * 1000 });

after(async () => {
  await browser?.close();
  await server?.close();
  if (watch && watch.exitCode === null) {
    try { process.kill(-watch.pid, 'SIGTERM'); } catch { /* already gone */ }
  }
});

test('demo.html + real chat function (offline mode): streamed answer with sources', { skip }, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Cross-origin, as on a real site: page on the test server, endpoint on cargo lambda.
  await page.goto(`${server.base}/widget/demo.html?endpoint=${encodeURIComponent(chatUrl)}&lang=zh`);
  await page.locator('rag-chat-widget .launch').click();
  await page.locator('rag-chat-widget textarea').fill('请介绍一下 Partial FC');
  await page.locator('rag-chat-widget textarea').press('Enter');
  await page.waitForFunction(() => {
    const all = document.querySelector('rag-chat-widget').shadowRoot.querySelectorAll('.msg.assistant');
    const m = all[all.length - 1];
    return m && m.dataset.status && m.dataset.status !== 'pending';
  }, null, { timeout: 30000 });
  const answer = page.locator('rag-chat-widget .msg.assistant').last();
  assert.equal(await answer.getAttribute('data-status'), 'done');
  const text = await answer.textContent();
  assert.match(text, /离线模式/);
  assert.match(text, /Partial FC/);
  const titles = await answer.locator('.src li a').allTextContents();
  assert.ok(titles.some((t) => t.startsWith('Partial FC')), titles.join(' | '));
  const hrefs = await answer.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  for (const h of hrefs) assert.match(h, /^https?:\/\//);
  assert.ok((await answer.locator('a.cite').count()) >= 1, '[n] markers linked to sources');
  // Answered through the bot check: the widget solved the function's challenge.
  const ms = await page.locator('rag-chat-widget').getAttribute('data-proof-ms');
  assert.ok(ms !== null, 'a challenge was solved');
  console.log(`# widget solve time against the real function (BOT_CHECK=pow): ${ms} ms`);
  assert.deepEqual(errors, []);
  await context.close();
});

// Asks, waits for the answer to settle and returns it.
async function answerTo(page, question) {
  await page.locator('rag-chat-widget textarea').fill(question);
  await page.locator('rag-chat-widget textarea').press('Enter');
  return settled(page);
}
async function settled(page) {
  await page.waitForFunction(() => {
    const all = document.querySelector('rag-chat-widget').shadowRoot.querySelectorAll('.msg.assistant');
    const m = all[all.length - 1];
    return m && m.dataset.status && m.dataset.status !== 'pending';
  }, null, { timeout: 30000 });
  return page.locator('rag-chat-widget .msg.assistant').last();
}

test('real chat function: suggestions, handoff and the contact from health (CONTACT_URL)', { skip }, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.base}/widget/demo.html?endpoint=${encodeURIComponent(chatUrl)}&lang=en`);
  await page.locator('rag-chat-widget .launch').click();
  // Health reported CONTACT_URL: "Contact the owner" is offered before any question.
  const contact = page.locator('rag-chat-widget .ct a');
  await contact.waitFor();
  assert.equal(await contact.getAttribute('href'), 'mailto:owner@example.com');

  const answer = await answerTo(page, 'What is Partial FC?');
  assert.equal(await answer.getAttribute('data-status'), 'done');
  const chips = await answer.locator('.starters button').allTextContents();
  assert.ok(chips.length >= 1 && chips.length <= 3, chips.join(' | '));
  for (const c of chips) assert.match(c, /^Tell me about /);
  assert.equal(await answer.getByRole('link', { name: 'Contact the owner' }).count(), 0);
  // A chip asks its question.
  await page.locator('rag-chat-widget .msg.assistant').last().locator('.starters button').first().click();
  await page.locator('rag-chat-widget .msg.user', { hasText: chips[0] }).waitFor();
  assert.equal(await (await settled(page)).getAttribute('data-status'), 'done');

  // A new conversation: the retriever also reads the turns before a question.
  await page.locator('rag-chat-widget .clear').click();
  const q = '香蕉面包的做法';
  const none = await answerTo(page, q);
  const href = await none.getByRole('link', { name: 'Contact the owner' }).getAttribute('href');
  assert.equal(new URL(href).searchParams.get('body'), q);
  assert.equal(new URL(await contact.getAttribute('href')).searchParams.get('subject'), q);
  assert.deepEqual(errors, []);
  await context.close();
});
