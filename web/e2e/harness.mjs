// Shared pieces of the viewer's end-to-end tests: a `slotscope serve` started on a free port of
// 127.0.0.1, Debian's headless Chromium driven by playwright-core, the app's state as
// `window.slotscope_state()` reports it, and screenshots saved under web/e2e/artifacts/.
//
// Every wait is bounded. The server is killed by its PID when a test file ends.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';

/** The repository's root directory. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where screenshots go (gitignored). */
export const ARTIFACTS = join(ROOT, 'web', 'e2e', 'artifacts');
/** The built viewer (scripts/build-web). */
export const DIST = process.env.SLOTSCOPE_DIST || join(ROOT, 'web', 'dist');
/** How long one step (a load, a redraw after an input) may take. */
export const STEP_MS = Number(process.env.SLOTSCOPE_E2E_STEP_MS || 30000);

/** Chromium's arguments: headless, no sandbox (CI runs as root), nothing from the network. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-dev-shm-usage',
];

/** The `slotscope` executable: $SLOTSCOPE_BIN, else the debug then release build. */
export function slotscopeBin() {
  if (process.env.SLOTSCOPE_BIN) return process.env.SLOTSCOPE_BIN;
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, 'target');
  for (const profile of ['debug', 'release']) {
    const bin = join(target, profile, 'slotscope');
    if (existsSync(bin)) return bin;
  }
  throw new Error(`no slotscope binary under ${target}; run cargo build -p slotscope (or set SLOTSCOPE_BIN)`);
}

/**
 * Starts `slotscope serve --no-open --port 0 --dist DIST [file]` and resolves to
 * `{ url, origin, stop }` once it has printed its URL.
 */
export function startServer(file) {
  if (!existsSync(join(DIST, 'index.html'))) {
    throw new Error(`${DIST}/index.html is missing; run scripts/build-web`);
  }
  const args = ['serve', '--no-open', '--port', '0', '--dist', DIST];
  if (file) args.push(file);
  const child = spawn(slotscopeBin(), args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGTERM');
  };
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`slotscope serve printed no URL in ${STEP_MS} ms: ${stderr}`));
    }, STEP_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`slotscope serve exited with ${code}: ${stderr}`));
    });
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const url = line.trim();
      resolvePromise({ url, origin: new URL(url).origin, stop });
    });
  });
}

/**
 * A served viewer and a browser shared by the tests of one `describe`: started before them and
 * ended after them. `file`: a recording for `slotscope serve FILE` (default: the demo). Returns
 * `{ server, browser }`, filled in when the tests start.
 */
export function useViewer(file) {
  const v = { server: null, browser: null };
  before(async () => {
    v.server = await startServer(file);
    v.browser = await launchBrowser();
  });
  after(async () => {
    await v.browser?.close();
    v.server?.stop();
  });
  return v;
}

/**
 * Resolves once the server sends the viewer's wasm brotli-encoded (it makes that body on a thread
 * of its own after it starts, and sends gzip meanwhile); rejects after 4 × STEP_MS.
 */
export async function brotliReady(origin) {
  const deadline = Date.now() + 4 * STEP_MS;
  while (Date.now() < deadline) {
    const r = await fetch(`${origin}/slotscope_web_bg.wasm`, { method: 'HEAD', headers: { 'accept-encoding': 'br' } });
    if (r.headers.get('content-encoding') === 'br') return;
    await new Promise((ok) => setTimeout(ok, 250));
  }
  throw new Error(`the server sent no brotli wasm within ${4 * STEP_MS} ms`);
}

/** Launches Debian's Chromium headless. */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.SLOTSCOPE_CHROMIUM || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    headless: true,
    timeout: STEP_MS,
  });
}

/**
 * A new page of a given size (and colour scheme: 'light' or 'dark', as the system setting) whose
 * every wait defaults to STEP_MS; console errors are collected.
 */
export async function newPage(browser, { width = 1440, height = 900, scale = 1, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: scale, colorScheme });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  page.setDefaultNavigationTimeout(STEP_MS);
  page.consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') page.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => page.consoleErrors.push(String(e)));
  page.on('response', (r) => { if (r.status() >= 400) page.consoleErrors.push(`HTTP ${r.status()} ${r.url()}`); });
  return page;
}

/** `window.slotscope_state()` as an object (it may return a JSON string or an object); null before the app is up. */
export async function state(page) {
  return page.evaluate(() => {
    if (typeof window.slotscope_state !== 'function') return null;
    const s = window.slotscope_state();
    return typeof s === 'string' ? JSON.parse(s) : s;
  });
}

/**
 * Waits until a recording whose name contains `name` is loaded and analysed (findings listed,
 * tracks drawn), and returns the state.
 */
export async function waitLoaded(page, name) {
  try {
    await waitLoadedInner(page, name);
  } catch (e) {
    // Say what the page showed instead, and keep a picture of it.
    const status = await page.locator('#status').innerText({ timeout: 1000 }).catch(() => '(no #status)');
    const shot = await screenshot(page, `failed-load-${Date.now()}`).catch(() => '(no screenshot)');
    throw new Error(`${e.message}\n#status: ${status}\nstate: ${JSON.stringify(await state(page).catch(() => null))}\n`
      + `console errors: ${JSON.stringify(page.consoleErrors)}\nscreenshot: ${shot}`);
  }
  return state(page);
}

async function waitLoadedInner(page, name) {
  await page.waitForFunction(
    (want) => {
      if (typeof window.slotscope_state !== 'function') return false;
      let s = window.slotscope_state();
      if (typeof s === 'string') s = JSON.parse(s);
      return !!s && !!s.loaded && !s.partial && (!want || s.loaded.includes(want)) && Array.isArray(s.window)
        && document.querySelectorAll('#findings li.finding').length > 0
        && document.querySelectorAll('#tracks canvas[data-track]').length > 0;
    },
    name,
    { timeout: STEP_MS, polling: 100 },
  );
}

/** Waits until `pred(state)` holds; returns that state. */
export async function waitState(page, pred, what) {
  const deadline = Date.now() + STEP_MS;
  let last = null;
  while (Date.now() < deadline) {
    last = await state(page);
    if (last && pred(last)) return last;
    await page.waitForTimeout(100);
  }
  throw new Error(`timed out waiting for ${what}; last state: ${JSON.stringify(last)}`);
}

/** Saves a screenshot (of the full page unless `fullPage` is false) as web/e2e/artifacts/NAME.png. */
export async function screenshot(page, name, { fullPage = true } = {}) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage, timeout: STEP_MS });
  return path;
}

/** A recording's header line (JSON), its fields overridden by `fields`. */
export function headerLine(fields = {}) {
  return JSON.stringify({
    type: 'header', schema: 1, collector: 'slotscope 0.1.0', seed: '127.0.0.1:7000', started: 1795992896812,
    options: { interval_ms: 1000, timeout_ms: 800, tls: false, auth: false, client_list_every: 1 },
    ...fields,
  });
}

/** The recordings the tests open. */
export const FIXTURES = {
  incident1: join(ROOT, 'tests', 'fixtures', 'incident1-redis-py-5.0.0-valkey.jsonl.zst'),
  incident2: join(ROOT, 'tests', 'fixtures', 'incident2-valkey.jsonl.zst'),
  /** Incident 2's remapped client recorded through `slotscope tap` (with --poll). */
  incident2Tap: join(ROOT, 'tests', 'fixtures', 'incident2-tap-valkey.jsonl.zst'),
};
