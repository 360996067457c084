// Chat end to end with the real stories260K model: pick it from the
// Library, send a prompt, watch the reply stream in, stop it with Esc,
// reload and find the history, then settings, regenerate, export, rename
// and delete; an over-long message is refused and a long thread trimmed
// with a notice. Also checks the Markdown rendering of replies (marked,
// highlight.js, KaTeX, DOMPurify), which must never let a reply inject HTML.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { artifact, cleanup, launchBrowser, openPage, start, tempDir, waitFor } from './harness.mjs';

const frontendDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const assets = process.env.HARK_ASSETS || resolve(frontendDir, '../../shared/assets');
const modelDir = join(assets, 'models', 'stories260K', 'hf');
const repo = 'karpathy/stories260K';
const commit = '0f1e2d3c4b5a69788796a5b4c3d2e1f001234567';
const modelId = `hf:${repo}@${commit}`;

after(cleanup);

/** Lays the model out as a Hugging Face cache: blobs, a snapshot of links, refs/main. */
function hfCache() {
  const cache = tempDir('hark-hf-');
  const repoDir = join(cache, 'models--karpathy--stories260K');
  const snap = join(repoDir, 'snapshots', commit);
  for (const d of [join(repoDir, 'blobs'), join(repoDir, 'refs'), snap]) mkdirSync(d, { recursive: true });
  for (const name of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) {
    const data = readFileSync(join(modelDir, name));
    const blob = createHash('sha256').update(data).digest('hex');
    writeFileSync(join(repoDir, 'blobs', blob), data);
    symlinkSync(`../../blobs/${blob}`, join(snap, name));
  }
  writeFileSync(join(repoDir, 'refs', 'main'), commit);
  return cache;
}

/**
 * Compiles the chat page's pure TS modules so node can import them. They go
 * under node_modules/.cache so their imports of marked, DOMPurify and the
 * rest resolve to the page's own dependencies; DOMPurify gets a jsdom window.
 */
async function importChatModules() {
  const { JSDOM } = await import('jsdom');
  globalThis.window ??= new JSDOM('').window;
  const out = join(frontendDir, 'node_modules', '.cache', `hark-md-${process.pid}`);
  mkdirSync(out, { recursive: true });
  for (const name of ['escape', 'markdown', 'think']) {
    const src = readFileSync(join(frontendDir, 'src/lib/chat', `${name}.ts`), 'utf8');
    const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    writeFileSync(join(out, `${name}.mjs`), js.replace(/from '\.\/(\w+)'/g, "from './$1.mjs'"));
  }
  const load = (n) => import(pathToFileURL(join(out, `${n}.mjs`)).href);
  return { ...(await load('markdown')), ...(await load('think')) };
}

