// Runs a real `hark serve` on 127.0.0.1 with its own HARK_HOME and a
// Hugging Face cache laid out from ../shared/assets: stories260K (a real
// trained Llama, no chat template), the tiny random Whisper of the
// whisper goldens, and the tiny random qwen3 of the family goldens with
// the real Qwen3 chat template (from tokenizers/qwen3) merged into its
// tokenizer_config.json, since the family folder ships none.
//
// Env: HARK_BIN (default ../build/bin/hark), HARK_ASSETS (default
// ../../shared/assets from this folder).

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const harkBin = resolve(here, process.env.HARK_BIN || '../build/bin/hark');
export const assets = process.env.HARK_ASSETS || resolve(here, '../../shared/assets');

const commit = '0f1e2d3c4b5a69788796a5b4c3d2e1f001234567';
export const models = {
  chat: { repo: 'karpathy/stories260K', id: `hf:karpathy/stories260K@${commit}` },
  speech: { repo: 'openai/whisper-tiny-random', id: `hf:openai/whisper-tiny-random@${commit}` },
  tools: { repo: 'test/qwen3-tiny-random', id: `hf:test/qwen3-tiny-random@${commit}` },
  // Qwen3's vocabulary: drafts for tools (draft_model).
  draft: { repo: 'test/qwen2-tiny-random', id: `hf:test/qwen2-tiny-random@${commit}` },
};

/** Why the tests cannot run here, or '' when they can. */
export function missing() {
  if (!existsSync(harkBin)) return `hark binary not found at ${harkBin}: build it (make build) or set HARK_BIN`;
  for (const p of ['models/stories260K/hf', 'whisper/golden/model', 'families/qwen3-a/hf', 'families/qwen2-a/hf', 'tokenizers/qwen3', 'audio/jfk.wav']) {
    if (!existsSync(join(assets, p))) return `shared assets not found (${join(assets, p)}); set HARK_ASSETS`;
  }
  return '';
}

const dirs = new Set();
function tempDir(prefix) {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(d);
  return d;
}

/** Adds repo to an HF cache from files: {name: Buffer}. */
function addRepo(hub, repo, files) {
  const repoDir = join(hub, `models--${repo.replace('/', '--')}`);
  const snap = join(repoDir, 'snapshots', commit);
  for (const d of [join(repoDir, 'blobs'), join(repoDir, 'refs'), snap]) mkdirSync(d, { recursive: true });
  for (const [name, data] of Object.entries(files)) {
    const blob = createHash('sha256').update(data).digest('hex');
    writeFileSync(join(repoDir, 'blobs', blob), data);
    symlinkSync(`../../blobs/${blob}`, join(snap, name));
  }
  writeFileSync(join(repoDir, 'refs', 'main'), commit);
}

function readAll(dir, names) {
  return Object.fromEntries(names.map((n) => [n, readFileSync(join(dir, n))]));
}

function hfCache(hub) {
  addRepo(hub, models.chat.repo, readAll(join(assets, 'models/stories260K/hf'), ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']));
  const w = join(assets, 'whisper/golden/model');
  addRepo(hub, models.speech.repo, readAll(w, ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'preprocessor_config.json']));
  const q = join(assets, 'families/qwen3-a/hf');
  const files = readAll(q, ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json']);
  const cfg = JSON.parse(readFileSync(join(q, 'tokenizer_config.json'), 'utf8'));
  cfg.chat_template = JSON.parse(readFileSync(join(assets, 'tokenizers/qwen3/tokenizer_config.json'), 'utf8')).chat_template;
  files['tokenizer_config.json'] = Buffer.from(JSON.stringify(cfg));
  addRepo(hub, models.tools.repo, files);
  addRepo(hub, models.draft.repo, readAll(join(assets, 'families/qwen2-a/hf'), ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']));
}

const live = new Set();

/** Starts hark serve; args are extra flags. Resolves once it serves. */
export async function start({ args = [], env = {} } = {}) {
  const home = tempDir('hark-api-home-');
  const hub = join(home, 'hf', 'hub');
  mkdirSync(hub, { recursive: true });
  hfCache(hub);
  const proc = spawn(harkBin, ['serve', '--addr', '127.0.0.1:0', ...args], {
    env: { ...process.env, HARK_HOME: home, HF_HOME: join(home, 'hf'), HF_HUB_CACHE: hub, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const exited = new Promise((res) => proc.on('exit', res));
  const server = {
    proc,
    home,
    logs: () => `stdout:\n${out}\nstderr:\n${err}`,
    async stop() {
      live.delete(server);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 8000);
      await exited;
      clearTimeout(t);
    },
  };
  live.add(server);
  server.url = await new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`no URL within 20s\n${server.logs()}`)), 20000);
    const check = () => {
      const m = out.match(/^Hark is serving on (http:\/\/\S+)$/m);
      if (m) {
        clearTimeout(t);
        res(m[1]);
      }
    };
    proc.stdout.on('data', check);
    exited.then((code) => {
      clearTimeout(t);
      rej(new Error(`hark serve exited (${code})\n${server.logs()}`));
    });
  });
  // The library indexes the cache in the background: wait for the models.
  const deadline = Date.now() + 30000;
  for (;;) {
    const r = await fetch(server.url + '/v1/models').then((r) => r.json()).catch(() => null);
    const ids = (r?.data || []).map((m) => m.id);
    if (Object.values(models).every((m) => ids.includes(m.id))) break;
    if (Date.now() > deadline) throw new Error(`models not indexed: ${JSON.stringify(r)}\n${server.logs()}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  return server;
}

export async function cleanup() {
  await Promise.allSettled([...live].map((s) => s.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

process.on('exit', () => {
  for (const s of live) {
    try {
      s.proc.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
});
