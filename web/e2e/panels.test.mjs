// The slot map and topology diff panels, in headless Chromium against `slotscope serve` on the
// incident-1 demo (one node, then a second node joins and takes slots 8192-16383): the slot map
// follows the cursor (the new node's legend count goes 0 → 8192), hovering a cell names its slot
// and owner, both panels round-trip in the URL hash, and the topology diff over the whole
// recording shows the moved range and the node added. Screenshots of each panel go to
// web/e2e/artifacts/.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  ARTIFACTS, STEP_MS, newPage, screenshot, state, useViewer, waitLoaded, waitState,
} from './harness.mjs';

const TEST = { timeout: 4 * STEP_MS };

/** The topology track's box, to click the cursor into place. */
async function trackBox(page) {
  const canvas = page.locator('#tracks canvas[data-track="topology"]');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  assert.ok(box && box.width > 50 && box.height > 10, `a visible track canvas: ${JSON.stringify(box)}`);
  return box;
}

/** Clicks the topology track at `share` of its width and waits for the cursor to move there. */
async function cursorAt(page, share) {
  const box = await trackBox(page);
  const before = await state(page);
  const want = before.window[0] + (before.window[1] - before.window[0]) * share;
  await page.mouse.click(box.x + box.width * share, box.y + box.height / 2);
  const tol = (before.window[1] - before.window[0]) / box.width * 2;
  return waitState(page, (s) => Math.abs(s.cursor - want) <= tol, `the cursor at ${share} of the window`);
}

/** The slot map legend: `{ "host:port": slots }`. */
async function legend(page) {
  return page.evaluate(() => Object.fromEntries(
    [...document.querySelectorAll('#slotmap li.legend-node')]
      .map((li) => [li.dataset.node, Number(li.querySelector('.count').textContent.replace(/\D/g, ''))]),
  ));
}

/** Waits (bounded) until `pred(legend)` holds and returns that legend. */
async function waitLegend(page, pred, what) {
  const deadline = Date.now() + STEP_MS;
  let last = null;
  while (Date.now() < deadline) {
    last = await legend(page);
    if (pred(last)) return last;
    await page.waitForTimeout(100);
  }
  throw new Error(`timed out waiting for ${what}; last legend: ${JSON.stringify(last)}`);
}

/** Waits (bounded) until the text of `selector` satisfies `pred`, and returns it. */
async function waitText(page, selector, pred, what) {
  const deadline = Date.now() + STEP_MS;
  let last = null;
  while (Date.now() < deadline) {
    last = await page.evaluate((sel) => document.querySelector(sel)?.textContent ?? null, selector);
    if (last !== null && pred(last)) return last;
    await page.waitForTimeout(100);
  }
  throw new Error(`timed out waiting for ${what}; ${selector} says: ${JSON.stringify(last)}`);
}

/** Opens panel `name` with its toolbar button and waits until it shows and the state has it. */
async function openPanel(page, name) {
  await page.locator(`#toggle-${name}`).click();
  await waitState(page, (s) => s.panels.includes(name), `panel ${name} open`);
  await page.locator(`#${name}`).waitFor({ state: 'visible', timeout: STEP_MS });
}

/** A screenshot of one panel (its section), as web/e2e/artifacts/NAME.png. */
async function panelShot(page, selector, name) {
  await screenshot(page, name);
  const path = join(ARTIFACTS, `${name}-panel.png`);
  await page.locator(selector).screenshot({ path, timeout: STEP_MS });
  return path;
}

