/**
 * Hark's one client module: every call from the UI to Go goes through here.
 *
 * Two transports, picked per call:
 *  - Desktop (Wails): Go's app.Service is bound, so `window.go.app.Service.X(...)`
 *    returns a Promise; events arrive through `window.runtime.EventsOn`.
 *  - Browser (`hark serve`): the same methods are HTTP JSON routes under /api,
 *    and events come from one shared EventSource on /api/events.
 *
 * ADDING AN ENDPOINT (one line; the Go method and route must both exist):
 *
 *   export const listModels = endpoint<Model[]>('ListModels', 'GET', '/api/models');
 *   export const getModel   = endpoint<Model, [id: string]>('GetModel', 'GET', '/api/models/{id}');
 *   export const startChat  = endpoint<Chat, [req: ChatRequest]>('StartChat', 'POST', '/api/chats');
 *   export const renameChat = endpoint<Chat, [id: string, req: RenameReq]>('RenameChat', 'PATCH', '/api/chats/{id}');
 *
 * Rules for the HTTP side (Wails always passes all arguments positionally):
 *  - Each `{name}` in the path consumes the next argument, URL-encoded.
 *  - For POST/PUT/PATCH the next remaining argument is the JSON body.
 *  - For GET/DELETE a remaining plain-object argument becomes the query string.
 *  - A 204 or empty body resolves to undefined.
 * Errors reject with ApiError (message from Go's `{error}`; status is the
 * HTTP status, or 0 under Wails where only the message is known).
 *
 * EVENTS: `on<T>('topic', cb)` returns an unsubscribe function. Topics are the
 * names Go publishes (settings, job, later library, token, ...). Add a typed
 * wrapper next to the payload type if you like (see onJob below).
 * `onReconnect(cb)` fires after the browser event stream reconnects (events may
 * have been missed meanwhile): re-fetch state there. `onStream(cb)` reports
 * whether the stream is up (the app shows a banner while it is not).
 */

// ---------------------------------------------------------------- types

export interface Settings {
  modelRoots: string[];
  defaultChatModel: string;
  defaultSpeechModel: string;
  /** 'auto' or the name of one of Info.backends; the server validates it. */
  backend: string;
  watchBudget?: number;
  theme?: 'system' | 'light' | 'dark';
  /** The /v1 API is on unless this is set. */
  apiDisabled?: boolean;
  apiKey?: string;
  corsOrigins?: string[];
  idleUnloadMinutes?: number;
  maxUploadMB?: number;
  /** The KV cache new chats keep (one of Info.kvBitsChoices' bits: 32 float32, 16 f16, 8 or 4 quantized; 0: the engine's default), which the Library's fit verdict assumes. */
  kvBits?: number;
  /** The context length (tokens) the Library's fit verdict assumes; 0: the engine's default. */
  contextTokens?: number;
}

/** The compute backend in use and why, as the server's mlx.Select chose it. */
export interface BackendStatus {
  name: string;
  /** How users see it: "CPU", "MLX (Metal)". */
  label: string;
  asked: string;
  /** Where the choice came from: --backend, HARK_BACKEND, setting or default. */
  from: string;
  reason: string;
  device: { device: string; gpu: boolean; library?: string; version?: string; detail?: string };
}

/** A backend this build has; unavailable says why it cannot open here. */
export interface BackendOption {
  name: string;
  label: string;
  unavailable?: string;
}

/** A KV cache the engine offers: bits as a setting stores it (32: float32), its label, and whether it is the default (what 0 means). */
export interface KVChoice {
  bits: number;
  label: string;
  default?: boolean;
}

export interface Info {
  version: string;
  dataDir: string;
  dbPath: string;
  mode: 'desktop' | 'browser' | string;
  /** The compute backend in use and why, and the ones this build has (the choices besides auto). */
  backend?: BackendStatus;
  backends?: BackendOption[];
  /** The KV caches Settings and a conversation can keep (the engine's list), the default first and marked. */
  kvBitsChoices?: KVChoice[];
  /** Model folders found on this machine (LM Studio's) that Settings offers to add. */
}

export type JobState = 'running' | 'done' | 'failed' | 'cancelled';

export interface Job {
  id: string;
  kind: string;
  title: string;
  state: JobState;
  done: number;
  total: number;
  unit?: string;
  message?: string;
  error?: string;
  result?: unknown;
  started: string;
  finished?: string;
}

// ------------------------------------------------------------ endpoints

