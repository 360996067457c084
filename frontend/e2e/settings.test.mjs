// Settings: saved values survive a restart of hark serve; the server's
// validation error shows inline; changes from another window reach the form.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { artifact, cleanup, launchBrowser, openPage, start, waitFor } from './harness.mjs';

let browser;

before(async () => {
  browser = await launchBrowser();
});
after(cleanup);

const api = async (server, path, init) => {
  const res = await fetch(server.url + path, init);
  return { status: res.status, body: await res.json() };
};

/** Starts on a given port, retrying while the old socket is released. */
async function startOn(home, port) {
  let lastErr;
  for (let i = 0; i < 20; i++) {
    try {
      return await start({ home, addr: `127.0.0.1:${port}` });
    } catch (err) {
      lastErr = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw lastErr;
}

test('a changed setting is kept across a restart of hark serve', { timeout: 90_000 }, async () => {
  let server = await start();
  const page = await openPage(browser, server.url + '/#/settings');

  await page.getByLabel('New model folder').fill('/srv/models/lmstudio');
  await page.getByLabel('New model folder').press('Enter');
  await page.getByLabel('Model folder 1').waitFor();
  assert.equal(await page.getByLabel('Model folder 1').inputValue(), '/srv/models/lmstudio');
  await page.getByLabel('Default chat model').fill('mlx-community/test-chat');
  await page.getByLabel('Compute backend').selectOption('cpu');
  assert.match(await page.getByRole('status').filter({ hasText: 'Unsaved' }).textContent(), /Unsaved changes/);

  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();

  const saved = await api(server, '/api/settings');
  assert.deepEqual(saved.body, {
    modelRoots: ['/srv/models/lmstudio'],
    defaultChatModel: 'mlx-community/test-chat',
    defaultSpeechModel: '',
    backend: 'cpu',
    watchBudget: 8192, // the default: the page has no control for it
    apiDisabled: false,
    apiKey: '',
    corsOrigins: [],
    idleUnloadMinutes: 10,
    maxUploadMB: 1024,
  });

  // Chat now knows a model is chosen and says chat itself is not here yet.
  await page.getByRole('link', { name: 'Chat' }).click();
  await page.getByText('mlx-community/test-chat').waitFor();

  // Stop the server: the page notices; restart on the same port and reload.
  await page.getByRole('link', { name: 'Settings' }).click();
  await server.stop();
  await page.getByText('Lost the connection to Hark').waitFor({ timeout: 15_000 });
  server = await startOn(server.home, server.port);
  await page.getByText('Lost the connection to Hark').waitFor({ state: 'detached', timeout: 15_000 });

  await page.reload();
  await page.getByLabel('Model folder 1').waitFor();
  assert.equal(await page.getByLabel('Model folder 1').inputValue(), '/srv/models/lmstudio');
  assert.equal(await page.getByLabel('Default chat model').inputValue(), 'mlx-community/test-chat');
  assert.equal(await page.getByLabel('Compute backend').inputValue(), 'cpu');
  assert.deepEqual(page.problems.pageErrors, []);
  await page.context().close();
  await server.stop();
});

test('the server validation error is shown inline', { timeout: 60_000 }, async () => {
  const server = await start();
  const page = await openPage(browser, server.url + '/#/settings');
  await page.getByLabel('New model folder').fill('/data/models');
  await page.getByRole('button', { name: 'Add folder' }).click();
  // Emptying a folder row is something only the server rejects.
  await page.getByLabel('Model folder 1').fill('');
  await page.getByRole('button', { name: 'Save' }).click();

  const alert = page.getByRole('group', { name: 'Model folders' }).getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /must not contain an empty path/);
  assert.equal(await page.getByLabel('Model folder 1').getAttribute('aria-invalid'), 'true');
  assert.match(await page.locator('.actions [role="status"]').textContent(), /Couldn't save/);
  await page.screenshot({ path: artifact('hark-settings-error.png') });

  // Nothing was saved; removing the row and saving succeeds.
  assert.deepEqual((await api(server, '/api/settings')).body.modelRoots, []);
  await page.getByRole('button', { name: 'Remove folder 1' }).click();
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();
  assert.equal(await alert.count(), 0);
  await page.context().close();
  await server.stop();
});

test('a change from another window refreshes the form unless the user is editing', { timeout: 60_000 }, async () => {
  const server = await start();
  const page = await openPage(browser, server.url + '/#/settings');
  await page.getByLabel('Compute backend').waitFor();
  // The event stream must be connected before the other "window" saves.
  await page.locator('[data-stream="up"]').waitFor();

  const other = (body) =>
    api(server, '/api/settings', {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ modelRoots: [], defaultChatModel: '', defaultSpeechModel: '', backend: 'auto', ...body }),
    });

  // Not editing: the form follows.
  assert.equal((await other({ defaultSpeechModel: 'openai/whisper-small' })).status, 200);
  await waitFor(async () => (await page.getByLabel('Default speech model').inputValue()) === 'openai/whisper-small');

  // Editing: the user's text stays and a notice offers the new values.
  await page.getByLabel('Default chat model').fill('my-draft-model');
  assert.equal((await other({ backend: 'cpu' })).status, 200);
  await page.getByText('Settings were changed in another window').waitFor();
  assert.equal(await page.getByLabel('Default chat model').inputValue(), 'my-draft-model');
  assert.equal(await page.getByLabel('Compute backend').inputValue(), 'auto');

  await page.getByRole('button', { name: 'Load them' }).click();
  assert.equal(await page.getByLabel('Compute backend').inputValue(), 'cpu');
  assert.equal(await page.getByLabel('Default chat model').inputValue(), '');
  await page.context().close();
  await server.stop();
});

test("LM Studio's models folder is offered when it exists", { timeout: 60_000 }, async () => {
  const { mkdtempSync, mkdirSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const home = mkdtempSync(join(tmpdir(), 'hark-userhome-'));
  const lms = join(home, '.lmstudio', 'models');
  mkdirSync(lms, { recursive: true });
  const server = await start({ env: { HOME: home } });
  try {
    const page = await openPage(browser, server.url + '/#/settings');
    await page.getByRole('button', { name: "Add LM Studio's models folder" }).click();
    assert.equal(await page.getByLabel('Model folder 1').inputValue(), lms);
    // Once added it is no longer offered.
    assert.equal(await page.getByRole('button', { name: "Add LM Studio's models folder" }).count(), 0);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved', { exact: true }).waitFor();
    const saved = await api(server, '/api/settings');
    assert.deepEqual(saved.body.modelRoots, [lms]);
    await page.context().close();
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
