// The fit verdict is computed for the KV cache and context length chosen
// (issue 20), not for a float32 cache at 8,192 tokens whatever the user
// set: a model with small weights and a very long KV cache is too big
// with a float32 cache but fits with a 4-bit one. The chat picker and the
// warning before Send follow the conversation's KV cache; the Library's
// rows follow the KV cache and context length chosen in Settings.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { apiOf, artifact, cleanup, launchBrowser, openPage, start, tempDir, waitFor } from './harness.mjs';
import { commitA, llama, safetensors, writeRepo } from './fixtures.mjs';

let browser;

before(async () => {
  browser = await launchBrowser();
});
after(cleanup);

/**
 * A Llama repo with tiny weights whose float32 KV cache for 8,192 tokens
 * is twice this machine's memory (so always too big), as much as the
 * memory in 16 bits (the default: too big too), and about 0.31 of it in 4
 * bits (so it fits on a machine that is not already nearly full).
 */
function writeLongKVRepo(dir, repo, commit) {
  const perLayer = 2 * 8 * 128 * 8192 * 4; // keys and values, 8 heads of 128, float32
  const layers = Math.ceil((2 * totalmem()) / perLayer);
  const config = JSON.parse(llama['config.json'].toString());
  Object.assign(config, { hidden_size: 1024, num_attention_heads: 8, num_key_value_heads: 8, num_hidden_layers: layers, max_position_embeddings: 8192 });
  return writeRepo(dir, repo, commit, {
    'config.json': Buffer.from(JSON.stringify(config)),
    'model.safetensors': safetensors({ 'model.embed_tokens.weight': [512, 1024], 'lm_head.weight': [512, 1024] }),
  });
}

test('the fit verdict follows the conversation’s KV cache in Chat and Settings’ KV cache and context in the Library', { timeout: 90_000 }, async () => {
  const home = tempDir('hark-home-');
  writeLongKVRepo(join(home, 'hf', 'hub'), 'org/long-kv', commitA);
  const server = await start({ home });
  const id = `hf:org/long-kv@${commitA}`;
  try {
    const api = apiOf(server);
    // What the server says per KV cache: the premise of this test.
    let model;
    await waitFor(async () => (model = (await api('/api/chat/models')).find((m) => m.id === id)), { timeout: 20_000 });
    const verdict = (bits) => model.fits.find((f) => f.kvBits === bits && f.kvGroup === 0);
    // 0 is the engine's default, the same cache as its bits stated.
    const def = (await api('/api/info')).kvBitsChoices.find((c) => c.default).bits;
    assert.equal(verdict(0).fit, 'too_big', JSON.stringify(model.fits));
    assert.equal(verdict(32).fit, 'too_big', JSON.stringify(model.fits));
    assert.equal(verdict(0).memoryNeeded, verdict(def).memoryNeeded, JSON.stringify(model.fits));
    assert.equal(verdict(16).fit, 'too_big', JSON.stringify(model.fits));
    assert.notEqual(verdict(4).fit, 'too_big', `4-bit: ${JSON.stringify(verdict(4))} (this machine's memory is nearly full?)`);
    assert.ok(verdict(4).memoryNeeded < verdict(32).memoryNeeded / 4);

    const create = (title, sampling) =>
      api('/api/chats', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ title, model: id, sampling }) });
    const full = await create('Full precision', {});
    const q4 = await create('Four bits', { kvBits: 4 });

    // Chat: too big before Send in the default (f16) conversation only.
    const page = await openPage(browser, `${server.url}/#/chat/${full.id}`);
    const picker = page.getByLabel('Chat model');
    await page.getByTestId('fit-warning').getByText(/too big for this computer/).waitFor({ timeout: 20_000 });
    assert.match(await picker.locator('option:checked').textContent(), /too big/);
    await page.goto(`${server.url}/#/chat/${q4.id}`);
    await page.reload();
    await waitFor(async () => (await picker.inputValue()) === id, { timeout: 20_000 });
    await page.getByLabel('Message').waitFor();
    await waitFor(async () => !/too big/.test(await picker.locator('option:checked').textContent()), { timeout: 10_000 });
    assert.equal(await page.getByTestId('fit-warning').count(), 0, 'no warning for a 4-bit cache that fits');
    await page.screenshot({ path: artifact('hark-chat-fit-4bit.png') });

    // Library: Settings' defaults (the default cache, 8,192 tokens) say too big ...
    const row = page.locator(`tr[data-model="${id}"] [data-field="fit"]`);
    await page.goto(`${server.url}/#/library`);
    await row.getByText('Too big').waitFor({ timeout: 20_000 });
    // ... a 4-bit KV cache chosen in Settings fits ...
    await page.goto(`${server.url}/#/settings`);
    await page.locator('#kv-bits').selectOption('4');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved', { exact: true }).waitFor();
    assert.equal((await api('/api/settings')).kvBits, 4);
    await page.goto(`${server.url}/#/library`);
    await page.reload();
    await waitFor(async () => /Fits|Tight/.test((await row.textContent()) ?? ''), { timeout: 20_000 });
    // ... and so does float32, stated as 32, for a short context.
    const st = await api('/api/settings');
    await api('/api/settings', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...st, kvBits: 32, contextTokens: 512 }) });
    await page.reload();
    await waitFor(async () => /Fits|Tight/.test((await row.textContent()) ?? ''), { timeout: 20_000 });
    // A new chat keeps Settings' KV cache, and its picker says what fits.
    await api('/api/settings', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...st, kvBits: 4 }) });
    const fresh = await create('New', undefined);
    assert.equal(fresh.sampling?.kvBits ?? JSON.parse(fresh.sampling ?? '{}').kvBits, 4, JSON.stringify(fresh));
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await server.stop();
  }
});
