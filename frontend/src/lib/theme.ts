// Light, dark or the system's look. The choice is a saved setting; it is
// also kept in localStorage so the next start paints in it before the
// settings arrive, with no flash of the other theme.
export type Theme = 'system' | 'light' | 'dark';

const storageKey = 'hark.theme';
const dark = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : undefined;
let pref: Theme = 'system';

function stored(): Theme {
  try {
    const t = localStorage.getItem(storageKey);
    return t === 'light' || t === 'dark' ? t : 'system';
  } catch {
    return 'system';
  }
}

function apply() {
  const resolved = pref === 'system' ? (dark?.matches ? 'dark' : 'light') : pref;
  document.documentElement.dataset.theme = resolved;
}

/** Paints the last used theme and follows the system while it is chosen. */
export function startTheme() {
  pref = stored();
  apply();
  dark?.addEventListener('change', apply);
}

export function setTheme(t: Theme | undefined) {
  pref = t === 'light' || t === 'dark' ? t : 'system';
  try {
    localStorage.setItem(storageKey, pref);
  } catch {
    /* private mode: the saved setting still applies on the next load */
  }
  apply();
}
