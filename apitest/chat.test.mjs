// The official openai client against a real hark serve: models, chat
// (plain, streamed, stop strings, logprobs, tools on the Qwen3 template,
// JSON output, draft_model),
// completions, errors in OpenAI's shape, and eight concurrent clients.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { cleanup, missing, models, start } from './harness.mjs';

const skip = missing() || false;
let server;
let client;

before(async () => {
  if (skip) return;
  server = await start();
  client = new OpenAI({ baseURL: server.url + '/v1', apiKey: 'unused-on-loopback', maxRetries: 0 });
});
after(cleanup);

const story = [{ role: 'user', content: 'Once upon a time' }];

test('models lists chat and speech models with org/repo aliases', { skip }, async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m);
  for (const m of Object.values(models)) {
    assert.ok(ids.some((x) => x.id === m.id), `missing ${m.id}`);
    const alias = ids.find((x) => x.id === m.repo);
    assert.equal(alias?.alias_of, m.id);
  }
  assert.equal(ids.find((x) => x.id === models.speech.id).kind, 'speech');
  const one = await client.models.retrieve(models.chat.repo);
  assert.equal(one.alias_of, models.chat.id);
});

test('chat: a plain reply, then the same request streamed gives the same text', { skip }, async () => {
  const req = { model: models.chat.id, messages: story, max_tokens: 24, seed: 7, temperature: 0.8 };
  const r = await client.chat.completions.create(req);
  const c = r.choices[0];
  assert.equal(c.message.role, 'assistant');
  assert.ok(c.message.content.length > 0);
  assert.equal(c.finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 24);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 24);

  const stream = await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const ch of stream) {
    chunks++;
    if (ch.usage) usage = ch.usage;
    for (const choice of ch.choices) {
      text += choice.delta.content || '';
      finish = choice.finish_reason || finish;
    }
  }
  assert.ok(chunks > 3, `only ${chunks} chunks`);
  assert.equal(text, c.message.content);
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 24);
  // The prompt was prefilled by the first request: the cache served it.
  assert.ok(usage.prompt_tokens_details.cached_tokens > 0);
});

test('chat: a stop string ends the reply before it', { skip }, async () => {
  const base = { model: models.chat.id, messages: story, max_tokens: 40, temperature: 0 };
  const full = (await client.chat.completions.create(base)).choices[0].message.content;
  const words = full.trim().split(/\s+/);
  assert.ok(words.length > 4, full);
  const stop = ' ' + words[3];
  const cut = full.slice(0, full.indexOf(stop));
  const r = await client.chat.completions.create({ ...base, stop: [stop, 'never-said-xyz'] });
  assert.equal(r.choices[0].message.content, cut);
  assert.equal(r.choices[0].finish_reason, 'stop');
  // Streamed, no part of the stop string shows either.
  let text = '';
  for await (const ch of await client.chat.completions.create({ ...base, stop, stream: true })) text += ch.choices[0]?.delta?.content || '';
  assert.equal(text, cut);
});

test('chat: logprobs and top_logprobs, greedy picks the top one', { skip }, async () => {
  const r = await client.chat.completions.create({ model: models.chat.id, messages: story, max_tokens: 8, temperature: 0, logprobs: true, top_logprobs: 3 });
  const lp = r.choices[0].logprobs.content;
  assert.equal(lp.length, r.usage.completion_tokens);
  assert.equal(lp.map((t) => t.token).join(''), r.choices[0].message.content);
  for (const t of lp) {
    assert.ok(t.logprob <= 0);
    assert.equal(t.top_logprobs.length, 3);
    assert.equal(t.top_logprobs[0].token, t.token);
    assert.equal(t.top_logprobs[0].logprob, t.logprob);
    assert.ok(t.top_logprobs[1].logprob <= t.top_logprobs[0].logprob);
    assert.deepEqual(t.bytes, [...Buffer.from(t.token)]);
  }
  // Streamed, the logprobs arrive with the text.
  let n = 0;
  for await (const ch of await client.chat.completions.create({ model: models.chat.id, messages: story, max_tokens: 8, temperature: 0, logprobs: true, stream: true })) {
    n += ch.choices[0]?.logprobs?.content?.length || 0;
  }
  assert.equal(n, 8);
});

