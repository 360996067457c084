// Chat endpoints and event types (Go: app/chat.go routes, app/chat the feature).
import { endpoint, on } from '../api';

/** A conversation's sampling overrides; a missing field means the model's default. */
export interface Sampling {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repetitionPenalty?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  maxTokens?: number;
  seed?: number;
  /** KV cache quantization: 4 or 8 bits, in groups of 32, 64 or 128. */
  kvBits?: number;
  kvGroup?: number;
  /** Speculative decoding: 'prompt-lookup', or a draft model's library ID. */
  draft?: string;
  /** The reply ends at any of these, which are never shown. */
  stop?: string[];
  /** JSON output: any object, or a document valid against jsonSchema. */
  json?: '' | 'object' | 'schema';
  jsonSchema?: string;
  /** The template's thinking switch (Qwen3 enable_thinking); unset: its default. */
  think?: boolean;
  /** Tool definitions for the chat template, as a JSON list. */
  tools?: string;
  /** Token probabilities with this many alternatives per token; unset: off. */
  logprobs?: number;
}

/** A generated token's log probability and the likeliest alternatives. */
export interface TokenLogprob {
  token: number;
  text: string;
  logprob: number;
  top?: { token: number; text: string; logprob: number }[];
}

/** The reply's speed so far, carried by "delta" events. */
export interface LiveStats {
  tokens: number;
  tps: number;
}

export interface Conversation {
  id: number;
  title: string;
  model: string;
  systemPrompt: string;
  sampling: Sampling | null;
  /** The transcript it is about ("Ask about this transcript"). */
  transcriptId?: number;
  createdAt: string;
  updatedAt: string;
}

export interface ChatStats {
  model: string;
  completion?: boolean;
  finishReason: string;
  stopped?: boolean;
  error?: string;
  ttftMs: number;
  promptTokens: number;
  reusedTokens: number;
  prefilledTokens: number;
  tokens: number;
  promptTps: number;
  genTps: number;
  trimmed?: number;
  loadMs?: number;
  kvBytes?: number;
  kvBits?: number;
  drafted?: number;
  accepted?: number;
  logprobs?: TokenLogprob[];
}

/** A tool call a reply made (Go: app/chat/tools.go). */
export interface ToolCall {
  /** Stable: call_<message id>_<index>. */
  id: string;
  name: string;
  /** A JSON text. */
  arguments: string;
  /** A tool message answers it. */
  answered: boolean;
}

export interface Message {
  id: number;
  conversationId: number;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  stats: Partial<ChatStats> | null;
  createdAt: string;
  /** A tool result: the call it answers and the tool's name. */
  toolCallId?: string;
  toolName?: string;
  /** A reply's tool calls, and its text without them. */
  toolCalls?: ToolCall[];
  text?: string;
  /** Why a call in the reply could not be read. */
  toolCallError?: string;
}

export interface ChatModel {
  id: string;
  name: string;
  path: string;
  family?: string;
  params: number;
  quant?: string;
  contextLength?: number;
  /** No chat template: the model continues text rather than answering. */
  completion: boolean;
  problem?: string;
  commit?: string;
  refs?: string[];
  fit?: 'fits' | 'tight' | 'too_big';
  memoryNeeded?: number;
  /** The verdict for each KV cache a conversation can keep (kvGroup 0: the default group). */
  fits?: { kvBits: number; kvGroup: number; fit: 'fits' | 'tight' | 'too_big'; memoryNeeded: number }[];
}

export interface ChatStatus {
  generating: boolean;
  conversationId?: number;
  text?: string;
  loadedModel?: string;
}

export interface ChatEvent {
  conversationId: number;
  type: 'loading' | 'start' | 'delta' | 'done' | 'error' | 'conversation' | 'deleted';
  delta?: string;
  done?: boolean;
  model?: string;
  completion?: boolean;
  notice?: string;
  error?: string;
  message?: Message;
  stats?: ChatStats;
  live?: LiveStats;
}

export interface ConversationUpdate {
  title?: string;
  model?: string;
  systemPrompt?: string;
  sampling?: Sampling;
}

export const listConversations = endpoint<Conversation[]>('ListConversations', 'GET', '/api/chats');
export const createConversation = endpoint<Conversation, [req: Partial<Conversation>]>(
  'CreateConversation',
  'POST',
  '/api/chats',
);
export const updateConversation = endpoint<Conversation, [id: number, req: ConversationUpdate]>(
  'UpdateConversation',
  'PATCH',
  '/api/chats/{id}',
);
export const deleteConversation = endpoint<void, [id: number]>('DeleteConversation', 'DELETE', '/api/chats/{id}');
export const getMessages = endpoint<Message[], [id: number]>('GetMessages', 'GET', '/api/chats/{id}/messages');
export const exportConversation = endpoint<string, [id: number]>('ExportConversation', 'GET', '/api/chats/{id}/export');
/** Saves the Markdown export into Downloads (the desktop window's Export); resolves to the path. */
export const saveConversationExport = endpoint<string, [id: number]>(
  'SaveConversationExport',
  'POST',
  '/api/chats/{id}/save',
);
export const sendMessage = endpoint<{ conversation: Conversation; message: Message }, [id: number, req: { text: string }]>(
  'SendMessage',
  'POST',
  '/api/chats/{id}/messages',
);
/** Answers one of the model's tool calls with its result; the next reply streams as events. */
export const answerToolCall = endpoint<
  { conversation: Conversation; message: Message },
  [id: number, req: { callId: string; content: string }]
>('AnswerToolCall', 'POST', '/api/chats/{id}/tool-results');
export const regenerate = endpoint<Conversation, [id: number]>('Regenerate', 'POST', '/api/chats/{id}/regenerate');
export const stopGeneration = endpoint<void, [id: number]>('StopGeneration', 'POST', '/api/chats/{id}/stop');
export const chatStatus = endpoint<ChatStatus>('ChatStatus', 'GET', '/api/chat/status');
export const listChatModels = endpoint<ChatModel[]>('ListChatModels', 'GET', '/api/chat/models');
/** The chat models that can draft for model (the same vocabulary), smallest first. */
export const listDraftModels = endpoint<ChatModel[], [model: string]>('ListDraftModels', 'GET', '/api/chat/drafts?model={model}');

export const onChat = (cb: (ev: ChatEvent) => void) => on<ChatEvent>('chat', cb);
