// The chat controls users expect, end to end with a real (random-weight)
// Qwen3 and the real Qwen3 chat template: JSON output against a schema,
// token probabilities on hover, live tok/s while streaming, stop strings
// that are never shown, and the thinking switch and tools reaching the
// template (the prompt grows).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { apiOf, artifact, assetsDir, cleanup, createChat, launchBrowser, openPage, start, tempDir, waitFor, waitForChatModel } from './harness.mjs';
import { modelFiles, writeRepo } from './fixtures.mjs';

const modelDir = join(assetsDir, 'families', 'qwen3-a', 'hf');
const templateFile = join(assetsDir, 'chat-templates', 'templates', 'qwen3.jinja');
const repo = 'test/qwen3-random';
const commit = '1a2b3c4d5e6f708192a3b4c5d6e7f80912345678';
const modelId = `hf:${repo}@${commit}`;
const ready = existsSync(modelDir) && existsSync(templateFile);

after(cleanup);

/** The random Qwen3 as a Hugging Face cache, with the Qwen3 chat template added. */
function hfCache() {
  const cache = tempDir('hark-hf-');
  writeRepo(cache, repo, commit, modelFiles(modelDir, templateFile));
  return cache;
}

let server;
let browser;

before(async () => {
  if (!ready) return;
  server = await start({ env: { HF_HUB_CACHE: hfCache() } });
  browser = await launchBrowser();
});

const api = (path, init) => apiOf(server)(path, init);

/** Waits for the reply that replaces the one made at prev (ids are reused). */
async function newReply(prev) {
  await waitFor(async () => {
    const m = (await api(`/api/chats/${convId}/messages`))[1];
    return m !== undefined && m.createdAt !== prev;
  }, { timeout: 30_000 });
}
let convId = 0;

const schema = {
  type: 'object',
  properties: {
    story: { type: 'string', minLength: 400 },
    mood: { enum: ['calm', 'wild'] },
    n: { type: 'integer', minimum: 1, maximum: 9 },
  },
  required: ['story', 'mood', 'n'],
  additionalProperties: false,
};

