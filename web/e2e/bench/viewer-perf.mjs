// Measures the viewer in headless Chromium (not a test: it reports, it does not judge):
//   - open time: from navigation start to the recording analysed and drawn (findings listed,
//     tracks present), by the page's own performance.now(); and how long the page's own thread
//     was held meanwhile after the first view (long tasks, over 50 ms: the longest and their
//     sum), the reading itself being in the reader's worker;
//   - the open's phases, from the marks the viewer sets on the page's performance timeline
//     (`slotscope:fetch` … `slotscope:shown`, web/src/load/mod.rs): the wait after the first
//     view, the recording's fetch, its open, read and finish in the reader's worker, the result
//     handed to the page and shown, and from then until the wait saw it (polled every 100 ms);
//   - bytes on the wire (Resource Timing's transferSize: headers and the encoded body) of the
//     first view, every request started before the tracks were first drawn, and of the whole
//     open; measured once the server has made its brotli bodies (it prepares them in the
//     background once started; until then a page gets gzip), as Chromium asks for brotli;
//   - redraw time of pan (ArrowRight/ArrowLeft) and zoom (+/-): from the key event until the app's
//     render and canvas redraw are done (the next task), median, p95 and max; and, as an upper
//     bound that includes waiting for the display's frame, until the second animation frame.
// Figures go to BENCHMARKS.md by hand.
//
//   cargo run --release -p slotscope-tests --bin synth -- --hours 24 --nodes 6 --interval-ms 1000 \
//       | zstd -q -T0 -o target/synth-24h-6n.jsonl.zst
//   scripts/build-web && cargo build -p slotscope
//   node web/e2e/bench/viewer-perf.mjs target/synth-24h-6n.jsonl.zst [--runs 3] [--frames 40]
//
// Without a file it measures the demo (incident 1).
import { resolve } from 'node:path';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(argv[i + 1]);
  argv.splice(i, 2);
  return v;
};
const runs = opt('--runs', 3);
const frames = opt('--frames', 40);
const file = argv[0] ? resolve(argv[0]) : undefined;
// Opening a big file may take long; allow it (every wait is still bounded). Set before the
// harness is loaded: it reads the bound once.
process.env.SLOTSCOPE_E2E_STEP_MS ||= '600000';
const { brotliReady, launchBrowser, newPage, screenshot, startServer, state, waitLoaded } = await import('../harness.mjs');

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const fmt = (x) => x.toFixed(1);

