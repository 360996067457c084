// Issue 20's smaller promises, each checked where a new user meets it:
// the empty Chat and Transcribe pages send them to the Library's own
// starter shelf and Hub search (not to an outside `hf download`), and
// Cmd/Ctrl+F on Chat lands in a search over the conversations that the
// shortcut sheet promises; two snapshots of one repo read apart in the
// chat picker.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiOf, artifact, cleanup, createChat, launchBrowser, openPage, start, tempDir } from './harness.mjs';
import { commitA, commitB, llama, whisper, writeRepo } from './fixtures.mjs';

let browser;

before(async () => {
  browser = await launchBrowser();
});
after(cleanup);

test('empty Chat and Transcribe point to the Library, not to an outside download tool', { timeout: 60_000 }, async () => {
  const server = await start();
  try {
    const page = await openPage(browser, server.url + '/#/chat');
    const empty = page.locator('main');
    await page.getByRole('heading', { name: 'No chat model yet' }).waitFor();
    const chatText = await empty.textContent();
    assert.doesNotMatch(chatText, /hf download|huggingface-cli/, chatText);
    assert.match(chatText, /starter shelf/);
    await page.getByRole('link', { name: 'Open Library' }).waitFor();

    await page.goto(server.url + '/#/transcribe');
    const notice = page.getByText(/no Whisper speech model in your Library yet/);
    await notice.waitFor();
    const txText = await notice.textContent();
    assert.doesNotMatch(txText, /hf download|huggingface-cli/, txText);
    await notice.getByRole('link', { name: 'Library' }).click();
    await page.waitForFunction(() => location.hash === '#/library');
    // Where those links lead: the shelf and the search, on the first run.
    await page.getByRole('region', { name: 'Starter models' }).waitFor();
    await page.getByLabel('Search Hugging Face').waitFor();
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await server.stop();
  }
});

test('Ctrl+F on Chat searches the conversations, as the shortcut sheet says', { timeout: 60_000 }, async () => {
  const home = tempDir('hark-home-');
  writeRepo(join(home, 'hf', 'hub'), 'org/test-chat', commitA, llama);
  const server = await start({ home });
  try {
    const api = apiOf(server);
    const model = `hf:org/test-chat@${commitA}`;
    for (const title of ['Duck recipes', 'Tax return questions', 'More about ducks']) {
      await createChat(api, { title, model });
    }
    const page = await openPage(browser, server.url + '/#/chat');
    const list = page.getByRole('navigation', { name: 'Conversations' });
    await list.getByText('Tax return questions').waitFor({ timeout: 20_000 });

    await page.keyboard.press('Control+/');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.getByText(/Search this page/).waitFor();
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached' });

    await page.locator('body').click({ position: { x: 2, y: 2 } });
    await page.keyboard.press('Control+f');
    const search = page.getByLabel('Search conversations');
    assert.ok(await search.evaluate((el) => el === document.activeElement), 'Ctrl+F focuses the conversation search');
    await page.keyboard.type('duck');
    await list.getByText('Tax return questions').waitFor({ state: 'detached' });
    assert.equal(await list.locator('li[data-conversation-id]').count(), 2);
    await page.keyboard.type('zzz');
    await list.getByText('No conversation title matches.').waitFor();
    await page.screenshot({ path: artifact('hark-chat-search.png') });
    await search.fill('');
    assert.equal(await list.locator('li[data-conversation-id]').count(), 3);
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await server.stop();
  }
});

