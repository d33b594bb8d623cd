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

  // The worker's script with every zstd recording decoded beside the reading (the fixtures are
  // below the size from which it is); `decoder: false` answers the decoder's script with 404.
  const alwaysFed = async (page, { decoder = true } = {}) => {
    await page.route((u) => u.pathname === '/reader/worker.js', async (route) => {
      if (!decoder && new URL(route.request().url()).search === '?decoder') {
        await route.fulfill({ status: 404, body: 'gone' });
        return;
      }
      const original = await (await route.fetch()).text();
      assert.match(original, /SLOTSCOPE_FED_FROM/);
      const forced = `self.SLOTSCOPE_FED_FROM = 0;\n${original}`;
      await route.fulfill({ status: 200, contentType: 'text/javascript', body: forced });
    });
  };

  // Opens `buffer` as `name` on a fresh page: the state, the status line, the findings and the
  // cut-short banner as shown, and the workers' URLs (path and query).
  const openOn = async (fed, name, buffer, { decoder = true, bad = false } = {}) => {
    const page = await newPage(v.browser);
    const workers = [];
    page.on('worker', (w) => workers.push(new URL(w.url()).pathname + new URL(w.url()).search));
    if (fed) await alwaysFed(page, { decoder });
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#file-input').setInputFiles({ name, mimeType: 'application/octet-stream', buffer });
    let shown;
    if (bad) {
      const status = page.locator('#status.error');
      await status.waitFor({ state: 'visible', timeout: STEP_MS });
      shown = { status: await status.innerText() };
    } else {
      const s = await waitLoaded(page, name.split('.')[0]);
      shown = {
        state: s,
        status: await page.locator('#status').innerText(),
        findings: await page.locator('#findings').innerText(),
        cut: await page.locator('#cut-short').count() > 0 ? await page.locator('#cut-short').innerText() : null,
      };
    }
    // The decoder's script refused on purpose is the one error allowed.
    assert.deepEqual(page.consoleErrors.filter((e) => !(e.includes('404') && !decoder)), []);
    await page.context().close();
    return { shown, workers };
  };

  test('a zstd recording decoded in a second worker reads as it does in one', TEST, async () => {
    const bytes = readFileSync(FIXTURES.incident2);
    for (const [name, buffer] of [
      ['incident2.jsonl.zst', bytes],
      ['incident2cut.jsonl.zst', bytes.subarray(0, Math.floor(bytes.length * 2 / 3))],
    ]) {
      const one = await openOn(false, name, buffer);
      const two = await openOn(true, name, buffer);
      assert.deepEqual(one.workers, ['/reader/worker.js'], name);
      // The demo is read in one worker, then the recording with a decoder beside it.
      assert.deepEqual(two.workers, ['/reader/worker.js', '/reader/worker.js?decoder', '/reader/worker.js?decoder'], name);
      assert.deepEqual(two.shown, one.shown, name);
      assert.equal(one.shown.cut !== null, name.includes('cut'), JSON.stringify(one.shown));
    }
  });

  test('without its decoder the reader reads alone, and a file that is no recording says so alike', TEST, async () => {
    const bytes = readFileSync(FIXTURES.incident2);
    const one = await openOn(false, 'incident2.jsonl.zst', bytes);
    const alone = await openOn(true, 'incident2.jsonl.zst', bytes, { decoder: false });
    assert.deepEqual(alone.shown, one.shown);
    const garbage = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from('not a frame at all')]);
    const badOne = await openOn(false, 'garbage.jsonl.zst', garbage, { bad: true });
    const badTwo = await openOn(true, 'garbage.jsonl.zst', garbage, { bad: true });
    assert.match(badOne.shown.status, /garbage/);
    assert.deepEqual(badTwo.shown, badOne.shown);
    assert.ok(badTwo.workers.includes('/reader/worker.js?decoder'), badTwo.workers.join(' '));
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
