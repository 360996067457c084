// The Chat page's live state: conversations, the open thread, the reply
// being streamed, and the models to choose from. Components read `chat`
// and call the actions below; "chat" events from Go keep it current.
import { errorMessage, onReconnect, on, saveSettings, transport } from '../api';
import { href, route } from '../router.svelte';
import { settings, settingsSaved } from '../settings.svelte';
import * as api from './api';
import type { ChatEvent, ChatModel, Conversation, Message } from './api';

export interface Streaming {
  conversationId: number;
  text: string;
  loading: boolean; // the model is being loaded
  started: boolean; // the prompt is built and tokens may arrive
  stopping: boolean;
  tokens: number; // generated so far
  tps: number; // tokens per second so far
}

export const chat = $state({
  conversations: [] as Conversation[],
  loaded: false,
  currentId: 0,
  messages: [] as Message[],
  streaming: null as Streaming | null,
  /** The context-trim notice of the latest reply in this thread. */
  notice: '',
  /** Where the desktop window saved the last Markdown export. */
  saved: '',
  error: '',
  models: [] as ChatModel[],
  modelsLoaded: false,
  modelsError: '',
});

export function current(): Conversation | undefined {
  return chat.conversations.find((c) => c.id === chat.currentId);
}

/** The model a new message would use: the thread's, else the default. */
export function activeModel(): string {
  return current()?.model || settings.value?.defaultChatModel || '';
}

function fail(err: unknown) {
  chat.error = errorMessage(err);
}

export async function loadModels() {
  try {
    chat.models = (await api.listChatModels()) ?? [];
    chat.modelsError = '';
  } catch (err) {
    chat.modelsError = errorMessage(err);
  } finally {
    chat.modelsLoaded = true;
  }
}

export async function loadConversations() {
  try {
    chat.conversations = (await api.listConversations()) ?? [];
  } catch (err) {
    fail(err);
  } finally {
    chat.loaded = true;
  }
}

/** Opens a conversation (0: none) and shows it in the URL for reloads. */
export async function select(id: number) {
  if (chat.currentId !== id) {
    chat.notice = '';
    chat.saved = '';
    chat.error = '';
  }
  chat.currentId = id;
  // Replace rather than push: switching threads should not fill the
  // back button's history.
  const rest = id ? String(id) : '';
  if (route.section === 'chat' && route.rest !== rest) {
    history.replaceState(null, '', href('chat', rest));
    route.rest = rest;
  }
  if (!id) {
    chat.messages = [];
    return;
  }
  try {
    const msgs = (await api.getMessages(id)) ?? [];
    if (chat.currentId === id) chat.messages = msgs;
  } catch (err) {
    fail(err);
  }
}

/** Picks up a reply that was already streaming when the page loaded. */
async function resume() {
  try {
    const st = await api.chatStatus();
    if (st?.generating && st.conversationId && !chat.streaming) {
      chat.streaming = { conversationId: st.conversationId, text: st.text ?? '', loading: false, started: true, stopping: false, tokens: 0, tps: 0 };
    }
  } catch {
    /* an older Go side: nothing to resume */
  }
}

export async function newConversation(): Promise<Conversation | undefined> {
  try {
    const c = await api.createConversation({ model: activeModel() });
    chat.conversations = [c, ...chat.conversations.filter((x) => x.id !== c.id)];
    await select(c.id);
    return c;
  } catch (err) {
    fail(err);
  }
}

export async function send(text: string): Promise<boolean> {
  chat.error = '';
  let id = chat.currentId;
  if (!id) {
    const c = await newConversation();
    if (!c) return false;
    id = c.id;
  }
  const before = ends.get(id) ?? 0;
  // Clear the old notice before asking: the reply's "start" event, which
  // carries the new notice, can arrive before the HTTP answer does.
  chat.notice = '';
  try {
    const res = await api.sendMessage(id, { text });
    replaceConversation(res.conversation);
    addMessage(res.message);
    beginStreaming(id, before);
    return true;
  } catch (err) {
    fail(err);
    return false;
  }
}

