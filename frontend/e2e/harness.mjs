// Shared e2e harness: runs `hark serve` on a free loopback port with its own
// HARK_HOME and drives Debian's Chromium through playwright-core (never a
// downloaded browser).
//
//   import { start, launchBrowser, cleanup } from './harness.mjs';
//   after(cleanup);                       // kills whatever is still running
//   const server = await start();         // { url, home, port, stop() }
//   const browser = await launchBrowser();
//   const page = await openPage(browser, server.url + '/#/settings');
//
// Env: HARK_BIN (default ../build/bin/hark from frontend/), HARK_CHROMIUM
// (default /usr/bin/chromium), HARK_ARTIFACTS (screenshots; default tmpdir).

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const frontendDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const harkBin = resolve(frontendDir, process.env.HARK_BIN || '../build/bin/hark');
export const chromiumPath = process.env.HARK_CHROMIUM || '/usr/bin/chromium';
export const artifactsDir = process.env.HARK_ARTIFACTS || tmpdir();
/** The shared assets (models, audio, templates): HARK_ASSETS, or ../shared/assets beside the repo. */
export const assetsDir = process.env.HARK_ASSETS || resolve(frontendDir, '../../shared/assets');

const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Everything started here, so cleanup() can stop it even after a failure. */
const live = { servers: new Set(), browsers: new Set(), dirs: new Set() };

/** A fresh temp directory removed by cleanup(). */
export function tempDir(prefix = 'hark-e2e-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  live.dirs.add(dir);
  return dir;
}

/**
 * Starts `hark serve`. opts.home reuses a HARK_HOME (to test persistence);
 * opts.addr picks the address (default 127.0.0.1:0, a free port); opts.env
 * adds environment variables. Resolves once the server prints its URL.
 */
export async function start(opts = {}) {
  if (!existsSync(harkBin)) {
    throw new Error(`hark binary not found at ${harkBin}: build it (make build, or go build -o build/bin/hark .) or set HARK_BIN`);
  }
  const home = opts.home || tempDir('hark-home-');
  const hf = join(home, 'hf');
  mkdirSync(join(hf, 'hub'), { recursive: true });
  const env = {
    ...process.env,
    HARK_HOME: home,
    // Keep the user's own folders (LM Studio's models, ~/.cache) out of the tests.
    HOME: home,
    // Keep the machine's real Hugging Face cache out of the tests.
    HF_HOME: hf,
    HF_HUB_CACHE: join(hf, 'hub'),
    ...opts.env,
  };
  const proc = spawn(harkBin, ['serve', '--addr', opts.addr || '127.0.0.1:0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  let spawnError = null;
  const exited = new Promise((res) => {
    proc.on('exit', (code, signal) => res([code, signal]));
    proc.on('error', (err) => {
      spawnError = err;
      res([null, String(err)]);
    });
  });

  const server = {
    proc,
    home,
    url: '',
    port: 0,
    logs: () => `stdout:\n${stdout}\nstderr:\n${stderr}`,
    async stop() {
      live.servers.delete(server);
      if (spawnError || proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 8000);
      await exited;
      clearTimeout(timer);
    },
  };
  live.servers.add(server);

  try {
    server.url = await new Promise((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`hark serve printed no URL within 20s\n${server.logs()}`)), 20000);
      const check = () => {
        const m = stdout.match(/^Hark is serving on (http:\/\/\S+)$/m);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]);
        }
      };
      proc.stdout.on('data', check);
      exited.then(([code, signal]) => {
        clearTimeout(timer);
        reject(new Error(`hark serve exited (${code ?? signal}) before serving\n${server.logs()}`));
      });
      check();
    });
  } catch (err) {
    await server.stop();
    throw err;
  }
  server.port = Number(new URL(server.url).port);
  return server;
}

/** Stops a server started by start(). */
export async function stop(server) {
  await server?.stop();
}

/** Headless Debian Chromium. Closed by cleanup() if the test does not. */
export async function launchBrowser() {
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
  live.browsers.add(browser);
  browser.on('disconnected', () => live.browsers.delete(browser));
  return browser;
}

/**
 * Opens url in a new context and collects trouble: uncaught page errors,
 * console errors and any request that leaves the page's origin.
 * opts: { colorScheme, viewport, initScript }.
 */
