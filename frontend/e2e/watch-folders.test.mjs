// Settings → Watch folders in Chromium against a real hark serve: a folder
// is added with the tiny random Whisper, a WAV copied into it is
// transcribed once it settles, the transcript appears beside it, and the
// file is listed as transcribed; a file that is not audio is listed as
// skipped with the reason.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, launchBrowser, openPage, speechAssets, startWithModels, tempDir, waitFor } from './harness.mjs';

const { jfk, modelSrc, skip } = speechAssets();

let server;
let browser;
let modelDir;

before(async () => {
  if (skip) return;
  let paths;
  ({ server, paths } = await startWithModels({ 'whisper-tiny-random': modelSrc }));
  modelDir = paths['whisper-tiny-random'];
  browser = await launchBrowser();
});
after(cleanup);

test('a watch folder transcribes a file copied into it, beside the audio', { skip, timeout: 300_000 }, async () => {
  const inbox = tempDir('hark-inbox-');
  writeFileSync(join(inbox, 'before.wav'), readFileSync(jfk)); // there before: left alone
  const page = await openPage(browser, server.url + '/#/settings');
  // The Transcribe page's saved options go with a new folder: English and
  // no fallback keep the random model to one pass per window.
  await page.evaluate(() => localStorage.setItem('hark.transcribe.options', JSON.stringify({ language: 'en', noFallback: true })));
  await page.reload();
  await page.getByRole('heading', { name: 'Watch folders' }).waitFor();
  await page.getByLabel('Folder to watch').fill(join(inbox, 'missing'));
  await page.getByRole('button', { name: 'Watch folder' }).click();
  await page.getByRole('alert').filter({ hasText: 'does not exist' }).waitFor();

  await page.getByLabel('Folder to watch').fill(inbox);
  const model = page.getByLabel('Speech model', { exact: true });
  await waitFor(async () => (await model.locator('option').count()) > 1, { timeout: 10_000 });
  await model.selectOption({ label: 'whisper-tiny-random' });
  await page.getByLabel('SRT').check();
  await page.getByRole('button', { name: 'Watch folder' }).click();
  const folder = page.locator(`li[data-path="${inbox}"]`);
  await folder.getByText('Watching', { exact: false }).first().waitFor();

  const list = await (await fetch(server.url + '/api/watch-folders')).json();
  assert.equal(list.length, 1);
  assert.deepEqual(list[0].formats, ['txt', 'srt']);
  assert.ok(list[0].options.model.length > 0, 'the picked model goes with the folder');
  assert.equal(list[0].options.language, 'en');
  assert.equal(list[0].options.noFallback, true);

  writeFileSync(join(inbox, 'memo.wav'), readFileSync(jfk));
  writeFileSync(join(inbox, 'notes.bin'), 'plain words, no audio');
  await folder.locator('li[data-state="done"]').filter({ hasText: 'memo.wav' }).waitFor({ timeout: 240_000 });
  await folder.locator('li[data-state="skipped"]').filter({ hasText: 'notes.bin' }).waitFor({ timeout: 20_000 });
  assert.match(await folder.locator('li[data-state="skipped"]').textContent(), /Not an audio file Hark can read/);
  assert.ok(existsSync(join(inbox, 'memo.txt')) && existsSync(join(inbox, 'memo.srt')), `inbox: ${readdirSync(inbox)}`);
  assert.ok(!existsSync(join(inbox, 'before.txt')), 'a file there before the folder was added was transcribed');
  assert.match(readFileSync(join(inbox, 'memo.srt'), 'utf8'), /^1\n00:00:\d\d,\d{3} --> /);

  await page.getByRole('button', { name: `Stop watching ${inbox}` }).click();
  await folder.waitFor({ state: 'detached' });
  assert.deepEqual(page.problems.pageErrors, [], 'no uncaught errors');
});
