// The reader in its worker (issue 26, part 4): a recording is read by the reader module in a Web
// Worker (reader/worker.js), not on the page's thread; the deltas of a selection are asked of
// it; a worker that cannot start is said in the status line, not waited for.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  FIXTURES, STEP_MS, newPage, useViewer, waitLoaded, waitState,
} from './harness.mjs';

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
