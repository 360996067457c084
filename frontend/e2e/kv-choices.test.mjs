// The KV cache select in Settings lists what the server says the engine
// offers (Info.kvBitsChoices), not a list kept in the page: every choice,
// the engine's default first, another chosen cache is saved as its bits,
// and the default's bits stated show as the default's choice, kept so.
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
  // One choice is the engine's default, listed first and marked; the
  // label says "default" on it alone. float32 and f16 are both offered.
  const defaults = choices.filter((c) => c.default);
  assert.equal(defaults.length, 1, JSON.stringify(choices));
  const def = defaults[0];
  assert.equal(choices[0].bits, def.bits);
  assert.deepEqual(choices.filter((c) => /default/.test(c.label)).map((c) => c.bits), [def.bits]);
  assert.ok(choices.some((c) => c.bits === 16), 'f16 is offered');
  assert.ok(choices.some((c) => c.bits === 32 && /32-bit float/.test(c.label)), 'float32 is offered');

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
  assert.match((await options())[0].label, /default/);
  assert.equal(await select.inputValue(), '0', 'a new user has the default selected');

  // Another choice is stored as its bits.
  const other = choices.find((c) => !c.default);
  await select.selectOption({ label: other.label });
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();
  const saved = await api('/api/settings');
  assert.equal(saved.kvBits, other.bits);

  // The default's bits stated (as the API accepts them) are the default's
  // choice, selected as those bits (what a save keeps), with no second
  // entry for them.
  await api('/api/settings', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...saved, kvBits: def.bits }) });
  await page.reload();
  await waitFor(async () => (await select.inputValue()) === String(def.bits), { timeout: 10_000 });
  assert.deepEqual(
    await options(),
    choices.map((c) => ({ value: String(c.bits), label: c.label })),
  );
  assert.deepEqual(page.problems.pageErrors, []);
  await page.context().close();
  await server.stop();
});
