// The compute backend in Settings: the choices are the backends the server
// has (mlx.Backends, never a list of the UI's own), and the one in use is
// shown with the reason mlx.Select gave, following every change of setting.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { artifact, cleanup, launchBrowser, openPage, start, waitFor } from './harness.mjs';

let browser;

before(async () => {
  browser = await launchBrowser();
});
after(cleanup);

const inUse = (page) => page.locator('#backend-in-use');
const sentence = (s) => s[0].toUpperCase() + s.slice(1);

async function info(server) {
  return (await fetch(server.url + '/api/info')).json();
}

test('Settings shows the backend in use and why, and follows a change', { timeout: 60_000 }, async () => {
  const server = await start({ env: { HARK_BACKEND: '' } });
  const page = await openPage(browser, server.url + '/#/settings');
  await page.locator('[data-stream="up"]').waitFor();
  const first = await info(server);
  await inUse(page).waitFor();
  // A new user's setting is auto. Without libmlxc (CI) auto stays on the
  // cpu, and the reason is why mlxc was not taken: the build has none, or
  // its library did not open.
  assert.equal(first.backend.asked, 'auto');
  const mlxc = first.backends.find((b) => b.name === 'mlxc');
  const autoReason = !mlxc
    ? 'using the cpu backend: this build has no mlxc backend'
    : mlxc.unavailable
      ? `using the cpu backend: ${mlxc.unavailable}`
      : first.backend.reason;
  assert.equal(first.backend.reason, autoReason);
  const autoLine = `In use: ${first.backend.label} — ${sentence(autoReason)}`;
  assert.equal(await inUse(page).textContent(), autoLine);

  // The picker offers auto and exactly the server's backends.
  const values = await page.getByLabel('Compute backend').locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(values, ['auto', ...first.backends.map((b) => b.name)]);
  assert.ok(!values.includes('metal'));
  await page.screenshot({ path: artifact('hark-settings-backend.png') });

  await page.getByLabel('Compute backend').selectOption('cpu');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();
  await waitFor(async () => (await inUse(page).textContent()) === 'In use: CPU — Setting asked for cpu');
  assert.equal((await info(server)).backend.from, 'setting');

  // Another window sets auto again: the line follows.
  const res = await fetch(server.url + '/api/settings', {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ modelRoots: [], defaultChatModel: '', defaultSpeechModel: '', backend: 'auto' }),
  });
  assert.equal(res.status, 200);
  await waitFor(async () => (await inUse(page).textContent()) === autoLine);
  assert.deepEqual(page.problems.pageErrors, []);
  await page.context().close();
  await server.stop();
});

test('HARK_BACKEND wins over the setting, and Settings says so', { timeout: 60_000 }, async () => {
  const server = await start({ env: { HARK_BACKEND: 'cpu' } });
  const page = await openPage(browser, server.url + '/#/settings');
  await inUse(page).waitFor();
  assert.equal(await inUse(page).textContent(), 'In use: CPU — HARK_BACKEND asked for cpu');
  assert.equal(await page.getByLabel('Compute backend').inputValue(), 'auto');
  await page.context().close();
  await server.stop();
});
