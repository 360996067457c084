// Tool calls in the chat, end to end with a real (random-weight) Qwen3 and
// the real Qwen3 chat template. The random model never chooses to call a
// tool by itself, so its reply is held to a JSON Schema that is a Llama 3
// style call ({"name", "arguments"}), which the API's parser reads as a
// call (the <tool_call> blocks Qwen3 writes go through the same parser; Go
// test TestChatToolCallAnswered covers them with a stored reply). The call
// shows as a card with its name and arguments, the user answers it with a
// result, the result is stored as a tool message, and the next reply reads
// it through the template (its prompt holds the call and the result).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { apiOf, artifact, assetsDir, cleanup, createChat, launchBrowser, openPage, start, tempDir, waitFor, waitForChatModel } from './harness.mjs';
import { modelFiles, writeRepo } from './fixtures.mjs';

const modelDir = join(assetsDir, 'families', 'qwen3-a', 'hf');
const templateFile = join(assetsDir, 'chat-templates', 'templates', 'qwen3.jinja');
const repo = 'test/qwen3-tools';
const commit = '2b3c4d5e6f708192a3b4c5d6e7f8091234567890';
const modelId = `hf:${repo}@${commit}`;
const ready = existsSync(modelDir) && existsSync(templateFile) && existsSync(join(assetsDir, 'families', 'qwen2-a', 'hf'));

after(cleanup);

// A second random model with Qwen3's vocabulary, to draft for the first.
const draftDir = join(assetsDir, 'families', 'qwen2-a', 'hf');
const draftId = `hf:test/qwen2-draft@${commit}`;

/** The random Qwen3 (with the Qwen3 chat template added) and the Qwen2 draft as a Hugging Face cache. */
function hfCache() {
  const cache = tempDir('hark-hf-');
  writeRepo(cache, repo, commit, modelFiles(modelDir, templateFile));
  writeRepo(cache, 'test/qwen2-draft', commit, modelFiles(draftDir));
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

const tools = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
];
// A Llama 3 style call: what the random model is made to write.
const callSchema = {
  type: 'object',
  properties: {
    name: { const: 'get_weather' },
    arguments: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 12 } },
      required: ['city'],
      additionalProperties: false,
    },
  },
  required: ['name', 'arguments'],
  additionalProperties: false,
};

