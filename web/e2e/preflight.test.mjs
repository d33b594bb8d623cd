// The what-if panel's pre-flight in headless Chromium against `slotscope serve`: on incident 2,
// `scale-out:+1` replays both census groups after the recording's end; the remapped group comes
// first (A), each group's verdict and why are listed, the window goes past the recording's end and
// the predicted tracks are drawn there; a plan that cannot be carried out names its step and takes
// the window back inside the recording. Screenshots go to web/e2e/artifacts/. Every wait is
// bounded by STEP_MS.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist and a built slotscope binary)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  STEP_MS, newPage, screenshot, state, useViewer, waitLoaded, waitState,
} from './harness.mjs';

const TEST = { timeout: 6 * STEP_MS };

/** Runs the plan in the form and waits for its result or its error; returns which. */
async function preflight(page, plan) {
  await page.locator('#preflight-plan').fill(plan);
  await page.locator('#preflight-run').click();
  await page.waitForFunction(
    () => {
      const run = document.querySelector('#preflight-run');
      if (!run || run.disabled) return false;
      return !!document.querySelector('#preflight-result') || !!document.querySelector('#preflight-error');
    },
    null,
    { timeout: STEP_MS, polling: 50 },
  );
  const text = async (sel) => page.locator(sel).innerText({ timeout: 1000 }).catch(() => null);
  return { result: await text('#preflight-result'), error: await text('#preflight-error') };
}

/** Predicted-colour (#C71585, prediction A) pixels in the right `share` of a track's canvas. */
async function predictedPixelsRight(page, track, share) {
  return page.evaluate(([name, part]) => {
    const c = document.querySelector(`#tracks canvas[data-track="${name}"]`);
    const from = Math.floor(c.width * (1 - part));
    const d = c.getContext('2d').getImageData(from, 0, c.width - from, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (Math.abs(d[i] - 199) < 24 && Math.abs(d[i + 1] - 21) < 30 && Math.abs(d[i + 2] - 133) < 30) n++;
    }
    return n;
  }, [track, share]);
}

describe('pre-flight in the viewer', () => {
  const v = useViewer();

  test('incident 2: a scale-out replayed per group after the recording, drawn past its end', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#demo-2').click();
    const loaded = await waitLoaded(page, 'incident2');
    const end = loaded.window[1];
    if (await page.locator('#whatif').count() === 0) {
      await page.locator('#toggle-whatif').click();
    }
    await page.locator('#preflight-run').waitFor({ state: 'visible', timeout: STEP_MS });
    await page.locator('#preflight').scrollIntoViewIfNeeded();
    assert.equal(await page.locator('#preflight-plan').inputValue(), 'scale-out:+1');

    const ok = await preflight(page, 'scale-out:+1');
    assert.equal(ok.error, null, JSON.stringify(ok));
    const rows = await page.locator('#preflight-result tr').allInnerTexts();
    assert.equal(rows.length, 3, JSON.stringify(rows));
    assert.match(rows[1], /^recommendation \(A\)/, rows[1]);
    assert.match(rows[2], /^api \(B\)/, rows[2]);
    assert.match(rows[2], /MOVED burst/, rows[2]);
    assert.match(rows[1], /redis\/asyncio\/cluster\.py/, 'why cites the source');
    const steps = await page.locator('.preflight-steps li').allInnerTexts();
    assert.equal(steps.length, 2, JSON.stringify(steps));
    assert.match(steps[1], /rebalance/);
    // The window goes past the recording's end, where the predicted tracks are drawn.
    const s = await waitState(page, (x) => x.window[1] > end + 30000, 'the window past the end');
    assert.ok(s.window[0] < end, JSON.stringify(s.window));
    assert.ok(await predictedPixelsRight(page, 'node-rate', 0.4) > 30, 'predicted commands/s past the end');
    await screenshot(page, 'preflight-01-incident2-scale-out');

    const bad = await preflight(page, '{"steps": [{"at": "0s", "kill": "10.9.9.9:1"}]}');
    assert.match(bad.error ?? '', /plan step 0: no node "10\.9\.9\.9:1"/, JSON.stringify(bad));
    assert.equal(bad.result, null);
    const back = await waitState(page, (x) => x.window[1] <= end, 'the window back inside the recording');
    assert.ok(back.window[1] <= end);
    await screenshot(page, 'preflight-02-bad-plan');
    assert.deepEqual(page.consoleErrors, []);
    const after = await state(page);
    assert.ok(after.loaded.includes('incident2'));
    await page.context().close();
  });
});
