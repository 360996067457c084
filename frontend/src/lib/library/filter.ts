// Search, filter and sort for the Library list: pure functions so the page
// stays declarative and the rules are in one place.
import type { Model } from '../api';

export type KindFilter = 'all' | 'chat' | 'speech' | 'other';
export type SupportFilter = 'all' | 'supported' | 'unsupported';
export type QuantFilter = 'all' | 'quantized' | 'full';
export type SortKey = 'name' | 'size' | 'date';

export interface Filters {
  query: string;
  kind: KindFilter;
  support: SupportFilter;
  quant: QuantFilter;
  sort: SortKey;
}

export const defaultFilters = (): Filters => ({ query: '', kind: 'all', support: 'all', quant: 'all', sort: 'name' });

/** The name a model is listed under: org/repo, else its folder. */
export function displayName(m: Model): string {
  return m.repo || m.path.split('/').filter(Boolean).at(-1) || m.path;
}

/** "4-bit g64", "4-bit g64 +3", or '' for unquantized models. */
export function quantLabel(m: Model): string {
  const q = m.quant;
  if (!q) return '';
  if (q.method && !q.bits) return q.method;
  let s = `${q.bits}-bit g${q.groupSize}`;
  if (q.mode && q.mode !== 'affine') s += ` ${q.mode}`;
  const n = q.overrides ? Object.keys(q.overrides).length : 0;
  return n > 0 ? `${s} +${n}` : s;
}

/** 260K, 1.2B: parameter counts as people say them. */
export function formatParams(n: number): string {
  if (!n || n <= 0) return '–';
  const units: [number, string][] = [
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ];
  for (const [v, u] of units) {
    if (n >= v) return `${(n / v).toFixed(n / v >= 10 ? 0 : 1).replace(/\.0$/, '')}${u}`;
  }
  return String(n);
}

/** "Fits", "Tight", "Too big" with the estimate behind it, or null when unknown. */
export function fitOf(m: { fit?: string; memoryNeeded?: number }): { tone: 'ok' | 'warn' | 'bad'; label: string; title: string } | null {
  if (!m.fit) return null;
  const need = `Needs about ${formatBytesDecimal(m.memoryNeeded ?? 0)} of memory`;
  if (m.fit === 'too_big') return { tone: 'bad', label: 'Too big', title: `${need}: more than this computer has free, so it will not load` };
  if (m.fit === 'tight') return { tone: 'warn', label: 'Tight', title: `${need}: it loads, with little left for other apps` };
  return { tone: 'ok', label: 'Fits', title: need };
}

function formatBytesDecimal(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : `${Math.round(n / 1e6)} MB`;
}

/** The short status shown in a row. */
export function statusOf(m: Model): { tone: 'ok' | 'warn' | 'bad'; label: string } {
  if (m.downloading && m.incomplete) return { tone: 'warn', label: 'Downloading' };
  if (m.incomplete) return { tone: 'warn', label: 'Incomplete' };
  if (m.problems?.length && !m.supported) return { tone: 'bad', label: 'Broken' };
  // A GGUF file (Ollama's, LM Studio's) says why on the row itself, not only on hover.
  if (!m.supported) return { tone: 'warn', label: /^GGUF: not supported yet\b/.test(m.reason ?? '') ? 'GGUF: not supported yet' : 'Unsupported' };
  return { tone: 'ok', label: 'Ready' };
}

/** An Incomplete hub snapshot no download is filling: Resume can finish it (library.Resumable). */
export function resumable(m: Model): boolean {
  return m.source === 'hf' && !!m.repo && !!m.commit && m.incomplete && !m.downloading;
}

function matches(m: Model, words: string[]): boolean {
  const hay = [displayName(m), m.id, m.path, m.modelType, m.family, ...(m.architectures ?? []), quantLabel(m)]
    .filter(Boolean)
    .join(' ')
    .toLowerCase();
  return words.every((w) => hay.includes(w));
}

export function applyFilters(models: Model[], f: Filters): Model[] {
  const words = f.query.toLowerCase().split(/\s+/).filter(Boolean);
  const out = models.filter(
    (m) =>
      (f.kind === 'all' || m.kind === f.kind) &&
      (f.support === 'all' || (f.support === 'supported') === m.supported) &&
      (f.quant === 'all' || (f.quant === 'quantized') === !!m.quant) &&
      matches(m, words),
  );
  const byName = (a: Model, b: Model) => displayName(a).localeCompare(displayName(b)) || a.path.localeCompare(b.path);
  const cmp: Record<SortKey, (a: Model, b: Model) => number> = {
    name: byName,
    size: (a, b) => b.size - a.size || byName(a, b),
    date: (a, b) => Date.parse(b.modified) - Date.parse(a.modified) || byName(a, b),
  };
  return out.sort(cmp[f.sort]);
}
