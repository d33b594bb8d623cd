// The reader in its worker (issue 26, part 4): a recording is read by the reader module in a Web
// Worker (reader/worker.js), not on the page's thread; the deltas of a selection are asked of
// it; a worker that cannot start is said in the status line, not waited for.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  FIXTURES, STEP_MS, newPage, useViewer, waitLoaded, waitState,
} from './harness.mjs';

// Incident 2 compressed again with a window a browser decodes (the fixture's is 16 MiB, from
// before the collector's 1 MiB): `slotscope serve` sends it to the reader as JSON Lines with
// `Content-Encoding: zstd`, and the browser decodes it as the worker reads it.
const streamedDir = mkdtempSync(join(tmpdir(), 'slotscope-e2e-stream-'));
const STREAMED = join(streamedDir, 'incident2-small-window.jsonl.zst');
writeFileSync(STREAMED, execFileSync('zstd', ['-q', '-c', '-3', '--zstd=wlog=20'], {
  input: execFileSync('zstd', ['-q', '-d', '-c', FIXTURES.incident2]),
}));
process.on('exit', () => rmSync(streamedDir, { recursive: true, force: true }));

const TEST = { timeout: 4 * STEP_MS };

describe('the reader worker', () => {
  const v = useViewer();

  test('a recording is read in the worker, whose wasm the page never fetches itself', TEST, async () => {
    const page = await newPage(v.browser);
    const workers = [];
    page.on('worker', (w) => workers.push(new URL(w.url()).pathname));
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#file-input').setInputFiles({
      name: 'incident2.jsonl.zst', mimeType: 'application/octet-stream', buffer: readFileSync(FIXTURES.incident2),
    });
    const s = await waitLoaded(page, 'incident2');
    assert.equal(s.partial, false);
    assert.ok(s.findings > 0, JSON.stringify(s));
    // One worker for the page's life: both reads went to it.
    assert.deepEqual(workers, ['/reader/worker.js']);
    // The module's wasm is the worker's to fetch and start: the page's own timeline has the
    // worker's scripts (its module graph, which the page fetches for it) and not the wasm.
    const pageAsked = await page.evaluate(() => performance.getEntriesByType('resource')
      .map((e) => new URL(e.name).pathname).filter((p) => p.startsWith('/reader/')));
    assert.ok(pageAsked.includes('/reader/worker.js'), pageAsked.join(' '));
    assert.ok(!pageAsked.includes('/reader/slotscope_reader_bg.wasm'), pageAsked.join(' '));
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('a worker that cannot start is said in the status line, and the overview stays shown', TEST, async () => {
    const page = await newPage(v.browser);
    await page.route((u) => u.pathname === '/reader/worker.js', (route) => route.fulfill({ status: 404, body: 'gone' }));
    await page.goto(v.server.url);
    // The demo's overview needs no reader: it is drawn first.
    const shown = await waitState(page, (s) => s.partial && s.findings > 0, 'the demo\'s overview shown');
    const status = page.locator('#status.error');
    await status.waitFor({ state: 'visible', timeout: STEP_MS });
    assert.match(await status.innerText(), /reader\/worker\.js/);
    const after = await waitState(page, (s) => s.findings === shown.findings, 'the overview still shown');
    assert.equal(after.partial, true);
    await page.context().close();
  });
});

describe('a recording read as the worker fetches it', () => {
  const v = useViewer(STREAMED);

  /** Opens the served recording; the responses to the worker's fetches of it. */
  async function open(page) {
    const got = [];
    page.context().on('response', (r) => {
      if (new URL(r.url()).pathname.startsWith('/recording/') && !r.url().endsWith('.overview.json')) {
        got.push({ accept: r.request().headers().accept || '', encoding: r.headers()['content-encoding'] || '' });
      }
    });
    await page.goto(v.server.url);
    const s = await waitLoaded(page, 'incident2-small-window');
    return { s, got };
  }

  test('is sent as JSON Lines the browser decodes, and reads as the file does', TEST, async () => {
    const page = await newPage(v.browser);
    const { s, got } = await open(page);
    assert.equal(s.partial, false);
    // The worker asked for JSON Lines and got them zstd-encoded; the page fetched the file as it
    // is beside it (for the what-if replay).
    assert.ok(got.some((r) => r.accept.includes('application/x-ndjson') && r.encoding === 'zstd'), JSON.stringify(got));
    assert.ok(got.some((r) => !r.accept.includes('application/x-ndjson') && r.encoding === ''), JSON.stringify(got));
    // What it shows is what the same recording shows read whole from a file.
    await page.locator('#file-input').setInputFiles({
      name: 'incident2.jsonl.zst', mimeType: 'application/octet-stream', buffer: readFileSync(FIXTURES.incident2),
    });
    const whole = await waitLoaded(page, 'incident2.jsonl');
    assert.equal(whole.findings, s.findings);
    assert.deepEqual(whole.window, s.window);
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('is read from the bytes fetched beside it when the stream cannot be had', TEST, async () => {
    const page = await newPage(v.browser);
    await page.context().route((u) => u.pathname.startsWith('/recording/') && !u.pathname.endsWith('.overview.json'), (route) => {
      if ((route.request().headers().accept || '').includes('application/x-ndjson')) {
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    const { s } = await open(page);
    assert.equal(s.partial, false);
    assert.ok(s.findings > 0, JSON.stringify(s));
    await page.context().close();
  });
});