test('chat: tools go through the Qwen3 template, tool results come back as role tool', { skip }, async () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const msgs = [{ role: 'user', content: 'Weather in Paris?' }];
  const plain = await client.chat.completions.create({ model: models.tools.id, messages: msgs, max_tokens: 4, temperature: 0 });
  const withTools = await client.chat.completions.create({ model: models.tools.id, messages: msgs, tools, max_tokens: 4, temperature: 0 });
  // The template wrote the tool's schema into the prompt.
  assert.ok(withTools.usage.prompt_tokens > plain.usage.prompt_tokens + 40, `${withTools.usage.prompt_tokens} vs ${plain.usage.prompt_tokens}`);
  const none = await client.chat.completions.create({ model: models.tools.id, messages: msgs, tools, tool_choice: 'none', max_tokens: 4, temperature: 0 });
  assert.equal(none.usage.prompt_tokens, plain.usage.prompt_tokens);
  // A full round: the assistant's call and the tool's result.
  const round = [
    ...msgs,
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c": 21}' },
  ];
  const after = await client.chat.completions.create({ model: models.tools.id, messages: round, tools, max_tokens: 4, temperature: 0 });
  assert.ok(after.usage.prompt_tokens > withTools.usage.prompt_tokens);
  assert.ok(['stop', 'length', 'tool_calls'].includes(after.choices[0].finish_reason));
  // A forced call needs constrained decoding: refused, not ignored.
  await assert.rejects(client.chat.completions.create({ model: models.tools.id, messages: msgs, tools, tool_choice: 'required' }), (e) => e.status === 400 && e.param === 'tool_choice');
});

test('chat: draft_model (Hark extension) drafts with a Library model and writes the plain greedy reply', { skip }, async () => {
  const req = { model: models.tools.id, messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 30, temperature: 0 };
  const plain = await client.chat.completions.create(req);
  for (const extra of [{ draft_model: models.draft.id }, { draft_model: models.draft.repo, draft_tokens: 3 }, { draft_model: 'prompt-lookup' }]) {
    const r = await client.chat.completions.create({ ...req, ...extra });
    assert.equal(r.choices[0].message.content, plain.choices[0].message.content, JSON.stringify(extra));
  }
  // Another tokenizer is refused by name.
  await assert.rejects(
    client.chat.completions.create({ ...req, draft_model: models.chat.id }),
    (e) => e.status === 400 && e.param === 'draft_model' && /cannot draft for .*another tokenizer/.test(e.message),
  );
});

test('two clients with the same system prompt prefill it once', { skip }, async () => {
  const system = { role: 'system', content: 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends. ' };
  const a = await client.chat.completions.create({ model: models.tools.id, messages: [system, { role: 'user', content: 'Tell me about the sun.' }], max_tokens: 2, temperature: 0 });
  const b = await client.chat.completions.create({ model: models.tools.id, messages: [system, { role: 'user', content: 'What is a cat?' }], max_tokens: 2, temperature: 0 });
  const alone = await client.chat.completions.create({ model: models.tools.id, messages: [system], max_tokens: 1, temperature: 0 });
  // The second reused at least the rendered system turn.
  assert.ok(b.usage.prompt_tokens_details.cached_tokens >= alone.usage.prompt_tokens - 8, `${JSON.stringify(b.usage)} vs ${alone.usage.prompt_tokens}`);
  assert.ok(a.usage.prompt_tokens > 30);
});

test('chat: response_format json_object and json_schema give valid JSON, even from a random-weight model', { skip }, async () => {
  for (const seed of [1, 2, 3]) {
    const obj = await client.chat.completions.create({ model: models.tools.id, messages: story, response_format: { type: 'json_object' }, max_tokens: 60, temperature: 0.8, seed });
    const v = JSON.parse(obj.choices[0].message.content);
    assert.equal(typeof v, 'object');
    assert.ok(v !== null && !Array.isArray(v));
  }
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 12 }, age: { type: 'integer', minimum: 0, maximum: 120 }, pet: { enum: ['cat', 'dog'] } },
    required: ['name', 'age', 'pet'],
    additionalProperties: false,
  };
  for (const seed of [4, 5, 6]) {
    const res = await client.chat.completions.create({
      model: models.tools.id, messages: story, max_tokens: 80, temperature: 0.8, seed,
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema } },
    });
    const p = JSON.parse(res.choices[0].message.content);
    assert.deepEqual(Object.keys(p).sort(), ['age', 'name', 'pet']);
    assert.ok(typeof p.name === 'string' && p.name.length <= 12, p.name);
    assert.ok(Number.isInteger(p.age) && p.age >= 0 && p.age <= 120, String(p.age));
    assert.ok(['cat', 'dog'].includes(p.pet));
  }
  // A keyword Hark cannot enforce is refused by name, never ignored.
  await assert.rejects(
    client.chat.completions.create({ model: models.tools.id, messages: story, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'string', format: 'email' } } } }),
    (e) => e.status === 400 && e.param === 'response_format' && /format/.test(e.message),
  );
});

