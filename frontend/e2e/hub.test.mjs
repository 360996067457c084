// A new user's first hour against a fake Hugging Face Hub on loopback:
// the starter shelf on an empty Library, Hub search, pull with progress,
// the row turning Ready, "Chat with this", and a reply from the pulled
// model (the real stories260K from ../shared/assets).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifact, cleanup, launchBrowser, openPage, start } from './harness.mjs';

const frontendDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const assets = process.env.HARK_ASSETS || resolve(frontendDir, '../../shared/assets');
const modelDir = join(assets, 'models', 'stories260K', 'hf');
const repo = 'karpathy/stories260K';
const commit = '5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f';
const sha256 = (b) => createHash('sha256').update(b).digest('hex');

after(cleanup);

/** The Hub's search, model, revision and resolve endpoints for one repo. */
function fakeHub(files) {
  const listing = [
    { id: repo, pipeline_tag: 'text-generation', library_name: 'transformers', downloads: 4200, likes: 3, config: { model_type: 'llama' }, safetensors: { total: 260000, parameters: { F32: 260000 } } },
    { id: 'someone/stories-other-arch', pipeline_tag: 'text-generation', downloads: 12, config: { model_type: 'not_a_real_arch' } },
    // 200B bf16 weights: 400 GB, too big for any machine here.
    { id: 'big-lab/stories-200b', pipeline_tag: 'text-generation', downloads: 7, config: { model_type: 'llama' }, safetensors: { total: 200e9, parameters: { BF16: 200e9 } } },
  ];
  const json = (res, v) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(v));
  };
  const asked = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/api/models') {
      asked.push(url.searchParams);
      const q = (url.searchParams.get('search') || '').toLowerCase();
      return json(res, listing.filter((m) => m.id.toLowerCase().includes(q)));
    }
    if (url.pathname === `/api/models/${repo}`) {
      const siblings = Object.entries(files).map(([rfilename, b]) => ({ rfilename, size: b.length }));
      return json(res, { ...listing[0], sha: commit, siblings });
    }
    if (url.pathname === `/api/models/${repo}/revision/main`) {
      return json(res, { sha: commit, siblings: Object.keys(files).map((rfilename) => ({ rfilename })) });
    }
    const m = url.pathname.match(/^\/karpathy\/stories260K\/resolve\/([0-9a-f]{40}|main)\/(.+)$/);
    const body = m && files[m[2]];
    if (!body) {
      res.statusCode = 404;
      return res.end('not found');
    }
    res.setHeader('X-Repo-Commit', commit);
    res.setHeader('ETag', `"${sha256(body)}"`);
    res.setHeader('Content-Length', body.length);
    if (req.method === 'HEAD') return res.end();
    // The weights arrive in slices, so the page has time to show progress.
    const slices = m[2] === 'model.safetensors' ? 20 : 1;
    const step = Math.ceil(body.length / slices);
    for (let i = 0; i < body.length; i += step) {
      res.write(body.subarray(i, i + step));
      await new Promise((r) => setTimeout(r, 250));
    }
    res.end();
  });
  return { server, asked };
}

let hub;
let server;
let browser;

before(async () => {
  if (!existsSync(modelDir)) return;
  const files = {};
  for (const name of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) files[name] = readFileSync(join(modelDir, name));
  hub = fakeHub(files);
  await new Promise((r) => hub.server.listen(0, '127.0.0.1', r));
  server = await start({ env: { HF_ENDPOINT: `http://127.0.0.1:${hub.server.address().port}` } });
  browser = await launchBrowser();
});

after(() => hub?.server.close());

test('search the hub, pull with progress, chat with the pulled model', { timeout: 180_000 }, async (t) => {
  if (!existsSync(modelDir)) {
    t.skip(`shared assets not found (${modelDir}); set HARK_ASSETS to run the hub e2e test`);
    return;
  }
  const page = await openPage(browser, server.url + '/#/library', { timeout: 20_000 });
  await page.getByRole('heading', { name: 'No models found' }).waitFor();
  // The starter shelf, from the embedded data file.
  const shelf = page.getByRole('region', { name: 'Starter models' });
  await shelf.locator('li[data-repo="openai/whisper-base"]').waitFor();
  assert.ok((await shelf.locator('li').count()) >= 4);
  await page.screenshot({ path: artifact('hark-library-first-run.png') });

  await page.getByLabel('Search Hugging Face').fill('stories');
  await page.getByLabel('Hub model kind').selectOption('chat');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const results = page.getByRole('table', { name: 'Hub results' });
  const row = results.locator(`tr[data-repo="${repo}"]`);
  await row.waitFor();
  const q = hub.asked.at(-1);
  assert.equal(q.get('search'), 'stories');
  assert.equal(q.get('pipeline_tag'), 'text-generation');
  assert.equal(q.get('sort'), 'downloads');
  // An architecture Hark has no graph for is marked and cannot be pulled.
  const other = results.locator('tr[data-repo="someone/stories-other-arch"]');
  await other.getByText('Unsupported').waitFor();
  assert.ok(await other.getByRole('button', { name: 'Pull' }).isDisabled());

  // The memory verdict from the weights' size, and the filter on it.
  await row.locator('[data-field="fit"]').getByText('Fits').waitFor();
  const big = results.locator('tr[data-repo="big-lab/stories-200b"]');
  await big.locator('[data-field="fit"]').getByText('Too big').waitFor();
  await page.getByLabel('Fits this computer').check();
  await big.waitFor({ state: 'detached' });
  assert.ok(await row.isVisible());

  // The card: files with sizes, before pulling.
  await row.getByRole('button', { name: repo }).click();
  await page.getByTestId('hub-card-size').getByText(/4 files/).waitFor();

  await row.getByRole('button', { name: 'Pull' }).click();
  const progress = page.getByTestId('pull-progress');
  await progress.getByText(/\/s/).waitFor({ timeout: 20_000 });
  // Speed and a time left that is not stuck at zero.
  await progress.getByText(/\/s · \d+:\d\d left/).waitFor({ timeout: 20_000 });
  const model = page.locator(`tr[data-model="hf:${repo}@${commit}"]`);
  // config.json lands first, so the row is listed while the weights are
  // still coming: it says how far the pull is, never Ready, until verified.
  await model.getByText(/^Downloading \d+%$/).waitFor({ timeout: 20_000 });
  assert.equal(await model.getByText('Ready', { exact: true }).count(), 0, 'Ready while downloading');
  await page.screenshot({ path: artifact('hark-library-pulling.png') });
  await page.getByTestId('pull-done').getByText(`hf:${repo}@${commit}`).waitFor({ timeout: 60_000 });
  await model.getByText('Ready').waitFor({ timeout: 20_000 });

  await model.click();
  await page.getByRole('button', { name: 'Chat with this' }).click();
  await page.waitForURL(/#\/chat/);
  const box = page.getByLabel('Message');
  await box.fill('Once upon a time');
  await box.press('Enter');
  const reply = page.locator('article[data-role="assistant"][data-message-id]');
  await reply.waitFor({ timeout: 60_000 });
  assert.match(await reply.textContent(), /\w+/);
  const chats = await (await fetch(server.url + '/api/chats')).json();
  assert.equal(chats[0].model, `hf:${repo}@${commit}`);
  await page.screenshot({ path: artifact('hark-chat-after-pull.png') });
  assert.deepEqual(page.problems.pageErrors, []);
  await page.context().close();
});
