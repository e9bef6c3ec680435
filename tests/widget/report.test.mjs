// `rag report --html` opened in headless Chromium: the page renders its chart and tables
// offline, visitors' hostile text stays text (no dialog, no element made from it), and a
// screenshot goes to tests/artifacts/report.png for a person to look at.
// Needs the `rag` binary: $RAG_BIN, else target/debug/rag (built here when missing).
// Run: cd tests/widget && npm ci && node --test report.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const artifacts = path.resolve(here, '../artifacts');

function ragBinary() {
  if (process.env.RAG_BIN) return process.env.RAG_BIN;
  const target = process.env.CARGO_TARGET_DIR || path.join(repo, 'target');
  const bin = path.join(target, 'debug', 'rag');
  if (!fs.existsSync(bin)) {
    const built = spawnSync('cargo', ['build', '-q', '-p', 'rag'], { cwd: repo, stdio: 'inherit' });
    assert.equal(built.status, 0, 'cargo build -p rag');
  }
  return bin;
}

test('rag report --html renders offline in Chromium, hostile text stays text', async () => {
  const out = spawnSync(ragBinary(), ['report', '--dump', path.join(here, 'data/audit-dump.jsonl'),
    '--since', '2026-11-20', '--until', '2026-11-26', '--budget', '5000', '--html'],
  { encoding: 'utf8', env: { ...process.env, AUDIT_TABLE: '' } });
  assert.equal(out.status, 0, out.stderr);
  fs.mkdirSync(artifacts, { recursive: true });
  const file = path.join(artifacts, 'report.html');
  fs.writeFileSync(file, out.stdout);

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const dialogs = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    // Any request beyond the file itself would mean an external asset.
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`file://${file}`);

    assert.equal(await page.locator('svg rect').count(), 7, 'one bar per day');
    const box = await page.locator('svg').boundingBox();
    assert.ok(box.width > 500 && box.height > 150, JSON.stringify(box));
    // The 110% day's bar is the tallest: 4 questions; the tokens line has 7 points.
    const points = await page.locator('svg polyline').getAttribute('points');
    assert.equal(points.trim().split(/\s+/).length, 7);
    assert.equal(await page.locator('svg line[stroke-dasharray]').count(), 1, 'budget line');

    // The hostile question and comment are shown as text, never run or turned into markup.
    const body = await page.locator('body').innerText();
    assert.ok(body.includes("<img src=x onerror=alert('report')>"), body);
    assert.ok(body.includes("<script>alert('comment')</script> wrong year"));
    assert.equal(await page.locator('body img, body script').count(), 0);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(requests.filter((u) => u !== `file://${file}`), []);

    await page.screenshot({ path: path.join(artifacts, 'report.png'), fullPage: true });
    await context.close();
  } finally {
    await browser.close();
  }
});
