// A reply is rendered as Markdown while it streams, not only once it is
// done (issue 20: "incremental while streaming"). The zero-weight fixture
// model cannot write a list or a table, so the reply is scripted: the
// page's own EventSource to the real server gets the chat events a
// generation publishes ('start', then 'delta's, then 'done'), one piece at
// a time, and the test looks at the streaming reply between pieces.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiOf, artifact, cleanup, createChat, launchBrowser, start, tempDir, waitFor } from './harness.mjs';
import { commitA, llama, writeRepo } from './fixtures.mjs';

let browser;

before(async () => {
  browser = await launchBrowser();
});
after(cleanup);

test('Markdown (a nested list, then a table) renders while the reply is still streaming', { timeout: 60_000 }, async () => {
  const home = tempDir('hark-home-');
  writeRepo(join(home, 'hf', 'hub'), 'org/test-chat', commitA, llama);
  const server = await start({ home });
  try {
    const api = apiOf(server);
    const conv = await createChat(api, { title: 'Streaming', model: `hf:org/test-chat@${commitA}` });
    const context = await browser.newContext({ viewport: { width: 1100, height: 720 } });
    // Keep a handle on the app's one EventSource, so the test can deliver
    // events on it as the server would.
    await context.addInitScript(() => {
      const Real = window.EventSource;
      window.EventSource = class extends Real {
        constructor(...args) {
          super(...args);
          window.__harkEvents = this;
        }
      };
    });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // While the scripted reply streams, the status the page polls says it
    // runs here (else the page's watchdog would end the reply early).
    let generating = true;
    await page.route('**/api/chat/status', (route) =>
      route.fulfill({ contentType: 'application/json', body: JSON.stringify({ generating, conversationId: conv.id }) }),
    );
    await page.goto(`${server.url}/#/chat/${conv.id}`);
    await page.locator('[data-stream="up"]').waitFor({ timeout: 20_000 });
    const emit = (ev) =>
      page.evaluate((data) => window.__harkEvents.dispatchEvent(new MessageEvent('chat', { data: JSON.stringify(data) })), {
        conversationId: conv.id,
        ...ev,
      });
    const live = page.locator('article[data-streaming="true"] .md');
    const shapes = () =>
      page.evaluate(() => {
        const md = document.querySelector('article[data-streaming="true"] .md');
        return md && { items: md.querySelectorAll('li').length, nested: md.querySelectorAll('li ul li').length, cells: [...md.querySelectorAll('td')].map((c) => c.textContent), bold: md.querySelectorAll('strong').length, pipes: md.textContent.includes('|') };
      });

    await emit({ type: 'start', model: 'org/test-chat' });
    const pieces = ['Plan', ' for **today**:\n\n', '- shop\n', '  - bread\n', '- cook\n\n'];
    for (const delta of pieces) await emit({ type: 'delta', delta });
    // The list so far is a nested list, in bold where asked, before the end.
    await waitFor(async () => (await shapes())?.nested === 1, { timeout: 10_000 });
    let s = await shapes();
    assert.deepEqual({ items: s.items, nested: s.nested, bold: s.bold, cells: s.cells }, { items: 3, nested: 1, bold: 1, cells: [] });

    // A table arrives row by row: once its delimiter row is in, it is a
    // table (no raw pipes), and each new row shows as it comes.
    for (const delta of ['| item | cost |\n', '|---|---:|\n', '| bread | 2 |\n']) await emit({ type: 'delta', delta });
    await waitFor(async () => (await shapes())?.cells.length === 2, { timeout: 10_000 });
    s = await shapes();
    assert.deepEqual(s.cells, ['bread', '2']);
    assert.equal(s.pipes, false, 'the table is rendered, not shown as pipes');
    await emit({ type: 'delta', delta: '| eggs | 3 |\n' });
    await waitFor(async () => (await shapes())?.cells.length === 4, { timeout: 10_000 });
    assert.deepEqual((await shapes()).cells, ['bread', '2', 'eggs', '3']);
    // All of that while the reply is still streaming.
    assert.equal(await page.locator('article[data-streaming="true"]').getAttribute('aria-busy'), 'true');
    assert.equal(await live.count(), 1);
    await page.screenshot({ path: artifact('hark-chat-streaming-markdown.png') });

    // The end: the stored reply takes the streaming one's place, formatted the same.
    generating = false;
    const content = pieces.join('') + '| item | cost |\n|---|---:|\n| bread | 2 |\n| eggs | 3 |\n';
    await emit({
      type: 'done',
      message: { id: 9001, conversationId: conv.id, role: 'assistant', content, stats: {}, createdAt: new Date().toISOString() },
    });
    const done = page.locator('article[data-role="assistant"][data-message-id="9001"]');
    await done.locator('table td').getByText('eggs').waitFor();
    assert.equal(await page.locator('article[data-streaming="true"]').count(), 0);
    assert.equal(await done.locator('li ul li').count(), 1);
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await server.stop();
  }
});
