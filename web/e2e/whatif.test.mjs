// The what-if panel in headless Chromium against `slotscope serve`: on the incident-1 demo,
// redis-py@5.0.0 is predicted to end wedged and redis-py@8.0.0 not; on incident 2, redis-py with
// address_remap to the seed predicts a MOVED share above 30 %; a bad option shows the core's
// message; "clear" removes the overlay; the panel round-trips in the URL hash; it starts on the
// story's model, draws two predictions side by side (A/B), and an error clears them. Screenshots go to
// web/e2e/artifacts/. Every wait is bounded by STEP_MS.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  STEP_MS, newPage, screenshot, state, useViewer, waitLoaded, waitState,
} from './harness.mjs';

const TEST = { timeout: 6 * STEP_MS };
/** The seed address of the incident-2 recording (its header's `seed`). */
const INCIDENT2_SEED = '127.0.0.1:22809';

/** Opens the what-if panel (if closed) and waits for its form. */
async function openWhatif(page) {
  if (await page.locator('#whatif').count() === 0) {
    await page.locator('#toggle-whatif').click();
  }
  await page.locator('#whatif-run').waitFor({ state: 'visible', timeout: STEP_MS });
  await page.locator('#whatif').scrollIntoViewIfNeeded();
}

/**
 * Runs `model` with `options` and waits until the run ends: a summary naming the model, or an
 * error. Returns `{ summary, error, status }`.
 */
async function runModel(page, model, options = '') {
  await page.locator('#whatif-model').selectOption(model);
  await page.locator('#whatif-options').fill(options);
  const before = await page.locator('#whatif-summary').innerText({ timeout: 1000 }).catch(() => '');
  await page.locator('#whatif-run').click();
  await page.waitForFunction(
    ([m, prev]) => {
      const run = document.querySelector('#whatif-run');
      const sum = document.querySelector('#whatif-summary');
      const err = document.querySelector('#whatif-error');
      if (!run || run.disabled) return false;
      if (err) return true;
      return !!sum && sum.innerText.startsWith(m) && sum.innerText !== prev;
    },
    [model, before],
    { timeout: STEP_MS, polling: 50 },
  ).catch(async (e) => {
    // Same model, same result: the summary text does not change; accept it when the run ended.
    const sum = await page.locator('#whatif-summary').innerText({ timeout: 1000 }).catch(() => '');
    if (!sum.startsWith(model)) throw e;
  });
  const text = async (sel) => page.locator(sel).innerText({ timeout: 1000 }).catch(() => null);
  return {
    summary: await text('#whatif-summary'),
    error: await text('#whatif-error'),
    status: await text('#whatif-status'),
  };
}

/** The predicted line's colour (#C71585) counted in a track's canvas pixels. */
async function predictedPixels(page, track) {
  return page.evaluate((name) => {
    const c = document.querySelector(`#tracks canvas[data-track="${name}"]`);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (Math.abs(d[i] - 199) < 24 && Math.abs(d[i + 1] - 21) < 30 && Math.abs(d[i + 2] - 133) < 30) n++;
    }
    return n;
  }, track);
}

