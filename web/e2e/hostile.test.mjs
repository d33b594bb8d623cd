// A hostile recording (issue 27, part 4): a recording is someone else's file, and what it names
// (client names, library names, the file's own name, a bad line's text) reaches the page. The
// viewer shows all of it as text: nothing in a recording becomes an element or runs. Incident 2's
// recording is rewritten with markup in its connection names and library names and opened through
// the file input under a name with markup; then a file whose bad line carries markup.
//
// Run: node --test web/e2e/   (needs scripts/build-web's web/dist, a built slotscope binary and
// the zstd CLI, which scripts/setup installs)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import {
  FIXTURES, STEP_MS, headerLine, newPage, screenshot, useViewer, waitLoaded,
} from './harness.mjs';

const TEST = { timeout: 4 * STEP_MS };

/** Markup that would run if the page ever parsed it as HTML: each sets `window.__pwned`. */
const IMG = '<img src=x onerror="window.__pwned=\'img\'">';
const SCRIPT = '<script>window.__pwned=\'script\'</script>';
const SVG = '<svg onload="window.__pwned=\'svg\'"></svg>';
const FILE_NAME = '<img src=y onerror="window.__pwned=\'file\'">.jsonl';

/** Nothing of the markup ran, and no element came of it. */
async function nothingRan(page) {
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'markup from the recording ran');
  assert.equal(await page.locator('img[src="x"], img[src="y"]').count(), 0, 'an img element from the recording');
  assert.equal(await page.locator('body svg[onload]').count(), 0, 'an svg element from the recording');
  const scripts = await page.evaluate(() => [...document.scripts].map((s) => s.textContent).join('\n'));
  assert.ok(!scripts.includes('__pwned'), 'a script element from the recording');
}

describe('viewer on a hostile recording', () => {
  const v = useViewer();

  test('markup in connection and library names and in the file name is shown as text, never run', TEST, async () => {
    const plain = execFileSync('zstd', ['-dc', FIXTURES.incident2], { maxBuffer: 256 << 20 }).toString();
    const hostile = plain
      .replaceAll('"name":"recommendation"', `"name":${JSON.stringify(IMG)}`)
      .replaceAll('"name":"api"', `"name":${JSON.stringify(SCRIPT)}`)
      .replaceAll('"lib-name":"redis-py"', `"lib-name":${JSON.stringify(SVG)}`);
    assert.ok([IMG, SCRIPT, SVG].every((m) => hostile.includes(JSON.stringify(m))), 'the fixture was rewritten');

    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    await page.locator('#file-input').setInputFiles({
      name: FILE_NAME, mimeType: 'application/octet-stream', buffer: Buffer.from(hostile),
    });
    const s = await waitLoaded(page, 'onerror');
    assert.ok(s.loaded.includes(FILE_NAME), `the file's name as given: ${s.loaded}`);
    // The census groups connections by name: both names are there, as text.
    const census = await page.locator('#census').innerText();
    assert.ok(census.includes(IMG), `the census shows the img markup as text: ${census.slice(0, 600)}`);
    assert.ok(census.includes(SCRIPT), 'the census shows the script markup as text');
    // The findings attribute the storm to the remapped group, by its name.
    const findings = await page.locator('#findings').innerText();
    assert.ok(findings.includes(IMG), `the findings name the group as text: ${findings.slice(0, 600)}`);
    await screenshot(page, '31-hostile-recording');
    await nothingRan(page);
    await page.context().close();
  });

  test('a bad line with markup is quoted as text in the error', TEST, async () => {
    const page = await newPage(v.browser);
    await page.goto(v.server.url);
    await waitLoaded(page, 'incident1');
    const header = headerLine({ collector: IMG });
    const text = `${header}\n${SCRIPT}${IMG} {\n`;
    await page.locator('#file-input').setInputFiles({
      name: FILE_NAME, mimeType: 'application/octet-stream', buffer: Buffer.from(text),
    });
    const status = page.locator('#status.error');
    await status.waitFor({ state: 'visible', timeout: STEP_MS });
    const said = await status.innerText();
    assert.match(said, /line 2/i);
    assert.ok(said.includes(SCRIPT), `the bad line quoted as text: ${said}`);
    assert.ok(said.includes(FILE_NAME), `the file named as given: ${said}`);
    await nothingRan(page);
    await page.context().close();
  });
});
