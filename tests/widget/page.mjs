// What the browser tests do with the widget on a page: open its panel, ask, wait for the
// answer to settle. Shared so every test drives the widget the same way.

/** The widget's custom element. */
export const W = 'rag-chat-widget';

/**
 * Opens `url` in a fresh browser context (with `options`), collects page errors in
 * `page.errors`, and opens the widget's panel.
 */
export async function openWidget(browser, url, options = {}) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(url);
  await page.locator(`${W} .launch`).click();
  await page.locator(`${W} .panel`).waitFor({ state: 'visible' });
  return { context, page };
}

/** Sends `question` and returns the last assistant message once it is no longer pending. */
export async function ask(page, question) {
  await page.locator(`${W} textarea`).fill(question);
  await page.locator(`${W} textarea`).press('Enter');
  await page.waitForFunction((sel) => {
    const all = document.querySelector(sel).shadowRoot.querySelectorAll('.msg.assistant');
    const m = all[all.length - 1];
    return m && m.dataset.status && m.dataset.status !== 'pending';
  }, W);
  return page.locator(`${W} .msg.assistant`).last();
}
