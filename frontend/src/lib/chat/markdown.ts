// A small, safe Markdown renderer for replies. Every piece of source text
// is HTML-escaped before it is wrapped in the few tags produced here, so
// a reply can never inject markup; links keep only http(s) and mailto
// targets. It is forgiving of half-written input, since it re-renders the
// whole reply on every streamed delta: an unclosed code fence renders as
// code so far, an unclosed `**` as literal text.
//
// Supported: paragraphs (single newlines kept as line breaks), # headings,
// fenced code blocks with highlighting, - / * / 1. lists (one level),
// > quotes, --- rules, **bold**, *italic* / _italic_, ~~strike~~, `code`,
// [text](url) links.
import { escapeHtml } from './escape';
import { highlight } from './highlight';

const fence = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const bullet = /^\s{0,3}([-*+])\s+(.*)$/;
const ordered = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const rule = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const quoteLine = /^\s{0,3}>\s?(.*)$/;

export function renderMarkdown(src: string): string {
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let para: string[] = [];
  const endPara = () => {
    if (para.length) out.push(`<p>${para.map(inline).join('<br>')}</p>`);
    para = [];
  };
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    const f = fence.exec(line);
    if (f) {
      endPara();
      const close = new RegExp(`^\\s{0,3}${f[1][0] === '`' ? '`' : '~'}{${f[1].length},}\\s*$`);
      const body: string[] = [];
      i++;
      while (i < lines.length && !close.test(lines[i])) body.push(lines[i++]);
      i++; // the closing fence (or past the end while streaming)
      const lang = f[2];
      const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : '';
      out.push(`<pre class="code">${label}<code>${highlight(body.join('\n'), lang)}</code></pre>`);
      continue;
    }
    if (!line.trim()) {
      endPara();
      i++;
      continue;
    }
    const h = heading.exec(line);
    if (h) {
      endPara();
      const n = h[1].length;
      out.push(`<h${n}>${inline(h[2])}</h${n}>`);
      i++;
      continue;
    }
    if (rule.test(line)) {
      endPara();
      out.push('<hr>');
      i++;
      continue;
    }
    if (quoteLine.test(line)) {
      endPara();
      const body: string[] = [];
      for (let m; i < lines.length && (m = quoteLine.exec(lines[i])); i++) body.push(m[1]);
      out.push(`<blockquote>${renderMarkdown(body.join('\n'))}</blockquote>`);
      continue;
    }
    const isOl = ordered.test(line);
    if (isOl || bullet.test(line)) {
      endPara();
      const re = isOl ? ordered : bullet;
      const items: string[] = [];
      const first = isOl ? Number(ordered.exec(line)![1]) : 1;
      while (i < lines.length) {
        const m = re.exec(lines[i]);
        if (m) {
          items.push(m[2]);
        } else if (items.length && /^\s{2,}\S/.test(lines[i])) {
          items[items.length - 1] += '\n' + lines[i].trim(); // a wrapped item
        } else {
          break;
        }
        i++;
      }
      const lis = items.map((t) => `<li>${t.split('\n').map(inline).join('<br>')}</li>`).join('');
      out.push(isOl ? `<ol${first !== 1 ? ` start="${first}"` : ''}>${lis}</ol>` : `<ul>${lis}</ul>`);
      continue;
    }
    para.push(line);
    i++;
  }
  endPara();
  return out.join('');
}

const safeUrl = /^(https?:\/\/|mailto:)/i;

/** Inline markup for one line of text. */
export function inline(text: string): string {
  // Code spans first: their content is literal. Each is swapped for a
  // placeholder (private-use characters never produced by escaping) and
  // put back at the end.
  const slots: string[] = [];
  const hold = (html: string) => `\uE000${slots.push(html) - 1}\uE001`;
  let s = text.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, _t, code: string) => hold(`<code>${escapeHtml(code)}</code>`));
  s = s.replace(/\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?\s*\)/g, (whole, label: string, url: string) => {
    if (!safeUrl.test(url)) return hold(escapeHtml(label));
    return hold(`<a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">${emphasis(escapeHtml(label))}</a>`);
  });
  s = emphasis(escapeHtml(s));
  return s.replace(/\uE000(\d+)\uE001/g, (_, n: string) => slots[Number(n)] ?? '');
}

/** Bold, italic and strikethrough on already-escaped text. */
function emphasis(s: string): string {
  return s
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '<strong>$2</strong>')
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?!\*)/g, '$1<em>$2</em>')
    .replace(/(^|[^\w_])_(?=\S)([^_]*?\S)_(?![\w_])/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
}
