// The KV cache select in Settings lists what the server says the engine
// offers (Info.kvBitsChoices), not a list kept in the page: every choice,
// the 16-bit default first, and a chosen float32 is saved as 32.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, launchBrowser, openPage, start } from './harness.mjs';

let browser;

before(async () => {
  browser = await launchBrowser();
});
after(cleanup);

test('the KV cache select shows the engine\'s choices from the API', { timeout: 60_000 }, async () => {
  const server = await start();
  const info = await (await fetch(server.url + '/api/info')).json();
  const choices = info.kvBitsChoices;
  assert.ok(Array.isArray(choices) && choices.length > 0, JSON.stringify(info));
  // The engine's default is 16-bit, listed first and marked.
  assert.deepEqual(choices.filter((c) => c.default).map((c) => c.bits), [16]);
  assert.equal(choices[0].bits, 16);
  assert.ok(choices.some((c) => c.bits === 32), 'float32 is offered');

  const page = await openPage(browser, server.url + '/#/settings');
  const select = page.getByLabel('KV cache');
  await select.locator('option').nth(choices.length - 1).waitFor({ state: 'attached' });
  const shown = await select.locator('option').evaluateAll((os) => os.map((o) => ({ value: o.value, label: o.textContent.trim() })));
  // The default is offered as 0 (the setting that follows the engine's
  // default); the others as their bits.
  assert.deepEqual(
    shown,
    choices.map((c) => ({ value: String(c.default ? 0 : c.bits), label: c.label })),
  );
  assert.match(shown[0].label, /16-bit/);
  assert.equal(await select.inputValue(), '0', 'a new user has the default selected');

  // A float32 choice is stored as 32, so it stays float32.
  await select.selectOption({ label: choices.find((c) => c.bits === 32).label });
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();
  const saved = await (await fetch(server.url + '/api/settings')).json();
  assert.equal(saved.kvBits, 32);
});