/** Sends the result of one of the model's tool calls; the model then replies. */
export async function answerTool(callId: string, content: string): Promise<boolean> {
  const id = chat.currentId;
  if (!id) return false;
  chat.error = '';
  chat.notice = '';
  const before = ends.get(id) ?? 0;
  try {
    const res = await api.answerToolCall(id, { callId, content });
    addMessage(res.message);
    // The call now shows as answered.
    chat.messages = chat.messages.map((m) =>
      m.toolCalls?.some((c) => c.id === callId)
        ? { ...m, toolCalls: m.toolCalls.map((c) => (c.id === callId ? { ...c, answered: true } : c)) }
        : m,
    );
    beginStreaming(id, before);
    return true;
  } catch (err) {
    fail(err);
    return false;
  }
}

/** Reads the thread again (a reply's tool calls are parsed on the Go side). */
async function reloadMessages(id: number) {
  try {
    const msgs = (await api.getMessages(id)) ?? [];
    if (chat.currentId === id) chat.messages = msgs;
  } catch (err) {
    fail(err);
  }
}

export async function stop() {
  const s = chat.streaming;
  if (!s) return;
  s.stopping = true;
  try {
    await api.stopGeneration(s.conversationId);
  } catch (err) {
    fail(err);
  }
}

export async function regenerate() {
  const id = chat.currentId;
  if (!id || chat.streaming) return;
  chat.error = '';
  const before = ends.get(id) ?? 0;
  const last = chat.messages[chat.messages.length - 1];
  // Drop the old reply first: SQLite may give the new one the same id, and
  // its events can arrive before this call returns.
  const kept = chat.messages;
  if (last?.role === 'assistant') chat.messages = kept.slice(0, -1);
  try {
    await api.regenerate(id);
    beginStreaming(id, before);
  } catch (err) {
    if (chat.currentId === id) chat.messages = kept;
    fail(err);
  }
}

export async function update(id: number, req: api.ConversationUpdate): Promise<boolean> {
  try {
    replaceConversation(await api.updateConversation(id, req));
    return true;
  } catch (err) {
    fail(err);
    return false;
  }
}

export async function remove(id: number) {
  try {
    await api.deleteConversation(id);
    chat.conversations = chat.conversations.filter((c) => c.id !== id);
    if (chat.currentId === id) await select(chat.conversations[0]?.id ?? 0);
  } catch (err) {
    fail(err);
  }
}

/** Chooses the model for the open thread and remembers it as the default. */
export async function chooseModel(id: string) {
  const c = current();
  if (c && c.model !== id) await update(c.id, { model: id });
  const s = settings.value;
  if (s && s.defaultChatModel !== id) {
    try {
      settingsSaved(await saveSettings({ ...s, defaultChatModel: id }));
    } catch (err) {
      fail(err);
    }
  }
}

