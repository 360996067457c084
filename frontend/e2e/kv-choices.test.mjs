// The KV cache select in Settings lists what the server says the engine
// offers (Info.kvBitsChoices), not a list kept in the page: every choice,
// the float32 default first, a chosen 16-bit cache is saved as 16, and a
// float32 stated as 32 shows as the default's choice, kept as 32.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiOf, cleanup, launchBrowser, openPage, start, waitFor } from './harness.mjs';

let browser;

before(async () => {
  browser = await launchBrowser();
});
after(cleanup);

test('the KV cache select shows the engine\'s choices from the API', { timeout: 60_000 }, async () => {
  const server = await start();
  const api = apiOf(server);
  const info = await api('/api/info');
  const choices = info.kvBitsChoices;
  assert.ok(Array.isArray(choices) && choices.length > 0, JSON.stringify(info));
  // The engine's default is float32, listed first and marked; the label
  // says "default" on it alone.
  assert.deepEqual(choices.filter((c) => c.default).map((c) => c.bits), [32]);
  assert.equal(choices[0].bits, 32);
  assert.deepEqual(choices.filter((c) => /default/.test(c.label)).map((c) => c.bits), [32]);
  assert.ok(choices.some((c) => c.bits === 16), 'f16 is offered');

  const page = await openPage(browser, server.url + '/#/settings');
  const select = page.getByLabel('KV cache');
  const options = async () => {
    await select.locator('option').nth(choices.length - 1).waitFor({ state: 'attached' });
    return select.locator('option').evaluateAll((os) => os.map((o) => ({ value: o.value, label: o.textContent.trim() })));
  };
  // The default is offered as 0 (the setting that follows the engine's
  // default); the others as their bits.
  assert.deepEqual(
    await options(),
    choices.map((c) => ({ value: String(c.default ? 0 : c.bits), label: c.label })),
  );
  assert.match((await options())[0].label, /32-bit float/);
  assert.equal(await select.inputValue(), '0', 'a new user has the default selected');

  // A 16-bit choice is stored as 16.
  await select.selectOption({ label: choices.find((c) => c.bits === 16).label });
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();
  const saved = await api('/api/settings');
  assert.equal(saved.kvBits, 16);

  // A float32 stated as 32 (as the API accepts it) is the default's
  // choice, selected as 32 (what a save keeps), with no second float32
  // entry.
  await api('/api/settings', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...saved, kvBits: 32 }) });
  await page.reload();
  await waitFor(async () => (await select.inputValue()) === '32', { timeout: 10_000 });
  assert.deepEqual(
    await options(),
    choices.map((c) => ({ value: String(c.bits), label: c.label })),
  );
  assert.deepEqual(page.problems.pageErrors, []);
  await page.context().close();
  await server.stop();
});
