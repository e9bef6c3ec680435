// Browser tests of what an answer carries besides its text (feedback, handoff, suggestions,
// the grounding mark), the owner's contact, and the UI languages, in headless Chromium
// against the stand-in chat endpoint of server.mjs.
// Run: cd tests/widget && npm ci && node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from './server.mjs';
import { W, openWidget, ask } from './page.mjs';

const require = createRequire(import.meta.url);
const artifacts = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../artifacts');

let browser, server;

before(async () => {
  server = await startServer();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});


const openPage = (query = '', options = {}) =>
  openWidget(browser, `${server.base}/${query}`, options);

const until = async (page, cond) => {
  for (let i = 0; i < 100 && !cond(); i++) await page.waitForTimeout(50);
};

test('feedback: thumbs down and a comment reach the server with the token, and survive a reload', async () => {
  const { context, page } = await openPage();
  const answer = await ask(page, '请介绍一下 Partial FC');
  const up = answer.getByRole('button', { name: 'Helpful', exact: true });
  const down = answer.getByRole('button', { name: 'Not helpful' });
  assert.equal(await up.getAttribute('aria-pressed'), 'false');
  assert.equal(await down.getAttribute('aria-pressed'), 'false');
  // The greeting has nothing to rate.
  assert.equal(await page.locator(`${W} .msg.assistant`).first().locator('.fb').count(), 0);

  const n = server.feedback.length;
  await down.click();
  assert.equal(await down.getAttribute('aria-pressed'), 'true');
  assert.equal(await up.getAttribute('aria-pressed'), 'false');
  await until(page, () => server.feedback.length > n);
  const first = server.feedback[n];
  assert.equal(first.rating, 'down');
  assert.match(first.request_id, /^req-\d+$/);
  assert.equal(first.token, `tok-${first.request_id}-${first.session_id}`);
  assert.equal(first.comment, undefined);

  // The comment box came with the thumbs down; the rating controls pass axe-core.
  const box = answer.getByRole('textbox', { name: 'What was missing? (optional)' });
  await page.addScriptTag({ content: fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8') });
  const violations = await page.evaluate(() => window.axe.run(document.querySelector('rag-chat-widget'), {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  }).then((r) => r.violations.filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => v.id)));
  assert.deepEqual(violations, []);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'widget-feedback.png') });
  await box.fill('Nothing on the training code');
  await box.press('Enter');
  await until(page, () => server.feedback.length > n + 1);
  assert.deepEqual(server.feedback[n + 1], { ...first, comment: 'Nothing on the training code' });
  await answer.getByText('Thanks for your feedback!').waitFor();
  assert.equal(await answer.getByRole('textbox').count(), 0);

  await page.reload();
  const again = page.locator(`${W} .msg.assistant`).last();
  await again.locator('.fb').waitFor({ state: 'attached' });
  assert.equal(await again.getByRole('button', { name: 'Not helpful' }).getAttribute('aria-pressed'), 'true');
  assert.equal(await again.getByRole('button', { name: 'Helpful', exact: true }).getAttribute('aria-pressed'), 'false');
  assert.match(await again.textContent(), /Thanks for your feedback!/);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('handoff: a question the site has nothing on offers the contact, question prefilled', async () => {
  const { context, page } = await openPage();
  const q = 'NOHIT: opening hours & prices?';
  const answer = await ask(page, q);
  const link = answer.getByRole('link', { name: 'Contact the owner' });
  const href = await link.getAttribute('href');
  assert.ok(href.startsWith('mailto:owner@example.com?'), href);
  assert.equal(new URL(href).searchParams.get('body'), q);
  // A faithful answer with hits offers none.
  const other = await ask(page, '请介绍一下 Partial FC');
  assert.equal(await other.getByRole('link', { name: 'Contact the owner' }).count(), 0);
  await context.close();
});