export async function openPage(browser, url, opts = {}) {
  const context = await browser.newContext({
    viewport: opts.viewport || { width: 1100, height: 720 },
    colorScheme: opts.colorScheme || 'light',
  });
  if (opts.initScript) await context.addInitScript(opts.initScript);
  const page = await context.newPage();
  page.setDefaultTimeout(opts.timeout || 10_000);
  const origin = new URL(url).origin;
  page.problems = { pageErrors: [], consoleErrors: [], foreignRequests: [] };
  page.on('pageerror', (err) => page.problems.pageErrors.push(String(err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error') page.problems.consoleErrors.push(msg.text());
  });
  page.on('request', (req) => {
    const u = req.url();
    if (!u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('about:')) page.problems.foreignRequests.push(u);
  });
  await page.goto(url);
  return page;
}

/** Path for a screenshot in HARK_ARTIFACTS. */
export function artifact(name) {
  mkdirSync(artifactsDir, { recursive: true });
  return join(artifactsDir, name);
}

/** Stops every server and browser still running and removes temp dirs. */
export async function cleanup() {
  await Promise.allSettled([...live.browsers].map((b) => b.close()));
  await Promise.allSettled([...live.servers].map((s) => s.stop()));
  for (const dir of live.dirs) rmSync(dir, { recursive: true, force: true });
  live.dirs.clear();
}

// Last resort if the runner dies mid-test: never leave a server behind.
process.on('exit', () => {
  for (const s of live.servers) {
    try {
      s.proc.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

/** Polls fn until it returns a truthy value (or throws the last error). */
export async function waitFor(fn, { timeout = 5000, interval = 50 } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw last || new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, interval));
  }
}

/**
 * A JSON client for server's own API: X-Hark marks the request as the
 * app's (state changes without an Origin need it); a failure fails the test.
 */
export function apiOf(server) {
  return async (path, init) => {
    const res = await fetch(server.url + path, { ...init, headers: { 'X-Hark': '1', ...init?.headers } });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.clone().text()}`);
    return res.status === 204 ? undefined : res.json();
  };
}

/** Creates a conversation (body as POST /api/chats takes it) through api, an apiOf client; resolves to it. */
export function createChat(api, body) {
  return api('/api/chats', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Waits for the chat model id to be listed by the server api (an apiOf client) talks to. */
export function waitForChatModel(api, id) {
  return waitFor(async () => (await api('/api/chat/models')).some((m) => m.id === id), { timeout: 30_000 });
}

/**
 * The shared assets the transcription tests run on: jfk.wav and the tiny
 * random Whisper's folder, and skip, false when both are there or else
 * why the test skips (node:test's skip option).
 */
export function speechAssets() {
  const jfk = join(assetsDir, 'audio', 'jfk.wav');
  const modelSrc = join(assetsDir, 'whisper', 'golden', 'model');
  const skip =
    existsSync(jfk) && existsSync(join(modelSrc, 'config.json'))
      ? false
      : `shared assets not found at ${assetsDir} (need audio/jfk.wav and whisper/golden/model; set HARK_ASSETS)`;
  return { jfk, modelSrc, skip };
}

/**
 * Starts `hark serve` with a models folder: each model folder of models
 * ({name: source folder}) is copied under that name into a fresh folder
 * added as a Settings model root. Resolves once the library lists every
 * copy as supported; returns the server and the copies' paths by name.
 */
export async function startWithModels(models) {
  const root = tempDir('hark-models-');
  const paths = {};
  for (const [name, src] of Object.entries(models)) {
    paths[name] = join(root, name);
    cpSync(src, paths[name], { recursive: true });
  }
  const server = await start();
  const res = await fetch(server.url + '/api/settings', {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ modelRoots: [root], defaultChatModel: '', defaultSpeechModel: '', backend: 'auto' }),
  });
  if (!res.ok) throw new Error(`model folder not saved: ${res.status} ${await res.text()}`);
  const want = Object.values(paths);
  await waitFor(
    async () => {
      const models = await (await fetch(server.url + '/api/models')).json();
      return want.every((p) => models.some((m) => m.path === p && m.supported));
    },
    { timeout: 20_000 },
  );
  return { server, paths };
}