export async function exportMarkdown(c: Conversation) {
  chat.saved = '';
  try {
    if (transport() === 'desktop') {
      // WebKit's window cannot download a blob: Hark writes the file.
      chat.saved = await api.saveConversationExport(c.id);
      return;
    }
    const md = await api.exportConversation(c.id);
    const url = URL.createObjectURL(new Blob([md], { type: 'text/markdown;charset=utf-8' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${c.title.replace(/[^\w\- ]+/g, '').trim().slice(0, 60) || 'conversation'}.md`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (err) {
    fail(err);
  }
}

/**
 * Counts finished replies per conversation. The reply's events can beat
 * the HTTP answer that started it (a model that fails at once), so a
 * request only marks the thread as streaming if no reply ended meanwhile.
 */
const ends = new Map<number, number>();

function beginStreaming(id: number, endsBefore: number) {
  if (!chat.streaming && (ends.get(id) ?? 0) === endsBefore) {
    chat.streaming = { conversationId: id, text: '', loading: false, started: false, stopping: false, tokens: 0, tps: 0 };
  }
}

function addMessage(m: Message) {
  if (m.conversationId !== chat.currentId || chat.messages.some((x) => x.id === m.id)) return;
  chat.messages = [...chat.messages, m].sort((a, b) => a.id - b.id);
}

function replaceConversation(c: Conversation) {
  const rest = chat.conversations.filter((x) => x.id !== c.id);
  chat.conversations = [c, ...rest].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

function onEvent(ev: ChatEvent) {
  if (ev.type === 'conversation' || ev.type === 'deleted') {
    void loadConversations();
    if (ev.type === 'deleted' && ev.conversationId === chat.currentId) void select(0);
    return;
  }
  let s = chat.streaming;
  if (!s || s.conversationId !== ev.conversationId) {
    // A reply started elsewhere (another window): follow it from here.
    chat.streaming = { conversationId: ev.conversationId, text: '', loading: false, started: false, stopping: false, tokens: 0, tps: 0 };
    s = chat.streaming;
  }
  const here = ev.conversationId === chat.currentId;
  switch (ev.type) {
    case 'loading':
      s.loading = true;
      break;
    case 'start':
      s.loading = false;
      s.started = true;
      if (here) chat.notice = ev.notice ?? '';
      break;
    case 'delta':
      s.started = true;
      s.text += ev.delta ?? '';
      if (ev.live) {
        s.tokens = ev.live.tokens;
        s.tps = ev.live.tps;
      }
      break;
    case 'done':
    case 'error':
      chat.streaming = null;
      ends.set(ev.conversationId, (ends.get(ev.conversationId) ?? 0) + 1);
      if (here) {
        if (ev.message?.id) {
          addMessage(ev.message);
          if (current()?.sampling?.tools?.trim()) void reloadMessages(ev.conversationId);
        }
        else if (ev.type === 'done' && !ev.stats?.stopped) chat.notice = 'The model ended its reply without writing anything.';
        if (ev.type === 'error') chat.error = ev.error ?? 'The reply failed.';
      }
      break;
  }
}

/**
 * The event hub drops events for a client that falls behind rather than
 * stall generation, and a dropped "done" would leave the thread looking
 * busy forever. While a reply streams, ask the server now and then; if it
 * twice says nothing runs here, reload the thread.
 */
function watchdog(): () => void {
  let misses = 0;
  const timer = setInterval(async () => {
    const s = chat.streaming;
    if (!s) {
      misses = 0;
      return;
    }
    try {
      const st = await api.chatStatus();
      misses = st.generating && st.conversationId === s.conversationId ? 0 : misses + 1;
    } catch {
      return;
    }
    if (misses >= 2 && chat.streaming === s) {
      misses = 0;
      chat.streaming = null;
      if (s.conversationId === chat.currentId) void select(chat.currentId);
    }
  }, 2000);
  return () => clearInterval(timer);
}

/** Loads everything and follows events; safe to call on every mount. */
export function startChat(): () => void {
  const offs = [
    on<ChatEvent>('chat', onEvent),
    on('library', () => void loadModels()),
    onReconnect(() => {
      void loadConversations();
      void loadModels();
      if (chat.currentId) void select(chat.currentId);
    }),
    watchdog(),
  ];
  void (async () => {
    await Promise.all([loadConversations(), loadModels(), resume()]);
    // #/chat/new (the Library's "Chat with this") opens an empty thread on
    // the default model instead of the newest conversation.
    const fromUrl = Number(route.rest) || 0;
    const fresh = route.rest === 'new';
    const id = fresh ? 0 : chat.conversations.some((c) => c.id === fromUrl) ? fromUrl : (chat.conversations[0]?.id ?? 0);
    await select(id);
  })();
  return () => {
    for (const off of offs) off();
  };
}