export const getInfo = endpoint<Info>('GetInfo', 'GET', '/api/info');
export const getSettings = endpoint<Settings>('GetSettings', 'GET', '/api/settings');
export const saveSettings = endpoint<Settings, [settings: Settings]>('SaveSettings', 'PUT', '/api/settings');
export const listJobs = endpoint<Job[]>('ListJobs', 'GET', '/api/jobs');
export const cancelJob = endpoint<void, [id: string]>('CancelJob', 'DELETE', '/api/jobs/{id}');

// Library (owned by the model library work; Go side: app/library.go).
export type ModelKind = 'chat' | 'speech' | 'other';
export interface QuantOverride {
  bits?: number;
  groupSize?: number;
  mode?: string;
  skip?: boolean;
}
export interface Quant {
  bits: number;
  groupSize: number;
  /** "affine" when the config names no mode. */
  mode: string;
  /** A transformers quant_method (gptq, awq...) instead of MLX quantization. */
  method?: string;
  /** Per-module overrides keyed by module path. */
  overrides?: Record<string, QuantOverride>;
}
export interface ModelFile {
  name: string;
  size: number;
  blob?: string;
  problem?: string;
}
export interface Model {
  /** The snapshot folder; unique (the same snapshot may sit in two roots). */
  path: string;
  /** The fingerprint for HF snapshots, else the path. */
  id: string;
  /** hf:org/repo@commit */
  fingerprint?: string;
  source: 'hf' | 'dir';
  root: string;
  unit: string;
  repo?: string;
  commit?: string;
  refs: string[];
  contentId?: string;
  configHash?: string;
  modelType?: string;
  architectures: string[];
  kind: ModelKind;
  family?: string;
  params: number;
  /** Parameters one token uses, for mixture-of-experts models. */
  activeParams?: number;
  dtype?: string;
  quant?: Quant;
  contextLength?: number;
  /** Empty in lists; filled by getModel. */
  files: ModelFile[];
  fileCount: number;
  size: number;
  modified: string;
  supported: boolean;
  /** Why the model cannot run. */
  reason?: string;
  problems: string[];
  incomplete: boolean;
  /** Whether it fits in this machine's memory, from the engine's estimate. */
  fit?: 'fits' | 'tight' | 'too_big';
  memoryNeeded?: number;
  downloading?: boolean;
}
export interface ModelDetails extends Model {
  config?: unknown;
  configError?: string;
}
export interface LibraryRoot {
  path: string;
  /** "HF_HUB_CACHE", "HF_HOME", "default" (the HF cache) or "settings". */
  origin: string;
  error?: string;
}
export interface LibraryStatus {
  roots: LibraryRoot[] | null;
  /** False when the OS ran out of file watches (then `reason` says so). */
  watching: boolean;
  reason?: string;
  lastScan?: string;
}
export interface LibraryEvent {
  type: 'changed';
  units?: string[];
  full?: boolean;
  status: LibraryStatus;
}
export interface VerifyResult {
  id: string;
  path: string;
  ok: boolean;
  checked: number;
  bytes: number;
  mismatches: { file: string; blob: string; expected: string; actual: string; algo: string }[];
  unhashed: string[];
  problems: string[];
}
export interface DeleteRequest {
  id: string;
  /** Every snapshot of the repo, not just this one. */
  repo: boolean;
  /** Only compute what would be freed. */
  dryRun: boolean;
}
export interface DeleteResult {
  paths: string[];
  blobs: number;
  freed: number;
  dryRun: boolean;
  kept: number;
}
export const listModels = endpoint<Model[]>('ListModels', 'GET', '/api/models');
export const libraryStatus = endpoint<LibraryStatus>('LibraryStatus', 'GET', '/api/models/status');
export const getModel = endpoint<ModelDetails, [id: string]>('GetModel', 'GET', '/api/models/{id}');
export const rescanModels = endpoint<{ models: number; duration: number }>('RescanModels', 'POST', '/api/models/rescan');
/** Starts a verify job (result: VerifyResult). */
export const verifyModel = endpoint<Job, [id: string]>('VerifyModel', 'POST', '/api/models/{id}/verify');
export const deleteModel = endpoint<DeleteResult, [req: DeleteRequest]>('DeleteModel', 'POST', '/api/models/delete');
/** Starts a pull job for "org/repo[@revision]" (result: fingerprint, files, sizes). */
export const pullModel = endpoint<Job, [ref: string]>('PullModel', 'POST', '/api/models/pull');

/** A Hugging Face Hub search (library/hub.go). */
export interface HubQuery {
  text: string;
  kind?: 'chat' | 'speech' | '';
  mlx?: boolean;
  limit?: number;
}

