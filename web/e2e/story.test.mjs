// Issue 15 in headless Chromium: the story first and findings in focus (a finding click shades its
// interval on every track and names it in the URL hash, which a reload keeps; findings are
// reachable with Tab), notes of the reader's own kept in the link, the readout follows the pointer
// inside the viewport, the layout at 1024×768, opening a panel brings it into view, and dark mode
// follows the system setting.
// Screenshots of each view at 1440×900 and 1024×768 go to web/e2e/artifacts/.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { STEP_MS, newPage, screenshot, state, useViewer, waitLoaded, waitState } from './harness.mjs';

const TEST = { timeout: 4 * STEP_MS };

/** `[kind, start, end]` of a state's focus (`KIND-START-END`). */
function focusOf(s) {
  const m = /^([a-z_0-9]+)-(\d+)-(\d+)$/.exec(s.focus ?? '');
  assert.ok(m, `a finding in focus: ${JSON.stringify(s)}`);
  return [m[1], Number(m[2]), Number(m[3])];
}

/**
 * The share of the pixels of column `x` (CSS pixels) of track `track` tinted with the focus
 * colour (orange over the background: red well above blue).
 */
async function tintedShare(page, track, x) {
  return page.evaluate(({ track, x }) => {
    const c = document.querySelector(`#tracks canvas[data-track="${track}"]`);
    const ratio = c.width / c.clientWidth;
    const px = Math.min(c.width - 1, Math.max(0, Math.round(x * ratio)));
    const data = c.getContext('2d').getImageData(px, 0, 1, c.height).data;
    let tinted = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] - data[i + 2] > 15 && data[i + 1] - data[i + 2] > 5) tinted += 1;
    }
    return tinted / c.height;
  }, { track, x });
}

/** The CSS x of instant `t` on the tracks of state `s`. */
async function xOf(page, s, t) {
  const width = await page.locator('#tracks canvas[data-track="node-rate"]').evaluate((c) => c.clientWidth);
  return ((t - s.window[0]) / (s.window[1] - s.window[0])) * width;
}

/**
 * Census header words split across two lines, or headers wider than their column (headers break
 * between words, never inside one, and fit).
 */
