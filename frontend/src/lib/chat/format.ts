// Display helpers for the chat page.
import type { ChatStats } from './api';

const rate = (n: number) => (n >= 100 ? Math.round(n).toString() : n.toFixed(1));
const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`);

/** "40 tokens · 241 tok/s · first token 3 ms · prompt 5 (2 cached) at 1735 tok/s". */
export function statsLine(s: Partial<ChatStats>): string {
  const parts: string[] = [];
  if (s.tokens !== undefined) parts.push(`${s.tokens} token${s.tokens === 1 ? '' : 's'}`);
  if (s.genTps) parts.push(`${rate(s.genTps)} tok/s`);
  if (s.ttftMs) parts.push(`first token ${ms(s.ttftMs)}`);
  if (s.promptTokens) {
    const cached = s.reusedTokens ? ` (${s.reusedTokens} cached)` : '';
    parts.push(`prompt ${s.promptTokens}${cached}${s.promptTps ? ` at ${rate(s.promptTps)} tok/s` : ''}`);
  }
  if (s.loadMs) parts.push(`loaded in ${ms(s.loadMs)}`);
  if (s.kvBits) parts.push(`${s.kvBits}-bit KV cache`);
  if (s.drafted) parts.push(`drafted ${s.drafted}, accepted ${s.accepted ?? 0} (${Math.round((100 * (s.accepted ?? 0)) / s.drafted)}%)`);
  return parts.join(' · ');
}

/** Short model name for lists: the repo, or the last path part. */
export function modelName(id: string): string {
  const m = /^hf:([^@]+)@/.exec(id);
  if (m) return m[1];
  return id.split('/').filter(Boolean).slice(-2).join('/') || id;
}

/** Parameter count: "260K", "1.7B". */
export function paramCount(n: number): string {
  const units: [number, string][] = [[1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
  for (const [v, u] of units) if (n >= v) return `${+(n / v).toFixed(n / v >= 10 ? 0 : 1)}${u}`;
  return String(n);
}
