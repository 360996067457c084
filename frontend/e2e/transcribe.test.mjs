// Transcribe end to end in Chromium: a real WAV dropped on the page is
// uploaded, transcribed by the tiny random Whisper (gibberish text, real
// pipeline), played from a segment and exported as SRT. The model comes
// from the shared assets through a Settings model folder.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifact, cleanup, launchBrowser, openPage, start, startWithModels, tempDir, waitFor } from './harness.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const assets = process.env.HARK_ASSETS || resolve(repo, '../shared/assets');
const jfk = join(assets, 'audio', 'jfk.wav');
const modelSrc = join(assets, 'whisper', 'golden', 'model');
const chatSrc = join(assets, 'families', 'qwen3-a', 'hf');
const skip =
  existsSync(jfk) && existsSync(join(modelSrc, 'config.json')) && existsSync(join(chatSrc, 'config.json'))
    ? false
    : `shared assets not found at ${assets} (need audio/jfk.wav, whisper/golden/model and families/qwen3-a; set HARK_ASSETS)`;

let server;
let browser;

before(async () => {
  if (skip) return;
  // Model folders on the Settings roots (the library finds a plain folder
  // holding config.json): the tiny Whisper, and a chat model to ask about
  // transcripts, the random-weight qwen3 golden with a small chat template
  // so it chats rather than completes.
  const chat = tempDir('hark-chat-');
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json']) copyFileSync(join(chatSrc, f), join(chat, f));
  const tc = JSON.parse(readFileSync(join(chatSrc, 'tokenizer_config.json'), 'utf8'));
  tc.chat_template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}";
  writeFileSync(join(chat, 'tokenizer_config.json'), JSON.stringify(tc));
  ({ server } = await startWithModels({ 'whisper-tiny-random': modelSrc, 'tiny-chat': chat }));
  browser = await launchBrowser();
});
after(cleanup);

/** Records every state the entry named `name` shows, and whether a progress bar appeared. */
function watchEntry(name) {
  const seen = { states: [], progress: false, details: [] };
  window.__seen = seen;
  const look = () => {
    const li = document.querySelector(`li[data-name="${name}"]`) || document.querySelector('li[data-state="uploading"]');
    if (!li) return;
    const st = li.dataset.state;
    if (seen.states[seen.states.length - 1] !== st) seen.states.push(st);
    if (li.querySelector('progress')) seen.progress = true;
    const d = li.querySelector('.detail')?.textContent?.trim();
    if (d && seen.details[seen.details.length - 1] !== d) seen.details.push(d);
  };
  new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
}

