// Drives code-server's workbench in headless Chromium with playwright-core, for vscode_session.py.
//
// One JSON request per stdin line, {"id", "op", ...args}; one JSON reply per stdout line,
// {"id", "ok": true, "value"} or {"id", "ok": false, "error"}. Every wait is a condition polled
// in the page (playwright's waitForFunction / waitForSelector), never a fixed sleep.
// Environment: PLAYWRIGHT_CORE (the playwright-core package directory), CHROMIUM (the binary).
'use strict';
const readline = require('readline');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);

const EDITOR = '.part.editor .editor-instance .view-lines';
let browser;
let page;

// The visible text of the active editor: Monaco renders lines out of order (sorted by their
// `top`), spaces as NBSP, and ghost text inside the lines (left out here).
function editorText(selector) {
  const root = document.querySelector(selector);
  if (!root) return null;
  return [...root.querySelectorAll('.view-line')]
    .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
    .map((line) => {
      const copy = line.cloneNode(true);
      copy.querySelectorAll('[class*="ghost-text"]').forEach((g) => g.remove());
      return copy.textContent.replace(/\u00a0/g, ' ');
    })
    .join('\n');
}

function statusTexts() {
  return [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent.trim());
}

const ops = {
  async open({ url, timeout }) {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 700 } });
    page = await context.newPage();
    page.setDefaultTimeout(timeout);
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench');
  },
  async close() {
    await browser?.close();
    browser = undefined;
  },
  async press({ key }) {
    await page.keyboard.press(key);
  },
  async type({ text }) {
    await page.keyboard.type(text);
  },
  // A quick-open style widget: wait for its input (and its `title` if given), type, and press
  // Enter only once a row matching `row` exists (Enter before that is silently ignored); then
  // wait until it closed, unless the command it ran opens another (`closes: false`).
  async quickInput({ key, text, row, title, closes }) {
    if (key) await page.keyboard.press(key);
    await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
    if (title) {
      await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).waitFor();
    }
    await page.keyboard.type(text);
    if (row) {
      await page.locator('.quick-input-list .monaco-list-row', { hasText: row }).first().waitFor();
    }
    await page.keyboard.press('Enter');
    if (closes !== false) {
      await page.waitForSelector('.quick-input-widget', { state: 'hidden' });
    }
  },
  // The code action menu at the cursor (Ctrl+.): click the action titled `title`.
  async codeAction({ title }) {
    await page.keyboard.press('Control+.');
    const row = page.locator('.action-widget .monaco-list-row', { hasText: title }).first();
    await row.waitFor();
    await row.click();
    await page.waitForSelector('.action-widget', { state: 'hidden' });
  },
  // A click on the file in the explorer (Quick Open's file index may not know a new file yet).
  async openFromExplorer({ name }) {
    await page.locator(`.explorer-folders-view .monaco-list-row[aria-label="${name}"]`).click();
  },
  async focusEditor() {
    await page.locator(EDITOR).click();
  },
  async editorText() {
    return page.evaluate(editorText, EDITOR);
  },
  async waitEditorText({ equals, contains }) {
    const handle = await page.waitForFunction(
      ({ fn, selector, equals, contains }) => {
        const text = new Function(`return (${fn})`)()(selector);
        if (text === null) return false;
        // Wrapped: an empty editor's text ('') is falsy, which would wait on.
        return (equals != null ? text === equals : text.includes(contains)) ? { text } : false;
      },
      { fn: editorText.toString(), selector: EDITOR, equals, contains },
    );
    return (await handle.jsonValue()).text;
  },
  // Wait until the text differs from `before` (a whole text, or line `line`'s text).
  async waitEditorChange({ before, line }) {
    const handle = await page.waitForFunction(
      ({ fn, selector, before, line }) => {
        const text = new Function(`return (${fn})`)()(selector);
        if (text === null) return false;
        const now = line === undefined ? text : text.split('\n')[line];
        return now !== before ? text : false;
      },
      { fn: editorText.toString(), selector: EDITOR, before, line },
    );
    return handle.jsonValue();
  },
  async statusTexts() {
    return page.evaluate(statusTexts);
  },
  async waitStatus({ pattern }) {
    const handle = await page.waitForFunction(
      ({ fn, pattern }) => new Function(`return (${fn})`)()().find((t) => new RegExp(pattern).test(t)) ?? false,
      { fn: statusTexts.toString(), pattern },
    );
    return handle.jsonValue();
  },
  async waitNotification({ pattern }) {
    const handle = await page.waitForFunction(
      (pattern) => [...document.querySelectorAll('.notifications-toasts .notification-list-item')]
        .map((e) => e.textContent.trim()).find((t) => new RegExp(pattern).test(t)) ?? false,
      pattern,
    );
    return handle.jsonValue();
  },
  async clickStatus({ pattern }) {
    const texts = await page.evaluate(statusTexts);
    const index = texts.findIndex((t) => new RegExp(pattern).test(t));
    if (index < 0) throw new Error(`no status bar item matches ${pattern}: ${JSON.stringify(texts)}`);
    await page.locator('.statusbar-item').nth(index).locator('a, .statusbar-item-label').first().click();
  },
  async waitSelector({ selector, state }) {
    await page.waitForSelector(selector, { state: state ?? 'visible' });
  },
  // The text of the decorations drawn in the editor's lines (their DOM text, or the CSS content
  // a decoration's `after` may be drawn with).
  async decorationTexts() {
    return page.evaluate(() =>
      [...document.querySelectorAll('.part.editor .view-line [class*="ced-"]')].map((e) => {
        const after = getComputedStyle(e, '::after').content;
        return e.textContent + (after && after !== 'none' && after !== 'normal' ? after : '');
      }));
  },
  async ghostText() {
    return page.evaluate(() =>
      [...document.querySelectorAll('.part.editor [class*="ghost-text"]')].map((e) => e.textContent).join(''));
  },
  async screenshot({ path, selector }) {
    const target = selector ? page.locator(selector).first() : page;
    await target.screenshot({ path });
  },
};

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  const { id, op, ...args } = JSON.parse(line);
  try {
    if (!(op in ops)) throw new Error(`unknown op ${op}`);
    const value = await ops[op](args);
    process.stdout.write(JSON.stringify({ id, ok: true, value: value ?? null }) + '\n');
  } catch (error) {
    process.stdout.write(JSON.stringify({ id, ok: false, error: String(error && error.stack || error) }) + '\n');
  }
});
rl.on('close', async () => {
  await browser?.close().catch(() => undefined);
  process.exit(0);
});
