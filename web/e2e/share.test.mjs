// Sharing and reporting in headless Chromium: a link made while viewing a local file warns that
// nobody else can open it, and such a link (l=NAME) says the recording is not reachable instead of
// opening the demo; a served recording's link is copied as is; "Export report" saves a Markdown
// report naming the root cause with a PNG of every track beside it, and "CSV" the visible series.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, test } from 'node:test';
import { FIXTURES, STEP_MS, newPage, screenshot, state, useViewer, waitLoaded, waitState } from './harness.mjs';

const TEST = { timeout: 4 * STEP_MS };
const TRACKS = ['topology', 'node-rate', 'moved-share', 'errors', 'connections', 'refreshes', 'events'];

describe('sharing and reporting', () => {
  const v = useViewer();

  test('a local file: the share button warns, and its link says the recording is not reachable', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#file-input').setInputFiles(FIXTURES.incident2);
    const name = basename(FIXTURES.incident2);
    await waitLoaded(page, name);
    await page.waitForFunction((n) => location.hash.includes(`l=${n}`), name);
    await page.locator('#share').click();
    const warning = page.locator('#share-warning');
    await warning.waitFor();
    assert.match(await warning.innerText(), /opened from your disk/);
    assert.match(await warning.innerText(), /slotscope serve/);
    await screenshot(page, '30-share-local-file-warning');
    await page.locator('#share-anyway').click();
    const link = await page.locator('#share-link').inputValue();
    assert.equal(link, page.url());

    // The colleague who clicks it: not the demo, a clear message, the demo buttons still there.
    const other = await newPage(v.browser);
    await other.goto(link);
    await other.locator('#unreachable').waitFor();
    assert.match(await other.locator('#unreachable').innerText(), new RegExp(`${name.replace(/\./g, '\\.')}.*sender's disk`));
    await other.waitForTimeout(1500);
    const s = await state(other);
    assert.equal(s?.loaded ?? null, null, `nothing loaded: ${JSON.stringify(s)}`);
    // Opening the file there applies the link's view to it.
    await other.locator('#file-input').setInputFiles(FIXTURES.incident2);
    const opened = await waitLoaded(other, name);
    assert.deepEqual(opened.window, (await state(page)).window);
    assert.equal(await other.locator('#unreachable').count(), 0);
    assert.deepEqual(other.consoleErrors, []);
    await other.context().close();
    await page.context().close();
  });

  test('a served recording: the link is copied as is, with no warning', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#share').click();
    await page.locator('#share-box').waitFor();
    assert.equal(await page.locator('#share-warning').count(), 0);
    assert.equal(await page.locator('#share-link').inputValue(), page.url());
    assert.match(page.url(), /r=demo\/incident1\.jsonl\.zst/);
    await page.context().close();
  });

  test('Export report saves Markdown naming the root cause and a PNG of every track; CSV the visible series', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    const s = await waitLoaded(page, 'incident1');
    const saved = new Map();
    page.on('download', async (d) => {
      saved.set(d.suggestedFilename(), await d.path());
    });
    await page.locator('#export-report').click();
    await page.locator('#export-status').waitFor();
    const want = ['incident1-report.md', ...TRACKS.map((t) => `incident1-${t}.png`)];
    const deadline = Date.now() + STEP_MS;
    while (want.some((w) => !saved.has(w)) && Date.now() < deadline) await page.waitForTimeout(100);
    assert.deepEqual(want.filter((w) => !saved.has(w)), [], `saved: ${[...saved.keys()]}`);
    const md = readFileSync(saved.get('incident1-report.md'), 'utf8');
    assert.match(md, /^# slotscope report: incident1$/m);
    const root = md.split('\n').find((l) => l.includes('**root cause**'));
    assert.match(root, /exposure.*stops/);
    for (const t of TRACKS) {
      assert.ok(md.includes(`](incident1-${t}.png)`), `the report shows ${t}`);
      const png = readFileSync(saved.get(`incident1-${t}.png`));
      assert.equal(png.subarray(1, 4).toString(), 'PNG', `${t} is a PNG`);
      assert.ok(png.length > 1000, `${t}: ${png.length} bytes`);
    }
    await page.locator('#export-csv').click();
    while (!saved.has('incident1-window.csv') && Date.now() < deadline + STEP_MS) await page.waitForTimeout(100);
    const csv = readFileSync(saved.get('incident1-window.csv'), 'utf8').trim().split('\n');
    assert.match(csv[0], /^time,epoch_ms,commands\/s: /);
    assert.ok(csv.length > 20, `${csv.length} rows`);
    for (const row of csv.slice(1)) {
      const t = Number(row.split(',')[1]);
      assert.ok(t <= s.window[1] && t >= s.window[0] - 1000, `${t} in the window ${s.window}`);
    }
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('a print of the page keeps the story, tracks and findings, not the controls', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.locator('#export-report').isVisible(), false);
    assert.equal(await page.locator('#file-input').isVisible(), false);
    assert.ok(await page.locator('#story').isVisible());
    assert.ok(await page.locator('#findings').isVisible());
    await screenshot(page, '31-print');
    await page.context().close();
  });
});