test('contact on demand: from the health GET, mailto prefilled with the last question; data-contact wins', async () => {
  const { context, page } = await openPage(`?endpoint=${encodeURIComponent('/chat/?contact')}`);
  const link = page.locator(`${W} .ct a`);
  await link.waitFor();
  assert.equal(await link.textContent(), 'Contact the owner');
  assert.equal(await link.getAttribute('href'), 'mailto:help@example.com');
  await ask(page, 'What is ArcFace?');
  let url = new URL(await link.getAttribute('href'));
  assert.equal(url.searchParams.get('subject'), 'What is ArcFace?');
  assert.equal(url.searchParams.get('body'), 'What is ArcFace?');
  // A long question: the subject is its first 80 characters, never half an emoji.
  const long = `${'x'.repeat(79)}😀 and more`;
  await ask(page, long);
  url = new URL(await link.getAttribute('href'));
  assert.equal(url.searchParams.get('subject'), `${'x'.repeat(79)}😀`);
  assert.equal(url.searchParams.get('body'), long);
  assert.deepEqual(page.errors, []);
  await context.close();

  const other = await openPage(`?contact=${encodeURIComponent('https://example.com/contact')}`);
  assert.equal(await other.page.locator(`${W} .ct a`).getAttribute('href'), 'https://example.com/contact');
  await other.context.close();
  // Neither configured: nothing offered; an unsafe scheme is never a link.
  const none = await openPage(`?contact=${encodeURIComponent('javascript:alert(1)')}`);
  assert.equal(await none.page.locator(`${W} .ct`).isHidden(), true);
  await none.context.close();
});

test('suggestions: chips under the answer, a click asks the question', async () => {
  const { context, page } = await openPage();
  const answer = await ask(page, 'SUGGEST something');
  const chips = answer.locator('.starters button');
  assert.deepEqual(await chips.allTextContents(), ['What is ArcFace?', 'What is InsightFace?']);
  const n = server.requests.length;
  await chips.first().click();
  await until(page, () => server.requests.length > n);
  const msgs = server.requests[n].messages;
  assert.deepEqual(msgs[msgs.length - 1], { role: 'user', content: 'What is ArcFace?' });
  assert.equal(await page.locator(`${W} .msg.user`).last().textContent(), 'You: What is ArcFace?');
  await context.close();
});

test('grounding: an answer with unsupported claims is marked, a faithful one is not', async () => {
  const { context, page } = await openPage();
  const note = "Parts of this answer were not found in the site's pages.";
  const bad = await ask(page, 'INVENT please');
  assert.equal(await bad.getByText(note).count(), 1);
  const good = await ask(page, '请介绍一下 Partial FC');
  assert.equal(await good.getByText(note).count(), 0);
  await context.close();
});

// The visible UI strings in one place.
const ui = (page) => page.evaluate((sel) => {
  const r = document.querySelector(sel).shadowRoot;
  return { title: r.querySelector('h2').textContent, send: r.querySelector('.go').textContent,
    clear: r.querySelector('.clear').textContent, lang: r.querySelector('.wrap').lang,
    placeholder: r.querySelector('textarea').placeholder };
}, W);

test('UI languages: data-lang, the browser language, Traditional Chinese, owner overrides', async () => {
  let { context, page } = await openPage('?lang=ja&title');
  assert.deepEqual(await ui(page), { title: 'チャットで質問', send: '送信', clear: '新しい会話', lang: 'ja', placeholder: '質問を入力…' });
  const answer = await ask(page, 'INVENT please');
  assert.equal(await answer.getByRole('button', { name: '役に立たなかった' }).count(), 1);
  assert.match(await answer.textContent(), /一部はサイト内で確認できませんでした。/);
  await context.close();

  ({ context, page } = await openPage('?lang=zh-TW'));
  assert.equal((await ui(page)).send, '傳送');
  await context.close();
  // No data-lang: the browser's languages, Hong Kong Chinese as Traditional.
  ({ context, page } = await openPage('?lang=', { locale: 'zh-HK' }));
  assert.deepEqual(await ui(page), { title: 'Test assistant', send: '傳送', clear: '新對話', lang: 'zh-TW', placeholder: '請輸入問題…' });
  await context.close();
  ({ context, page } = await openPage('?lang=', { locale: 'ko-KR' }));
  assert.equal((await ui(page)).send, '보내기');
  await context.close();
  // Unsupported: English.
  ({ context, page } = await openPage('?lang=', { locale: 'it-IT' }));
  assert.equal((await ui(page)).send, 'Send');
  await context.close();

  // The owner's strings win per key; unknown keys are ignored; the rest stays German.
  const strings = JSON.stringify({ send: 'Los', title: 'Hilfe', bogus: 'x', toString: 'y' });
  ({ context, page } = await openPage(`?lang=de&title&strings=${encodeURIComponent(strings)}`));
  assert.deepEqual(await ui(page), { title: 'Hilfe', send: 'Los', clear: 'Neues Gespräch', lang: 'de', placeholder: 'Frage eingeben…' });
  assert.deepEqual(page.errors, []);
  await context.close();
});
