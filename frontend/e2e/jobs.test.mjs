// The activity panel in browser mode, fed by real "job" events over SSE.
// A job needs a feature that starts one; verify-all (library) does and
// finishes at once in an empty library. Skipped if that route is missing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, launchBrowser, openPage, start } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await start();
  browser = await launchBrowser();
});
after(cleanup);

test('a job started elsewhere shows up in the activity panel', { timeout: 60_000 }, async (t) => {
  const page = await openPage(browser, server.url + '/#/chat');
  await page.locator('main h1').waitFor();
  // Wait until the event stream is connected before starting the job.
  await page.locator('[data-stream="up"]').waitFor();

  const res = await fetch(server.url + '/api/models/verify-all', { method: 'POST', headers: { 'X-Hark': '1' } });
  if (res.status === 404 || res.status === 405) {
    t.skip('no POST /api/models/verify-all in this build');
    return;
  }
  assert.equal(res.status, 200, await res.clone().text());
  const job = await res.json();
  assert.ok(job.id);

  const panel = page.getByRole('region', { name: /Activity/ });
  const item = panel.locator(`[data-job="${job.id}"]`);
  await item.waitFor();
  assert.match(await item.textContent(), new RegExp(job.title));
  // It succeeds, so it clears itself.
  await item.waitFor({ state: 'detached', timeout: 15_000 });

  // The list endpoint agrees.
  const list = await (await fetch(server.url + '/api/jobs')).json();
  assert.equal(list.find((j) => j.id === job.id)?.state, 'done');
  await page.context().close();
});