async function brokenHeaderWords(page) {
  return page.evaluate(() => {
    const out = [];
    for (const th of document.querySelectorAll('#census th')) {
      if (th.scrollWidth > th.clientWidth + 1) out.push(`${th.innerText} overflows its column`);
      const text = th.firstChild;
      if (!text || text.nodeType !== Node.TEXT_NODE) continue;
      let at = 0;
      for (const word of text.textContent.split(' ')) {
        const range = document.createRange();
        range.setStart(text, at);
        range.setEnd(text, at + word.length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (tops.size > 1) out.push(word);
        at += word.length + 1;
      }
    }
    return out;
  });
}

describe('the story first and findings in focus', () => {
  const v = useViewer();

  test('a finding click shades its interval on every track and puts f= in the hash; a reload keeps it; Escape drops it', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    const idle = page.locator('#findings li.finding[data-kind="idle_shard"]');
    await idle.click();
    const s = await waitState(page, (x) => x.focus, 'a finding in focus');
    const [kind, a, b] = focusOf(s);
    assert.equal(kind, 'idle_shard');
    assert.ok(s.window[0] < a && s.window[1] > Math.min(b, a + 10000), `framed with what came before and after: ${JSON.stringify(s)}`);
    assert.equal(await idle.getAttribute('class').then((c) => c.includes('focused')), true);
    await page.waitForFunction((f) => location.hash.includes(`f=${f}`), s.focus);
    // Inside the interval every series track is tinted; before it, not.
    const inside = await xOf(page, s, a + (Math.min(b, s.window[1]) - a) / 2);
    const outside = await xOf(page, s, s.window[0] + (a - s.window[0]) / 3);
    for (const track of ['node-rate', 'moved-share', 'errors', 'connections', 'refreshes']) {
      const tin = await tintedShare(page, track, inside);
      const tout = await tintedShare(page, track, outside);
      assert.ok(tin > 0.5, `${track}: ${tin} of the column inside the finding is shaded`);
      assert.ok(tout < 0.1, `${track}: ${tout} of the column before it is shaded`);
    }
    await screenshot(page, '20-finding-in-focus-1440x900');
    assert.deepEqual(await brokenHeaderWords(page), [], 'census header words split across lines at 1440');

    await page.reload();
    const back = await waitLoaded(page, 'incident1');
    assert.equal(back.focus, s.focus, 'the focus survives a reload');
    assert.deepEqual(back.window, s.window);
    assert.equal(await page.locator('#findings li.finding.focused').getAttribute('data-kind'), 'idle_shard');

    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Escape');
    await waitState(page, (x) => !x.focus, 'Escape to drop the focus');
    await page.waitForFunction(() => !location.hash.includes('f='));
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('a note of your own at the cursor is drawn, kept in the link across a reload, and removable', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    const s0 = await waitLoaded(page, 'incident1');
    page.once('dialog', (d) => d.accept('pager fired, ack by Ann'));
    await page.locator('#add-note').click();
    const s = await waitState(page, (x) => x.notes?.length === 1, 'the note');
    assert.deepEqual(s.notes, [[s0.cursor, 'pager fired, ack by Ann']]);
    await page.waitForFunction(() => /(^#|&)n=\d+-pager%20fired%2C%20ack/.test(location.hash));
    const notePixels = () => page.evaluate(() => {
      const c = document.querySelector('#tracks canvas[data-track="events"]');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (Math.abs(d[i] - 106) < 20 && Math.abs(d[i + 1] - 27) < 20 && Math.abs(d[i + 2] - 154) < 20) n += 1;
      }
      return n;
    });
    assert.ok(await notePixels() > 10, 'the note is drawn on the events track');
    await page.reload();
    const back = await waitLoaded(page, 'incident1');
    assert.deepEqual(back.notes, s.notes, 'the note survives a reload');
    assert.match(await page.locator('#notes li.note').innerText(), /pager fired, ack by Ann/);
    await screenshot(page, '26-note-1440x900');
    await page.locator('#notes .note-remove').click();
    await waitState(page, (x) => x.notes.length === 0, 'the note removed');
    await page.waitForFunction(() => !location.hash.includes('n='));
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('a click on a legend entry turns its series off, and on again; the cursor stays', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    const s0 = await waitLoaded(page, 'incident1');
    const canvas = page.locator('#tracks canvas[data-track="node-rate"]');
    await canvas.scrollIntoViewIfNeeded();
    const box = await canvas.boundingBox();
    // The first entry starts 6 px in, 7 px a character: its middle is well inside it.
    await page.mouse.click(box.x + 30, box.y + 8);
    const s = await waitState(page, (x) => x.hidden?.length === 1, 'a series turned off');
    assert.match(s.hidden[0], /^node-rate:127\.0\.0\.1:\d+$/);
    assert.equal(s.cursor, s0.cursor, 'a legend click does not move the cursor');
    await page.mouse.click(box.x + 30, box.y + 8);
    await waitState(page, (x) => x.hidden.length === 0, 'the series back on');
    await page.context().close();
  });

  test('findings are reachable with Tab, and Enter brings one into focus', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    let reached = false;
    for (let i = 0; i < 80 && !reached; i += 1) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.matches('#findings li.finding') ?? false);
    }
    assert.ok(reached, 'Tab reaches a finding within 80 presses');
    await page.keyboard.press('Enter');
    const s = await waitState(page, (x) => x.focus, 'Enter to focus the finding');
    const kind = await page.evaluate(() => document.activeElement.dataset.kind);
    assert.equal(focusOf(s)[0], kind);
    await page.context().close();
  });

  test('the readout follows the pointer and stays inside the viewport, near every edge', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    const canvas = page.locator('#tracks canvas[data-track="connections"]');
    await canvas.scrollIntoViewIfNeeded();
    const box = await canvas.boundingBox();
    const viewport = page.viewportSize();
    for (const [fx, fy] of [[0.05, 0.5], [0.97, 0.5], [0.5, 0.95]]) {
      const pointer = { x: box.x + box.width * fx, y: box.y + box.height * fy };
      await page.mouse.move(pointer.x, pointer.y, { steps: 3 });
      const tip = page.locator('#hover.tooltip');
      await tip.waitFor();
      const t = await tip.boundingBox();
      assert.ok(t.x >= 0 && t.y >= 0 && t.x + t.width <= viewport.width && t.y + t.height <= viewport.height,
        `the readout ${JSON.stringify(t)} is inside the viewport ${JSON.stringify(viewport)}`);
      const near = Math.min(Math.abs(t.x - pointer.x), Math.abs(t.x + t.width - pointer.x));
      assert.ok(near < 40, `the readout is beside the pointer: ${JSON.stringify({ t, pointer })}`);
      assert.match(await tip.innerText(), /^at /);
    }
    await screenshot(page, '21-readout-at-pointer-1440x900');
    // Off the tracks it goes back below them, showing the cursor.
    await page.mouse.move(5, 5);
    await page.locator('#hover:not(.tooltip)').waitFor();
    await page.context().close();
  });

  test('at 1024×768 the story comes first and the tracks take the width', TEST, async () => {
    const page = await newPage(v.browser, { width: 1024, height: 768 });
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    const cause = page.locator('#story li.step.root-cause');
    const c = await cause.boundingBox();
    assert.ok(c.y + c.height < 768, `the root cause is on the first screen: ${JSON.stringify(c)}`);
    const width = await page.locator('#tracks').evaluate((e) => e.clientWidth);
    assert.ok(width >= 900, `the tracks take the width: ${width} px of 1024`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling: ${overflow} px`);
    assert.deepEqual(await brokenHeaderWords(page), [], 'census header words split across lines');
    await screenshot(page, '22-demo-1024x768');
    await page.locator('#findings li.finding').first().click();
    await waitState(page, (x) => x.focus, 'a finding in focus');
    await screenshot(page, '23-finding-in-focus-1024x768');
    await page.context().close();
  });

  test('opening a panel brings it into view', TEST, async () => {
    const page = await newPage(v.browser, { width: 1024, height: 768 });
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#toggle-whatif').click();
    await page.waitForFunction(() => {
      const el = document.getElementById('whatif');
      if (!el) return false;
      const r = el.getBoundingClientRect();
      return r.top >= 0 && r.top < window.innerHeight - 40;
    }, null, { timeout: STEP_MS });
    await screenshot(page, '24-whatif-opened-1024x768');
    await page.context().close();
  });

  test('dark mode follows the system setting, the tracks too', TEST, async () => {
    for (const [width, height] of [[1440, 900], [1024, 768]]) {
      const page = await newPage(v.browser, { width, height, colorScheme: 'dark' });
      await page.goto(v.server.url);
      await waitLoaded(page, 'incident1');
      const luminance = (rgb) => {
        const [r, g, b] = rgb.match(/\d+/g).map(Number);
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const body = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      assert.ok(luminance(body) < 50, `a dark page: ${body}`);
      const panel = await page.locator('.findings-panel').evaluate((e) => getComputedStyle(e).backgroundColor);
      assert.ok(luminance(panel) < 60, `a dark panel: ${panel}`);
      const ink = await page.locator('.finding-title').first().evaluate((e) => getComputedStyle(e).color);
      assert.ok(luminance(ink) > 150, `light text: ${ink}`);
      // The canvas background: its most frequent colour.
      const background = await page.evaluate(() => {
        const c = document.querySelector('#tracks canvas[data-track="node-rate"]');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const counts = new Map();
        for (let i = 0; i < d.length; i += 4) {
          const k = `rgb(${d[i]}, ${d[i + 1]}, ${d[i + 2]})`;
          counts.set(k, (counts.get(k) ?? 0) + 1);
        }
        return [...counts.entries()].sort((x, y) => y[1] - x[1])[0][0];
      });
      assert.ok(luminance(background) < 50, `a dark track: ${background}`);
      await screenshot(page, `25-dark-${width}x${height}`);
      assert.deepEqual(page.consoleErrors, []);
      await page.context().close();
    }
  });
});