test('two snapshots of one repo are told apart in the chat picker by ref and short commit', { timeout: 60_000 }, async () => {
  const home = tempDir('hark-home-');
  const hub = join(home, 'hf', 'hub');
  writeRepo(hub, 'org/test-chat', commitA, llama);
  writeRepo(hub, 'org/test-chat', commitB, llama); // refs/main moves to B
  writeRepo(hub, 'org/other-chat', commitA, llama);
  const server = await start({ home });
  try {
    const page = await openPage(browser, server.url + '/#/chat');
    const picker = page.getByLabel('Chat model');
    await picker.locator(`option[value="hf:org/test-chat@${commitB}"]`).waitFor({ state: 'attached', timeout: 20_000 });
    await picker.locator(`option[value="hf:org/test-chat@${commitA}"]`).waitFor({ state: 'attached' });
    const label = async (id) => (await picker.locator(`option[value="${id}"]`).textContent()).trim();
    assert.match(await label(`hf:org/test-chat@${commitB}`), new RegExp(`^org/test-chat @ main ${commitB.slice(0, 7)}\\b`));
    assert.match(await label(`hf:org/test-chat@${commitA}`), new RegExp(`^org/test-chat @ ${commitA.slice(0, 7)}\\b`));
    // A repo with one snapshot keeps its plain name.
    assert.match(await label(`hf:org/other-chat@${commitA}`), /^org\/other-chat( ·|$)/);
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await server.stop();
  }
});

test('"Transcribe with this" opens Transcribe on that Whisper model and makes it the default', { timeout: 60_000 }, async () => {
  const home = tempDir('hark-home-');
  const hub = join(home, 'hf', 'hub');
  writeRepo(hub, 'openai/whisper-aaa', commitA, whisper);
  writeRepo(hub, 'openai/whisper-zzz', commitB, whisper);
  const server = await start({ home });
  try {
    const chosen = `hf:openai/whisper-zzz@${commitB}`;
    const page = await openPage(browser, server.url + '/#/library');
    const row = page.locator(`tr[data-model="${chosen}"]`);
    await row.waitFor({ timeout: 20_000 });
    await row.click();
    await page.getByRole('button', { name: 'Transcribe with this' }).click();
    await page.waitForFunction(() => location.hash.startsWith('#/transcribe'));
    const select = page.locator('#tx-model');
    await page.waitForFunction((id) => document.querySelector('#tx-model')?.value === id, chosen);
    assert.equal(await select.inputValue(), chosen);
    const settings = await (await fetch(server.url + '/api/settings')).json();
    assert.equal(settings.defaultSpeechModel, chosen);
    assert.deepEqual(page.problems.pageErrors, []);
    await page.context().close();
  } finally {
    await server.stop();
  }
});

test('a code block in a reply is highlighted and has a Copy button that copies the code', { timeout: 60_000 }, async () => {
  const home = tempDir('hark-home-');
  writeRepo(join(home, 'hf', 'hub'), 'org/test-chat', commitA, llama);
  const server = await start({ home });
  try {
    const api = apiOf(server);
    const conv = await createChat(api, { title: 'Code', model: `hf:org/test-chat@${commitA}` });
    // The zero-weight fixture cannot write code; the stored thread is
    // answered with a reply that has some, as the server would send it.
    const code = 'package main\n\nfunc main() { println("<hi>") }\n';
    const reply = `Here:\n\n\`\`\`go\n${code}\`\`\`\n\n| a | b |\n|---|---|\n| 1 | 2 |`;
    const now = new Date().toISOString();
    const context = await browser.newContext({ viewport: { width: 1100, height: 720 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.route(`**/api/chats/${conv.id}/messages`, (route) =>
      route.request().method() === 'GET'
        ? route.fulfill({
            contentType: 'application/json',
            body: JSON.stringify([
              { id: 1, conversationId: conv.id, role: 'user', content: 'Show me Go.', stats: {}, createdAt: now },
              { id: 2, conversationId: conv.id, role: 'assistant', content: reply, stats: {}, createdAt: now },
            ]),
          })
        : route.continue(),
    );
    await page.goto(`${server.url}/#/chat/${conv.id}`);
    const article = page.locator('article[data-role="assistant"]');
    await article.locator('pre code .hljs-keyword').first().waitFor({ timeout: 20_000 });
    await article.locator('table td').getByText('2').waitFor();
    const copy = article.getByRole('button', { name: 'Copy code' });
    await copy.click();
    await copy.getByText('Copied').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code);
    await page.screenshot({ path: artifact('hark-chat-code-copy.png') });
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await server.stop();
  }
});