test('replies render as GitHub Markdown, and never inject HTML', async () => {
  const { renderMarkdown, splitThinking } = await importChatModules();
  const dom = (html) => {
    const d = globalThis.window.document.createElement('div');
    d.innerHTML = html;
    return d;
  };
  // Raw HTML is shown as text; no script, handler, javascript: link or image survives.
  const evil = renderMarkdown('<img src=x onerror=alert(1)> **<b>hi</b>** [x](javascript:alert(1)) `<i>` ![t](http://evil.test/t.png)\n\n<script>alert(1)</script>');
  assert.doesNotMatch(evil, /<img|<b>|<i>|<script|javascript:/);
  assert.equal(dom(evil).querySelectorAll('[onerror], script, img, b, i').length, 0);
  assert.match(dom(evil).textContent, /<img src=x onerror=alert\(1\)>/);
  assert.match(evil, /<strong>&lt;b&gt;hi&lt;\/b&gt;<\/strong>/);
  assert.match(evil, /<code>&lt;i&gt;<\/code>/);
  assert.equal(dom(evil).querySelector('a[href="http://evil.test/t.png"]')?.textContent, 't', 'an image is a link, not a fetch');

  // The basics, as a reader sees them.
  const basic = dom(renderMarkdown('# Title\n\nSome *em* and _em_, **bold**, ~~gone~~.\nNext line'));
  assert.equal(basic.querySelector('h1').textContent, 'Title');
  assert.deepEqual([...basic.querySelectorAll('em')].map((e) => e.textContent), ['em', 'em']);
  assert.equal(basic.querySelector('del').textContent, 'gone');
  assert.ok(basic.querySelector('p br'), 'a single newline is a line break');
  const link = dom(renderMarkdown('[site](https://example.com/a?b=1&c="2")')).querySelector('a');
  assert.equal(link.getAttribute('href'), 'https://example.com/a?b=1&c="2"', 'quotes stay inside the attribute');
  assert.equal(link.getAttribute('target'), '_blank');
  assert.equal(link.getAttribute('rel'), 'noopener noreferrer');

  // What the hand-written renderer could not do: nested and task lists, tables, footnotes, math.
  const nested = dom(renderMarkdown('- a\n  - a1\n    - a1x\n- b\n\n- [x] done\n- [ ] todo'));
  assert.ok(nested.querySelector('ul > li > ul > li > ul > li'), 'three levels of list');
  assert.deepEqual([...nested.querySelectorAll('input[type=checkbox]')].map((c) => c.checked), [true, false]);
  const table = dom(renderMarkdown('| a | b |\n|---|--:|\n| 1 | 2 |\n| 3 | 4 |'));
  assert.deepEqual([...table.querySelectorAll('th')].map((c) => c.textContent), ['a', 'b']);
  assert.deepEqual([...table.querySelectorAll('tbody td')].map((c) => c.textContent), ['1', '2', '3', '4']);
  const foot = dom(renderMarkdown('Claim.[^1]\n\n[^1]: The source.'));
  assert.ok(foot.querySelector('sup a[href^="#"]'), 'a footnote reference');
  assert.match(foot.textContent, /The source\./);
  const math = dom(renderMarkdown('Inline $e^{i\\pi}+1=0$ and\n\n$$\\int_0^1 x\\,dx$$'));
  assert.ok(math.querySelector('.katex math'), 'KaTeX renders MathML');
  assert.ok(math.querySelector('.katex-display'), 'display math');

  // Code: highlighted, literal, and an unclosed fence (mid-stream) is still code.
  const code = dom(renderMarkdown('```go\n// hi <there>\nreturn "a*b*" + 1\n```\nafter'));
  assert.equal(code.querySelector('pre code').textContent, '// hi <there>\nreturn "a*b*" + 1\n');
  assert.ok(code.querySelector('pre code .hljs-keyword'), 'highlighted');
  assert.equal(code.querySelector('p').textContent, 'after');
  const open = dom(renderMarkdown('```python\ndef f(): # c'));
  assert.equal(open.querySelector('pre code').textContent.trim(), 'def f(): # c');
  assert.equal(dom(renderMarkdown('**half')).textContent.trim(), '**half');

  assert.deepEqual(splitThinking('<think>\nhmm\n</think>\n\nAnswer'), [
    { kind: 'think', text: 'hmm' },
    { kind: 'text', text: 'Answer' },
  ]);
  assert.deepEqual(splitThinking('<think>still going'), [{ kind: 'think', text: 'still going', open: true }]);
  assert.deepEqual(splitThinking('plain'), [{ kind: 'text', text: 'plain' }]);
});

let server;
let browser;

before(async () => {
  if (!existsSync(modelDir)) return;
  server = await start({ env: { HF_HUB_CACHE: hfCache() } });
  browser = await launchBrowser();
});

// X-Hark: state changes without an Origin need it (or a JSON content type).
const api = async (path, init) => {
  const res = await fetch(server.url + path, { ...init, headers: { 'X-Hark': '1', ...init?.headers } });
  assert.ok(res.ok, `${path}: ${res.status} ${await res.clone().text()}`);
  return res.status === 204 ? undefined : res.json();
};

