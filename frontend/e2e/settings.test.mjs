// Settings: saved values survive a restart of hark serve; the server's
// validation error shows inline; changes from another window reach the form.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifact, cleanup, launchBrowser, openPage, start, tempDir, waitFor } from './harness.mjs';
import { commitA, commitB, llama, whisper, writeRepo } from './fixtures.mjs';

// A home whose HF cache holds one chat and one speech model: the default
// models are chosen from the Library.
const chatId = `hf:org/test-chat@${commitA}`;
const speechId = `hf:openai/whisper-small@${commitB}`;
function homeWithModels() {
  const home = tempDir('hark-home-');
  writeRepo(join(home, 'hf', 'hub'), 'org/test-chat', commitA, llama);
  writeRepo(join(home, 'hf', 'hub'), 'openai/whisper-small', commitB, whisper);
  return home;
}

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
  let server = await start({ home: homeWithModels() });
  const page = await openPage(browser, server.url + '/#/settings');

  await page.getByLabel('New model folder').fill('/srv/models/lmstudio');
  await page.getByLabel('New model folder').press('Enter');
  await page.getByLabel('Model folder 1').waitFor();
  assert.equal(await page.getByLabel('Model folder 1').inputValue(), '/srv/models/lmstudio');
  await page.getByLabel('Default chat model').locator(`option[value="${chatId}"]`).waitFor({ state: 'attached' });
  await page.getByLabel('Default chat model').selectOption(chatId);
  await page.getByLabel('Compute backend').selectOption('cpu');
  assert.match(await page.getByRole('status').filter({ hasText: 'Unsaved' }).textContent(), /Unsaved changes/);

  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();

  const saved = await api(server, '/api/settings');
  assert.deepEqual(saved.body, {
    modelRoots: ['/srv/models/lmstudio'],
    defaultChatModel: chatId,
    defaultSpeechModel: '',
    backend: 'cpu',
    watchBudget: 8192, // the default: the page has no control for it
    theme: 'system',
    apiDisabled: false,
    apiKey: '',
    corsOrigins: [],
    idleUnloadMinutes: 10,
    maxUploadMB: 1024,
    kvBits: 0, // the engine's default KV cache and context: what the fit verdict assumed before
    contextTokens: 0,
  });

  // Chat starts on the chosen model.
  await page.getByRole('link', { name: 'Chat' }).click();
  await waitFor(async () => (await page.getByLabel('Chat model').inputValue()) === chatId);

  // Stop the server: the page notices; restart on the same port and reload.
  await page.getByRole('link', { name: 'Settings' }).click();
  await server.stop();
  await page.getByText('Lost the connection to Hark').waitFor({ timeout: 15_000 });
  server = await startOn(server.home, server.port);
  await page.getByText('Lost the connection to Hark').waitFor({ state: 'detached', timeout: 15_000 });

  await page.reload();
  await page.getByLabel('Model folder 1').waitFor();
  assert.equal(await page.getByLabel('Model folder 1').inputValue(), '/srv/models/lmstudio');
  assert.equal(await page.getByLabel('Default chat model').inputValue(), chatId);
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
  const server = await start({ home: homeWithModels() });
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

  // Not editing: the form follows. (The server checks the model is in the
  // Library, so wait for its first scan.)
  await page.getByLabel('Default speech model').locator(`option[value="${speechId}"]`).waitFor({ state: 'attached' });
  assert.equal((await other({ defaultSpeechModel: speechId })).status, 200);
  await waitFor(async () => (await page.getByLabel('Default speech model').inputValue()) === speechId);

  // Editing: the user's choice stays and a notice offers the new values.
  await page.getByLabel('Default chat model').locator(`option[value="${chatId}"]`).waitFor({ state: 'attached' });
  await page.getByLabel('Default chat model').selectOption(chatId);
  assert.equal((await other({ backend: 'cpu' })).status, 200);
  await page.getByText('Settings were changed in another window').waitFor();
  assert.equal(await page.getByLabel('Default chat model').inputValue(), chatId);
  assert.equal(await page.getByLabel('Compute backend').inputValue(), 'auto');

  await page.getByRole('button', { name: 'Load them' }).click();
  assert.equal(await page.getByLabel('Compute backend').inputValue(), 'cpu');
  assert.equal(await page.getByLabel('Default chat model').inputValue(), '');
  // A model that is not in the Library is refused by the server.
  const refused = await other({ defaultChatModel: 'nope/nothing' });
  assert.equal(refused.status, 400);
  assert.match(refused.body.error, /nope\/nothing/);
  await page.context().close();
  await server.stop();
});

test("LM Studio's and Ollama's models folders are read in place, and their GGUF files say why they don't run", { timeout: 60_000 }, async () => {
  const { mkdtempSync, mkdirSync, rmSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const home = mkdtempSync(join(tmpdir(), 'hark-userhome-'));
  const lms = join(home, '.lmstudio', 'models');
  // An MLX model as LM Studio lays it out (org/repo of safetensors), and a GGUF one.
  const mlxDir = join(lms, 'mlx-community', 'tiny-chat');
  mkdirSync(mlxDir, { recursive: true });
  for (const [name, data] of Object.entries(llama)) writeFileSync(join(mlxDir, name), data);
  const ggufDir = join(lms, 'lmstudio-community', 'tiny-GGUF');
  mkdirSync(ggufDir, { recursive: true });
  writeFileSync(join(ggufDir, 'tiny-Q4_K_M.gguf'), Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(123_456)]));
  // And Ollama's store: a manifest naming its GGUF blob.
  const ollama = join(home, '.ollama', 'models');
  const digest = 'ab'.repeat(32);
  mkdirSync(join(ollama, 'manifests', 'registry.ollama.ai', 'library', 'llama3.2'), { recursive: true });
  mkdirSync(join(ollama, 'blobs'), { recursive: true });
  writeFileSync(join(ollama, 'blobs', `sha256-${digest}`), Buffer.alloc(2_345_678));
  writeFileSync(join(ollama, 'manifests', 'registry.ollama.ai', 'library', 'llama3.2', '3b'),
    JSON.stringify({ schemaVersion: 2, layers: [{ mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digest}`, size: 2_345_678 }] }));
  const server = await start({ env: { HOME: home } });
  try {
    const page = await openPage(browser, server.url + '/#/library');
    const ollamaRow = page.locator('table.models tr', { hasText: 'llama3.2:3b' });
    await ollamaRow.getByText('GGUF: not supported yet', { exact: true }).waitFor({ timeout: 15_000 });
    assert.match(await ollamaRow.textContent(), /2\.3 MB/);
    assert.match(await ollamaRow.locator('[data-field="status"] .badge').getAttribute('title'), /GGUF: not supported yet/);
    const chatRow = page.locator('table.models tr', { hasText: 'mlx-community/tiny-chat' });
    await chatRow.getByText('Ready').waitFor({ timeout: 15_000 });
    const ggufRow = page.locator('table.models tr', { hasText: 'tiny-GGUF' });
    await ggufRow.getByText('GGUF: not supported yet', { exact: true }).waitFor();
    assert.match(await ggufRow.textContent(), /123 KB/);
    assert.match(await ggufRow.locator('[data-field="status"] .badge').getAttribute('title'), /GGUF: not supported yet/);
    // Nothing was added to Settings: the folder is read by itself.
    assert.deepEqual((await api(server, '/api/settings')).body.modelRoots, []);
    await page.context().close();
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
