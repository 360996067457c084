// Reasoning models (Qwen3) write their thinking between <think> and
// </think> before the answer. Replies are split into segments so the page
// can fold the thinking away; a block still open while streaming is marked
// so it can say "Thinking…".

export interface Segment {
  kind: 'think' | 'text';
  text: string;
  open?: boolean; // a think block with no </think> yet
}

export function splitThinking(src: string): Segment[] {
  const out: Segment[] = [];
  let rest = src;
  for (;;) {
    const start = rest.indexOf('<think>');
    if (start < 0) break;
    if (rest.slice(0, start).trim()) out.push({ kind: 'text', text: rest.slice(0, start) });
    const body = rest.slice(start + '<think>'.length);
    const end = body.indexOf('</think>');
    if (end < 0) {
      out.push({ kind: 'think', text: body.trim(), open: true });
      return out;
    }
    out.push({ kind: 'think', text: body.slice(0, end).trim() });
    rest = body.slice(end + '</think>'.length);
  }
  // Some templates open the block in the prompt, so a reply can start
  // inside it: a lone </think> closes thinking that began before the reply.
  const lone = out.length === 0 ? rest.indexOf('</think>') : -1;
  if (lone >= 0) {
    out.push({ kind: 'think', text: rest.slice(0, lone).trim() });
    rest = rest.slice(lone + '</think>'.length);
  }
  if (rest.trim() || out.length === 0) out.push({ kind: 'text', text: rest.replace(/^\n+/, '') });
  return out;
}
