// Audio positions and durations as people read them.

/** 75.4 → "1:15"; 3725 → "1:02:05". */
export function clock(sec: number): string {
  const s = Math.max(0, Math.floor(sec));
  const h = Math.floor(s / 3600);
  const m = Math.floor(s / 60) % 60;
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** Seconds left as "about 40 s left", "about 3 min left". */
export function etaText(sec: number): string {
  if (sec < 0 || !Number.isFinite(sec)) return '';
  if (sec < 1) return 'almost done';
  if (sec < 60) return `about ${Math.ceil(sec)} s left`;
  if (sec < 3600) return `about ${Math.ceil(sec / 60)} min left`;
  const h = Math.floor(sec / 3600);
  return `about ${h} h ${Math.ceil((sec - h * 3600) / 60)} min left`;
}

/** Go's time.Duration (ns) in seconds. */
export const nsToSec = (ns: number) => ns / 1e9;
