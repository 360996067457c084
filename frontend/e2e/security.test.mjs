// The local API answers only our own page: a foreign Origin or a foreign
// Host header (DNS rebinding) is refused with 403, from node and from a
// real cross-site page in the browser.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { cleanup, launchBrowser, openPage, start } from './harness.mjs';

let server;

before(async () => {
  server = await start();
});
after(cleanup);

/** Raw request so Host can be set (fetch forbids overriding it). */
function request(path, { method = 'GET', headers = {}, body } = {}) {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const settingsBody = JSON.stringify({ modelRoots: ['/evil'], defaultChatModel: '', defaultSpeechModel: '', backend: 'cpu' });

test('own requests are answered', async () => {
  const res = await request('/api/settings', { headers: { Origin: server.url } });
  assert.equal(res.status, 200);
  assert.equal(JSON.parse(res.text).backend, 'auto');
});

test('a foreign Origin is refused', async () => {
  for (const [method, path, body] of [
    ['GET', '/api/settings'],
    ['GET', '/api/info'],
    ['GET', '/api/events'],
    ['PUT', '/api/settings', settingsBody],
  ]) {
    const res = await request(path, {
      method,
      body,
      headers: { Origin: 'http://evil.example', 'Content-Type': 'application/json' },
    });
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.match(JSON.parse(res.text).error, /origin/i);
  }
  // Same host name but another port is another origin too.
  const other = await request('/api/settings', { headers: { Origin: 'http://127.0.0.1:1' } });
  assert.equal(other.status, 403);
  assert.equal(JSON.parse((await request('/api/settings')).text).backend, 'auto', 'nothing was saved');
});

test('a foreign Host header is refused', async () => {
  for (const path of ['/api/settings', '/api/info', '/']) {
    const res = await request(path, { headers: { Host: 'evil.example' } });
    assert.equal(res.status, 403, path);
    assert.match(JSON.parse(res.text).error, /host/i);
  }
  const put = await request('/api/settings', { method: 'PUT', body: settingsBody, headers: { Host: 'evil.example:80' } });
  assert.equal(put.status, 403);
});

test('a cross-site page in the browser cannot read or change settings', { timeout: 60_000 }, async () => {
  // A second origin: a tiny page server on another loopback port.
  const evil = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>evil</title><p>hi</p>');
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  try {
    const browser = await launchBrowser();
    const page = await openPage(browser, `http://127.0.0.1:${evil.address().port}/`);
    const statuses = [];
    page.on('response', (r) => {
      if (r.url().startsWith(server.url)) statuses.push(r.status());
    });
    const results = await page.evaluate(async (target) => {
      const out = {};
      const attempt = async (name, init) => {
        try {
          const r = await fetch(target + '/api/settings', init);
          out[name] = `status ${r.status}`;
        } catch (e) {
          out[name] = 'blocked';
        }
      };
      await attempt('read', {});
      // A "simple" request needs no preflight, so it reaches the server.
      await attempt('simpleWrite', {
        method: 'POST',
        mode: 'no-cors',
        headers: { 'Content-Type': 'text/plain' },
        body: '{"backend":"cpu"}',
      });
      await attempt('put', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{"backend":"cpu"}' });
      return out;
    }, server.url);

    assert.equal(results.read, 'blocked', 'the cross-origin read fails');
    assert.equal(results.put, 'blocked', 'the cross-origin PUT fails');
    assert.ok(statuses.length > 0, 'requests reached the server');
    assert.ok(statuses.every((s) => s === 403), `server refused them all: ${statuses}`);
    const saved = JSON.parse((await request('/api/settings')).text);
    assert.equal(saved.backend, 'auto', 'settings unchanged');
    assert.deepEqual(saved.modelRoots, []);
  } finally {
    evil.close();
  }
});