test('errors: OpenAI shape and status codes', { skip }, async () => {
  await assert.rejects(client.chat.completions.create({ model: 'nobody/nothing', messages: story }), (e) => {
    assert.equal(e.status, 404);
    assert.equal(e.code, 'model_not_found');
    assert.equal(e.param, 'model');
    assert.equal(e.type, 'invalid_request_error');
    return true;
  });
  await assert.rejects(client.chat.completions.create({ model: models.chat.id, messages: story, response_format: { type: 'yaml' } }), (e) => e.status === 400 && e.param === 'response_format');
  await assert.rejects(client.chat.completions.create({ model: models.chat.id, messages: story, response_format: { type: 'json_schema' } }), (e) => e.status === 400 && e.param === 'response_format');
  await assert.rejects(client.chat.completions.create({ model: models.speech.id, messages: story }), (e) => e.status === 400 && /speech model/.test(e.message));
  await assert.rejects(client.chat.completions.create({ model: models.chat.id, messages: story, temperature: 5 }), (e) => e.status === 400 && e.param === 'temperature');
  await assert.rejects(client.embeddings.create({ model: models.chat.id, input: 'x' }), (e) => e.status === 400 && /embedding/.test(e.message));
  const r = await fetch(server.url + '/v1/no/such/path');
  assert.equal(r.status, 404);
  assert.match(r.headers.get('content-type'), /application\/json/);
  assert.equal((await r.json()).error.code, 'unknown_url');
});

test('completions: raw prompt, default of 16 tokens', { skip }, async () => {
  const r = await client.completions.create({ model: models.chat.repo, prompt: 'Once upon a time', temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.usage.completion_tokens, 16);
  assert.ok(r.choices[0].text.length > 0);
  let text = '';
  for await (const ch of await client.completions.create({ model: models.chat.repo, prompt: 'Once upon a time', temperature: 0, stream: true })) text += ch.choices[0]?.text || '';
  assert.equal(text, r.choices[0].text);
});

test('eight clients at once with fixed seeds each get what they get alone', { skip, timeout: 120_000 }, async () => {
  const req = (i) => ({ model: models.chat.id, messages: [{ role: 'user', content: `Once upon a time ${'there was '.repeat(i % 3)}` }], max_tokens: 20, seed: 100 + i, temperature: 0.9 });
  const alone = [];
  for (let i = 0; i < 8; i++) alone.push((await client.chat.completions.create(req(i))).choices[0].message.content);
  const together = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      i % 2
        ? client.chat.completions.create(req(i)).then((r) => r.choices[0].message.content)
        : client.chat.completions.create({ ...req(i), stream: true }).then(async (s) => {
            let t = '';
            for await (const ch of s) t += ch.choices[0]?.delta?.content || '';
            return t;
          }),
    ),
  );
  assert.deepEqual(together, alone);
  // They decoded together: the engine's batch (in /api/runner) had more
  // rows in one step than the two concurrent clients of the tests before.
  const loaded = await fetch(server.url + '/api/runner').then((r) => r.json());
  const m = loaded.find((x) => x.kind === 'chat' && x.dir.includes('stories260K'));
  assert.ok(m?.batch?.peakActive >= 3, `the eight clients never shared a batch: ${JSON.stringify(m?.batch)}`);
  console.log(`# eight clients: at most ${m.batch.peakActive} rows in one step`);
});

/** Tokens the chat model generated so far, once it is idle. */
async function generated() {
  for (let i = 0; i < 200; i++) {
    const loaded = await fetch(server.url + '/api/runner').then((r) => r.json());
    const m = loaded.find((x) => x.kind === 'chat' && x.dir.includes('stories260K'));
    if (!m) return 0; // not loaded yet: a fresh engine starts from 0
    if (!m.inUse && m.counters) return m.counters.GeneratedTokens;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('the chat model stayed busy');
}

test('a client that disconnects stops its generation and frees its turn', { skip, timeout: 60_000 }, async () => {
  // A reply that would run to the end of the 512-token context, dropped
  // after its first chunk: the generation stops there.
  const before = await generated();
  const ctl = new AbortController();
  const long = await client.chat.completions.create({ model: models.chat.id, messages: story, max_tokens: 480, stream: true }, { signal: ctl.signal });
  for await (const ch of long) {
    if (ch.choices[0]?.delta?.content) break;
  }
  ctl.abort();
  const r = await client.chat.completions.create({ model: models.chat.id, messages: story, max_tokens: 2 });
  assert.equal(r.usage.completion_tokens, 2);
  const spent = (await generated()) - before - 2;
  assert.ok(spent < 300, `the dropped reply went on for ${spent} tokens`);
  console.log(`# dropped reply: ${spent} tokens generated`);

  // One that gives up while waiting in line leaves it.
  const waiting = new AbortController();
  const busy = client.chat.completions.create({ model: models.chat.id, messages: story, max_tokens: 200 });
  const queued = client.chat.completions.create({ model: models.chat.id, messages: story, max_tokens: 200 }, { signal: waiting.signal });
  waiting.abort();
  await assert.rejects(queued);
  assert.equal((await busy).choices[0].finish_reason, 'length');
  const afterLine = await generated();
  assert.ok(afterLine - before - 2 - spent <= 200, 'the request that left the line was generated anyway');
});
