// A recording's overview (FILE.overview.json, `slotscope index`): `slotscope serve FILE` writes
// it beside FILE, the viewer asks for it before the recording and shows it (story, findings,
// tracks) while the recording is read, then the whole recording replaces it; the demo's overviews
// (scripts/build-web writes them) show it before the reader module comes; a recording with none
// gets 204 from the server and no error in the console.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FIXTURES, STEP_MS, newPage, screenshot, waitLoaded, waitState, useViewer } from './harness.mjs';

const TEST = { timeout: 4 * STEP_MS };
const dir = mkdtempSync(join(tmpdir(), 'slotscope-overview-'));
const file = join(dir, 'incident1.jsonl.zst');
copyFileSync(FIXTURES.incident1, file);

describe('the overview', () => {
  const v = useViewer(file);

  test('serve writes it; the viewer shows it while the recording is held back, then the whole', TEST, async () => {
    const overview = JSON.parse(readFileSync(`${file}.overview.json`, 'utf8'));
    assert.equal(overview.format, 1);
    assert.ok(overview.analysis.findings.length > 0);

    const page = await newPage(v.browser);
    const asked = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname));
    // The recording is held back until released: what the page shows meanwhile comes from the
    // overview alone.
    let release;
    const held = new Promise((r) => { release = r; });
    await page.route((u) => u.pathname === '/recording/incident1.jsonl.zst', async (route) => { await held; await route.continue(); });
    await page.goto(v.server.url);
    const shown = await waitState(page, (s) => s.partial && s.findings > 0, 'the overview shown');
    assert.equal(shown.findings, overview.analysis.findings.length);
    assert.match(await page.locator('#status').innerText(), /showing its overview/);
    // The story's root cause, before the recording arrived.
    const story = await page.locator('#story').innerText();
    assert.match(story, /stops answering/);
    assert.match(story, /exposure/);
    assert.ok(await page.locator('canvas').count() > 0, 'tracks drawn');
    await screenshot(page, '60-overview-while-reading');
    release();
    const loaded = await waitLoaded(page, 'incident1');
    assert.equal(loaded.partial, false);
    assert.equal(loaded.findings, shown.findings);
    const ov = asked.indexOf('/recording/incident1.jsonl.zst.overview.json');
    const rec = asked.indexOf('/recording/incident1.jsonl.zst');
    assert.ok(ov >= 0 && rec > ov, `the overview first: ${asked.join(' ')}`);
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('the demo is shown from the first download alone: its overview while the reader module is held back', TEST, async () => {
    const page = await newPage(v.browser);
    const asked = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname));
    let release;
    const held = new Promise((r) => { release = r; });
    await page.route((u) => u.pathname.startsWith('/reader/'), async (route) => { await held; await route.continue(); });
    await page.goto(`${v.server.origin}/?src=demo/incident1.jsonl.zst`);
    const shown = await waitState(page, (s) => s.partial && s.findings > 0, 'the demo\'s overview shown');
    assert.match(await page.locator('#story').innerText(), /stops answering/);
    assert.ok(await page.locator('canvas').count() > 0, 'tracks drawn');
    release();
    const loaded = await waitLoaded(page, 'incident1');
    assert.equal(loaded.partial, false);
    assert.equal(loaded.findings, shown.findings);
    assert.ok(asked.includes('/demo/incident1.jsonl.zst.overview.json'), asked.join(' '));
    assert.ok(asked.includes('/reader/slotscope_reader_bg.wasm'), asked.join(' '));
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('the first view costs the viewer and the overview alone: the recording and the reader module are asked for once the tracks are drawn', TEST, async () => {
    for (const src of ['recording/incident1.jsonl.zst', 'demo/incident1.jsonl.zst']) {
      const page = await newPage(v.browser);
      await page.goto(`${v.server.origin}/?src=${src}`);
      const loaded = await waitLoaded(page, 'incident1');
      assert.equal(loaded.partial, false);
      const [firstDraw, entries] = await page.evaluate(() => [
        window.slotscope_first_draw_at(),
        performance.getEntriesByType('resource').map((e) => [new URL(e.name).pathname, e.startTime]),
      ]);
      assert.ok(firstDraw > 0, 'the tracks were drawn');
      const started = (p) => entries.filter(([path]) => path.startsWith(p)).map(([, t]) => t);
      const overview = started(`/${src}.overview.json`);
      const recording = entries.filter(([path]) => path === `/${src}`).map(([, t]) => t);
      const reader = started('/reader/');
      assert.equal(overview.length, 1, JSON.stringify(entries));
      assert.ok(overview[0] < firstDraw, `the overview before the first view: ${overview[0]} / ${firstDraw}`);
      assert.ok(recording.length === 1 && reader.length >= 2, JSON.stringify(entries));
      for (const t of [...recording, ...reader]) {
        assert.ok(t >= firstDraw, `asked for at ${t} ms, before the first view at ${firstDraw} ms: ${JSON.stringify(entries)}`);
      }
      assert.deepEqual(page.consoleErrors, []);
      await page.context().close();
    }
  });

  test('a recording without one: 204, and it loads with no console error', TEST, async () => {
    const r = await fetch(`${v.server.origin}/demo/none.jsonl.zst.overview.json`);
    assert.equal(r.status, 204);
    const page = await newPage(v.browser);
    // The server's answer for a recording with no overview, for the demo's.
    await page.route((u) => u.pathname.endsWith('.overview.json'), (route) => route.fulfill({ status: 204 }));
    await page.goto(`${v.server.origin}/?src=demo/incident2.jsonl.zst`);
    const loaded = await waitLoaded(page, 'incident2');
    assert.equal(loaded.partial, false);
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
    assert.ok(existsSync(file));
  });
});
