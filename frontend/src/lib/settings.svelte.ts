// Shared, live copy of the saved settings: loaded once, refreshed by the
// "settings" event (another window saved) and after the event stream
// reconnects. Pages read `settings.value`; only the Settings page writes.
import { errorMessage, getSettings, onReconnect, onSettings, type Settings } from './api';

export const settings = $state<{ value: Settings | null; error: string; loading: boolean }>({
  value: null,
  error: '',
  loading: true,
});

/** Listeners told when settings change from outside (another window). */
const external = new Set<(s: Settings) => void>();

export async function reloadSettings() {
  try {
    settings.value = await getSettings();
    settings.error = '';
  } catch (err) {
    settings.error = errorMessage(err);
  } finally {
    settings.loading = false;
  }
}

/** Records settings this window just saved. */
export function settingsSaved(s: Settings) {
  settings.value = s;
  settings.error = '';
}

export function onExternalSettings(cb: (s: Settings) => void): () => void {
  external.add(cb);
  return () => external.delete(cb);
}

let started = false;

export function startSettings() {
  if (started) return;
  started = true;
  void reloadSettings();
  onSettings((s) => {
    const same = JSON.stringify(s) === JSON.stringify(settings.value);
    settings.value = s;
    if (!same) for (const cb of [...external]) cb(s);
  });
  onReconnect(() => void reloadSettings());
}
