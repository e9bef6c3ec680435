// The demo page on a phone, and Chinese text that renders as glyphs rather than boxes.
// Run: cd tests/widget && npm ci && node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { startServer } from './server.mjs';

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

const W = 'rag-chat-widget';
// A common phone: 390 × 844 CSS pixels.
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3 };

test('demo.html fits a 390 px phone: no sideways scroll, launcher on screen', async () => {
  const context = await browser.newContext(PHONE);
  const page = await context.newPage();
  await page.goto(`${server.base}/widget/demo.html?endpoint=/chat/`);
  const launcher = page.locator(`${W} .launch`);
  await launcher.waitFor();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `page is ${width} px wide on a 390 px screen`);
  const box = await launcher.boundingBox();
  const inside = box.x >= 0 && box.y >= 0 && box.x + box.width <= 390 && box.y + box.height <= 844;
  assert.ok(inside, `launcher at ${JSON.stringify(box)} is outside the 390 × 844 viewport`);
  // And it works from there: a tap opens the panel.
  await launcher.tap();
  await page.locator(`${W} .panel`).waitFor({ state: 'visible' });
  await context.close();
});

// With no CJK font installed, Chromium draws every Han character as the same empty box,
// so two different characters rasterise to identical pixels.
test('Chinese characters render as distinct glyphs (a CJK font is installed)', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.base}/widget/demo.html?endpoint=/chat/`);
  const same = await page.evaluate(() => {
    const draw = (ch) => {
      const c = document.createElement('canvas');
      c.width = c.height = 48;
      const g = c.getContext('2d');
      g.font = '40px sans-serif';
      g.fillText(ch, 4, 40);
      return Array.from(g.getImageData(0, 0, 48, 48).data).join(',');
    };
    return draw('中') === draw('文');
  });
  assert.equal(same, false, '中 and 文 render identically: no CJK font (apt-get install fonts-wqy-microhei)');
  await context.close();
});
