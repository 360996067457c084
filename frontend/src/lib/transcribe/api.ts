// Transcription calls and events (Go: app/transcribe*.go). Uploads and
// downloads are plain HTTP: the browser streams the file body itself, and
// under Wails the same routes answer through the asset server.
import { ApiError, desktopEndpoint, endpoint, on, transport } from '../api';

export type Task = 'transcribe' | 'translate';

export interface TranscribeOptions {
  /** Speech model ID; '' = Settings' default speech model. */
  model: string;
  /** Language code, or '' to detect it. */
  language: string;
  task: Task;
  /** 0 = greedy; 2..16 = beam search. */
  beamSize: number;
  /** Decode each window once at temperature 0 (faster, less robust). */
  noFallback: boolean;
  /** Decode silence too (by default only the speech Silero VAD finds). */
  noVAD?: boolean;
  /** Time each word (JSON exports list them). */
  wordTimestamps?: boolean;
  /** Fallback schedule; absent = OpenAI's 0, 0.2 … 1.0. */
  temperatures?: number[];
  /** OpenAI's thresholds; absent = its defaults (0.6, -1, 2.4). */
  noSpeechThreshold?: number;
  logprobThreshold?: number;
  compressionRatioThreshold?: number;
  /** Text that conditions the first window (names, spelling). */
  initialPrompt?: string;
}

export type QueueState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled' | 'interrupted';

export interface QueueItem {
  id: string;
  name: string;
  path?: string;
  uploaded: boolean;
  options: TranscribeOptions;
  state: QueueState;
  /** reading | loading | transcribing | saving while running. */
  phase?: string;
  /** Seconds of audio transcribed and in the file (total 0 until read). */
  done: number;
  total: number;
  /** Seconds left, -1 while unknown. */
  eta: number;
  /** What a running entry does beyond its phase ("Retrying window 2 at temperature 0.4"). */
  note?: string;
  /** This entry loaded the model (false: the previous file left it loaded). */
  loadedModel?: boolean;
  /** Latest segment's text while transcribing. */
  text?: string;
  error?: string;
  transcriptId?: number;
  jobId?: string;
  added: string;
}

export interface Segment {
  id: number;
  start: number;
  end: number;
  text: string;
  /** Word timings, when the transcript was made with word timestamps. */
  words?: { word: string; start: number; end: number; probability: number }[];
  /** Silence VAD skipped just before this segment, seconds. */
  skipped_before?: { start: number; end: number };
}

export interface Transcript {
  id: number;
  sourcePath: string;
  sourceName: string;
  model: string;
  language: string;
  task: Task | string;
  /** Nanoseconds (Go time.Duration). */
  durationNs: number;
  text: string;
  segments: Segment[] | null;
  createdAt: string;
}

export interface Language {
  code: string;
  name: string;
}

/** One row of the audio formats table (engine/audio/formats.go). */
export interface AudioFormat {
  container: string;
  name: string;
  magic: string;
  codecs: string;
  decoder: string;
  mime: string;
  extensions: string[];
}

export interface Conversation {
  id: number;
  title: string;
}

export interface TranscriptEvent {
  id: number;
  change: 'saved' | 'deleted';
}

export const exportFormats = ['txt', 'srt', 'vtt', 'json'] as const;
export type ExportFormat = (typeof exportFormats)[number];

export const enqueueTranscriptions = endpoint<QueueItem[], [req: { paths: string[]; options: TranscribeOptions }]>(
  'EnqueueTranscriptions',
  'POST',
  '/api/transcribe/queue',
);
export const getQueue = endpoint<QueueItem[]>('TranscriptionQueue', 'GET', '/api/transcribe/queue');
export const cancelTranscription = endpoint<void, [id: string]>('CancelTranscription', 'DELETE', '/api/transcribe/queue/{id}');
export const retryTranscription = endpoint<QueueItem, [id: string]>('RetryTranscription', 'POST', '/api/transcribe/queue/{id}/retry');
export const clearQueue = endpoint<QueueItem[]>('ClearTranscriptionQueue', 'POST', '/api/transcribe/queue/clear');
/** One line of a native dialog's type menu (app.FileFilter). */
export interface FileFilter {
  displayName: string;
  pattern: string;
}

/** The desktop window's native multiple-file chooser: the chosen paths, none when cancelled. */
export const chooseFiles = desktopEndpoint<string[] | null, [title: string, filters: FileFilter[]]>('ChooseFiles');

