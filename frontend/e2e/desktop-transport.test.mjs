// The desktop transport: with window.go / window.runtime present (as Wails
// injects them), the UI calls the bound Service and listens to runtime
// events instead of HTTP. The bindings here are a stand-in recorded in the
// page, which also lets the test drive the jobs panel with job events.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { artifact, cleanup, launchBrowser, openPage, start } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await start();
  browser = await launchBrowser();
});
after(cleanup);

// Runs in the page before the app's scripts.
function fakeWails() {
  const settings = { modelRoots: [], defaultChatModel: '', defaultSpeechModel: '', backend: 'auto' };
  const handlers = {};
  const started = new Date().toISOString();
  const fake = {
    calls: [],
    handlers,
    emit(topic, data) {
      for (const cb of handlers[topic] || []) cb(data);
    },
  };
  window.__fake = fake;
  const rec =
    (name, fn) =>
    async (...args) => {
      fake.calls.push([name, ...args]);
      return fn(...args);
    };
  window.go = {
    app: {
      Service: {
        // As a Mac build with libmlxc would answer.
        GetInfo: rec('GetInfo', () => ({
          version: '9.9.9-fake',
          dataDir: '/fake/data',
          dbPath: '/fake/data/hark.db',
          mode: 'desktop',
          backend: {
            name: 'mlxc',
            label: 'MLX (Metal)',
            asked: settings.backend,
            from: 'setting',
            reason: settings.backend === 'auto' ? 'auto chose mlxc (gpu, /fake/libmlxc.dylib, 0.4.0)' : `setting asked for ${settings.backend}`,
            device: { device: 'gpu', gpu: true },
          },
          backends: [
            { name: 'cpu', label: 'CPU' },
            { name: 'mlxc', label: 'MLX (Metal)' },
          ],
        })),
        GetSettings: rec('GetSettings', () => structuredClone(settings)),
        SaveSettings: rec('SaveSettings', (s) => {
          // Wails rejects with the Go error's text.
          if (s.modelRoots.some((r) => !r.trim())) return Promise.reject('model roots must not contain an empty path');
          Object.assign(settings, s);
          return structuredClone(settings);
        }),
        ListJobs: rec('ListJobs', () => [
          { id: 'job-1', kind: 'verify', title: 'Verifying whisper-small', state: 'running', done: 30, total: 100, unit: 'files', started },
          { id: 'job-0', kind: 'verify', title: 'Old finished job', state: 'done', done: 1, total: 1, started },
        ]),
        CancelJob: rec('CancelJob', () => null),
        // The table the real server serves (set by the dialog test), the
        // native chooser answering with one path, and the queue taking it.
        AudioFormats: rec('AudioFormats', () => window.__formats ?? []),
        ChooseFiles: rec('ChooseFiles', () => window.__chosen ?? null),
        EnqueueTranscriptions: rec('EnqueueTranscriptions', () => []),
        TranscriptionQueue: rec('TranscriptionQueue', () => []),
        ListTranscripts: rec('ListTranscripts', () => []),
      },
    },
  };
  window.runtime = {
    EventsOn(topic, cb) {
      (handlers[topic] ||= []).push(cb);
      return () => (handlers[topic] = handlers[topic].filter((x) => x !== cb));
    },
    EventsOff(topic) {
      delete handlers[topic];
    },
  };
}

test('desktop mode uses the Wails bindings and runtime events', { timeout: 60_000 }, async () => {
  const apiRequests = [];
  const page = await openPage(browser, server.url + '/#/settings', { initScript: fakeWails });
  page.on('request', (r) => r.url().includes('/api/') && apiRequests.push(r.url()));

  const about = page.getByRole('region', { name: 'About Hark' });
  await about.getByText('Desktop app').waitFor();
  assert.equal(await about.locator('[data-field="version"]').textContent(), '9.9.9-fake');

  // A rejected binding call shows its message inline, like the HTTP 400.
  await page.getByLabel('New model folder').fill('/x');
  await page.getByLabel('New model folder').press('Enter');
  await page.getByLabel('Model folder 1').fill('');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('group', { name: 'Model folders' }).getByText('must not contain an empty path').waitFor();

  await page.getByRole('button', { name: 'Remove folder 1' }).click();
  await page.getByText('In use: MLX (Metal) — Auto chose mlxc (gpu, /fake/libmlxc.dylib, 0.4.0)').waitFor();
  await page.getByLabel('Compute backend').selectOption({ label: 'MLX (Metal)' });
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved', { exact: true }).waitFor();
  const calls = await page.evaluate(() => window.__fake.calls);
  assert.deepEqual(calls.filter((c) => c[0] === 'SaveSettings').at(-1)[1].backend, 'mlxc');
  // Info is read again after the save: the line follows the new setting.
  await page.getByText('In use: MLX (Metal) — Setting asked for mlxc').waitFor();

  // A settings event from another window refreshes the idle form.
  await page.locator('main h1').focus();
  await page.evaluate(() =>
    window.__fake.emit('settings', { modelRoots: ['/other'], defaultChatModel: '', defaultSpeechModel: '', backend: 'cpu' }),
  );
  await page.getByLabel('Model folder 1').waitFor();
  assert.equal(await page.getByLabel('Compute backend').inputValue(), 'cpu');

  // Library: a binding this build lacks is a non-fatal notice.
  await page.getByRole('link', { name: 'Library' }).click();
  await page.getByText(/ListModels is not available/).waitFor();
  await page.getByRole('heading', { name: 'No models found' }).waitFor();
  assert.equal(await page.getByTestId('hf-cache').textContent(), '~/.cache/huggingface/hub', 'default cache path shown');

  assert.deepEqual(apiRequests, [], 'no HTTP API calls in desktop mode');
  assert.deepEqual(page.problems.pageErrors, []);
  await page.context().close();
});

