// The app works from the keyboard alone: Tab reaches the nav with a visible
// focus ring, Enter switches sections, Ctrl+1..4 jump between them, and the
// settings form can be filled and saved without a mouse.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { artifact, cleanup, launchBrowser, openPage, start } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await start();
  browser = await launchBrowser();
});
after(cleanup);

/** Describes the focused element: its text or label. */
const focused = (page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return '';
    return (el.getAttribute('aria-label') || el.id && document.querySelector(`label[for="${el.id}"]`)?.textContent || el.textContent || '').trim();
  });

async function tabTo(page, name, max = 30) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if ((await focused(page)) === name) return;
  }
  throw new Error(`Tab never reached "${name}"`);
}

test('tab to the nav and switch sections with the keyboard only', { timeout: 60_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/chat');
  await page.getByRole('heading', { name: 'No chat model yet' }).waitFor();

  // The first Tab stop is the first nav link.
  await page.keyboard.press('Tab');
  assert.equal(await focused(page), 'Chat');
  const ring = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(ring, 'none', 'focused link shows a focus ring');

  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  assert.equal(await focused(page), 'Library');
  await page.screenshot({ path: artifact('hark-keyboard-focus.png') });
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    () => location.hash === '#/library' && document.querySelector('main h1')?.textContent === 'Library' && document.querySelector('nav a[aria-current="page"]')?.textContent?.trim() === 'Library',
  );

  await page.keyboard.press('Tab');
  assert.equal(await focused(page), 'Settings');
  await page.keyboard.press('Enter');
  // The hash changes before the section re-renders: wait for both.
  await page.waitForFunction(() => location.hash === '#/settings' && document.querySelector('main h1')?.textContent === 'Settings');
  await page.context().close();
});

test('Ctrl+1..4 switch sections and focus the page heading', { timeout: 60_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/chat');
  await page.locator('main h1').waitFor();
  const expected = { 1: ['Chat', '#/chat'], 2: ['Transcribe', '#/transcribe'], 3: ['Library', '#/library'], 4: ['Settings', '#/settings'] };
  for (const key of ['4', '2', '3', '1']) {
    const [name, hash] = expected[key];
    await page.keyboard.press(`Control+${key}`);
    await page
      .waitForFunction(
        ([h, n]) => location.hash === h && document.querySelector('main h1')?.textContent === n && document.activeElement?.id === 'page-title',
        [hash, name],
        { timeout: 10_000 },
      )
      .catch(() => {});
    assert.equal(await page.evaluate(() => location.hash), hash);
    assert.equal(await page.locator('main h1').textContent(), name);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'page-title');
  }
  await page.context().close();
});

test('settings can be edited and saved from the keyboard', { timeout: 60_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/settings');
  await page.getByLabel('Compute backend').waitFor();
  await tabTo(page, 'New model folder');
  await page.keyboard.type('/Volumes/Models');
  await page.keyboard.press('Enter');
  await page.getByLabel('Model folder 1').waitFor();

  await tabTo(page, 'Compute backend');
  // The choices after Automatic are the server's backends: cpu comes first.
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.getByLabel('Compute backend').inputValue(), 'cpu');

  await tabTo(page, 'Save');
  await page.keyboard.press('Enter');
  await page.getByText('Saved', { exact: true }).waitFor();
  const saved = await (await fetch(server.url + '/api/settings')).json();
  assert.deepEqual(saved.modelRoots, ['/Volumes/Models']);
  assert.equal(saved.backend, 'cpu');

  // Removing with the keyboard keeps focus inside the form.
  await page.getByRole('button', { name: 'Remove /Volumes/Models' }).focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.getByLabel('Model folder 1').count(), 0);
  assert.equal(await focused(page), 'New model folder');
  await page.context().close();
});
