// Transcription and translation through the official openai client, in
// every response_format, checked against OpenAI's reference
// whisper.transcribe() on the same tiny random Whisper (the goldens in
// whisper/golden/transcribe, made at temperature 0 with language en).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import OpenAI, { toFile } from 'openai';
import { assets, cleanup, missing, models, start } from './harness.mjs';

const skip = missing() || false;
let server;
let client;
let golden;
let goldenTranslate;

before(async () => {
  if (skip) return;
  server = await start();
  client = new OpenAI({ baseURL: server.url + '/v1', apiKey: 'unused-on-loopback', maxRetries: 0 });
  golden = JSON.parse(readFileSync(join(assets, 'whisper/golden/transcribe/jfk.json'), 'utf8'));
  goldenTranslate = JSON.parse(readFileSync(join(assets, 'whisper/golden/transcribe/jfk_translate.json'), 'utf8'));
});
after(cleanup);

const jfk = () => createReadStream(join(assets, 'audio/jfk.wav'));
// The goldens' settings: one temperature of 0 (no fallback), English.
const params = () => ({ file: jfk(), model: models.speech.repo, language: 'en', temperature: 0 });

const srtTime = (s) => {
  const ms = Math.round(s * 1000);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${p(Math.floor(ms / 3600000))}:${p(Math.floor(ms / 60000) % 60)}:${p(Math.floor(ms / 1000) % 60)},${p(ms % 1000, 3)}`;
};

test('transcription in every response_format matches the reference', { skip, timeout: 120_000 }, async () => {
  const json = await client.audio.transcriptions.create(params());
  assert.equal(json.text, golden.text.trim());

  const text = await client.audio.transcriptions.create({ ...params(), response_format: 'text' });
  assert.equal(text.trim(), golden.text.trim());

  const verbose = await client.audio.transcriptions.create({ ...params(), response_format: 'verbose_json' });
  assert.equal(verbose.task, 'transcribe');
  assert.equal(verbose.language, 'english');
  assert.ok(Math.abs(verbose.duration - 11) < 0.1, `duration ${verbose.duration}`);
  assert.equal(verbose.segments.length, golden.segments.length);
  verbose.segments.forEach((s, i) => {
    const g = golden.segments[i];
    assert.equal(s.text, g.text);
    assert.deepEqual(s.tokens, g.tokens);
    assert.ok(Math.abs(s.start - g.start) < 1e-6 && Math.abs(s.end - g.end) < 1e-6, `segment ${i} times`);
  });
  assert.equal(verbose.words, undefined);
  // Word timestamps (which, as in OpenAI's transcribe(), also move the
  // seek and so the segments): every word is in the text, in order.
  const worded = await client.audio.transcriptions.create({ ...params(), response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
  assert.ok(Array.isArray(worded.words) && worded.words.length > 0, 'no words');
  let at = 0;
  for (const w of worded.words) {
    const i = worded.text.indexOf(w.word.trim(), at);
    assert.ok(i >= 0, `word ${JSON.stringify(w.word)} not in order in ${JSON.stringify(worded.text)}`);
    at = i + w.word.trim().length;
  }
  for (const w of worded.words) assert.ok(w.end >= w.start && typeof w.word === 'string');

  const srt = await client.audio.transcriptions.create({ ...params(), response_format: 'srt' });
  const cues = golden.segments.filter((s) => s.text.trim());
  assert.match(srt, new RegExp(`^1\\n${srtTime(cues[0].start)} --> ${srtTime(cues[0].end)}\\n${cues[0].text.trim()}\\n`));
  assert.equal(srt.trim().split('\n\n').length, cues.length);

  const vtt = await client.audio.transcriptions.create({ ...params(), response_format: 'vtt' });
  assert.match(vtt, /^WEBVTT\n\n/);
  assert.equal(vtt.trim().split('\n\n').length, cues.length + 1);
  assert.ok(vtt.includes(cues[cues.length - 1].text.trim()));
});

test('translation in every response_format matches the reference', { skip, timeout: 120_000 }, async () => {
  // Without a language the model detects one; every format agrees.
  const json = await client.audio.translations.create({ file: jfk(), model: models.speech.id, temperature: 0 });
  assert.ok(json.text.length > 0);
  const p = { file: jfk(), model: models.speech.id, temperature: 0 };
  const verbose = await client.audio.translations.create({ ...p, response_format: 'verbose_json' });
  assert.equal(verbose.task, 'translate');
  assert.equal(verbose.text, json.text);
  const text = await client.audio.translations.create({ file: jfk(), model: models.speech.id, temperature: 0, response_format: 'text' });
  assert.equal(text.trim(), json.text);
  const srt = await client.audio.translations.create({ file: jfk(), model: models.speech.id, temperature: 0, response_format: 'srt' });
  assert.match(srt, /^1\n\d\d:\d\d:\d\d,\d\d\d --> /);
  const vtt = await client.audio.translations.create({ file: jfk(), model: models.speech.id, temperature: 0, response_format: 'vtt' });
  assert.match(vtt, /^WEBVTT\n\n\d\d:\d\d\.\d\d\d --> /);
});

test('translation with the language given matches the reference', { skip, timeout: 60_000 }, async () => {
  // The SDK's translations type has no language; the form field works.
  const r = await client.audio.translations.create({ file: jfk(), model: models.speech.id, temperature: 0, language: 'en' });
  assert.equal(r.text, goldenTranslate.text.trim());
});

test('stream=true sends segments as they are decoded', { skip, timeout: 60_000 }, async () => {
  const stream = await client.audio.transcriptions.create({ ...params(), stream: true });
  const deltas = [];
  let done = null;
  for await (const ev of stream) {
    if (ev.type === 'transcript.text.delta') deltas.push(ev.delta);
    if (ev.type === 'transcript.text.done') done = ev.text;
  }
  assert.equal(deltas.length, golden.segments.length);
  assert.equal(deltas.join(''), golden.text);
  assert.equal(done, golden.text.trim());
});

test('a bad file, a missing model and a chat model answer JSON errors', { skip, timeout: 60_000 }, async () => {
  const junk = join(tmpdir(), `hark-not-audio-${process.pid}.wav`);
  writeFileSync(junk, 'this is not audio at all, just text pretending to be a wav file\n'.repeat(10));
  await assert.rejects(client.audio.transcriptions.create({ file: createReadStream(junk), model: models.speech.id }), (e) => {
    assert.equal(e.status, 400);
    assert.equal(e.param, 'file');
    assert.match(e.message, /not audio/);
    return true;
  });
  // A WAV header with its data cut off.
  const wav = readFileSync(join(assets, 'audio/jfk.wav'));
  await assert.rejects(client.audio.transcriptions.create({ file: await toFile(wav.subarray(0, 60), 'cut.wav'), model: models.speech.id }), (e) => e.status === 400);
  await assert.rejects(client.audio.transcriptions.create({ file: jfk(), model: 'nobody/whisper' }), (e) => e.status === 404 && e.code === 'model_not_found');
  await assert.rejects(client.audio.transcriptions.create({ file: jfk(), model: models.chat.id }), (e) => e.status === 400 && /chat model/.test(e.message));
  await assert.rejects(client.audio.transcriptions.create({ file: jfk(), model: models.speech.id, response_format: 'docx' }), (e) => e.status === 400 && e.param === 'response_format');
});
