// The viewer as a person meets it, in headless Chromium against `slotscope serve`: the demo opens
// on incident 1 with its top finding, a finding click moves the cursor, a bad file is reported with
// its line number (and the app keeps working), zoom and pan change the visible range, the URL hash
// restores the view on reload, a reload costs only 304s (the first load came brotli), `?src=` opens
// a served recording, and a recording made through
// `slotscope tap` shows the client's own MOVED share per command. Screenshots of the main views
// go to web/e2e/artifacts/.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  FIXTURES, STEP_MS, headerLine, brotliReady, newPage, screenshot, state, useViewer, waitLoaded, waitState,
} from './harness.mjs';

const TRACKS = ['topology', 'node-rate', 'moved-share', 'errors', 'connections', 'refreshes', 'events'];
const TEST = { timeout: 4 * STEP_MS };

/** Width of the visible window, ms. */
const span = (s) => s.window[1] - s.window[0];

/** The first canvas track's box, to point the mouse at. */
async function trackBox(page) {
  const canvas = page.locator('#tracks canvas[data-track]').first();
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  assert.ok(box && box.width > 50 && box.height > 10, `a visible track canvas: ${JSON.stringify(box)}`);
  return box;
}

describe('viewer on the demo', () => {
  const v = useViewer();

  test('the demo opens on incident 1 with its story: the client stops before the scale-out', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    const s = await waitLoaded(page, 'incident1');
    assert.ok(s.findings >= 1, JSON.stringify(s));
    // The root cause, first on the screen: the wedged client group stops, right after the node's
    // stall and before the new node joins; its finding leads the findings.
    const cause = page.locator('#story li.step.root-cause');
    assert.equal(await cause.count(), 1, 'one root cause');
    assert.match(await cause.innerText(), /exposure.*stops/s);
    assert.ok((await cause.boundingBox()).y < 900, 'the root cause is on the first screen');
    const kinds = await page.locator('#story li.step').evaluateAll(
      (els) => els.map((e) => `${e.dataset.kind}/${e.dataset.role}`));
    const at = (k) => kinds.findIndex((x) => x.startsWith(k));
    assert.ok(at('node_stopped/trigger') >= 0 && at('node_stopped/trigger') < at('client_group_lost/root-cause'), kinds.join(' '));
    assert.ok(at('client_group_lost/root-cause') < at('node_added'), kinds.join(' '));
    assert.ok(at('node_added') < at('idle_shard/effect'), kinds.join(' '));
    const top = page.locator('#findings li.finding').first();
    assert.equal(await top.getAttribute('data-kind'), 'client_group_lost');
    assert.match(await top.locator('.numbers').innerText(), /successful commands before: \d+\.\d\/s/);
    assert.equal(await page.locator('#cut-short').count(), 0, 'the demo recording is complete');
    // The story is reachable from the keyboard: Enter on a step frames it.
    const before = await state(page);
    await cause.focus();
    await page.keyboard.press('Enter');
    await waitState(page, (x) => x.window[0] !== before.window[0] || x.window[1] !== before.window[1], 'the window to frame the root cause');
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    for (const track of TRACKS) {
      assert.equal(await page.locator(`#tracks canvas[data-track="${track}"]`).count(), 1, `track ${track}`);
    }
    for (const id of ['#range-start', '#range-end', '#cursor']) {
      assert.match(await page.locator(id).innerText(), /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/, `${id} is ISO 8601`);
    }
    assert.ok(s.window[0] < s.window[1], JSON.stringify(s));
    await screenshot(page, '01-demo-incident1');
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('a recording cut short is analysed and says so', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    const started = 1795992896812;
    const header = headerLine({ started });
    const polls = [0, 1, 2].map((k) => JSON.stringify({
      type: 'poll_round', t: started + 1000 * k, elapsed_ms: 3, round: k, nodes: 1, ok: 1, failed: 0,
    }));
    // No end line, and the last line stops mid-way.
    const text = `${header}\n${polls.join('\n')}\n{"type":"poll_ro`;
    await page.locator('#file-input').setInputFiles({
      name: 'cut.jsonl', mimeType: 'application/octet-stream', buffer: Buffer.from(text),
    });
    const banner = page.locator('#cut-short');
    await banner.waitFor({ state: 'visible' });
    assert.match(await banner.innerText(), /cut short/);
    assert.match(await banner.innerText(), /partial/);
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('clicking the top finding moves the cursor and the window to its evidence', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    // Park the cursor away from the finding first, so that the jump is seen.
    const box = await trackBox(page);
    await page.mouse.click(box.x + box.width * 0.02, box.y + box.height / 2);
    const before = await state(page);
    const cursorText = await page.locator('#cursor').innerText();
    await page.locator('#findings li.finding').first().click();
    const s = await waitState(page, (x) => x.cursor !== before.cursor, 'the cursor to move');
    assert.ok(s.cursor >= s.window[0] && s.cursor <= s.window[1], `cursor inside the window: ${JSON.stringify(s)}`);
    await page.waitForFunction((t) => document.querySelector('#cursor')?.innerText !== t, cursorText);
    await screenshot(page, '02-finding-clicked');
    await page.context().close();
  });

  test('incident 2 (button) leads with the redirect storm and lists client groups', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#demo-2').click();
    const s = await waitLoaded(page, 'incident2');
    assert.equal(await page.locator('#findings li.finding').first().getAttribute('data-kind'), 'redirect_storm');
    assert.ok(s.findings >= 2, JSON.stringify(s));
    assert.ok(await page.locator('#census tr.group').count() >= 1, 'the census lists client groups');
    await screenshot(page, '03-demo-incident2');
    await page.context().close();
  });

  test('a bad file shows an error naming the line, and the app keeps working', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    const header = headerLine();
    const poll = JSON.stringify({ type: 'poll_round', t: 1795992897812, elapsed_ms: 3, round: 0, nodes: 1, ok: 1, failed: 0 });
    const text = `${header}\n${poll}\nthis line is not JSON {\n${poll}\n`;
    await page.locator('#file-input').setInputFiles({
      name: 'broken.jsonl', mimeType: 'application/octet-stream', buffer: Buffer.from(text),
    });
    const status = page.locator('#status.error');
    await status.waitFor({ state: 'visible' });
    assert.match(await status.innerText(), /line 3/i);
    await screenshot(page, '04-bad-file');
    // The recording shown is still whole: a selection's deltas, which the reader module answers
    // for the last recording it finished, not for the failed one.
    const box = await trackBox(page);
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await page.keyboard.down('Shift');
    await page.mouse.down();
    await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2, { steps: 6 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await waitState(page, (x) => x.selection !== null, 'a selection');
    const calls = page.locator('#selection table.nodes tr.node td:nth-child(2)');
    await calls.first().waitFor({ state: 'visible', timeout: STEP_MS });
    const total = (await calls.allTextContents()).reduce((sum, t) => sum + Number(t), 0);
    assert.ok(total > 100, `calls over the selection: ${total}`);
    // Still usable: the demo loads again.
    await page.locator('#demo-1').click();
    await waitLoaded(page, 'incident1');
    await page.context().close();
  });

  test('zoom (Control + wheel, +/-) and pan (keys, drag) change the visible range; a plain wheel turn scrolls', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    const s0 = await waitLoaded(page, 'incident1');
    const box = await trackBox(page);
    const mid = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    const rangeText = async () => `${await page.locator('#range-start').innerText()} ${await page.locator('#range-end').innerText()}`;
    const r0 = await rangeText();

    // A plain wheel turn is the page's (it scrolls) and shows how to zoom; with Control it zooms.
    await page.mouse.move(mid.x, mid.y);
    await page.mouse.wheel(0, -400);
    await page.locator('#wheel-hint').waitFor();
    assert.equal(span(await state(page)), span(s0), 'a plain wheel turn does not zoom');
    await page.mouse.move(mid.x, mid.y);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -400);
    await page.keyboard.up('Control');
    const s1 = await waitState(page, (s) => span(s) < span(s0), 'Control and the wheel to zoom in');
    await page.waitForFunction((r) => `${document.querySelector('#range-start').innerText} ${document.querySelector('#range-end').innerText}` !== r, r0);
    await screenshot(page, '05-zoomed');

    await page.keyboard.press('ArrowRight');
    const s2 = await waitState(page, (s) => s.window[0] > s1.window[0], 'ArrowRight to pan later');
    assert.ok(Math.abs(span(s2) - span(s1)) <= 1, `panning keeps the width: ${JSON.stringify([s1, s2])}`);
    await page.keyboard.press('ArrowLeft');
    await waitState(page, (s) => s.window[0] < s2.window[0], 'ArrowLeft to pan earlier');

    const s3 = await state(page);
    await page.keyboard.press('-');
    const s4 = await waitState(page, (s) => span(s) > span(s3), '- to zoom out');
    await page.keyboard.press('+');
    await waitState(page, (s) => span(s) < span(s4), '+ to zoom in');

    const s5 = await state(page);
    await page.mouse.move(mid.x, mid.y);
    await page.mouse.down();
    await page.mouse.move(mid.x - box.width / 4, mid.y, { steps: 8 });
    await page.mouse.up();
    await waitState(page, (s) => s.window[0] !== s5.window[0] && Math.abs(span(s) - span(s5)) <= 1, 'a drag to pan');
    await page.context().close();
  });

  test('the URL hash holds window and cursor, and a reload restores them', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    const s0 = await waitLoaded(page, 'incident1');
    const box = await trackBox(page);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -400);
    await page.keyboard.up('Control');
    await waitState(page, (s) => span(s) < span(s0), 'a zoom');
    await page.mouse.click(box.x + box.width * 0.6, box.y + box.height / 2);
    const set = await waitState(page, (s) => s.cursor !== s0.cursor, 'a click to set the cursor');
    await page.waitForFunction(() => /(^#|&)w=\d+-\d+/.test(location.hash) && /(^#|&)c=\d+/.test(location.hash));
    const url = page.url();

    await page.reload();
    const back = await waitLoaded(page, 'incident1');
    assert.deepEqual(back.window, set.window);
    assert.equal(back.cursor, set.cursor);

    // The same URL in a fresh page (a shared link) shows the same view.
    const other = await newPage(v.browser);
    await other.goto(url);
    const shared = await waitLoaded(other, 'incident1');
    assert.deepEqual(shared.window, set.window);
    assert.equal(shared.cursor, set.cursor);
    await screenshot(other, '06-restored-from-hash');
    await other.context().close();
    await page.context().close();
  });
});

