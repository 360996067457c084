// Every section renders its heading and a truthful empty state; the hash
// route survives a reload; nothing is loaded from the network.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { artifact, cleanup, launchBrowser, openPage, start, waitFor } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await start();
  browser = await launchBrowser();
});
after(cleanup);

const heading = (page) => page.locator('main h1');
const nav = (page, name) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name });

async function expectSection(page, name, hash) {
  // The hash changes before Svelte re-renders the section: wait for the
  // page to catch up (heading and current link), then check each part so a
  // failure names what is wrong.
  await page
    .waitForFunction(
      ([h, n]) =>
        location.hash === h &&
        document.querySelector('main h1')?.textContent === n &&
        document.querySelector('nav a[aria-current="page"]')?.textContent?.includes(n),
      [hash, name],
      { timeout: 10_000 },
    )
    .catch(() => {});
  assert.equal(await page.evaluate(() => location.hash), hash);
  assert.equal(await heading(page).textContent(), name);
  assert.equal(await nav(page, name).getAttribute('aria-current'), 'page');
  const others = await page.locator('nav a[aria-current="page"]').count();
  assert.equal(others, 1, 'exactly one nav link is current');
}

test('every section renders its heading and empty state', { timeout: 60_000 }, async () => {
  const page = await openPage(browser, server.url + '/');

  // No hash: lands on Chat, and the URL says so.
  await expectSection(page, 'Chat', '#/chat');
  await page.getByRole('heading', { name: 'No chat model yet' }).waitFor();
  assert.ok(await page.getByRole('link', { name: 'Open Library' }).isVisible());
  await page.screenshot({ path: artifact('hark-chat.png') });

  await nav(page, 'Transcribe').click();
  await expectSection(page, 'Transcribe', '#/transcribe');
  await page.getByRole('heading', { name: 'Drop audio files here' }).waitFor();
  // The drop zone and the file picker list the server's formats table.
  const names = page.getByTestId('audio-formats');
  await names.getByText(/AAC\/M4A/).waitFor();
  const zone = await names.textContent();
  for (const t of ['WAV', 'MP3', 'FLAC', 'AAC/M4A', 'Ogg', 'AIFF', 'CAF']) assert.ok(zone.includes(t), `${t} in ${zone}`);
  const accept = (await page.locator('input[type=file]').getAttribute('accept')).split(',');
  for (const ext of ['audio/*', '.wav', '.mp3', '.flac', '.m4a', '.ogg', '.opus', '.aac', '.caf', '.webm']) {
    assert.ok(accept.includes(ext), `${ext} in ${accept}`);
  }

  await nav(page, 'Library').click();
  await expectSection(page, 'Library', '#/library');
  await page.getByRole('heading', { name: 'No models found' }).waitFor();
  // The harness points HF_HUB_CACHE at a temp folder: the page names the real one.
  await page.getByTestId('hf-cache').getByText(server.home + '/hf/hub').waitFor();
  await page.screenshot({ path: artifact('hark-library.png') });

  await nav(page, 'Settings').click();
  await expectSection(page, 'Settings', '#/settings');
  await page.getByLabel('Compute backend').waitFor();
  const about = page.getByRole('region', { name: 'About Hark' });
  await about.locator('[data-field="version"]').waitFor();
  assert.match(await about.locator('[data-field="version"]').textContent(), /\S/);
  assert.equal(await about.locator('[data-field="dataDir"]').textContent(), server.home);
  assert.equal(await about.locator('[data-field="mode"]').textContent(), 'Browser (hark serve)');
  await page.screenshot({ path: artifact('hark-settings.png') });

  // Chat's call to action really goes to the Library.
  await nav(page, 'Chat').click();
  await page.getByRole('link', { name: 'Open Library' }).click();
  await expectSection(page, 'Library', '#/library');

  // A reload keeps the section.
  await page.reload();
  await expectSection(page, 'Library', '#/library');

  assert.deepEqual(page.problems.pageErrors, [], 'no uncaught errors');
  assert.deepEqual(page.problems.foreignRequests, [], 'nothing loaded from outside the app');
  await page.context().close();
});