test('chat with stories260K: stream, stop, reload, settings, regenerate, export, rename, delete, overflow, trimming', { timeout: 180_000 }, async (t) => {
  if (!existsSync(modelDir)) {
    t.skip(`shared assets not found (${modelDir}); set HARK_ASSETS to run the chat e2e test`);
    return;
  }
  const page = await openPage(browser, server.url + '/#/chat', { timeout: 20_000 });
  await page.locator('[data-stream="up"]').waitFor();

  // The library's first scan lists the model; pick it.
  const picker = page.getByLabel('Chat model');
  await waitFor(async () => (await picker.locator('option').allTextContents()).some((o) => o.includes(repo)), { timeout: 30_000 });
  await picker.selectOption(modelId);
  await page.getByText('Completion model', { exact: true }).waitFor();
  await waitFor(async () => (await api('/api/settings')).defaultChatModel === modelId);

  // Sample the streaming reply's length every few ms to see it grow.
  await page.evaluate(() => {
    window.__lengths = [];
    setInterval(() => {
      const el = document.querySelector('[data-streaming="true"] .md');
      if (el) window.__lengths.push(el.textContent.length);
    }, 10);
  });
  const box = page.getByLabel('Message');
  await box.fill('Once upon a time');
  await box.press('Enter');
  await waitFor(() => page.evaluate(() => new Set(window.__lengths.filter((n) => n > 0)).size >= 2), { timeout: 30_000, interval: 10 });
  await box.press('Escape');
  const reply = page.locator('article[data-role="assistant"][data-message-id]');
  await reply.waitFor({ timeout: 30_000 });
  await reply.getByText('Stopped', { exact: true }).waitFor();
  const lengths = await page.evaluate(() => window.__lengths.filter((n) => n > 0));
  assert.ok(lengths.length >= 2 && lengths.at(-1) > lengths[0], `the reply grew while streaming: ${lengths}`);
  await page.screenshot({ path: artifact('hark-chat-stopped.png') });

  const [conv] = await api('/api/chats');
  assert.equal(conv.title, 'Once upon a time');
  assert.equal(conv.model, modelId);
  const msgs = await api(`/api/chats/${conv.id}/messages`);
  assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant']);
  assert.equal(msgs[1].stats.stopped, true);
  assert.ok(msgs[1].stats.tokens > 0 && msgs[1].stats.tokens < 500, `stopped early: ${msgs[1].stats.tokens} tokens`);
  const stored = msgs[1].content;

  // A reload shows the same thread (the URL names the conversation).
  await page.reload();
  assert.equal(await page.evaluate(() => location.hash), `#/chat/${conv.id}`);
  await page.locator('article[data-role="user"]').getByText('Once upon a time').waitFor();
  const reloaded = page.locator('article[data-role="assistant"][data-message-id]');
  await reloaded.getByText('Stopped', { exact: true }).waitFor();
  assert.equal((await reloaded.locator('.md').innerText()).replace(/\s+/g, ' ').trim(), stored.replace(/\s+/g, ' ').trim());
  assert.match(await reloaded.getByTestId('stats').textContent(), /\d+ tokens? · [\d.]+ tok\/s · first token/);
  await page.getByRole('navigation', { name: 'Conversations' }).getByText('Once upon a time').waitFor();

  // Dark mode follows the system like the rest of the app.
  const dark = await openPage(browser, `${server.url}/#/chat/${conv.id}`, { colorScheme: 'dark' });
  await dark.locator('article[data-role="assistant"][data-message-id]').waitFor();
  const bubble = await dark.locator('article[data-role="user"] .plain').evaluate((el) => getComputedStyle(el).color);
  assert.equal(bubble, 'rgb(245, 245, 247)', 'light text on the dark theme');
  await dark.screenshot({ path: artifact('hark-chat-dark.png') });
  assert.deepEqual(dark.problems.pageErrors, []);
  await dark.context().close();

  // Per-conversation settings: a fixed length, an 8-bit KV cache in
  // groups of 32 (stories260K's heads are 8 wide, 4 side by side) and
  // prompt-lookup drafting, then regenerate.
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const panel = page.getByRole('complementary', { name: 'Conversation settings' });
  await panel.getByLabel('Max tokens').fill('12');
  await panel.getByLabel('Temperature').fill('0');
  await panel.getByLabel('KV cache').selectOption('8');
  await panel.getByLabel('KV group').selectOption('32');
  await panel.getByLabel('Drafting').selectOption('prompt-lookup');
  await panel.getByLabel('System prompt').fill('Lily and Tom.');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByText('Saved', { exact: true }).waitFor();
  await page.screenshot({ path: artifact('hark-chat-settings.png') });
  const saved = await api(`/api/chats/${conv.id}`);
  assert.deepEqual(saved.sampling, { temperature: 0, maxTokens: 12, kvBits: 8, kvGroup: 32, draft: 'prompt-lookup' });
  assert.equal(saved.systemPrompt, 'Lily and Tom.');
  await page.getByRole('button', { name: 'Regenerate' }).click();
  await page.getByTestId('stats').filter({ hasText: /^\s*12 tokens/ }).waitFor({ timeout: 30_000 });
  const regen = await api(`/api/chats/${conv.id}/messages`);
  assert.equal(regen.length, 2);
  assert.equal(regen[1].stats.tokens, 12);
  assert.equal(regen[1].stats.kvBits, 8);
  assert.match(await page.getByTestId('stats').last().textContent(), /8-bit KV cache/);
  assert.notEqual(regen[1].stats.stopped, true);

  // Export downloads the thread as Markdown.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export' }).click()]);
  assert.equal(download.suggestedFilename(), 'Once upon a time.md');
  const md = readFileSync(await download.path(), 'utf8');
  assert.match(md, /^# Once upon a time\n/);
  assert.ok(md.includes('> Lily and Tom.') && md.includes(regen[1].content.trimEnd()), md);

  // Rename inline, then delete with confirmation.
  const list = page.getByRole('navigation', { name: 'Conversations' });
  await list.getByRole('button', { name: 'Rename' }).click();
  await list.getByLabel('Conversation title').fill('Story time');
  await list.getByLabel('Conversation title').press('Enter');
  await list.getByText('Story time').waitFor();
  assert.equal((await api(`/api/chats/${conv.id}`)).title, 'Story time');
  await list.getByRole('button', { name: 'Delete…' }).click();
  await list.getByRole('group', { name: 'Confirm delete' }).getByRole('button', { name: 'Delete' }).click();
  await list.getByText('No conversations yet.').waitFor();
  assert.deepEqual(await api('/api/chats'), []);

  // A message longer than the model's 512-token context is refused with a
  // clear error, and the page stays usable.
  await box.fill('The cat sat on the mat. '.repeat(120));
  await box.press('Enter');
  await page.getByRole('alert').filter({ hasText: /too long for this model.*512/ }).waitFor({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Retry' }).waitFor();
  assert.equal(await box.isEnabled(), true);

  // A thread that outgrows the context loses its oldest turns, visibly.
  await page.getByRole('button', { name: 'New chat' }).click();
  await page.waitForFunction(() => /^#\/chat\/\d+$/.test(location.hash));
  const fresh = Number((await page.evaluate(() => location.hash)).split('/').pop());
  await api(`/api/chats/${fresh}`, { method: 'PATCH', body: JSON.stringify({ sampling: { temperature: 0, maxTokens: 8 } }) });
  const notice = page.getByRole('status').filter({ hasText: /oldest \d+ messages were left out/ });
  for (let turn = 1; turn <= 8 && !(await notice.count()); turn++) {
    await box.fill(`Turn ${turn}. ` + 'The cat sat on the mat and the dog ran to the park. '.repeat(8));
    await box.press('Enter');
    await page.locator(`article[data-role="assistant"][data-message-id]`).nth(turn - 1).waitFor({ timeout: 30_000 });
  }
  await notice.waitFor();
  await page.locator('article[data-role="assistant"]').last().getByText(/^Trimmed \d+$/).waitFor();

  assert.deepEqual(page.problems.pageErrors, [], 'no uncaught errors');
  assert.deepEqual(page.problems.foreignRequests, [], 'nothing loaded from outside the app');
  await page.context().close();
});

test('a chat about a transcript summarised in parts says so on its card', { timeout: 60_000 }, async (t) => {
  if (!existsSync(modelDir)) {
    t.skip(`shared assets not found (${modelDir}); set HARK_ASSETS to run the chat e2e test`);
    return;
  }
  // The prompt AskAboutTranscript writes for a transcript longer than the
  // context (app/transcribe_ask.go); the summarising itself is tested in Go.
  const note = "This transcript is longer than the model's context: it was summarised in 7 parts first.";
  const post = (body) => api('/api/chats', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const long = await post({ title: 'About long.wav', model: modelId, transcriptId: 424242, systemPrompt: `The user wants to talk about "long.wav". ${note} Answer from the summary below.\n\nPart 1: the launch moves.` });
  const short = await post({ title: 'About short.wav', model: modelId, transcriptId: 424243, systemPrompt: 'The user wants to talk about "short.wav".\n\nTranscript:\n[0:00] Hello.' });

  const page = await openPage(browser, `${server.url}/#/chat/${long.id}`, { timeout: 20_000 });
  const card = page.getByTestId('transcript-card');
  await card.getByRole('note').filter({ hasText: note }).waitFor();
  await page.getByText('About short.wav', { exact: true }).first().click();
  // No note for a transcript that fitted: the card stays, its note goes.
  await card.getByRole('note').waitFor({ state: 'detached' });
  await card.waitFor();
  await page.screenshot({ path: artifact('hark-transcript-card.png') });
  assert.deepEqual(page.problems.pageErrors, [], 'no uncaught errors');
  await page.context().close();
});

test('a reply cut off by kill -9 is kept and shown as interrupted', { timeout: 120_000 }, async (t) => {
  if (!existsSync(modelDir)) {
    t.skip(`shared assets not found (${modelDir}); set HARK_ASSETS to run the chat e2e test`);
    return;
  }
  const home = tempDir('hark-home-');
  const cache = hfCache();
  const first = await start({ home, env: { HF_HUB_CACHE: cache } });
  const call = async (srv, path, body) => {
    const init = body === undefined ? {} : { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } };
    const res = await fetch(srv.url + path, { ...init, headers: { 'X-Hark': '1', ...init.headers } });
    assert.ok(res.ok, `${path}: ${res.status} ${await res.clone().text()}`);
    return res.json();
  };
  await waitFor(async () => (await call(first, '/api/chat/models')).some((m) => m.id === modelId), { timeout: 30_000 });
  const conv = await call(first, '/api/chats', { model: modelId, sampling: { maxTokens: 400, temperature: 1 } });
  await call(first, `/api/chats/${conv.id}/messages`, { text: 'Once upon a time' });
  // Kill the server the moment the reply has a few words: its first
  // draft is stored by then (at the first token).
  let seen = '';
  const deadline = Date.now() + 30_000;
  while (seen.length < 8) {
    const st = await call(first, '/api/chat/status');
    if (!st.generating && seen) break;
    seen = st.text ?? '';
    assert.ok(Date.now() < deadline, 'no reply streamed');
  }
  const exited = new Promise((r) => first.proc.on('exit', r));
  first.proc.kill('SIGKILL');
  await exited;

  const second = await start({ home, env: { HF_HUB_CACHE: cache } });
  try {
    const msgs = await call(second, `/api/chats/${conv.id}/messages`);
    assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant'], 'the thread survived');
    assert.equal(msgs[1].stats.finishReason, 'interrupted', `the reply was cut off (${seen.length} bytes seen before the kill)`);
    assert.ok(msgs[1].content.length > 0 && (seen.startsWith(msgs[1].content) || msgs[1].content.startsWith(seen)), 'the kept text is what streamed');

    const page = await openPage(browser, `${second.url}/#/chat/${conv.id}`, { timeout: 20_000 });
    const reply = page.locator('article[data-role="assistant"][data-message-id]');
    await reply.getByTestId('interrupted').waitFor();
    assert.equal(await reply.getByTestId('interrupted').textContent(), 'Interrupted');
    assert.equal((await reply.locator('.md').innerText()).replace(/\s+/g, ' ').trim(), msgs[1].content.replace(/\s+/g, ' ').trim());
    await page.screenshot({ path: artifact('hark-chat-interrupted.png') });
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await second.stop();
  }
});