describe('viewer reloads', () => {
  const v = useViewer();

  test('a reload costs a few hundred bytes (every file a 304), the first load came brotli', { timeout: 8 * STEP_MS }, async () => {
    await brotliReady(v.server.origin);
    const page = await newPage(v.browser);
    // What the server sent for each response: status, encoding and body bytes on the wire.
    const seen = [];
    const session = await page.context().newCDPSession(page);
    await session.send('Network.enable');
    const byId = new Map();
    session.on('Network.responseReceived', (e) => {
      byId.set(e.requestId, { url: e.response.url, status: e.response.status, enc: e.response.headers['content-encoding'] || e.response.headers['Content-Encoding'] || '' });
    });
    session.on('Network.loadingFinished', (e) => {
      const r = byId.get(e.requestId);
      if (r) seen.push({ ...r, bytes: e.encodedDataLength });
    });
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    const first = seen.splice(0);
    const wasm = first.find((r) => r.url.endsWith('.wasm'));
    assert.ok(wasm, JSON.stringify(first));
    assert.equal(wasm.enc, 'br', JSON.stringify(wasm));
    const firstBytes = first.reduce((n, r) => n + r.bytes, 0);

    await page.reload();
    await waitLoaded(page, 'incident1');
    const again = seen.splice(0);
    const bundle = again.filter((r) => /\.(html|js|wasm)$|\/$/.test(new URL(r.url).pathname));
    assert.ok(bundle.length >= 2, JSON.stringify(again));
    // Chromium reports a revalidated response as its cached 200: what crossed the wire is the
    // 304's headers alone.
    for (const r of bundle) assert.ok(r.bytes < 1000, `a 304 on reload: ${JSON.stringify(again)}`);
    const reloadBytes = again.reduce((n, r) => n + r.bytes, 0);
    console.log(`first load ${firstBytes} bytes on the wire, reload ${reloadBytes}`);
    assert.ok(reloadBytes < 20000 && reloadBytes * 20 < firstBytes, `${firstBytes} then ${reloadBytes}`);
    await page.context().close();
  });
});

