// A small syntax highlighter for code blocks in replies: comments,
// strings, numbers and keywords for a handful of languages. It scans once,
// escapes everything it emits, and degrades to plain escaped text for a
// language it does not know.
import { escapeHtml } from './escape';

interface Lang {
  keywords: Set<string>;
  line: string[]; // line comment starts
  block?: [string, string];
  quotes: string[]; // string delimiters, longest first
}

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

const cLike = 'if else for while do switch case default break continue return goto sizeof struct union enum typedef static const extern void int char float double long short unsigned signed bool true false NULL';
const jsWords =
  'break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new return super switch this throw try typeof var void while with yield async await of static get set true false null undefined interface type enum implements private public protected readonly as from';

const langs: Record<string, Lang> = {
  js: { keywords: words(jsWords), line: ['//'], block: ['/*', '*/'], quotes: ['`', '"', "'"] },
  python: {
    keywords: words(
      'and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield True False None self print',
    ),
    line: ['#'],
    quotes: ['"""', "'''", '"', "'"],
  },
  go: {
    keywords: words(
      'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false error string int int64 float64 byte rune bool any make new len append',
    ),
    line: ['//'],
    block: ['/*', '*/'],
    quotes: ['`', '"', "'"],
  },
  rust: {
    keywords: words(
      'as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err',
    ),
    line: ['//'],
    block: ['/*', '*/'],
    quotes: ['"'],
  },
  c: { keywords: words(cLike + ' class public private protected namespace template typename new delete auto nullptr include define'), line: ['//'], block: ['/*', '*/'], quotes: ['"', "'"] },
  sh: {
    keywords: words('if then else elif fi for in do done while until case esac function return local export echo exit set unset'),
    line: ['#'],
    quotes: ['"', "'"],
  },
  json: { keywords: words('true false null'), line: [], quotes: ['"'] },
};

const aliases: Record<string, string> = {
  javascript: 'js', ts: 'js', typescript: 'js', jsx: 'js', tsx: 'js', mjs: 'js',
  py: 'python', golang: 'go', rs: 'rust', cpp: 'c', 'c++': 'c', h: 'c', java: 'c', cs: 'c', swift: 'c',
  bash: 'sh', shell: 'sh', zsh: 'sh', console: 'sh',
};

export function languageOf(name: string): Lang | undefined {
  const n = name.trim().toLowerCase();
  return langs[aliases[n] ?? n];
}

const span = (cls: string, text: string) => `<span class="tok-${cls}">${escapeHtml(text)}</span>`;

/** Highlighted HTML for code in language lang (escaped plain text if unknown). */
export function highlight(code: string, lang: string): string {
  const l = languageOf(lang);
  if (!l) return escapeHtml(code);
  let out = '';
  let i = 0;
  let plain = '';
  const flush = () => {
    out += escapeHtml(plain);
    plain = '';
  };
  const starts = (s: string) => code.startsWith(s, i);
  while (i < code.length) {
    const lc = l.line.find(starts);
    if (lc) {
      const end = code.indexOf('\n', i);
      const stop = end < 0 ? code.length : end;
      flush();
      out += span('comment', code.slice(i, stop));
      i = stop;
      continue;
    }
    if (l.block && starts(l.block[0])) {
      const end = code.indexOf(l.block[1], i + l.block[0].length);
      const stop = end < 0 ? code.length : end + l.block[1].length;
      flush();
      out += span('comment', code.slice(i, stop));
      i = stop;
      continue;
    }
    const q = l.quotes.find(starts);
    if (q) {
      let j = i + q.length;
      while (j < code.length && !code.startsWith(q, j)) {
        // A newline ends a single-quote string (the model may not close it).
        if (q.length === 1 && q !== '`' && code[j] === '\n') break;
        j += code[j] === '\\' ? 2 : 1;
      }
      const stop = Math.min(code.length, code.startsWith(q, j) ? j + q.length : j);
      flush();
      out += span('string', code.slice(i, stop));
      i = stop;
      continue;
    }
    const m = /^[A-Za-z_$][\w$]*|^\d[\w.]*/.exec(code.slice(i, i + 64));
    if (m && (i === 0 || !/[\w$]/.test(code[i - 1]))) {
      const w = m[0];
      if (/^\d/.test(w)) {
        flush();
        out += span('number', w);
      } else if (l.keywords.has(w)) {
        flush();
        out += span('keyword', w);
      } else {
        plain += w;
      }
      i += w.length;
      continue;
    }
    plain += code[i];
    i++;
  }
  flush();
  return out;
}
