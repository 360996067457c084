// Small display helpers shared by components.

const byteUnits = ['B', 'KB', 'MB', 'GB', 'TB'];

export function formatBytes(n: number): string {
  let i = 0;
  let v = n;
  while (v >= 1000 && i < byteUnits.length - 1) {
    v /= 1000;
    i++;
  }
  const num = v >= 10 || i === 0 ? String(Math.round(v)) : v.toFixed(1).replace(/\.0$/, '');
  return `${num} ${byteUnits[i]}`;
}

/** "3.1 GB of 4 GB", "12 of 40 files", "40%". */
export function formatProgress(done: number, total: number, unit?: string): string {
  if (unit === 'bytes') return total > 0 ? `${formatBytes(done)} of ${formatBytes(total)}` : formatBytes(done);
  if (unit === 'seconds') return total > 0 ? `${clock(done)} of ${clock(total)}` : clock(done);
  if (total > 0) return unit ? `${done} of ${total} ${unit}` : `${Math.floor((done / total) * 100)}%`;
  return unit && done > 0 ? `${done} ${unit}` : '';
}

/** "12 MB/s · 1:05 left" for a byte job that started at `started`; '' until it has moved. */
export function rateAndEta(done: number, total: number, started: string, now = Date.now()): string {
  const elapsed = (now - Date.parse(started)) / 1000;
  if (!(elapsed > 0.5) || done <= 0) return '';
  const rate = done / elapsed;
  let s = `${formatBytes(rate)}/s`;
  if (total > done) s += ` · ${clock((total - done) / rate)} left`;
  return s;
}

function clock(sec: number): string {
  const s = Math.floor(sec % 60);
  const m = Math.floor(sec / 60) % 60;
  const h = Math.floor(sec / 3600);
  const mm = h > 0 ? String(m).padStart(2, '0') : String(m);
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(s).padStart(2, '0')}`;
}

/** Shortens a home-relative path for display: /Users/ada/x → ~/x. */
export function tildePath(path: string, home?: string): string {
  if (home && path.startsWith(home + '/')) return '~' + path.slice(home.length);
  return path.replace(/^\/(Users|home)\/[^/]+(?=\/|$)/, '~');
}

/** Server messages are lower-case Go errors; show them as a sentence. */
export function sentence(msg: string): string {
  return msg ? msg[0].toUpperCase() + msg.slice(1) : msg;
}