describe('what-if on the demos', () => {
  const v = useViewer();

  test('incident 1: redis-py@5.0.0 ends wedged, redis-py@8.0.0 does not; clear removes the overlay', TEST, async () => {
    const page = await newPage(v.browser);
    // The replay engine is a second wasm module, fetched only when the panel first runs.
    const fetched = [];
    page.on('request', (req) => {
      if (req.url().includes('/whatif/')) fetched.push(new URL(req.url()).pathname);
    });
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await openWhatif(page);
    assert.deepEqual(fetched, [], 'no what-if module before a run');
    const s = await waitState(page, (x) => x.panels.includes('whatif'), 'the whatif panel open');
    assert.ok(s.panels.includes('whatif'));
    const options = await page.locator('#whatif-model option').allInnerTexts();
    assert.ok(options.length >= 7, JSON.stringify(options));
    assert.ok(options.some((o) => o.startsWith('redis-py@5.0.0 — ')), JSON.stringify(options));
    assert.equal(await page.locator('#whatif-rate').inputValue(), '199', 'the observed rate');
    assert.equal(await page.locator('#whatif-concurrency').inputValue(), '1');
    assert.equal(await predictedPixels(page, 'node-rate'), 0, 'no overlay before a run');

    const r5 = await runModel(page, 'redis-py@5.0.0');
    assert.equal(r5.error, null, JSON.stringify(r5));
    // The stall's edges are known within poll windows: replayed at their 15 moments.
    assert.match(
      r5.summary,
      /^redis-py@5\.0\.0 ends wedged since \d\d:\d\d:\d\d\.\d{3}Z \(wedged at 15 of 15 moments of the kill and failure windows\);/,
    );
    assert.match(r5.summary, /MOVED share zadd 0\.0 %/);
    assert.match(r5.status, /Replayed \d+ commands in \d+ ms/);
    assert.deepEqual(fetched.sort(), ['/whatif/slotscope_whatif.js', '/whatif/slotscope_whatif_bg.wasm']);
    assert.ok(await predictedPixels(page, 'node-rate') > 50, 'predicted commands/s drawn');
    assert.match(await page.locator('#hover').innerText(), /predicted \(redis-py@5\.0\.0\): commands\/s ok /,
      'the readout at the cursor has the prediction');
    assert.ok(await predictedPixels(page, 'events') > 50, 'wedged interval marked');
    await screenshot(page, 'whatif-01-incident1-redis-py-5-wedged');

    const r8 = await runModel(page, 'redis-py@8.0.0');
    assert.equal(r8.error, null, JSON.stringify(r8));
    assert.match(
      r8.summary,
      /^redis-py@8\.0\.0 does not end wedged \(wedged at 0 of 15 moments of the kill and failure windows\);/,
    );
    assert.doesNotMatch(r8.summary, /ends wedged since/);
    assert.equal(fetched.length, 2, 'the module is fetched once');
    assert.ok(await predictedPixels(page, 'refreshes') > 20, 'predicted CLUSTER SLOTS/s drawn');
    assert.equal(await predictedPixels(page, 'events'), 0, 'no wedged interval');
    await screenshot(page, 'whatif-02-incident1-redis-py-8');

    // The panel round-trips in the URL hash.
    assert.match(await page.evaluate(() => location.hash), /p=[^&]*whatif/);
    await page.reload();
    await waitLoaded(page, 'incident1');
    await page.locator('#whatif').waitFor({ state: 'visible', timeout: STEP_MS });

    await runModel(page, 'redis-py@5.0.0');
    await page.locator('#whatif-clear').click();
    await page.locator('#whatif-summary').waitFor({ state: 'detached', timeout: STEP_MS });
    await page.waitForFunction(() => true, null, { timeout: 1000 });
    assert.equal(await predictedPixels(page, 'node-rate'), 0, 'clear removes the overlay');
    assert.equal(await predictedPixels(page, 'events'), 0, 'clear removes the wedged interval');
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('every model of the menu replays incident 1 in the browser (every library slotscope models)', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await openWhatif(page);
    const models = await page.locator('#whatif-model option').evaluateAll((os) => os.map((o) => o.value));
    for (const lib of ['redis-py', 'redis-rs', 'go-redis', 'ioredis', 'node-redis', 'lettuce', 'jedis', 'glide']) {
      assert.ok(models.some((m) => m.startsWith(`${lib}@`)), `${lib} in ${JSON.stringify(models)}`);
    }
    for (const m of models) {
      const r = await runModel(page, m);
      assert.equal(r.error, null, `${m}: ${JSON.stringify(r)}`);
      assert.ok(r.summary.startsWith(m), `${m}: ${r.summary}`);
      assert.match(r.status, /Replayed \d+ commands in \d+ ms/, `${m}: ${r.status}`);
    }
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('incident 2: address_remap to the seed predicts a MOVED share above 30 %; a bad option is reported', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#demo-2').click();
    await waitLoaded(page, 'incident2');
    await openWhatif(page);

    const bad = await runModel(page, 'redis-py@5.0.0', 'socket_timeout=abc');
    assert.match(bad.error ?? '', /bad value `abc` for model option `socket_timeout`/, JSON.stringify(bad));
    assert.equal(bad.summary, null);
    await screenshot(page, 'whatif-03-bad-option');

    const r = await runModel(page, 'redis-py@5.0.0', `address_remap=${INCIDENT2_SEED}`);
    assert.equal(r.error, null, JSON.stringify(r));
    const shares = [...r.summary.matchAll(/MOVED share (\w+) (\d+\.\d) %/g)].map((m) => Number(m[2]));
    assert.ok(shares.length >= 1, r.summary);
    assert.ok(shares.every((x) => x > 30), `${shares} in ${r.summary}`);
    assert.ok(await predictedPixels(page, 'moved-share') > 50, 'predicted MOVED share drawn');
    const s = await state(page);
    assert.ok(s.loaded.includes('incident2'), JSON.stringify(s));
    await page.locator('#whatif').scrollIntoViewIfNeeded();
    await screenshot(page, 'whatif-04-incident2-address-remap');
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  test('A/B: the panel starts on the story\'s model; 5.0.0 against 8.0.0 draws two predictions side by side; an error clears both', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await openWhatif(page);
    // The group the story is about runs redis-py 5.0.0: the panel starts on its model.
    assert.equal(await page.locator('#whatif-model').inputValue(), 'redis-py@5.0.0');
    await page.locator('#whatif-model-b').selectOption('redis-py@8.0.0');
    await page.locator('#whatif-run').click();
    await page.locator('#whatif-summary-b').waitFor({ timeout: STEP_MS });
    const a = await page.locator('#whatif-summary').innerText();
    const b = await page.locator('#whatif-summary-b').innerText();
    assert.match(a, /^A: redis-py@5\.0\.0 ends wedged/);
    assert.match(b, /^B: redis-py@8\.0\.0 does not end wedged/);
    // Side by side, and both drawn: A in its colour, B in its own (#00897B).
    const [ra, rb] = [await page.locator('#whatif-summary').boundingBox(), await page.locator('#whatif-summary-b').boundingBox()];
    assert.ok(Math.abs(ra.y - rb.y) < 4 && rb.x > ra.x + ra.width / 2, `side by side: ${JSON.stringify([ra, rb])}`);
    assert.ok(await predictedPixels(page, 'node-rate') > 20, 'A drawn');
    const teal = await page.evaluate(() => {
      const c = document.querySelector('#tracks canvas[data-track="node-rate"]');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (Math.abs(d[i] - 0) < 30 && Math.abs(d[i + 1] - 137) < 30 && Math.abs(d[i + 2] - 123) < 30) n++;
      }
      return n;
    });
    assert.ok(teal > 20, `B drawn: ${teal} pixels`);
    assert.match(await page.locator('#hover').innerText(), /A: predicted|predicted \(redis-py@5\.0\.0\)/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the B form fits the page: ${overflow} px too wide`);
    await screenshot(page, 'whatif-05-ab-1440x900');
    // A bad option: the error shows and the earlier predictions are gone, summaries and overlay.
    await page.locator('#whatif-options').fill('no_such_option=1');
    await page.locator('#whatif-run').click();
    await page.locator('#whatif-error').waitFor({ timeout: STEP_MS });
    assert.equal(await page.locator('#whatif-summary').count(), 0);
    assert.equal(await page.locator('#whatif-summary-b').count(), 0);
    let left = await predictedPixels(page, 'node-rate');
    for (let i = 0; i < 50 && left > 0; i += 1) {
      await page.waitForTimeout(100);
      left = await predictedPixels(page, 'node-rate');
    }
    assert.equal(left, 0, 'the overlay is cleared');
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });
});