test('drop a recording, see progress, play a segment, export SRT, ask about it', { skip, timeout: 300_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/transcribe');
  const model = page.getByLabel('Model', { exact: true });
  await waitFor(async () => (await model.inputValue()).endsWith('whisper-tiny-random'), { timeout: 10_000 });
  // Picking a model remembers it as the default speech model.
  await model.selectOption({ label: 'whisper-tiny-random' });
  await waitFor(async () => {
    const s = await (await fetch(server.url + '/api/settings')).json();
    return s.defaultSpeechModel.endsWith('whisper-tiny-random');
  });
  // English and no temperature fallback: the random model would otherwise
  // retry every window at six temperatures.
  await page.getByLabel('Language', { exact: true }).selectOption('en');
  await page.getByLabel('Retry unclear passes').uncheck();

  await page.evaluate(watchEntry, 'jfk.wav');
  const b64 = readFileSync(jfk).toString('base64');
  const dt = await page.evaluateHandle((data) => {
    const bin = atob(data);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const d = new DataTransfer();
    d.items.add(new File([bytes], 'jfk.wav', { type: 'audio/wav' }));
    return d;
  }, b64);
  // Dropped on the options bar, not the drop zone: the whole page accepts files.
  const target = page.getByRole('group', { name: 'Transcription options' });
  await target.dispatchEvent('dragenter', { dataTransfer: dt });
  await target.dispatchEvent('dragover', { dataTransfer: dt });
  await target.dispatchEvent('drop', { dataTransfer: dt });

  const entry = page.locator('li[data-name="jfk.wav"]');
  await entry.waitFor();
  await page.waitForFunction(() => window.__seen.progress && window.__seen.states.includes('running'), null, {
    timeout: 60_000,
  });
  await page.screenshot({ path: artifact('hark-transcribe-progress.png') });
  await page.locator('li[data-name="jfk.wav"][data-state="done"]').waitFor({ timeout: 240_000 });
  const seen = await page.evaluate(() => window.__seen);
  assert.ok(seen.details.some((d) => /Reading audio|Loading model|Transcribing/.test(d)), `progress text: ${seen.details}`);
  assert.match(await entry.locator('.detail').textContent(), /Done · 0:11/);

  // The new transcript opens by itself.
  await page.getByRole('heading', { name: 'jfk.wav' }).waitFor();
  const segments = page.getByRole('list', { name: 'Segments' }).getByRole('button');
  await segments.first().waitFor();
  assert.ok((await segments.count()) >= 1);

  // A segment plays the served audio from its start.
  const second = segments.nth(Math.min(1, (await segments.count()) - 1));
  const startText = await second.locator('.time').textContent();
  const [m, s] = startText.split(':').map(Number);
  await second.focus();
  await page.keyboard.press('Enter');
  await page
    .waitForFunction(
      (at) => {
        const a = document.querySelector('audio');
        // The random model times some segments past the end of the audio;
        // the player then stops at the end.
        return a && a.src.includes('/api/transcripts/') && a.currentTime >= Math.min(at, a.duration) - 0.5;
      },
      m * 60 + s,
    )
    .catch(async (err) => {
      const st = await page.evaluate(() => {
        const a = document.querySelector('audio');
        return { src: a?.src, t: a?.currentTime, ready: a?.readyState, err: a?.error?.message, main: document.querySelector('article')?.textContent };
      });
      throw new Error(`segment did not seek the audio to ${startText}: ${JSON.stringify(st)}`, { cause: err });
    });
  const audio = await page.evaluate(async () => {
    const src = document.querySelector('audio').src;
    const res = await fetch(src, { headers: { Range: 'bytes=0-3' } });
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
  });
  assert.deepEqual(audio, { status: 206, type: 'audio/wav', body: 'RIFF' });

  // Export SRT: a real download with SRT cue timings.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export SRT' }).click(),
  ]);
  assert.equal(download.suggestedFilename(), 'jfk.srt');
  const srt = readFileSync(await download.path(), 'utf8');
  assert.match(srt, /^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n\S/);
  await page.screenshot({ path: artifact('hark-transcribe-done.png') });

  // Ask about it: a conversation on a chat model that can answer, with the
  // transcript as a card, and Summarise in one click.
  await page.getByRole('button', { name: 'Ask about this transcript' }).click();
  await page.waitForFunction(() => /^#\/chat\/\d+$/.test(location.hash));
  await page.getByText('About jfk.wav').first().waitFor();
  const card = page.getByTestId('transcript-card');
  await card.getByText('jfk.wav').waitFor();
  assert.match(await page.getByLabel('Chat model').inputValue(), /tiny-chat/);
  await card.getByRole('button', { name: 'Summarise' }).click();
  await page.locator('article[data-role="user"]').getByText(/Summarise this transcript/).waitFor();
  await page.locator('article[data-role="assistant"][data-message-id]').waitFor({ timeout: 60_000 });
  await page.screenshot({ path: artifact('hark-chat-transcript-summarise.png') });

  // The other one-click actions: each sends its own question to the
  // server (the request body, not only what the thread shows) and gets a
  // reply of its own from the model.
  const sent = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && /\/api\/chats\/\d+\/messages$/.test(r.url())) sent.push(JSON.parse(r.postData() || '{}').text);
  });
  const actions = [
    ['Action items', /^List the action items in this transcript/],
    ['Questions answered', /^Which questions are asked in this transcript/],
    ['Translate', /^Translate this transcript into English/],
  ];
  for (const [label, prompt] of actions) {
    const replies = page.locator('article[data-role="assistant"][data-message-id]');
    const before = await replies.count();
    const button = card.getByRole('button', { name: label, exact: true });
    await waitFor(() => button.isEnabled(), { timeout: 60_000 });
    await button.click();
    await page.locator('article[data-role="user"]').last().getByText(prompt).waitFor();
    await waitFor(async () => (await replies.count()) > before, { timeout: 60_000 });
    assert.match(sent.at(-1) ?? '', prompt, `${label} sent its question`);
  }
  assert.equal(sent.length, actions.length, `one message per action: ${JSON.stringify(sent)}`);
  const convId = Number((await page.evaluate(() => location.hash)).split('/').pop());
  const stored = await (await fetch(`${server.url}/api/chats/${convId}/messages`)).json();
  const users = stored.filter((m) => m.role === 'user').map((m) => m.content);
  const answers = stored.filter((m) => m.role === 'assistant');
  assert.equal(users.length, 4, `Summarise and three more questions: ${JSON.stringify(users)}`);
  for (const [i, [, prompt]] of actions.entries()) assert.match(users[i + 1], prompt);
  assert.equal(answers.length, 4, 'each question got its reply');
  // The card links back to the transcript.
  await card.getByRole('link', { name: 'jfk.wav' }).click();
  await page.waitForFunction(() => /^#\/transcribe\/\d+$/.test(location.hash));

  assert.deepEqual(page.problems.pageErrors, [], 'no uncaught errors');
  assert.deepEqual(page.problems.foreignRequests, [], 'nothing loaded from outside the app');
  await page.context().close();
});