const server = await startServer(file);
// The steady state: the server's brotli bodies made.
await brotliReady(server.origin);
const browser = await launchBrowser();
const name = file ? file.split('/').pop() : 'incident1';
const result = { file: name, chromium: browser.version(), first_view_ms: [], first_view_hours: [], first_view_findings: [], first_view_bytes: [], open_ms: [], open_bytes: [], open_longest_task_ms: [], open_long_tasks_ms: [], requests: [], redraw: {}, phases: {} };
// Bytes on the wire: every request started before `before` (the page's performance.now()).
const wire = (page, before) => page.evaluate((b) => {
  const all = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
    .filter((e) => e.startTime < b);
  return {
    bytes: all.reduce((n, e) => n + e.transferSize, 0),
    requests: all.map((e) => `${new URL(e.name).pathname} ${e.transferSize}`),
  };
}, before);
try {
  for (let run = 0; run < runs; run += 1) {
    const page = await newPage(browser);
    await page.addInitScript(() => {
      window.__longTasks = [];
      new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__longTasks.push([e.startTime, e.duration])))
        .observe({ type: 'longtask', buffered: true });
    });
    await page.goto(server.url);
    // First view: tracks drawn for the recording, or for the part of it read so far (a preview).
    await page.waitForFunction(() => {
      if (typeof window.slotscope_state !== 'function') return false;
      let s = window.slotscope_state();
      if (typeof s === 'string') s = JSON.parse(s);
      return !!s && !!s.loaded && window.slotscope_draw_ms() > 0;
    }, null, { timeout: 600_000, polling: 20 });
    result.first_view_ms.push(await page.evaluate(() => performance.now()));
    // What the first view covers: the whole recording (its overview) or the part read so far.
    const firstState = await state(page);
    result.first_view_hours.push(Math.round((firstState.window[1] - firstState.window[0]) / 36e3) / 100);
    result.first_view_findings.push(firstState.findings);
    const firstDraw0 = await page.evaluate(() => window.slotscope_first_draw_at?.());
    await waitLoaded(page, name.replace(/\.jsonl(\.zst)?$/, ''));
    // performance.now() counts from the navigation's start.
    const openAt = await page.evaluate(() => performance.now());
    result.open_ms.push(openAt);
    // The load's phases, from the marks the viewer sets (a viewer without them: none).
    const marks = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType('mark')
      .filter((m) => m.name.startsWith('slotscope:')).map((m) => [m.name.slice(10), m.startTime])));
    for (const [phase, from, to] of [['first view to fetch', null, 'fetch'], ['fetch', 'fetch', 'fetched'],
      ['open in worker', 'fetched', 'opened'], ['read', 'opened', 'read'], ['finish', 'read', 'finished'],
      ['result to shown', 'finished', 'shown'], ['shown to seen', 'shown', null]]) {
      const a = from === null ? firstDraw0 : marks[from];
      const b = to === null ? openAt : marks[to];
      if (a !== undefined && b !== undefined) (result.phases[phase] ||= []).push(b - a);
    }
    const held = await page.evaluate((from) => window.__longTasks.filter(([t]) => t >= from).map(([, d]) => d),
      result.first_view_ms.at(-1));
    result.open_longest_task_ms.push(Math.max(0, ...held));
    result.open_long_tasks_ms.push(held.reduce((a, b) => a + b, 0));
    // When the tracks were first drawn; a viewer from before that hook: when the wait saw them.
    const firstDraw = await page.evaluate(() => window.slotscope_first_draw_at?.())
      ?? result.first_view_ms.at(-1);
    const first = await wire(page, firstDraw);
    result.first_view_bytes.push(first.bytes);
    result.open_bytes.push((await wire(page, openAt)).bytes);
    result.requests.push(first.requests);
    if (run < runs - 1) {
      await page.context().close();
      continue;
    }
    const s = await state(page);
    result.window = s.window;
    await page.locator('#tracks canvas[data-track]').first().click();
    const zoomIn = async () => {
      // Zoom in to about an eighth of the recording, so that panning has somewhere to go.
      for (let i = 0; i < 3; i += 1) await page.keyboard.press('+');
      await page.waitForTimeout(200);
    };
    for (const [label, keys] of [['zoom', ['+', '-']], ['pan', ['ArrowRight', 'ArrowLeft']]]) {
      if (label === 'pan') await zoomIn();
      const startWindow = (await state(page)).window;
      let changed = 0;
      const work = [];
      const frame = [];
      for (let i = 0; i < frames; i += 1) {
        const key = keys[i % 2];
        const [w, f] = await page.evaluate(async (k) => {
          // Start between frames, so that one measurement's frame does not spill into the next.
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          const target = document.activeElement || document.body;
          const t0 = performance.now();
          target.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
          // Yew renders, and the tracks redraw their canvases (effects), in microtasks after the
          // event: a new task starts only once they are done.
          await new Promise((r) => { const c = new MessageChannel(); c.port1.onmessage = r; c.port2.postMessage(0); });
          const t1 = performance.now();
          // The frame that shows it: the second animation frame after the event has begun.
          await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
          return [t1 - t0, performance.now() - t0];
        }, key);
        work.push(w);
        frame.push(f);
        const now = (await state(page)).window;
        if (now[0] !== startWindow[0] || now[1] !== startWindow[1]) changed += 1;
      }
      result.redraw[label] = {
        work_median_ms: quantile(work, 0.5), work_p95_ms: quantile(work, 0.95), work_max_ms: Math.max(...work),
        frame_median_ms: quantile(frame, 0.5), frame_p95_ms: quantile(frame, 0.95), n: work.length,
        events_that_moved_the_window: changed,
      };
    }
    const after = await state(page);
    result.window_after = after.window;
    // The viewport only: a long recording's page (thousands of findings) is too tall for one image.
    await screenshot(page, `bench-${name}`, { fullPage: false });
    await page.context().close();
  }
} finally {
  await browser.close();
  server.stop();
}
console.log(JSON.stringify(result, null, 2));
console.log(`first view: ${result.first_view_ms.map(fmt).join(', ')} ms (median ${fmt(quantile(result.first_view_ms, 0.5))})`);
console.log(`first view covers: ${result.first_view_hours.join(', ')} h, ${result.first_view_findings.join(', ')} findings`);
console.log(`first view on the wire: ${result.first_view_bytes.join(', ')} bytes (the requests of the last run: ${result.requests.at(-1).join('; ')})`);
console.log(`open on the wire: ${result.open_bytes.join(', ')} bytes`);
console.log(`open: ${result.open_ms.map(fmt).join(', ')} ms (median ${fmt(quantile(result.open_ms, 0.5))})`);
console.log(`open's phases (median ms): ${Object.entries(result.phases).map(([k, v]) => `${k} ${fmt(quantile(v, 0.5))}`).join(', ')}`);
console.log(`page thread held after the first view: longest task ${result.open_longest_task_ms.map(fmt).join(', ')} ms, long tasks in all ${result.open_long_tasks_ms.map(fmt).join(', ')} ms`);
for (const [k, v] of Object.entries(result.redraw)) {
  console.log(`${k}: redraw work median ${fmt(v.work_median_ms)} ms, p95 ${fmt(v.work_p95_ms)} ms, max ${fmt(v.work_max_ms)} ms; `
    + `to the second frame median ${fmt(v.frame_median_ms)} ms, p95 ${fmt(v.frame_p95_ms)} ms (${v.n} events)`);
}