describe('viewer on a served recording', () => {
  const v = useViewer(FIXTURES.incident2);

  test('`slotscope serve FILE` prints a ?src= URL that opens FILE', TEST, async () => {
    assert.match(v.server.url, /\?src=\/recording\/incident2-valkey\.jsonl\.zst$/);
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    const s = await waitLoaded(page, 'incident2-valkey');
    assert.equal(await page.locator('#findings li.finding').first().getAttribute('data-kind'), 'redirect_storm');
    assert.equal(s.loaded.includes('incident2-valkey'), true);
    assert.equal(await page.locator('#client-side').count(), 0, 'no tap lines, no client-side panel');
    await page.context().close();
  });
});

describe('viewer on a recording made through `slotscope tap`', () => {
  const v = useViewer(FIXTURES.incident2Tap);

  test('the client-side MOVED share per command is the client\'s own count, beside the servers\'', TEST, async () => {
    const own = JSON.parse(readFileSync(FIXTURES.incident2Tap.replace(/\.jsonl\.zst$/, '.client.json'), 'utf8'))
      .recommendation.commands;
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident2-tap-valkey');
    const panel = page.locator('#client-side');
    await panel.scrollIntoViewIfNeeded();
    for (const cmd of ['zrevrange', 'zrangebyscore']) {
      const row = panel.locator(`tr.command[data-command="${cmd}"]`);
      const cells = await row.locator('td').allInnerTexts();
      assert.equal(cells[1], String(own[cmd].sent), `${cmd} sent: ${cells}`);
      assert.equal(cells[2], String(own[cmd].moved), `${cmd} MOVED: ${cells}`);
      assert.equal(cells[4], `${(own[cmd].moved_share_of_calls * 100).toFixed(1)} %`, `${cmd} client share: ${cells}`);
      assert.match(cells[5], /^\d+\.\d %$/, `${cmd} server share: ${cells}`);
    }
    await screenshot(page, '16-client-side');
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });
});
