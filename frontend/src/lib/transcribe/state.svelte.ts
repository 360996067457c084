// Live state of the Transcribe page, kept at module level so the queue and
// the chosen options survive switching sections. The server's queue is
// the truth; uploads in flight exist only here until the server has them.
import { errorMessage, onReconnect } from '../api';
import {
  cancelTranscription,
  clearQueue,
  retryTranscription,
  enqueueTranscriptions,
  getQueue,
  listTranscripts,
  onQueue,
  onTranscripts,
  uploadFile,
  type QueueItem,
  type Transcript,
  type TranscribeOptions,
} from './api';

export interface PendingUpload {
  key: number;
  name: string;
  sent: number;
  total: number;
  abort: () => void;
}

export const tx = $state({
  queue: [] as QueueItem[],
  uploads: [] as PendingUpload[],
  transcripts: [] as Transcript[],
  /** Problems not tied to one entry (a rejected request, a lost upload). */
  errors: [] as string[],
  /** Transcript shown in the viewer. */
  selected: null as number | null,
  loaded: false,
});

// The options (all but the model, which Settings remembers as the default
// speech model) are kept in localStorage, so a reload or the next launch
// starts with the same choices.
const optionsKey = 'hark.transcribe.options';

export const options = $state<TranscribeOptions>({
  model: '',
  language: '',
  task: 'transcribe',
  beamSize: 0,
  noFallback: false,
  noVAD: false,
  wordTimestamps: false,
  ...loadOptions(),
});

function loadOptions(): Partial<TranscribeOptions> {
  try {
    const saved = JSON.parse(localStorage.getItem(optionsKey) ?? 'null');
    if (!saved || typeof saved !== 'object') return {};
    delete saved.model;
    return saved as Partial<TranscribeOptions>;
  } catch {
    return {}; // unreadable: start from the defaults
  }
}

/** Remembers the options for the next start (called when one changes). */
export function saveOptions() {
  const { model: _model, ...rest } = $state.snapshot(options);
  try {
    localStorage.setItem(optionsKey, JSON.stringify(rest));
  } catch {
    // storage full or disabled: the choice lasts this session only
  }
}

function upsert(item: QueueItem) {
  const i = tx.queue.findIndex((q) => q.id === item.id);
  const before = i >= 0 ? tx.queue[i].state : undefined;
  if (i >= 0) tx.queue[i] = item;
  else tx.queue.push(item);
  // Show a fresh transcript unless the user is reading another one.
  if (item.state === 'done' && before !== 'done' && item.transcriptId && tx.selected === null) {
    tx.selected = item.transcriptId;
  }
}

export async function refreshQueue() {
  try {
    const list = (await getQueue()) ?? [];
    tx.queue = list;
  } catch (err) {
    report(err);
  }
}

export async function refreshTranscripts() {
  try {
    tx.transcripts = (await listTranscripts()) ?? [];
    if (tx.selected !== null && !tx.transcripts.some((t) => t.id === tx.selected)) tx.selected = null;
  } catch (err) {
    report(err);
  } finally {
    tx.loaded = true;
  }
}

export function report(err: unknown) {
  tx.errors = [...tx.errors, errorMessage(err)];
}

export function dismissErrors() {
  tx.errors = [];
}

/** Queues files the desktop window dropped, by their real paths. */
export async function addPaths(paths: string[]) {
  if (paths.length === 0) return;
  try {
    for (const item of await enqueueTranscriptions({ paths, options: { ...options } })) upsert(item);
  } catch (err) {
    report(err);
  }
}

let uploadKey = 0;

/** Uploads files one after another (a parallel upload only slows each). */
export async function addFiles(files: File[]) {
  const pending = files.map((f) => ({ file: f, key: ++uploadKey }));
  for (const p of pending) tx.uploads.push({ key: p.key, name: p.file.name, sent: 0, total: p.file.size, abort: () => {} });
  const opts = { ...options };
  for (const { file, key } of pending) {
    if (!tx.uploads.some((u) => u.key === key)) continue; // cancelled before its turn
    const up = uploadFile(file, opts, (sent, total) => {
      const u = tx.uploads.find((x) => x.key === key);
      if (u) Object.assign(u, { sent, total });
    });
    const u = tx.uploads.find((x) => x.key === key);
    if (u) u.abort = up.abort;
    try {
      upsert(await up.done);
    } catch (err) {
      if (tx.uploads.some((x) => x.key === key)) report(`${file.name}: ${errorMessage(err)}`);
    } finally {
      tx.uploads = tx.uploads.filter((x) => x.key !== key);
    }
  }
}

export function cancelUpload(key: number) {
  const u = tx.uploads.find((x) => x.key === key);
  tx.uploads = tx.uploads.filter((x) => x.key !== key);
  u?.abort();
}

export async function cancelItem(item: QueueItem) {
  try {
    await cancelTranscription(item.id);
  } catch (err) {
    report(`${item.name}: ${errorMessage(err)}`);
  }
}

export async function retryItem(item: QueueItem) {
  try {
    await retryTranscription(item.id);
  } catch (err) {
    report(`${item.name}: ${errorMessage(err)}`);
  }
}

export async function clearFinished() {
  try {
    tx.queue = (await clearQueue()) ?? [];
  } catch (err) {
    report(err);
  }
}

let started = false;

export function startTranscribeState() {
  if (started) return;
  started = true;
  onQueue(upsert);
  onTranscripts(() => void refreshTranscripts());
  onReconnect(() => {
    void refreshQueue();
    void refreshTranscripts();
  });
  void refreshQueue();
  void refreshTranscripts();
}