describe('slot map and topology diff on the incident-1 demo', () => {
  const v = useViewer();

  test('the slot map follows the cursor: the new node goes from 0 to 8192 slots', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    assert.equal(await page.locator('#slotmap').count(), 0, 'closed by default');
    await openPanel(page, 'slotmap');
    assert.equal(await page.locator('#slotmap canvas[data-panel="slotmap"]').count(), 1);

    await cursorAt(page, 0.01);
    const early = await waitLegend(page, (l) => Object.values(l).includes(16384), 'one node owning every slot');
    const nodes = Object.keys(early);
    assert.ok(nodes.length >= 2, `both nodes listed: ${JSON.stringify(early)}`);
    const fresh = nodes.filter((n) => early[n] === 0);
    assert.equal(fresh.length, 1, `one node without slots at first: ${JSON.stringify(early)}`);
    const [added] = fresh;
    await panelShot(page, '.slotmap-panel', '10-slotmap-before');

    await cursorAt(page, 0.99);
    const late = await waitLegend(page, (l) => l[added] === 8192, `${added} owning 8192 slots`);
    assert.equal(Object.values(late).reduce((a, b) => a + b, 0), 16384, JSON.stringify(late));

    // Hovering the last cell (slot 16383, bottom right) names it and its new owner.
    const canvas = page.locator('#slotmap canvas[data-panel="slotmap"]');
    await canvas.scrollIntoViewIfNeeded();
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + box.width - 2, box.y + box.height - 2);
    const hover = await waitText(page, '#slotmap-hover', (t) => t.startsWith('slot 16383 ·'), 'the hover line for slot 16383');
    assert.equal(hover, `slot 16383 · owner ${added} · not migrating`);
    await panelShot(page, '.slotmap-panel', '11-slotmap-after');

    // Mid-migration: step the cursor until slots are in flight, and see them hatched.
    let migrating = 0;
    for (let share = 0.3; share <= 0.9 && migrating === 0; share += 0.02) {
      await cursorAt(page, share);
      migrating = await page.evaluate(() => Number(
        document.querySelector('#slotmap li.legend-migrating .count')?.textContent.replace(/\D/g, '') || 0,
      ));
    }
    assert.ok(migrating > 0, 'some cursor position shows a migration in flight');
    await canvas.scrollIntoViewIfNeeded();
    const mid = await canvas.boundingBox();
    await page.mouse.move(mid.x + mid.width / 2, mid.y + mid.height * 0.75);
    await waitText(page, '#slotmap-hover', (t) => t.startsWith('slot '), 'a hover line');
    await panelShot(page, '.slotmap-panel', '12-slotmap-migrating');

    // The open panel is in the hash and comes back on reload.
    await page.waitForFunction(() => /(^#|&)p=[^&]*slotmap/.test(location.hash), null, { timeout: STEP_MS });
    await page.reload();
    await waitLoaded(page, 'incident1');
    await page.locator('#slotmap canvas[data-panel="slotmap"]').waitFor({ state: 'visible', timeout: STEP_MS });
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('the topology diff over the whole recording shows the moved half and the node added', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    const s0 = await waitLoaded(page, 'incident1');
    await openPanel(page, 'topology-diff');
    // No selection, cursor at the window's start: A = B.
    await page.waitForFunction(
      () => document.querySelector('#diff-summary')?.textContent === 'no change',
      null,
      { timeout: STEP_MS, polling: 100 },
    );

    // Shift-drag across the whole track: the selection is (about) the whole recording.
    const box = await trackBox(page);
    await page.mouse.move(box.x + 1, box.y + box.height / 2);
    await page.keyboard.down('Shift');
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    const s = await waitState(page, (x) => x.selection !== null, 'a selection');
    assert.ok(s.selection[1] - s.selection[0] > 0.95 * (s0.window[1] - s0.window[0]), JSON.stringify(s));

    // The selection's deltas, which the reader module answers (the per-node metrics stay there):
    // every node of the recording, the commands the scenario ran, all with calls.
    const nodeRows = page.locator('#selection table.nodes tr.node');
    await nodeRows.first().waitFor({ state: 'visible', timeout: STEP_MS });
    const nodes = await nodeRows.evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.ok(nodes.length >= 2, JSON.stringify(nodes));
    assert.ok(nodes.every((r) => /^127\.0\.0\.1:\d+$/.test(r[0])), JSON.stringify(nodes));
    assert.ok(nodes.reduce((sum, r) => sum + Number(r[1]), 0) > 100, JSON.stringify(nodes));
    const commands = await page.locator('#selection table.commands tr.command')
      .evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.ok(commands.length >= 1 && commands.every((r) => Number(r[1]) + Number(r[2]) + Number(r[3]) > 0), JSON.stringify(commands));

    const rows = page.locator('#topology-diff tr.moved-range');
    await rows.first().waitFor({ state: 'visible', timeout: STEP_MS });
    assert.equal(await rows.count(), 1);
    assert.equal(await rows.first().locator('td.range').textContent(), 'slots 8192-16383');
    const change = await rows.first().locator('td.change').textContent();
    const m = /^(\S+) → (\S+)$/.exec(change);
    assert.ok(m && m[1] !== m[2], change);
    const added = page.locator('#topology-diff li.node-added');
    assert.equal(await added.count(), 1);
    assert.equal(await added.textContent(), `+ ${m[2]} added`);
    assert.equal(await page.locator('#topology-diff li.node-removed').count(), 0);
    assert.equal(await page.locator('#diff-summary').textContent(), '8192 slots moved, 1 node added');
    assert.match(await page.locator('#topology-diff .basis').textContent(), /selection/);
    await panelShot(page, '.topology-diff-panel', '13-topology-diff');

    // Without a selection: window start → cursor, the cursor at the end gives the same diff.
    await page.keyboard.press('Escape');
    await waitState(page, (x) => x.selection === null, 'the selection cleared');
    await cursorAt(page, 0.995);
    await page.waitForFunction(
      () => document.querySelector('#diff-summary')?.textContent === '8192 slots moved, 1 node added'
        && /cursor/.test(document.querySelector('#topology-diff .basis')?.textContent || ''),
      null,
      { timeout: STEP_MS, polling: 100 },
    );
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('on a high-DPI screen the canvases have two device pixels per CSS pixel, drawn edge to edge', TEST, async () => {
    const page = await newPage(v.browser, { scale: 2 });
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await openPanel(page, 'slotmap');
    const sizes = await page.evaluate(() => [...document.querySelectorAll('#tracks canvas, #slotmap canvas')].map((c) => {
      // Drawn pixels (not white, not transparent) in the right and bottom quarters of the
      // backing store: a drawing not scaled to it would leave them empty.
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let right = 0;
      let bottom = 0;
      for (let y = 0; y < c.height; y++) {
        for (let x = 0; x < c.width; x++) {
          const i = (y * c.width + x) * 4;
          const drawn = d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240);
          if (drawn && x > c.width * 0.75) right++;
          if (drawn && y > c.height * 0.75) bottom++;
        }
      }
      return { name: c.dataset.track || c.dataset.panel, w: c.width, h: c.height, cw: c.clientWidth, ch: c.clientHeight, right, bottom };
    }));
    assert.equal(sizes.length, 8, JSON.stringify(sizes));
    for (const s of sizes) {
      assert.ok(Math.abs(s.w - 2 * s.cw) <= 1 && Math.abs(s.h - 2 * s.ch) <= 1, JSON.stringify(s));
      assert.ok(s.right > 0 && s.bottom > 0, `drawn over the whole canvas: ${JSON.stringify(s)}`);
    }
    await screenshot(page, '15-high-dpi');
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });
});
