// Replies as GitHub-flavoured Markdown, rendered by well-kept libraries:
// marked (tables, nested and task lists, strikethrough, footnotes through
// marked-footnote), highlight.js for code, KaTeX for $math$ and $$math$$.
// Model output is untrusted: raw HTML in it is shown as text, images
// become links (a reply must not make the page fetch anything), and the
// result goes through DOMPurify before it reaches {@html}. marked renders
// half-written input as well as it can, so the reply re-renders on every
// streamed delta: an unclosed code fence is code so far.
import { Marked, type Tokens } from 'marked';
import { markedHighlight } from 'marked-highlight';
import markedKatex from 'marked-katex-extension';
import markedFootnote from 'marked-footnote';
import hljs from 'highlight.js/lib/common';
import DOMPurify, { type DOMPurify as Purifier } from 'dompurify';
import { escapeHtml } from './escape';

const safeLink = /^(https?:|mailto:)/i;

const md = new Marked(
  { gfm: true, breaks: true },
  markedHighlight({
    langPrefix: 'hljs language-',
    highlight(code, lang) {
      const language = hljs.getLanguage(lang) ? lang : '';
      return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
    },
  }),
  markedKatex({ throwOnError: false, nonStandard: true, output: 'htmlAndMathml' }),
  markedFootnote(),
  {
    renderer: {
      // Raw HTML is the model's text, not markup.
      html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
      image: ({ href, text }: Tokens.Image) => link(href, text || href),
      link({ href, tokens }: Tokens.Link) {
        return link(href, this.parser.parseInline(tokens), true);
      },
    },
  },
);

/** An outside link opens in the browser; any other scheme is plain text. */
function link(href: string, inner: string, innerIsHtml = false): string {
  const body = innerIsHtml ? inner : escapeHtml(inner);
  if (!safeLink.test(href.trim())) return body;
  return `<a href="${escapeHtml(href.trim())}" target="_blank" rel="noopener noreferrer">${body}</a>`;
}

let purifier: Purifier | undefined;

// DOMPurify binds to a window; the page's, or the one a test provides.
function purify(html: string): string {
  purifier ??= DOMPurify(globalThis.window);
  return purifier.sanitize(html, { ADD_ATTR: ['target'], USE_PROFILES: { html: true, mathMl: true, svg: true } });
}

export function renderMarkdown(src: string): string {
  return purify(md.parse(src.replace(/\r\n?/g, '\n'), { async: false }));
}
