// Browser tests of widget/chat-widget.js in headless Chromium (playwright-core, no browser
// download) against the stand-in chat endpoint of server.mjs.
// Run: cd tests/widget && npm ci && node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer, SOURCES } from './server.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const artifacts = path.resolve(here, '../artifacts');

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

// A fresh context (own localStorage) with a page on the test host page; dialogs are
// recorded (and dismissed) so an XSS alert would be caught.
async function openPage(options = {}, query = '') {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.dialogs = [];
  page.on('dialog', (d) => { page.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${server.base}/${query}`);
  await page.locator('rag-chat-widget .launch').waitFor();
  return { context, page };
}

const W = 'rag-chat-widget';

async function ask(page, question) {
  await page.locator(`${W} textarea`).fill(question);
  await page.locator(`${W} textarea`).press('Enter');
}

// Waits until the last assistant message has left the pending state; returns its status.
async function settled(page) {
  const last = page.locator(`${W} .msg.assistant`).last();
  await page.waitForFunction((sel) => {
    const all = document.querySelector(sel).shadowRoot.querySelectorAll('.msg.assistant');
    const m = all[all.length - 1];
    return m && m.dataset.status && m.dataset.status !== 'pending';
  }, W);
  return last.getAttribute('data-status');
}

async function openPanel(page) {
  await page.locator(`${W} .launch`).click();
  await page.locator(`${W} .panel`).waitFor({ state: 'visible' });
}

test('streams an answer to "请介绍一下 Partial FC" with its sources', async () => {
  const { context, page } = await openPage();
  fs.mkdirSync(artifacts, { recursive: true });
  await openPanel(page);
  // The starter list offers the question; clicking it asks.
  await page.locator(`${W} .starters button`, { hasText: '请介绍一下 Partial FC' }).click();
  const answer = page.locator(`${W} .msg.assistant`).last();
  // Streaming: part of the text is shown while the reply is still pending.
  await page.waitForFunction((sel) => {
    const all = document.querySelector(sel).shadowRoot.querySelectorAll('.msg.assistant');
    const m = all[all.length - 1];
    return m.dataset.status === 'pending' && m.textContent.includes('Partial FC');
  }, W);
  assert.equal(await page.locator(`${W} .go`).textContent(), 'Stop');
  assert.equal(await settled(page), 'done');
  assert.equal(await page.locator(`${W} .go`).textContent(), 'Send');

  const text = await answer.textContent();
  assert.match(text, /Partial FC 是一种训练超大规模人脸识别模型的方法/);
  assert.match(text, /在单机上训练 1000 万个身份/, 'multi-byte characters split across chunks decode intact');
  // Markdown became elements.
  assert.equal(await answer.locator('strong').first().textContent(), 'Partial FC');
  assert.equal(await answer.locator('ul > li').count(), 2);
  assert.equal(await answer.locator('em').first().textContent(), 'sampling');
  assert.equal(await answer.locator('pre code').textContent(), 'python train.py --partial-fc 0.1');
  assert.equal(await answer.locator('p code').first().textContent(), 'insightface');
  // Sources list: titles linked to their URLs, opening safely in a new tab.
  const links = answer.locator('.src li a');
  assert.equal(await links.count(), 2);
  assert.equal(await links.first().textContent(), SOURCES[0].title);
  assert.equal(await links.first().getAttribute('href'), SOURCES[0].url);
  assert.equal(await links.first().getAttribute('target'), '_blank');
  assert.equal(await links.first().getAttribute('rel'), 'noopener noreferrer');
  // A passage of a long page names its section (the innermost heading) beside the link.
  const items = answer.locator('.src li');
  assert.equal(await items.first().textContent(), SOURCES[0].title);
  assert.equal(await items.nth(1).textContent(), 'InsightFace › Recognition');
  assert.equal(await items.nth(1).locator('a').textContent(), 'InsightFace');
  // [n] markers link to the sources.
  const cites = answer.locator('a.cite');
  assert.equal(await cites.count(), 2);
  assert.equal(await cites.first().getAttribute('href'), SOURCES[0].url);
  // A source with a section links there, from its marker and from the list.
  assert.equal(await cites.nth(1).getAttribute('href'), SOURCES[1].section_url);
  assert.equal(await links.nth(1).getAttribute('href'), SOURCES[1].section_url);
  // The session id from the sources event is sent with the next question.
  const before = server.requests.length;
  await ask(page, 'And ArcFace?');
  await settled(page);
  const req = server.requests[before];
  assert.match(req.session_id, /^sess-/);
  assert.equal(req.stream, true);
  assert.deepEqual(req.messages.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.deepEqual(page.errors, []);
  // The host page's hostile CSS (*{font-size:30px}, button{background:hotpink!important})
  // does not reach into the widget.
  const style = await page.evaluate((sel) => {
    const root = document.querySelector(sel).shadowRoot;
    return [getComputedStyle(root.querySelector('.msg p')).fontSize,
      getComputedStyle(root.querySelector('.go')).backgroundColor];
  }, W);
  assert.deepEqual(style, ['15px', 'rgb(29, 78, 216)']);
  await page.screenshot({ path: path.join(artifacts, 'widget-desktop.png') });
  await context.close();
});

test('HTML, scripts and javascript: links from the model or KB stay inert', async () => {
  const { context, page } = await openPage();
  await openPanel(page);
  await ask(page, 'XSS please');
  assert.equal(await settled(page), 'done');
  await page.waitForTimeout(300);   // give any injected onerror/onload a chance to fire
  const answer = page.locator(`${W} .msg.assistant`).last();
  const text = await answer.textContent();
  // The payloads are shown as text ...
  assert.ok(text.includes('<img src=x onerror="window.__xss=1;alert(1)">'));
  assert.ok(text.includes('<script>window.__xss=2</script>'));
  assert.ok(text.includes('› <img src=x onerror="window.__xss=4">'), 'a section is text');
  // ... and never became elements or ran.
  const found = await page.evaluate((sel) => {
    const root = document.querySelector(sel).shadowRoot;
    return {
      img: root.querySelectorAll('img, script, svg:not([aria-hidden]), [onerror], [onload], [onmouseover], b').length,
      hrefs: [...root.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      xss: window.__xss ?? null,
      pageImgs: document.querySelectorAll('img').length,
    };
  }, W);
  assert.equal(found.img, 0);
  assert.equal(found.pageImgs, 0);
  assert.equal(found.xss, null);
  assert.deepEqual(page.dialogs, []);
  for (const h of found.hrefs) assert.match(h, /^https?:\/\//, `unsafe href ${h}`);
  assert.ok(found.hrefs.includes('https://example.com/safe'));
  // The unsafe links keep their words, without a link.
  assert.ok(text.includes('click me'));
  await context.close();
});

test('a link whose words name another site, or hide their direction, shows where it goes', async () => {
  // Before: [https://arxiv.org/…](https://evil.example/…) read as arXiv and opened evil.example.
  const { context, page } = await openPage();
  await openPanel(page);
  await ask(page, 'SPOOF please');
  assert.equal(await settled(page), 'done');
  const links = await page.evaluate((sel) => {
    const all = document.querySelector(sel).shadowRoot.querySelectorAll('.msg.assistant');
    return [...all[all.length - 1].querySelectorAll('a')]
      .map((a) => [a.textContent, a.getAttribute('href')]);
  }, W);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(links, [
    ['evil.example', 'https://evil.example/phish'],
    ['evil.example', 'https://evil.example/login'],
    ['arxiv.org', 'https://arxiv.org/abs/1'],
    ['evil.example', 'https://evil.example/x'],
    ['evil.example', 'https://evil.example/%E2%80%AEtxt.exe'],
    ['the paper', 'https://arxiv.org/abs/2'],
  ]);
  await context.close();
});

test('a non-streaming JSON response is rendered', async () => {
  const { context, page } = await openPage();
  await openPanel(page);
  await ask(page, 'JSON please');
  assert.equal(await settled(page), 'done');
  const answer = page.locator(`${W} .msg.assistant`).last();
  assert.equal(await answer.locator('strong').textContent(), 'whole');
  assert.equal(await answer.locator('.src li a').count(), 2);
  await context.close();
});

test('429 shows the Retry-After wait, then Retry works', async () => {
  const { context, page } = await openPage();
  await openPanel(page);
  await ask(page, 'RATE test');
  assert.equal(await settled(page), 'error');
  const answer = page.locator(`${W} .msg.assistant`).last();
  assert.match(await answer.locator('.note').textContent(), /Too many requests\. Please wait [12] s/);
  const retry = answer.locator('.rb');
  assert.equal(await retry.isDisabled(), true);
  await page.waitForFunction((sel) => !document.querySelector(sel).shadowRoot.querySelector('.rb').disabled, W, { timeout: 5000 });
  await retry.click();
  assert.equal(await settled(page), 'done');
  // The failed reply was replaced, not kept beside the new one.
  assert.equal(await page.locator(`${W} .msg.user`).count(), 1);
  assert.equal(await page.locator(`${W} .msg.assistant[data-status]`).count(), 2); // greeting + answer
  await context.close();
});

test('offline and server errors are explained and can be retried', async () => {
  const { context, page } = await openPage();
  await openPanel(page);
  await context.setOffline(true);
  await ask(page, 'Hello offline');
  assert.equal(await settled(page), 'error');
  assert.match(await page.locator(`${W} .msg.assistant .note`).last().textContent(), /offline/i);
  await context.setOffline(false);
  await page.locator(`${W} .msg.assistant .rb`).last().click();
  assert.equal(await settled(page), 'done');

  await ask(page, 'FAIL now');
  assert.equal(await settled(page), 'error');
  assert.match(await page.locator(`${W} .msg.assistant .note`).last().textContent(), /problem.*req-500/);

  // A stream that ends without `done` is reported as cut off.
  await ask(page, 'BREAK it');
  assert.equal(await settled(page), 'error');
  const last = page.locator(`${W} .msg.assistant`).last();
  assert.match(await last.textContent(), /Partial answer before the cut/);
  assert.match(await last.locator('.note').textContent(), /cut off/);
  await context.close();
});

test('the Stop button aborts a streaming reply and keeps its text', async () => {
  const { context, page } = await openPage();
  await openPanel(page);
  await ask(page, 'SLOW one');
  await page.locator(`${W} .msg.assistant`).last().getByText('Partial answer').waitFor();
  await page.locator(`${W} .go`).click();
  assert.equal(await settled(page), 'stopped');
  assert.match(await page.locator(`${W} .msg.assistant`).last().textContent(), /Partial answer before the cut.*Stopped\./);
  assert.equal(await page.locator(`${W} .go`).textContent(), 'Send');
  await context.close();
});

test('a reload restores the conversation and marks an interrupted reply', async () => {
  const { context, page } = await openPage();
  await openPanel(page);
  await ask(page, '请介绍一下 Partial FC');
  assert.equal(await settled(page), 'done');
  await ask(page, 'SLOW then reload');
  await page.locator(`${W} .msg.assistant`).last().getByText('Partial answer').waitFor();
  await page.reload();
  await page.locator(`${W} .launch`).waitFor();
  // The panel stays open across the reload (sessionStorage), history from localStorage.
  await page.locator(`${W} .panel`).waitFor({ state: 'visible' });
  const users = await page.locator(`${W} .msg.user`).allTextContents();
  assert.deepEqual(users.map((t) => t.replace(/^You: /, '')), ['请介绍一下 Partial FC', 'SLOW then reload']);
  const answers = page.locator(`${W} .msg.assistant`);
  assert.equal(await answers.count(), 3);   // greeting + 2
  assert.equal(await answers.nth(1).getAttribute('data-status'), 'done');
  assert.equal(await answers.nth(1).locator('.src li a').count(), 2);
  assert.equal(await answers.nth(2).getAttribute('data-status'), 'interrupted');
  assert.match(await answers.nth(2).textContent(), /Partial answer before the cut.*interrupted/);
  // Retry asks the interrupted question again, with the same session.
  const n = server.requests.length;
  await answers.nth(2).locator('.rb').click();
  for (let i = 0; i < 50 && server.requests.length === n; i++) await page.waitForTimeout(50);
  assert.equal(server.requests[n].session_id, server.requests[n - 1].session_id);
  // "New conversation" forgets everything.
  await page.locator(`${W} .clear`).click();
  assert.equal(await page.locator(`${W} .msg.user`).count(), 0);
  await page.reload();
  await page.locator(`${W} .launch`).waitFor();
  assert.equal(await page.locator(`${W} .msg.user`).count(), 0);
  await context.close();
});

test('keyboard only: Tab to the launcher, Enter opens, Enter sends, Esc closes', async () => {
  const { context, page } = await openPage();
  const focused = () => page.evaluate((sel) => {
    const host = document.querySelector(sel);
    const a = document.activeElement === host ? host.shadowRoot.activeElement : document.activeElement;
    return a ? a.className || a.tagName.toLowerCase() : null;
  }, W);
  for (let i = 0; i < 5 && (await focused()) !== 'launch'; i++) await page.keyboard.press('Tab');
  assert.equal(await focused(), 'launch');
  assert.equal(await page.locator(`${W} .launch`).getAttribute('aria-expanded'), 'false');
  await page.keyboard.press('Enter');
  await page.locator(`${W} .panel`).waitFor({ state: 'visible' });
  assert.equal(await page.locator(`${W} .launch`).getAttribute('aria-expanded'), 'true');
  assert.equal(await focused(), 'TEXTAREA'.toLowerCase());
  await page.keyboard.type('line one');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type('line two');
  assert.equal(await page.locator(`${W} textarea`).inputValue(), 'line one\nline two');
  await page.keyboard.press('Enter');
  assert.equal(await settled(page), 'done');
  assert.equal(await page.locator(`${W} .msg.user`).last().textContent(), 'You: line one\nline two');
  assert.equal(await page.locator(`${W} textarea`).inputValue(), '');
  await page.keyboard.press('Escape');
  await page.locator(`${W} .panel`).waitFor({ state: 'hidden' });
  assert.equal(await focused(), 'launch');
  await context.close();
});

async function axe(page, label) {
  const results = await page.evaluate(() => window.axe.run(document.querySelector('rag-chat-widget'), {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  }));
  const summary = results.violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.length} node(s) — ${v.help}`);
  console.log(`axe (${label}): ${results.passes.length} rules passed, ${results.violations.length} violated${summary.length ? '\n  ' + summary.join('\n  ') : ''}`);
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
}

test('axe-core finds no serious or critical violations', async () => {
  const { context, page } = await openPage();
  await page.addScriptTag({ content: fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8') });
  assert.deepEqual(await axe(page, 'closed'), []);
  await openPanel(page);
  assert.deepEqual(await axe(page, 'open, greeting and starters'), []);
  await ask(page, '请介绍一下 Partial FC');
  await settled(page);
  await ask(page, 'FAIL for the error style');
  await settled(page);
  assert.deepEqual(await axe(page, 'answer with sources, error with retry'), []);
  await context.close();
});

test('mobile viewport: full-screen panel, screenshot written', async () => {
  const { context, page } = await openPage({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }, '?lang=zh');
  await openPanel(page);
  await ask(page, '请介绍一下 Partial FC');
  assert.equal(await settled(page), 'done');
  const box = await page.locator(`${W} .panel`).boundingBox();
  assert.deepEqual([box.x, box.y, box.width, box.height], [0, 0, 375, 667]);
  // Chinese UI strings from data-lang.
  assert.equal(await page.locator(`${W} .go`).textContent(), '发送');
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'widget-mobile.png') });
  await context.close();
});

test('demo.html options: position=left, theme colour, reduced motion', async () => {
  const context = await browser.newContext({ reducedMotion: 'reduce' });
  const page = await context.newPage();
  await page.goto(`${server.base}/widget/demo.html?endpoint=/chat/&position=left&primary=%23065f46`);
  const launcher = page.locator(`${W} .launch`);
  await launcher.waitFor();
  const box = await launcher.boundingBox();
  assert.ok(box.x < 100, `launcher on the left, x=${box.x}`);
  const css = await launcher.evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).transitionDuration]);
  assert.deepEqual(css, ['rgb(6, 95, 70)', '0s']);
  await launcher.click();
  // The demo's starters; the endpoint came from ?endpoint=.
  await page.locator(`${W} .starters button`).first().click();
  assert.equal(await settled(page), 'done');
  await context.close();
});