test('an unknown route falls back to Chat', async () => {
  const page = await openPage(browser, server.url + '/#/nowhere');
  await expectSection(page, 'Chat', '#/chat');
  await page.context().close();
});

test('dark mode follows the system and uses a solid background', { timeout: 30_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/transcribe', { colorScheme: 'dark' });
  await page.getByRole('heading', { name: 'Drop audio files here' }).waitFor();
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(30, 30, 30)');
  await page.screenshot({ path: artifact('hark-transcribe-dark.png') });

  const light = await openPage(browser, server.url + '/#/transcribe', { colorScheme: 'light' });
  await light.getByRole('heading', { name: 'Drop audio files here' }).waitFor();
  assert.equal(await light.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 255, 255)');
  await page.context().close();
  await light.context().close();
});

test('the Appearance setting pins light or dark over the system, and every page is shot in both', { timeout: 90_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/settings', { colorScheme: 'light' });
  const theme = page.getByLabel('Appearance');
  await theme.waitFor();
  assert.equal(await theme.inputValue(), 'system');
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(await bg(), 'rgb(255, 255, 255)');
  await theme.selectOption('dark');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();
  await waitFor(async () => (await bg()) === 'rgb(30, 30, 30)');
  // Kept across a reload, over a light system.
  await page.reload();
  await page.getByLabel('Appearance').waitFor();
  assert.equal(await bg(), 'rgb(30, 30, 30)');
  for (const scheme of ['dark', 'light']) {
    if (scheme === 'light') {
      await page.getByLabel('Appearance').selectOption('light');
      await page.getByRole('button', { name: 'Save' }).click();
      await waitFor(async () => (await bg()) === 'rgb(255, 255, 255)');
    }
    for (const section of ['Chat', 'Transcribe', 'Library', 'Settings']) {
      await nav(page, section).click();
      await expectSection(page, section, `#/${section.toLowerCase()}`);
      await page.screenshot({ path: artifact(`hark-${section.toLowerCase()}-${scheme}.png`) });
    }
  }
  await page.getByLabel('Appearance').selectOption('system');
  await page.getByRole('button', { name: 'Save' }).click();
  await waitFor(async () => (await bg()) === 'rgb(255, 255, 255)');
  assert.deepEqual(page.problems.pageErrors, []);
  await page.context().close();
});

test('Ctrl+/ lists the shortcuts and Ctrl+N starts a chat', { timeout: 60_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/library');
  await page.getByRole('heading', { name: 'Library' }).waitFor();
  await page.keyboard.press('Control+/');
  const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await sheet.waitFor();
  for (const what of ['New chat', 'Send the message', 'Stop the reply']) await sheet.getByText(what).waitFor();
  await page.keyboard.press('Escape');
  await sheet.waitFor({ state: 'detached' });
  await page.keyboard.press('Control+n');
  await expectSection(page, 'Chat', '#/chat');
  await page.context().close();
});

test('a file dropped on Transcribe is not silently accepted', { timeout: 30_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/transcribe');
  const zone = page.getByRole('region', { name: 'Audio drop zone' });
  await zone.waitFor();
  const dt = await page.evaluateHandle(() => {
    const d = new DataTransfer();
    d.items.add(new File(['RIFF'], 'meeting.wav', { type: 'audio/wav' }));
    return d;
  });
  await zone.dispatchEvent('dragover', { dataTransfer: dt });
  await zone.dispatchEvent('drop', { dataTransfer: dt });
  // A 4-byte "wav" is queued and fails with a clear per-file message.
  const entry = page.locator('li[data-name="meeting.wav"][data-state="failed"]');
  await entry.waitFor();
  assert.match(await entry.textContent(), /Not an audio file Hark can read/);
  assert.ok(page.url().startsWith(server.url), 'the page did not navigate to the file');
  await page.context().close();
});