test('chat controls: JSON output, token probabilities, live tok/s, stop strings, thinking, tools', { timeout: 240_000 }, async (t) => {
  if (!ready) {
    t.skip(`shared assets not found (${modelDir}, ${templateFile}); set HARK_ASSETS to run`);
    return;
  }
  // The library's first scan lists the model; a conversation with a short
  // first reply (the random model would otherwise write to the end of its
  // context) is opened by its URL.
  await waitForChatModel(api, modelId);
  const conv = await createChat(api, { model: modelId, sampling: { temperature: 0, maxTokens: 16 } });
  convId = conv.id;
  const page = await openPage(browser, `${server.url}/#/chat/${conv.id}`, { timeout: 20_000 });
  await page.locator('[data-stream="up"]').waitFor();
  const box = page.getByLabel('Message');
  await box.fill('Tell me a story as JSON.');
  await box.press('Enter');
  const replies = page.locator('article[data-role="assistant"][data-message-id]');
  await replies.first().waitFor({ timeout: 30_000 });

  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const panel = page.getByRole('complementary', { name: 'Conversation settings' });
  await panel.getByLabel('Temperature').fill('1');
  await panel.getByLabel('Seed').fill('11');
  await panel.getByLabel('Max tokens').fill('700');
  await panel.getByLabel('JSON output').selectOption('schema');
  await panel.getByRole('textbox', { name: 'JSON Schema' }).fill(JSON.stringify(schema));
  await panel.getByLabel('Token probabilities').fill('3');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByText('Saved', { exact: true }).waitFor();
  const saved = await api(`/api/chats/${conv.id}`);
  assert.equal(saved.sampling.json, 'schema');
  assert.equal(saved.sampling.logprobs, 3);
  assert.deepEqual(JSON.parse(saved.sampling.jsonSchema), schema);

  // Watch the live speed while the reply streams.
  // (A MutationObserver sees every update, however briefly it shows:
  // the tiny model writes the whole reply in a fraction of a second.)
  await page.evaluate(() => {
    window.__live = [];
    new MutationObserver(() => {
      const el = document.querySelector('[data-testid="live-stats"]');
      if (el) window.__live.push(el.textContent);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.getByRole('button', { name: 'Regenerate' }).click();
  await waitFor(async () => (await api(`/api/chats/${conv.id}/messages`))[1]?.stats?.logprobs?.length > 0, { timeout: 60_000 });
  const msgs = await api(`/api/chats/${conv.id}/messages`);
  const doc = JSON.parse(msgs[1].content);
  assert.ok(doc.story.length >= 400 && ['calm', 'wild'].includes(doc.mood) && doc.n >= 1 && doc.n <= 9, msgs[1].content);
  assert.deepEqual(Object.keys(doc).sort(), ['mood', 'n', 'story']);
  const live = await page.evaluate(() => window.__live);
  assert.ok(live.some((s) => /^\d+ tokens · [\d.]+ tok\/s$/.test(s.trim())), `live stats seen while streaming: ${live.slice(0, 5)}`);

  // Token probabilities: coloured tokens with the alternatives on hover.
  const reply = replies.last();
  await reply.getByText('Token probabilities').click();
  const toks = reply.getByTestId('tokens').locator('.tok');
  assert.equal(await toks.count(), msgs[1].stats.tokens);
  const title = await toks.nth(5).getAttribute('title');
  assert.match(title, /^".*" \d+\.\d% · alternatives: /);
  const classes = await toks.evaluateAll((els) => [...new Set(els.map((e) => e.classList[1]))]);
  assert.ok(classes.every((c) => ['sure', 'likely', 'unsure', 'guess'].includes(c)), `${classes}`);
  await page.screenshot({ path: artifact('hark-chat-controls-logprobs.png') });

  // Stop strings: a greedy reply, then the same with a piece of it as a
  // stop string ends before it, and the piece is never shown.
  await panel.getByLabel('JSON output').selectOption('');
  await panel.getByLabel('Token probabilities').fill('');
  await panel.getByLabel('Temperature').fill('0');
  await panel.getByLabel('Max tokens').fill('30');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByText('Saved', { exact: true }).waitFor();
  const before = (await api(`/api/chats/${conv.id}/messages`))[1].createdAt;
  await page.getByRole('button', { name: 'Regenerate' }).click();
  await newReply(before);
  const full = (await api(`/api/chats/${conv.id}/messages`))[1];
  const stop = full.content.slice(8, 14);
  assert.equal(stop.length, 6, `reply long enough to cut: ${JSON.stringify(full.content)}`);
  await panel.getByLabel('Stop strings').fill(`${stop}\nnever-written`);
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByText('Saved', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Regenerate' }).click();
  await newReply(full.createdAt);
  const cut = (await api(`/api/chats/${conv.id}/messages`))[1];
  assert.equal(cut.content, full.content.slice(0, full.content.indexOf(stop)));
  // (Message ids are reused when a regenerate replaces the last row, so
  // the shown reply is matched by its text.)
  await waitFor(async () => (await replies.last().locator('.md').innerText()).trim() === cut.content.trim());
  assert.ok(!(await replies.last().innerText()).includes(stop), 'the stop string is not shown');

  // Thinking off and tools: the template renders both, so the prompt grows.
  await panel.getByLabel('Stop strings').fill('');
  await panel.getByLabel('Thinking').selectOption('off');
  await panel.getByLabel('Tools (JSON list)').fill(JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]));
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByText('Saved', { exact: true }).waitFor();
  const s2 = (await api(`/api/chats/${conv.id}`)).sampling;
  assert.equal(s2.think, false);
  assert.match(s2.tools, /get_weather/);
  await page.getByRole('button', { name: 'Regenerate' }).click();
  await newReply(cut.createdAt);
  const withTools = (await api(`/api/chats/${conv.id}/messages`))[1];
  assert.ok(withTools.stats.promptTokens > cut.stats.promptTokens + 20, `prompt ${cut.stats.promptTokens} → ${withTools.stats.promptTokens}`);

  // A schema with an unsupported keyword is refused by name when saved.
  await panel.getByLabel('JSON output').selectOption('schema');
  await panel.getByRole('textbox', { name: 'JSON Schema' }).fill('{"type":"string","format":"email"}');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByText('Not saved', { exact: true }).waitFor();
  await page.getByText(/unsupported keyword format/).first().waitFor();
  assert.deepEqual(page.problems.pageErrors, []);
});