export interface HubModel {
  repo: string;
  pipeline_tag?: string;
  kind?: string;
  model_type?: string;
  supported: boolean;
  mlx: boolean;
  gated: boolean;
  downloads: number;
  likes: number;
  last_modified?: string;
  params?: number;
  bytes?: number;
  fit?: 'fits' | 'tight' | 'too_big';
}

export interface HubCard extends HubModel {
  commit: string;
  files: { name: string; size: number }[];
  size: number;
  readme: string;
}

export interface Starter {
  repo: string;
  kind: 'chat' | 'speech';
  model_type: string;
  params: number;
  bits: number;
  note: string;
  bytes: number;
}

export const starterModels = endpoint<Starter[]>('StarterModels', 'GET', '/api/hub/starters');
export const searchHub = endpoint<HubModel[], [q: HubQuery]>('SearchHub', 'POST', '/api/hub/search');
export const hubCard = endpoint<HubCard, [repo: string]>('HubCard', 'GET', '/api/hub/models/{id}');
/** Whether the Hugging Face Hub (or HF_ENDPOINT) answers: Resume needs it. */
export interface HubInfo {
  endpoint: string;
  reachable: boolean;
  reason?: string;
}
export const hubStatus = endpoint<HubInfo>('HubStatus', 'GET', '/api/models/hub');
/** Starts a pull job finishing an Incomplete snapshot (HTTP Range resumes partial files). */
export const resumeModel = endpoint<Job, [id: string]>('ResumeModel', 'POST', '/api/models/{id}/resume');
/** Shows the model's folder in Finder (xdg-open on Linux); returns the path. */
export const openModelFolder = endpoint<string, [id: string]>('OpenModelFolder', 'POST', '/api/models/{id}/open');

// --------------------------------------------------------------- events

export const onJob = (cb: (job: Job) => void) => on<Job>('job', cb);
export const onSettings = (cb: (s: Settings) => void) => on<Settings>('settings', cb);
export const onLibrary = (cb: (e: LibraryEvent) => void) => on<LibraryEvent>('library', cb);

// ============================================================ machinery

export class ApiError extends Error {
  readonly status: number;
  constructor(message: string, status = 0) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** Turns anything thrown by a call into a message fit for the user. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  return String(err);
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type WailsService = Record<string, ((...args: unknown[]) => Promise<unknown>) | undefined>;

interface WailsRuntime {
  EventsOn(topic: string, cb: (...data: unknown[]) => void): (() => void) | void;
  EventsOff(topic: string, ...more: string[]): void;
}

declare global {
  interface Window {
    go?: { app?: { Service?: WailsService } };
    runtime?: WailsRuntime;
  }
}

function wailsService(): WailsService | undefined {
  return typeof window === 'undefined' ? undefined : window.go?.app?.Service;
}

/** 'desktop' inside the Wails window, 'browser' under hark serve. */
export function transport(): 'desktop' | 'browser' {
  return wailsService() ? 'desktop' : 'browser';
}

/**
 * Declares an API call available on both transports. T is the resolved value;
 * A the argument tuple (same order as the Go method's parameters).
 */
export function endpoint<T, A extends unknown[] = []>(
  method: string,
  http: HttpMethod,
  path: string,
): (...args: A) => Promise<T> {
  return (...args: A) => call<T>(method, http, path, args);
}

/**
 * Declares a call only the desktop window has (its native dialogs): the
 * browser keeps its own mechanisms and never makes it.
 */
export function desktopEndpoint<T, A extends unknown[] = []>(method: string): (...args: A) => Promise<T> {
  return (...args: A) =>
    wailsService()
      ? call<T>(method, 'POST', '', args)
      : Promise.reject(new ApiError(`${method} exists only in the desktop window`, 404));
}

async function call<T>(method: string, http: HttpMethod, path: string, args: unknown[]): Promise<T> {
  const svc = wailsService();
  if (svc) {
    const fn = svc[method];
    if (typeof fn !== 'function') throw new ApiError(`${method} is not available in this build of Hark`, 404);
    try {
      return (await fn(...args)) as T;
    } catch (err) {
      throw new ApiError(errorMessage(err));
    }
  }
  const rest = [...args];
  let url = path.replace(/\{[^}]+\}/g, () => encodeURIComponent(String(rest.shift() ?? '')));
  // X-Hark marks the request as the app's own: the server refuses state
  // changes without Origin unless a web page could not have forged them.
  const init: RequestInit = { method: http, headers: { Accept: 'application/json', 'X-Hark': '1' } };
  const extra = rest.shift();
  if (extra !== undefined) {
    if (http === 'GET' || http === 'DELETE') {
      url += queryString(extra);
    } else {
      init.body = JSON.stringify(extra);
      init.headers = { ...init.headers, 'Content-Type': 'application/json' };
    }
  }
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch {
    throw new ApiError('Hark is not responding. Is `hark serve` still running?', 0);
  }
  const text = await res.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (!res.ok) {
    const msg =
      body && typeof body === 'object' && 'error' in body
        ? String((body as { error: unknown }).error)
        : (typeof body === 'string' && body.trim()) || `${res.status} ${res.statusText}`;
    throw new ApiError(msg, res.status);
  }
  return body as T;
}

