import { getInfo, type KVChoice } from './api';

// The KV cache choices come from the server (Info.kvBitsChoices, derived
// from the engine's one list), never from a list kept here. A setting of
// 0 means the engine's default, so the default choice is offered as 0,
// unless the setting states the default's bits (an f16 default saved as
// 16), which then stay as saved.

let pending: Promise<KVChoice[]> | null = null;

/** The engine's KV choices, read once; an error leaves the next call to try again. */
export function kvChoices(): Promise<KVChoice[]> {
  pending ??= getInfo()
    .then((i) => i.kvBitsChoices ?? [])
    .catch((err) => {
      pending = null;
      throw err;
    });
  return pending;
}

/** The select's options as [setting, label]: the default as 0 (or as its bits when saved so), and the saved value kept listed when the list lacks it. */
export function kvOptions(list: KVChoice[], saved: number | undefined): [number, string][] {
  const cur = saved ?? 0;
  const out = list.map((c): [number, string] => [c.default && c.bits !== cur ? 0 : c.bits, c.label]);
  if (!out.some(([v]) => v === cur)) out.push([cur, cur ? `${cur}-bit` : 'default']);
  return out;
}