test('chat tools: a call shows as a card, its result is sent back and read by the next reply', { timeout: 180_000 }, async (t) => {
  if (!ready) {
    t.skip(`shared assets not found (${modelDir}, ${templateFile}); set HARK_ASSETS to run`);
    return;
  }
  await waitForChatModel(api, modelId);
  const conv = await createChat(api, {
    model: modelId,
    sampling: { temperature: 0, maxTokens: 120, json: 'schema', jsonSchema: JSON.stringify(callSchema), tools: JSON.stringify(tools) },
  });
  const page = await openPage(browser, `${server.url}/#/chat/${conv.id}`, { timeout: 20_000 });
  await page.locator('[data-stream="up"]').waitFor();
  const box = page.getByLabel('Message');
  await box.fill('What is the weather in Paris?');
  await box.press('Enter');

  // The reply's call, as a card: name and arguments, nothing raw.
  const card = page.getByTestId('tool-call').first();
  await card.waitFor({ timeout: 60_000 });
  const msgs = await api(`/api/chats/${conv.id}/messages`);
  assert.equal(msgs.length, 2);
  const call = msgs[1].toolCalls?.[0];
  assert.ok(call, `reply read as a call: ${JSON.stringify(msgs[1])}`);
  assert.equal(call.name, 'get_weather');
  assert.equal(call.id, `call_${msgs[1].id}_0`);
  assert.equal(call.answered, false);
  const args = JSON.parse(call.arguments);
  assert.deepEqual(Object.keys(args), ['city']);
  assert.equal(await card.getByTestId('tool-name').innerText(), 'get_weather');
  assert.deepEqual(JSON.parse(await card.getByTestId('tool-arguments').innerText()), args);
  const reply = page.locator(`article[data-message-id="${msgs[1].id}"]`);
  assert.ok(!(await reply.locator('.md').allInnerTexts()).join('').includes('"arguments"'), 'the call is not shown as raw text');
  await page.screenshot({ path: artifact('hark-chat-tool-call.png') });

  // The user answers it: a tool message, then the next reply.
  const result = '{"temperature": 22, "sky": "sunny"}';
  await card.getByLabel('Result of get_weather').fill(result);
  await card.getByRole('button', { name: 'Send result' }).click();
  await page.getByTestId('tool-result').first().waitFor();
  assert.equal(await page.getByTestId('tool-result').first().innerText(), result);
  // (A reply being written is stored as a draft, finishReason "generating".)
  await waitFor(async () => ['stop', 'length'].includes((await api(`/api/chats/${conv.id}/messages`))[3]?.stats?.finishReason), { timeout: 60_000 });
  const after = await api(`/api/chats/${conv.id}/messages`);
  assert.equal(after[2].role, 'tool');
  assert.equal(after[2].toolCallId, call.id);
  assert.equal(after[2].toolName, 'get_weather');
  assert.equal(after[2].content, result);
  assert.equal(after[1].toolCalls[0].answered, true);
  assert.equal(after[3].role, 'assistant');
  // The next prompt holds the first one, the reply with its call, and the
  // result in <tool_response> markup: more than the reply alone adds.
  const grew = after[3].stats.promptTokens - msgs[1].stats.promptTokens - msgs[1].stats.tokens;
  assert.ok(grew >= 15, `the tool result reached the prompt: ${msgs[1].stats.promptTokens} → ${after[3].stats.promptTokens}`);
  // The answered card offers no second answer, and the API refuses one.
  await page.locator(`[data-call-id="${call.id}"] [data-testid="tool-answered"]`).waitFor();
  assert.equal(await page.locator(`[data-call-id="${call.id}"] textarea`).count(), 0);
  const again = await fetch(`${server.url}/api/chats/${conv.id}/tool-results`, {
    method: 'POST',
    headers: { 'X-Hark': '1', 'Content-Type': 'application/json' },
    body: JSON.stringify({ callId: call.id, content: 'again' }),
  });
  assert.equal(again.status, 409);
  assert.match(await again.text(), /already answered/);
  await page.screenshot({ path: artifact('hark-chat-tool-result.png') });
  assert.deepEqual(page.problems.pageErrors, []);
});

test('chat drafting: a Library model with the same vocabulary is offered and drafts the reply', { timeout: 120_000 }, async (t) => {
  if (!ready) {
    t.skip(`shared assets not found (${modelDir}, ${templateFile}); set HARK_ASSETS to run`);
    return;
  }
  await waitFor(async () => (await api('/api/chat/models')).filter((m) => m.id === modelId || m.id === draftId).length === 2, { timeout: 30_000 });
  const conv = await createChat(api, { model: modelId, sampling: { temperature: 0, maxTokens: 24 } });
  const page = await openPage(browser, `${server.url}/#/chat/${conv.id}`, { timeout: 20_000 });
  await page.locator('[data-stream="up"]').waitFor();
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const panel = page.getByRole('complementary', { name: 'Conversation settings' });
  const drafting = panel.getByLabel('Drafting');
  await waitFor(async () => (await drafting.locator('option').allInnerTexts()).includes('draft model: test/qwen2-draft'));
  assert.deepEqual(await drafting.locator('option').evaluateAll((os) => os.map((o) => o.value)), ['', 'prompt-lookup', draftId]);
  await drafting.selectOption(draftId);
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByText('Saved', { exact: true }).waitFor();
  assert.equal((await api(`/api/chats/${conv.id}`)).sampling.draft, draftId);
  const box = page.getByLabel('Message');
  await box.fill('Tell me a story.');
  await box.press('Enter');
  // (A reply being written is stored as a draft, finishReason "generating".)
  await waitFor(async () => ['stop', 'length'].includes((await api(`/api/chats/${conv.id}/messages`))[1]?.stats?.finishReason), { timeout: 60_000 });
  const reply = (await api(`/api/chats/${conv.id}/messages`))[1];
  assert.ok(reply.stats.drafted > 0, `drafted: ${JSON.stringify(reply.stats)}`);
  assert.deepEqual(page.problems.pageErrors, []);
});
