// The Advanced options of the Transcribe page in Chromium: they reach the
// queue (upload query), survive a reload, refuse a bad schedule on the
// spot, and a fallback retry shows in the entry's progress text. The tiny
// random Whisper from the shared assets makes every window improbable, so
// each one is retried.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cleanup, launchBrowser, openPage, speechAssets, startWithModels, waitFor } from './harness.mjs';

const { jfk, modelSrc, skip } = speechAssets();

let server;
let browser;

before(async () => {
  if (skip) return;
  ({ server } = await startWithModels({ 'whisper-tiny-random': modelSrc }));
  browser = await launchBrowser();
});
after(cleanup);

test('advanced options persist, reach the queue, and retries show as progress', { skip, timeout: 300_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/transcribe');
  const model = page.getByLabel('Model', { exact: true });
  await waitFor(async () => (await model.inputValue()).endsWith('whisper-tiny-random'), { timeout: 10_000 });
  await page.getByLabel('Language', { exact: true }).selectOption('en');

  await page.getByText('Advanced', { exact: true }).click();
  const temps = page.getByLabel('Fallback temperatures');
  // A falling schedule is refused where it is typed.
  await temps.fill('0, 0.5, 0.2');
  await page.getByRole('alert').filter({ hasText: 'higher than the one before' }).waitFor();
  await temps.fill('0, 0.4');
  assert.equal(await page.getByRole('alert').count(), 0, 'the error goes once the schedule is fixed');
  await page.getByLabel('Log-prob threshold').fill('-0.5');
  await page.getByLabel('No-speech threshold').fill('0.7');
  await page.getByLabel('Initial prompt').fill('Ask not what your country');

  // A reload keeps every choice.
  await page.reload();
  await waitFor(async () => (await model.inputValue()).endsWith('whisper-tiny-random'), { timeout: 10_000 });
  await page.getByText('Advanced', { exact: true }).click();
  // (the language list loads after the page)
  await waitFor(async () => (await page.getByLabel('Language', { exact: true }).inputValue()) === 'en', { timeout: 10_000 });
  assert.equal(await page.getByLabel('Fallback temperatures').inputValue(), '0, 0.4');
  assert.equal(await page.getByLabel('Log-prob threshold').inputValue(), '-0.5');
  assert.equal(await page.getByLabel('No-speech threshold').inputValue(), '0.7');
  assert.equal(await page.getByLabel('Initial prompt').inputValue(), 'Ask not what your country');

  // Every progress text the entry shows is recorded.
  await page.evaluate(() => {
    window.__details = [];
    const look = () => {
      const d = document.querySelector('li[data-name="jfk.wav"] .detail')?.textContent?.trim();
      if (d && window.__details[window.__details.length - 1] !== d) window.__details.push(d);
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  const dt = await page.evaluateHandle((data) => {
    const bin = atob(data);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const d = new DataTransfer();
    d.items.add(new File([bytes], 'jfk.wav', { type: 'audio/wav' }));
    return d;
  }, readFileSync(jfk).toString('base64'));
  const target = page.getByRole('group', { name: 'Transcription options' });
  await target.dispatchEvent('dragenter', { dataTransfer: dt });
  await target.dispatchEvent('dragover', { dataTransfer: dt });
  await target.dispatchEvent('drop', { dataTransfer: dt });
  await page.locator('li[data-name="jfk.wav"][data-state="done"]').waitFor({ timeout: 240_000 });

  const details = await page.evaluate(() => window.__details);
  const retry = details.find((d) => d.includes('Retrying window 1 at temperature 0.4'));
  assert.ok(retry, `no retry shown in: ${JSON.stringify(details)}`);
  // The bar moved for the retry: half of the 11 s window (attempt 2 of 2).
  assert.match(retry, /Transcribing [1-9]\d?% · 0:05 of 0:11/);

  const queue = await (await fetch(server.url + '/api/transcribe/queue')).json();
  const it = queue.find((q) => q.name === 'jfk.wav');
  assert.deepEqual(it.options.temperatures, [0, 0.4]);
  assert.equal(it.options.logprobThreshold, -0.5);
  assert.equal(it.options.noSpeechThreshold, 0.7);
  assert.equal(it.options.initialPrompt, 'Ask not what your country');
  assert.equal(it.options.compressionRatioThreshold, undefined, 'an empty field keeps the default');
});
