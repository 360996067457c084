// The Library page against a real `hark serve` whose HF cache is a temp
// folder: models copied into the cache appear live, details, verify,
// delete with the space freed, search/filter/sort, open-folder through a
// stand-in file manager, and pull from a fake Hugging Face Hub.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { artifact, cleanup, launchBrowser, openPage, start, tempDir, waitFor } from './harness.mjs';
import { commitA, commitB, llama, safetensors, sha256, whisper, writeHugeRepo, writeRepo } from './fixtures.mjs';

let browser;
let server;
let cache;
let opened; // where the stand-in xdg-open/open records its argument

before(async () => {
  // A stand-in file manager on PATH: "open folder" really runs a program,
  // which records what it was asked to open instead of opening a window.
  const bin = tempDir('hark-fakebin-');
  opened = join(bin, 'opened.txt');
  for (const name of ['xdg-open', 'open']) {
    writeFileSync(join(bin, name), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    chmodSync(join(bin, name), 0o755);
  }
  server = await start({ env: { PATH: `${bin}:${process.env.PATH}` } });
  cache = join(server.home, 'hf', 'hub');
  browser = await launchBrowser();
});
after(cleanup);

test('a model copied into the cache appears without a reload', { timeout: 60_000 }, async (t) => {
  const page = await openPage(browser, server.url + '/#/library');
  await page.getByRole('heading', { name: 'No models found' }).waitFor();
  await page.evaluate(() => (window.__sameDocument = true));

  // "cp -r" a repo folder built elsewhere into the cache.
  const staging = tempDir('hark-staging-');
  const built = writeRepo(staging, 'karpathy/stories-e2e', commitA, llama);
  const copied = Date.now();
  cpSync(built, join(cache, 'models--karpathy--stories-e2e'), { recursive: true, verbatimSymlinks: true });

  const fp = `hf:karpathy/stories-e2e@${commitA}`;
  const row = page.locator(`tr[data-model="${fp}"]`);
  await row.waitFor({ timeout: 15_000 });
  // Reported, not asserted (timing on a shared machine is not a test).
  t.diagnostic(`model visible ${Date.now() - copied} ms after the copy finished`);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
  const cells = await row.locator('td').allTextContents();
  assert.match(cells[0], /karpathy\/stories-e2e/);
  assert.equal(cells[1], 'chat');
  assert.equal(cells[2], '66K', 'parameters from the safetensors header (65,536)');

  // Details: fingerprint, files, config, and why it cannot run (or not).
  await row.click();
  await page.waitForFunction((id) => location.hash === '#/library/' + encodeURIComponent(id), fp);
  const panel = page.getByRole('complementary');
  assert.equal(await panel.getByTestId('fingerprint').textContent(), fp);
  await panel.getByRole('cell', { name: 'model.safetensors' }).waitFor();
  await panel.locator('summary', { hasText: 'config.json' }).click();
  await panel.getByText('"LlamaForCausalLM"').waitFor();
  const badge = (await row.locator('[data-field="status"] .badge').textContent()).trim();
  if (badge === 'Unsupported') {
    // Why it cannot run comes from the engine's profile resolver; the row's
    // tooltip and the panel say the same thing.
    const reason = (await panel.getByTestId('reason').textContent()).trim();
    const title = await row.locator('[data-field="status"] .badge').getAttribute('title');
    assert.ok(reason.length > 10, `a reason is shown: ${reason}`);
    assert.equal(reason.toLowerCase(), title.toLowerCase());
  }
  await page.screenshot({ path: artifact('hark-library-details.png') });

  // Verify runs as a job and reports the hashes match.
  await panel.getByRole('button', { name: 'Verify' }).click();
  await panel.getByText(/Verified: 2 files/).waitFor();

  // Open folder runs the platform's file manager on the snapshot folder.
  await panel.getByRole('button', { name: 'Open folder' }).click();
  const want = join(cache, 'models--karpathy--stories-e2e', 'snapshots', commitA);
  await waitFor(() => existsSync(opened) && readFileSync(opened, 'utf8') === want, { timeout: 5000 });

  // A second model; search, filter by kind and sort by size.
  writeRepo(cache, 'openai/whisper-e2e', commitB, whisper);
  await page.locator(`tr[data-model="hf:openai/whisper-e2e@${commitB}"]`).waitFor({ timeout: 15_000 });
  const names = async () => (await page.locator('table.models tbody tr td.name strong').allTextContents()).map((s) => s.trim());
  await page.getByLabel('Search models').fill('whisper');
  await waitFor(async () => (await names()).join() === 'openai/whisper-e2e');
  await page.getByLabel('Search models').fill('');
  await page.getByLabel('Kind', { exact: true }).selectOption('chat');
  await waitFor(async () => (await names()).join() === 'karpathy/stories-e2e');
  await page.getByLabel('Kind', { exact: true }).selectOption('all');
  await page.getByLabel('Sort by').selectOption('size');
  await waitFor(async () => (await names()).join() === 'karpathy/stories-e2e,openai/whisper-e2e');
  await page.getByLabel('Search models').fill('nothing-matches-this');
  await page.getByText('No models match.').waitFor();
  await page.getByLabel('Search models').fill('');

  // Delete asks first and shows the space it frees, then frees it.
  await panel.getByRole('button', { name: 'Delete…' }).click();
  const dialog = page.getByRole('alertdialog');
  const size = llama['config.json'].length + llama['model.safetensors'].length + commitA.length; // blobs + refs/main
  const kb = Math.round(size / 1000);
  assert.equal(await dialog.getByTestId('freed').textContent(), `${kb} KB`);
  await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByText(/Deleted\. Freed/).waitFor();
  await row.waitFor({ state: 'detached' });
  assert.equal(existsSync(join(cache, 'models--karpathy--stories-e2e')), false, 'repo folder removed');
  await page.screenshot({ path: artifact('hark-library.png') });

  assert.deepEqual(page.problems.pageErrors, []);
  assert.deepEqual(page.problems.consoleErrors, []);
  assert.deepEqual(page.problems.foreignRequests, []);
  await page.context().close();
});

test('pull from the hub shows progress and the model arrives', { timeout: 60_000 }, async () => {
  // A fake Hub speaking the endpoints and headers huggingface_hub uses.
  const files = { 'config.json': llama['config.json'], 'model.safetensors': Buffer.concat([llama['model.safetensors']]) };
  const commit = 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00';
  const hub = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/api/models/org/pulled/revision/main') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ sha: commit, siblings: Object.keys(files).map((rfilename) => ({ rfilename })) }));
      return;
    }
    const m = url.pathname.match(/^\/org\/pulled\/resolve\/([0-9a-f]{40})\/(.+)$/);
    const body = m && files[m[2]];
    if (!body) {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    res.setHeader('X-Repo-Commit', commit);
    res.setHeader('ETag', `"${sha256(body)}"`);
    res.setHeader('Content-Length', body.length);
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise((r) => hub.listen(0, '127.0.0.1', r));
  const pullServer = await start({ env: { HF_ENDPOINT: `http://127.0.0.1:${hub.address().port}` } });
  try {
    const page = await openPage(browser, pullServer.url + '/#/library');
    await page.getByRole('heading', { name: 'No models found' }).waitFor();
    await page.getByLabel('Hugging Face repo to pull').fill('org/pulled');
    await page.getByRole('form', { name: 'Pull a model' }).getByRole('button', { name: 'Pull' }).click();
    await page.getByTestId('pull-done').getByText(`hf:org/pulled@${commit}`).waitFor({ timeout: 15_000 });
    await page.locator(`tr[data-model="hf:org/pulled@${commit}"]`).waitFor();
    // A bad repo id is refused with a message, not sent.
    await page.getByLabel('Hugging Face repo to pull').fill('not a repo');
    await page.getByRole('form', { name: 'Pull a model' }).getByRole('button', { name: 'Pull' }).click();
    await page.getByText(/Enter a repo id/).waitFor();
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await pullServer.stop();
    hub.close();
  }
});

test('running out of file watches is said on the page', { timeout: 60_000 }, async () => {
  // One watch allowed, and a cache with more than one folder to watch.
  const home = tempDir('hark-home-');
  writeRepo(join(home, 'hf', 'hub'), 'org/some-model', commitA, llama);
  const limited = await start({ home, env: { HARK_MAX_WATCHES: '1' } });
  try {
    const page = await openPage(browser, limited.url + '/#/library');
    const note = page.getByTestId('watch-status');
    await note.getByText('Not watching for changes: watch limit reached (HARK_MAX_WATCHES=1); rescanning every 30s').waitFor();
    await page.context().close();
  } finally {
    await limited.stop();
  }
});

test('an interrupted download is Incomplete and Resume finishes it with a Range request', { timeout: 60_000 }, async () => {
  // What a killed pull leaves: config linked, the weights a partial
  // .incomplete blob with no download holding its lock.
  const commit = 'feed0000feed0000feed0000feed0000feed0000';
  const home = tempDir('hark-home-');
  const repoDir = writeRepo(join(home, 'hf', 'hub'), 'org/partial', commit, { 'config.json': llama['config.json'] });
  const weights = llama['model.safetensors'];
  const half = Math.floor(weights.length / 2);
  writeFileSync(join(repoDir, 'blobs', sha256(weights) + '.incomplete'), weights.subarray(0, half));
  const files = { 'config.json': llama['config.json'], 'model.safetensors': weights };
  const ranges = [];
  const hub = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/') {
      res.end(); // the reachability probe
      return;
    }
    if (url.pathname === `/api/models/org/partial/revision/${commit}`) {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ sha: commit, siblings: Object.keys(files).map((rfilename) => ({ rfilename })) }));
      return;
    }
    const m = url.pathname.match(/^\/org\/partial\/resolve\/([0-9a-f]{40})\/(.+)$/);
    const body = m && files[m[2]];
    if (!body) {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    res.setHeader('X-Repo-Commit', commit);
    res.setHeader('ETag', `"${sha256(body)}"`);
    if (req.method === 'HEAD') {
      res.setHeader('Content-Length', body.length);
      res.end();
      return;
    }
    const range = req.headers.range;
    if (m[2] === 'model.safetensors') ranges.push(range ?? '');
    const start = range ? Number(/^bytes=(\d+)-$/.exec(range)?.[1] ?? 0) : 0;
    if (range) {
      res.statusCode = 206;
      res.setHeader('Content-Range', `bytes ${start}-${body.length - 1}/${body.length}`);
    }
    res.setHeader('Content-Length', body.length - start);
    res.end(body.subarray(start));
  });
  await new Promise((r) => hub.listen(0, '127.0.0.1', r));
  const srv = await start({ home, env: { HF_ENDPOINT: `http://127.0.0.1:${hub.address().port}` } });
  try {
    const page = await openPage(browser, srv.url + '/#/library');
    const row = page.locator(`tr[data-model="hf:org/partial@${commit}"]`);
    await row.locator('[data-field="status"] .badge').getByText('Incomplete', { exact: true }).waitFor({ timeout: 15_000 });
    const resume = row.getByRole('button', { name: 'Resume' });
    await resume.click();
    await resume.waitFor({ state: 'detached', timeout: 15_000 });
    await waitFor(async () => (await row.locator('[data-field="status"] .badge').textContent()) !== 'Incomplete', { timeout: 15_000 });
    assert.deepEqual(ranges, [`bytes=${half}-`], 'only the missing bytes were asked for');
    assert.equal(existsSync(join(repoDir, 'blobs', sha256(weights) + '.incomplete')), false, 'partial blob completed');
    assert.equal(readFileSync(join(repoDir, 'snapshots', commit, 'model.safetensors')).equals(weights), true);
    assert.deepEqual(page.problems.pageErrors, []);
    assert.deepEqual(page.problems.consoleErrors, []);
    await page.context().close();
  } finally {
    await srv.stop();
    hub.close();
  }
});