test('the activity panel follows job events and cancels', { timeout: 60_000 }, async () => {
  const page = await openPage(browser, server.url + '/#/chat', { initScript: fakeWails });
  const panel = page.getByRole('region', { name: /Activity/ });
  await panel.getByText('Verifying whisper-small').waitFor();
  const bar = panel.getByRole('progressbar', { name: 'Verifying whisper-small progress' });
  assert.equal(await bar.getAttribute('value'), '30');
  assert.match(await panel.textContent(), /30 of 100 files/);

  const job = { id: 'job-1', kind: 'verify', title: 'Verifying whisper-small', state: 'running', total: 100, unit: 'files' };
  await page.evaluate((j) => window.__fake.emit('job', { ...j, done: 64 }), job);
  await page.waitForFunction(() => document.querySelector('[data-job="job-1"] progress')?.getAttribute('value') === '64');

  // A new job started elsewhere appears on top; bytes are humanised.
  await page.evaluate(() =>
    window.__fake.emit('job', {
      id: 'job-2', kind: 'pull', title: 'Downloading qwen', state: 'running', done: 1_500_000_000, total: 4_000_000_000, unit: 'bytes',
    }),
  );
  await panel.getByText('1.5 GB of 4 GB').waitFor();
  assert.match(await panel.locator('h2').textContent(), /2 running/);
  await page.screenshot({ path: artifact('hark-jobs.png') });

  await panel.getByRole('button', { name: 'Cancel Verifying whisper-small' }).click();
  await page.waitForFunction(() => window.__fake.calls.some((c) => c[0] === 'CancelJob' && c[1] === 'job-1'));
  await page.evaluate((j) => window.__fake.emit('job', { ...j, done: 64, state: 'cancelled' }), job);
  await panel.getByText('Cancelled').waitFor();

  await page.evaluate(() =>
    window.__fake.emit('job', { id: 'job-2', kind: 'pull', title: 'Downloading qwen', state: 'failed', done: 0, total: 0, error: 'disk full' }),
  );
  await panel.getByText('Failed: disk full').waitFor();

  // Jobs that finished before the app opened are not shown; a success
  // clears itself after a few seconds.
  assert.equal(await panel.getByText('Old finished job').count(), 0);
  await page.evaluate(() =>
    window.__fake.emit('job', { id: 'job-3', kind: 'verify', title: 'Quick check', state: 'done', done: 1, total: 1 }),
  );
  await panel.getByText('Quick check').waitFor();
  await panel.getByText('Quick check').waitFor({ state: 'detached', timeout: 15_000 });

  await panel.getByRole('button', { name: 'Dismiss Verifying whisper-small' }).click();
  await panel.getByRole('button', { name: 'Dismiss Downloading qwen' }).click();
  await panel.waitFor({ state: 'detached' });
  await page.context().close();
});

test('Choose files opens the native chooser with the served formats table', { timeout: 60_000 }, async () => {
  const formats = await (await fetch(server.url + '/api/transcribe/formats')).json();
  assert.ok(formats.length > 3, 'the server serves the formats table');
  const chosen = ['/home/me/voice memo.m4a', '/home/me/call.flac'];
  const initScript = {
    content: `window.__formats = ${JSON.stringify(formats)}; window.__chosen = ${JSON.stringify(chosen)}; (${fakeWails})();`,
  };
  const page = await openPage(browser, server.url + '/#/transcribe', { initScript });
  const fileInput = page.locator('input[type=file]');
  let browserChooser = false;
  page.on('filechooser', () => (browserChooser = true));
  await page.getByRole('button', { name: 'Choose files…' }).click();
  await page.waitForFunction(() => window.__fake.calls.some((c) => c[0] === 'EnqueueTranscriptions'));
  const calls = await page.evaluate(() => window.__fake.calls);

  const [, title, filters] = calls.find((c) => c[0] === 'ChooseFiles');
  assert.equal(title, 'Choose audio files');
  // First every extension of the table, then one line per format, in its order.
  const glob = (exts) => exts.map((e) => '*' + e).join(';');
  const withExts = formats.filter((f) => f.extensions.length > 0);
  assert.deepEqual(filters, [
    { displayName: 'Audio files', pattern: glob(withExts.flatMap((f) => f.extensions)) },
    ...withExts.map((f) => ({ displayName: f.name, pattern: glob(f.extensions) })),
  ]);
  assert.match(filters[0].pattern, /\*\.wav;.*\*\.flac;.*\*\.m4a/);

  // The chosen paths are queued as paths: no upload, no browser chooser.
  const enq = calls.find((c) => c[0] === 'EnqueueTranscriptions')[1];
  assert.deepEqual(enq.paths, chosen);
  assert.equal(browserChooser, false, 'the browser file chooser stayed closed');
  assert.equal(await fileInput.count(), 1);

  // Cancelling (no paths) queues nothing.
  await page.evaluate(() => {
    window.__chosen = null;
    window.__fake.calls.length = 0;
  });
  await page.getByRole('button', { name: 'Choose files…' }).click();
  await page.waitForFunction(() => window.__fake.calls.some((c) => c[0] === 'ChooseFiles'));
  await page.waitForTimeout(300);
  assert.equal((await page.evaluate(() => window.__fake.calls)).filter((c) => c[0] === 'EnqueueTranscriptions').length, 0);
  assert.deepEqual(page.problems.pageErrors, []);
  await page.context().close();
});
