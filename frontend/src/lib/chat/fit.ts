// The fit verdict a chat model gets for the KV cache the conversation in
// view keeps (a new chat keeps Settings' one), from the per-setting
// verdicts the server computes with the figure its runner checks before
// loading (app/fit, fit.Cache.KVFits): the picker and the load never disagree.
import type { ChatModel, Sampling } from './api';

type Verdict = { fit?: 'fits' | 'tight' | 'too_big'; memoryNeeded?: number };

export function fitFor(m: ChatModel, conv: { sampling: Sampling | null } | undefined, settingsKVBits = 0): Verdict {
  const bits = conv ? (conv.sampling?.kvBits ?? 0) : settingsKVBits;
  const group = conv && bits ? (conv.sampling?.kvGroup ?? 0) : 0;
  const f = m.fits?.find((x) => x.kvBits === bits && x.kvGroup === group);
  return f ? { fit: f.fit, memoryNeeded: f.memoryNeeded } : { fit: m.fit, memoryNeeded: m.memoryNeeded };
}
