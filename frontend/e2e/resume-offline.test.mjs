// Resume on an Incomplete snapshot is offered only when the hub answers
// (issue 17): with HF_ENDPOINT pointing at nothing, the row says Incomplete
// and offers no Resume that could only fail. (library.test.mjs covers the
// reachable case, where Resume finishes the download.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { cleanup, launchBrowser, openPage, start, tempDir } from './harness.mjs';
import { llama, sha256, writeRepo } from './fixtures.mjs';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(cleanup);

/** An address on 127.0.0.1 where nothing listens. */
async function deadEndpoint() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return `http://127.0.0.1:${port}`;
}

test('an Incomplete snapshot offers no Resume while the hub does not answer', { timeout: 60_000 }, async () => {
  const commit = 'feed0000feed0000feed0000feed0000feed0001';
  const home = tempDir('hark-home-');
  const repoDir = writeRepo(join(home, 'hf', 'hub'), 'org/offline', commit, { 'config.json': llama['config.json'] });
  const weights = llama['model.safetensors'];
  writeFileSync(join(repoDir, 'blobs', sha256(weights) + '.incomplete'), weights.subarray(0, weights.length >> 1));
  const endpoint = await deadEndpoint();
  const srv = await start({ home, env: { HF_ENDPOINT: endpoint } });
  try {
    const page = await openPage(browser, srv.url + '/#/settings');
    const probed = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/models/hub', { timeout: 15_000 });
    await page.goto(srv.url + '/#/library');
    const row = page.locator(`tr[data-model="hf:org/offline@${commit}"]`);
    await row.locator('[data-field="status"] .badge').getByText('Incomplete', { exact: true }).waitFor({ timeout: 15_000 });
    const hub = await (await probed).json();
    assert.equal(hub.reachable, false, `the hub at ${endpoint} is not reachable: ${JSON.stringify(hub)}`);
    assert.ok(hub.reason.includes(endpoint), `the reason names the endpoint: ${hub.reason}`);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    assert.equal(await row.getByRole('button', { name: 'Resume' }).count(), 0, 'no Resume while the hub does not answer');
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await srv.stop();
  }
});