function queryString(v: unknown): string {
  if (!v || typeof v !== 'object') return '';
  const q = new URLSearchParams();
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (val === undefined || val === null) continue;
    for (const item of Array.isArray(val) ? val : [val]) q.append(k, String(item));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// --------------------------------------------------------------- events

type Listener = (data: unknown) => void;

const listeners = new Map<string, Set<Listener>>();
const detach = new Map<string, () => void>(); // per-topic transport hook-up
const reconnectListeners = new Set<() => void>();
const streamListeners = new Set<(connected: boolean) => void>();
let source: EventSource | null = null;
let lostStream = false;

function dispatch(topic: string, data: unknown) {
  for (const cb of [...(listeners.get(topic) ?? [])]) {
    try {
      cb(data);
    } catch (err) {
      console.error(`hark: "${topic}" listener failed`, err);
    }
  }
}

const sseHandlers = new Map<string, (ev: Event) => void>(); // topic → handler on `source`

function eventSource(): EventSource {
  if (source) return source;
  const es = new EventSource('/api/events');
  source = es;
  for (const [topic, handler] of sseHandlers) es.addEventListener(topic, handler);
  es.addEventListener('open', () => {
    for (const cb of [...streamListeners]) cb(true);
    if (lostStream) {
      lostStream = false;
      for (const cb of [...reconnectListeners]) cb();
    }
  });
  es.addEventListener('error', () => {
    lostStream = true;
    for (const cb of [...streamListeners]) cb(false);
    // The browser retries dropped connections itself, but gives up for good
    // on an HTTP error status: start a fresh stream a little later.
    if (es.readyState === EventSource.CLOSED) {
      source = null;
      setTimeout(eventSource, 3000);
    }
  });
  return es;
}

function attach(topic: string): () => void {
  const rt = typeof window === 'undefined' ? undefined : window.runtime;
  if (wailsService() && rt) {
    const off = rt.EventsOn(topic, (data: unknown) => dispatch(topic, data));
    return typeof off === 'function' ? off : () => rt.EventsOff(topic);
  }
  const handler = (ev: Event) => {
    const raw = (ev as MessageEvent<string>).data;
    let data: unknown = raw;
    try {
      data = JSON.parse(raw);
    } catch {
      /* not JSON: pass the text through */
    }
    dispatch(topic, data);
  };
  sseHandlers.set(topic, handler);
  if (source) source.addEventListener(topic, handler);
  else eventSource();
  return () => {
    sseHandlers.delete(topic);
    source?.removeEventListener(topic, handler);
  };
}

/** Subscribes to a Go event topic; returns the unsubscribe function. */
export function on<T = unknown>(topic: string, cb: (data: T) => void): () => void {
  let set = listeners.get(topic);
  if (!set) {
    set = new Set();
    listeners.set(topic, set);
  }
  const fn = cb as Listener;
  set.add(fn);
  if (!detach.has(topic)) detach.set(topic, attach(topic));
  return () => {
    const s = listeners.get(topic);
    if (!s?.delete(fn) || s.size > 0) return;
    listeners.delete(topic);
    detach.get(topic)?.();
    detach.delete(topic);
  };
}

/** Calls cb each time the browser event stream comes back after a drop. */
export function onReconnect(cb: () => void): () => void {
  reconnectListeners.add(cb);
  if (!wailsService()) eventSource();
  return () => reconnectListeners.delete(cb);
}

/**
 * Reports whether the browser event stream is connected (false while
 * `hark serve` is unreachable). The desktop transport is always connected.
 */
export function onStream(cb: (connected: boolean) => void): () => void {
  if (wailsService()) {
    cb(true);
    return () => {};
  }
  streamListeners.add(cb);
  eventSource();
  return () => streamListeners.delete(cb);
}