test('a transcript with word timings: click a word to play from it, the word playing is marked', { skip, timeout: 300_000 }, async () => {
  // Queue jfk through the API with word timestamps on (VAD stays on, its default).
  const models = await (await fetch(server.url + '/api/models')).json();
  const model = models.find((m) => m.kind === 'speech').id;
  const res = await fetch(server.url + '/api/transcribe/queue', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ paths: [jfk], options: { model, language: 'en', task: 'transcribe', beamSize: 0, noFallback: true, wordTimestamps: true } }),
  });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  const [queued] = JSON.parse(body);
  let done;
  await waitFor(
    async () => {
      const q = await (await fetch(server.url + '/api/transcribe/queue')).json();
      done = q.find((it) => it.id === queued.id && it.state === 'done');
      return Boolean(done);
    },
    { timeout: 240_000 },
  );
  const tr = await (await fetch(server.url + '/api/transcripts/' + done.transcriptId)).json();
  const words = tr.segments.flatMap((s) => s.words ?? []);
  assert.ok(words.length >= 1, `words in ${JSON.stringify(tr.segments)}`);

  const page = await openPage(browser, server.url + '/#/transcribe');
  await page.getByRole('button', { name: /jfk\.wav/ }).first().click();
  const wordButtons = page.getByRole('list', { name: 'Segments' }).locator('button.word');
  await wordButtons.first().waitFor();
  assert.equal(await wordButtons.count(), words.length);
  const last = words[words.length - 1];
  await wordButtons.nth(words.length - 1).click();
  await page.waitForFunction((at) => {
    const a = document.querySelector('audio');
    return a && a.currentTime >= Math.min(at, a.duration) - 0.5;
  }, last.start);
  // While it plays from there, that word is the one marked.
  if (last.end - last.start >= 0.3) {
    await page.locator('button.word.now').first().waitFor({ timeout: 5_000 });
  }
  assert.deepEqual(page.problems.pageErrors, [], 'no uncaught errors');
  await page.context().close();
});

test('a file that is not audio fails on its own with a clear reason', { skip, timeout: 60_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/transcribe');
  await page.getByRole('button', { name: 'Choose files…' }).waitFor();
  await page.locator('input[type=file]').setInputFiles({
    name: 'notes.wav',
    mimeType: 'audio/wav',
    buffer: Buffer.from('Meeting notes, not a recording.\n'),
  });
  const entry = page.locator('li[data-name="notes.wav"][data-state="failed"]');
  await entry.waitFor({ timeout: 30_000 });
  assert.match(await entry.textContent(), /Not an audio file Hark can read/);
  await page.getByRole('button', { name: 'Clear finished' }).click();
  await entry.waitFor({ state: 'detached' });
  await page.context().close();
});

test('a batch cut off by kill -9 comes back as Interrupted, with its audio, and Resume finishes it', { skip, timeout: 180_000 }, async () => {
  const root = tempDir('hark-models-');
  const dir = join(root, 'whisper-tiny-random');
  mkdirSync(dir);
  for (const f of readdirSync(modelSrc)) copyFileSync(join(modelSrc, f), join(dir, f));
  const home = tempDir('hark-home-');
  const first = await start({ home });
  const put = await fetch(first.url + '/api/settings', {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ modelRoots: [root], defaultChatModel: '', defaultSpeechModel: '', backend: 'auto' }),
  });
  assert.equal(put.status, 200, await put.text());
  await waitFor(async () => (await (await fetch(first.url + '/api/models')).json()).some((m) => m.path === dir), { timeout: 20_000 });
  const audio = readFileSync(jfk);
  for (const name of ['one.wav', 'two.wav', 'three.wav']) {
    const q = new URLSearchParams({ name, size: String(audio.length), model: dir, language: 'en', noFallback: '1' });
    const res = await fetch(`${first.url}/api/transcribe/upload?${q}`, { method: 'POST', body: audio, headers: { 'X-Hark': '1' } });
    assert.equal(res.status, 200, await res.text());
  }
  await waitFor(async () => (await (await fetch(first.url + '/api/transcribe/queue')).json()).some((it) => it.state === 'running'), {
    timeout: 30_000,
    interval: 10,
  });
  const exited = new Promise((r) => first.proc.on('exit', r));
  first.proc.kill('SIGKILL');
  await exited;

  const second = await start({ home });
  try {
    const page = await openPage(browser, second.url + '/#/transcribe');
    const interrupted = page.locator('li[data-state="interrupted"]');
    await interrupted.first().waitFor({ timeout: 20_000 });
    const queue = await (await fetch(second.url + '/api/transcribe/queue')).json();
    const transcripts = await (await fetch(second.url + '/api/transcripts')).json();
    assert.equal(queue.length + transcripts.length, 3, 'every file is either transcribed or back in the queue');
    assert.ok(queue.every((it) => it.state === 'interrupted'), JSON.stringify(queue));
    const uploads = readdirSync(join(home, 'transcribe-uploads'));
    assert.equal(uploads.length, queue.length, `uploaded audio kept: ${uploads}`);
    const entry = interrupted.first();
    const name = await entry.getAttribute('data-name');
    await entry.locator('.detail').getByText(/^Interrupted/).waitFor();
    await entry.getByRole('button', { name: 'Resume' }).click();
    await page.locator(`li[data-name="${name}"][data-state="done"]`).waitFor({ timeout: 120_000 });
    await page.screenshot({ path: artifact('hark-transcribe-interrupted.png') });
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await second.stop();
  }
});
