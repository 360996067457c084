// Hash routing: #/chat, #/transcribe, #/library, #/settings. Anything after
// the section (#/library/some/model) is kept in `route.rest` for pages that
// want sub-routes. Hash routes survive reloads under Wails and hark serve
// without any server-side fallback.

export type Section = 'chat' | 'transcribe' | 'library' | 'settings';

export interface SectionInfo {
  id: Section;
  label: string;
  /** Digit for the Cmd/Ctrl+digit shortcut. */
  key: string;
}

export const sections: SectionInfo[] = [
  { id: 'chat', label: 'Chat', key: '1' },
  { id: 'transcribe', label: 'Transcribe', key: '2' },
  { id: 'library', label: 'Library', key: '3' },
  { id: 'settings', label: 'Settings', key: '4' },
];

export const defaultSection: Section = 'chat';

function parse(hash: string): { section: Section; rest: string } {
  const path = hash.replace(/^#\/?/, '');
  const [head, ...tail] = path.split('/');
  const found = sections.find((s) => s.id === head);
  return { section: found ? found.id : defaultSection, rest: found ? tail.join('/') : '' };
}

export const route = $state(parse(typeof location === 'undefined' ? '' : location.hash));

export function href(section: Section, rest = ''): string {
  return `#/${section}${rest ? `/${rest}` : ''}`;
}

/** Navigates now: route updates synchronously, hashchange follows. */
export function go(section: Section, rest = '') {
  const target = href(section, rest);
  if (location.hash !== target) location.hash = target;
  Object.assign(route, parse(target));
}

/** Starts following location.hash; returns the stop function. */
export function startRouter(): () => void {
  const sync = () => {
    Object.assign(route, parse(location.hash));
    // Empty or unknown routes show the default section; say so in the URL
    // without adding a history entry.
    const head = location.hash.replace(/^#\/?/, '').split('/')[0];
    if (!sections.some((s) => s.id === head)) history.replaceState(null, '', href(route.section, route.rest));
  };
  window.addEventListener('hashchange', sync);
  sync();
  return () => window.removeEventListener('hashchange', sync);
}