test('a model too big for this computer says so in the Library and in Chat, before Send', { timeout: 60_000 }, async () => {
  const home = tempDir('hark-home-');
  writeHugeRepo(join(home, 'hf', 'hub'), 'org/huge-f32', commitA, 200);
  writeRepo(join(home, 'hf', 'hub'), 'org/small-chat', commitB, llama);
  const big = await start({ home });
  try {
    const page = await openPage(browser, big.url + '/#/library');
    const huge = page.locator(`tr[data-model="hf:org/huge-f32@${commitA}"]`);
    await huge.locator('[data-field="fit"]').getByText('Too big').waitFor({ timeout: 15_000 });
    assert.match(await huge.locator('[data-field="fit"] .badge').getAttribute('title'), /Needs about \d+(\.\d)? GB/);
    const small = page.locator(`tr[data-model="hf:org/small-chat@${commitB}"]`);
    await small.locator('[data-field="fit"]').getByText('Fits').waitFor();

    await huge.click();
    await page.getByRole('button', { name: 'Chat with this' }).click();
    await page.waitForURL(/#\/chat/);
    await page.getByTestId('fit-warning').getByText(/too big for this computer/).waitFor();
    const picker = page.getByLabel('Chat model');
    assert.match(await picker.locator('option:checked').textContent(), /too big/);
    await page.screenshot({ path: artifact('hark-chat-too-big.png') });
    await page.context().close();
  } finally {
    await big.stop();
  }
});
