// Model folders for e2e tests: Hugging Face cache layouts of tiny
// synthetic models (zero weights; listed and inspected, never run).
import { createHash } from 'node:crypto';
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export const commitA = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
export const commitB = '0fedcba9876543210fedcba9876543210fedcba9';

/** A safetensors file: 8-byte LE header length, JSON header, zero data. */
export function safetensors(tensors) {
  const header = {};
  let off = 0;
  for (const [name, shape] of Object.entries(tensors)) {
    const n = shape.reduce((a, b) => a * b, 1) * 4;
    header[name] = { dtype: 'F32', shape, data_offsets: [off, off + n] };
    off += n;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, Buffer.alloc(off)]);
}

export const sha256 = (b) => createHash('sha256').update(b).digest('hex');

/** Writes repo as huggingface_hub lays it out under dir; returns the repo folder. */
export function writeRepo(dir, repo, commit, files) {
  const repoDir = join(dir, 'models--' + repo.replace('/', '--'));
  const snap = join(repoDir, 'snapshots', commit);
  mkdirSync(join(repoDir, 'blobs'), { recursive: true });
  mkdirSync(join(repoDir, 'refs'), { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    const blob = join(repoDir, 'blobs', sha256(content));
    writeFileSync(blob, content);
    const link = join(snap, name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(relative(dirname(link), blob), link);
  }
  writeFileSync(join(repoDir, 'refs', 'main'), commit);
  return repoDir;
}

export const llama = {
  'config.json': Buffer.from(
    JSON.stringify({
      model_type: 'llama',
      architectures: ['LlamaForCausalLM'],
      hidden_size: 64,
      intermediate_size: 172,
      num_hidden_layers: 1,
      num_attention_heads: 8,
      num_key_value_heads: 4,
      vocab_size: 512,
      max_position_embeddings: 512,
      tie_word_embeddings: false,
    }),
  ),
  'model.safetensors': safetensors({ 'model.embed_tokens.weight': [512, 64], 'lm_head.weight': [512, 64] }),
};
export const whisper = {
  'config.json': Buffer.from(
    JSON.stringify({
      model_type: 'whisper',
      architectures: ['WhisperForConditionalGeneration'],
      num_mel_bins: 80,
      max_source_positions: 1500,
      d_model: 64,
      encoder_attention_heads: 4,
      encoder_layers: 1,
      decoder_attention_heads: 4,
      decoder_layers: 1,
      vocab_size: 51865,
      max_target_positions: 448,
    }),
  ),
  'model.safetensors': safetensors({ 'model.encoder.conv1.weight': [64, 80, 3] }),
};


/**
 * A Llama repo whose one weight declares bytes GB of float32, written as a
 * sparse file: its header is real, its data zeros that take no disk. No
 * machine here can hold it, so the Library must call it too big.
 */
export function writeHugeRepo(dir, repo, commit, gb) {
  const hidden = 8192;
  const vocab = Math.ceil((gb * 1e9) / 4 / hidden);
  const config = JSON.parse(llama['config.json'].toString());
  Object.assign(config, { hidden_size: hidden, vocab_size: vocab, intermediate_size: hidden * 2, num_attention_heads: 64, num_key_value_heads: 8 });
  const repoDir = writeRepo(dir, repo, commit, { 'config.json': Buffer.from(JSON.stringify(config)) });
  const n = vocab * hidden * 4;
  const header = Buffer.from(JSON.stringify({ 'model.embed_tokens.weight': { dtype: 'F32', shape: [vocab, hidden], data_offsets: [0, n] } }));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  const path = join(repoDir, 'snapshots', commit, 'model.safetensors');
  const fd = openSync(path, 'w');
  writeSync(fd, Buffer.concat([len, header]));
  ftruncateSync(fd, 8 + header.length + n);
  closeSync(fd);
  return repoDir;
}

/**
 * A model folder's files (config, generation config, weights, tokenizer) as
 * writeRepo takes them; with template, that chat template file is set in
 * tokenizer_config.json.
 */
export function modelFiles(dir, template) {
  const files = {};
  for (const name of ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) {
    let data = readFileSync(join(dir, name));
    if (template && name === 'tokenizer_config.json') {
      const cfg = JSON.parse(data);
      cfg.chat_template = readFileSync(template, 'utf8');
      data = Buffer.from(JSON.stringify(cfg));
    }
    files[name] = data;
  }
  return files;
}