/** The chooser's filters, from the one formats table: every readable format, then each alone. */
export function audioFilters(formats: AudioFormat[]): FileFilter[] {
  const glob = (exts: string[]) => exts.map((e) => '*' + e).join(';');
  const usable = formats.filter((f) => f.extensions.length > 0);
  if (usable.length === 0) return [];
  return [
    { displayName: 'Audio files', pattern: glob(usable.flatMap((f) => f.extensions)) },
    ...usable.map((f) => ({ displayName: f.name, pattern: glob(f.extensions) })),
  ];
}

export const listAudioFormats = endpoint<AudioFormat[]>('AudioFormats', 'GET', '/api/transcribe/formats');
export const listLanguages = endpoint<Language[]>('TranscribeLanguages', 'GET', '/api/transcribe/languages');
export const listTranscripts = endpoint<Transcript[]>('ListTranscripts', 'GET', '/api/transcripts');
export const getTranscript = endpoint<Transcript, [id: number]>('GetTranscript', 'GET', '/api/transcripts/{id}');
export const deleteTranscript = endpoint<void, [id: number]>('DeleteTranscript', 'DELETE', '/api/transcripts/{id}');
export const saveTranscriptExport = endpoint<string, [id: number, format: ExportFormat]>(
  'SaveTranscriptExport',
  'POST',
  '/api/transcripts/{id}/save/{format}',
);
export const askAboutTranscript = endpoint<Conversation, [id: number]>(
  'AskAboutTranscript',
  'POST',
  '/api/transcripts/{id}/ask',
);

export const onQueue = (cb: (item: QueueItem) => void) => on<QueueItem>('transcribe-queue', cb);
export const onTranscripts = (cb: (ev: TranscriptEvent) => void) => on<TranscriptEvent>('transcripts', cb);
/** Native file drops in the desktop window (real paths). */
export const onFileDrop = (cb: (ev: { x: number; y: number; paths: string[] }) => void) =>
  on<{ x: number; y: number; paths: string[] }>('filedrop', cb);

export const audioURL = (id: number) => `/api/transcripts/${id}/audio`;
export const exportURL = (id: number, format: ExportFormat) => `/api/transcripts/${id}/export/${format}`;

export interface Upload {
  /** Resolves with the queued entry once the whole file is stored. */
  done: Promise<QueueItem>;
  abort(): void;
}

/**
 * Streams a file to Hark as the raw request body, reporting bytes sent.
 * XMLHttpRequest rather than fetch: only it reports upload progress.
 */
export function uploadFile(file: File, options: TranscribeOptions, onProgress: (sent: number, total: number) => void): Upload {
  const q = new URLSearchParams({
    name: file.name,
    size: String(file.size),
    task: options.task,
    beamSize: String(options.beamSize),
  });
  if (options.model) q.set('model', options.model);
  if (options.language) q.set('language', options.language);
  if (options.noFallback) q.set('noFallback', '1');
  if (options.noVAD) q.set('noVAD', '1');
  if (options.wordTimestamps) q.set('wordTimestamps', '1');
  if (options.temperatures?.length) q.set('temperatures', options.temperatures.join(','));
  for (const k of ['noSpeechThreshold', 'logprobThreshold', 'compressionRatioThreshold'] as const) {
    const v = options[k];
    if (v !== undefined && v !== null) q.set(k, String(v));
  }
  if (options.initialPrompt) q.set('initialPrompt', options.initialPrompt);
  const xhr = new XMLHttpRequest();
  const done = new Promise<QueueItem>((resolve, reject) => {
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let body: unknown;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = undefined;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as QueueItem);
      else {
        const msg = body && typeof body === 'object' && 'error' in body ? String(body.error) : `${xhr.status} ${xhr.statusText}`;
        reject(new ApiError(msg, xhr.status));
      }
    };
    xhr.onerror = () => reject(new ApiError('The upload failed: Hark is not responding.', 0));
    xhr.onabort = () => reject(new ApiError('Upload cancelled.', 0));
  });
  xhr.open('POST', `/api/transcribe/upload?${q}`);
  xhr.setRequestHeader('Content-Type', 'application/octet-stream');
  xhr.setRequestHeader('X-Hark', '1');
  xhr.send(file);
  return { done, abort: () => xhr.abort() };
}

/**
 * Exports a transcript. The browser downloads the file; the desktop window
 * cannot download, so Hark saves it to Downloads and returns the path.
 */
export async function exportTranscript(id: number, format: ExportFormat): Promise<string | null> {
  if (transport() === 'desktop') return saveTranscriptExport(id, format);
  const a = document.createElement('a');
  a.href = exportURL(id, format);
  a.download = '';
  document.body.append(a);
  a.click();
  a.remove();
  return null;
}
