// Structured output, checked by an independent validator. A random-weight
// Qwen3 (../shared/assets/families/qwen3-a) writes gibberish; with
// `hark chat --json-schema` every reply must still be a JSON document that
// ajv (not Hark's own code) finds valid: 200 runs, 200 seeds, all valid.
//
// Env: HARK_BIN (default ../../build/bin/hark), HARK_ASSETS (default
// ../../../shared/assets). Without the assets the test is skipped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Ajv from 'ajv';

const here = dirname(fileURLToPath(import.meta.url));
const harkBin = resolve(here, process.env.HARK_BIN || '../../build/bin/hark');
const assets = resolve(here, process.env.HARK_ASSETS || '../../../shared/assets');
const model = join(assets, 'families', 'qwen3-a', 'hf');
const run = promisify(execFile);

const schemas = ['person', 'shape', 'choice', 'list', 'object'];
const RUNS = 200;

async function generate(args) {
  const { stdout } = await run(harkBin, ['chat', '--model', model, '-p', 'Reply in JSON.', '--temp', '1', '--json', ...args], {
    maxBuffer: 16 << 20,
  });
  return JSON.parse(stdout);
}

test('random-weight model: 200 of 200 replies valid against their schema (ajv)', { skip: !existsSync(model) && `no model at ${model}` }, async () => {
  assert.ok(existsSync(harkBin), `hark binary not found at ${harkBin}: build it (make build) or set HARK_BIN`);
  const ajv = new Ajv({ allErrors: true, strict: true });
  const validators = Object.fromEntries(
    schemas.map((name) => {
      const file = join(here, 'schemas', `${name}.json`);
      return [name, { file, validate: ajv.compile(JSON.parse(readFileSync(file, 'utf8'))) }];
    }),
  );
  const failures = [];
  let valid = 0;
  const lengths = new Set();
  // Two at a time: the machine is shared.
  for (let seed = 0; seed < RUNS; seed += 2) {
    await Promise.all(
      [seed, seed + 1].map(async (s) => {
        const name = schemas[s % schemas.length];
        const { file, validate } = validators[name];
        // Budgets from tight to loose, so some replies must be closed
        // early by the grammar and others end on their own.
        const maxTokens = 80 + ((s * 37) % 160);
        // The free-form object schema also goes through --json-object.
        const mode = name === 'object' && s % 2 === 0 ? ['--json-object'] : ['--json-schema', file];
        const res = await generate([...mode, '--seed', String(s), '--max-tokens', String(maxTokens)]);
        let doc;
        try {
          doc = JSON.parse(res.text);
        } catch (err) {
          failures.push(`seed ${s} (${name}): not JSON: ${err.message}: ${JSON.stringify(res.text)}`);
          return;
        }
        if (!validate(doc)) {
          failures.push(`seed ${s} (${name}): ${ajv.errorsText(validate.errors)}: ${res.text}`);
          return;
        }
        if (res.tokens.length > maxTokens) {
          failures.push(`seed ${s} (${name}): ${res.tokens.length} tokens, over --max-tokens ${maxTokens}`);
          return;
        }
        lengths.add(res.text.length);
        valid++;
      }),
    );
  }
  assert.deepEqual(failures, []);
  assert.equal(valid, RUNS);
  // Gibberish, not one canned answer: the seeds give different documents.
  assert.ok(lengths.size > RUNS / 4, `only ${lengths.size} distinct reply lengths`);
});

test('an unsupported keyword is refused by name', { skip: !existsSync(model) && `no model at ${model}` }, async () => {
  const bad = join(here, 'schemas', 'person.json').replace('person.json', '../bad-schema.json');
  await assert.rejects(
    run(harkBin, ['chat', '--model', model, '-p', 'x', '--json-schema', bad]),
    (err) => /unsupported keyword format/.test(err.stderr),
  );
});
