// Unit tests of the contract's shared part (run by ./build): `node --test common.test.mjs`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Counts, Outcomes, run, settingsFrom } from "./common.mjs";

test("every command failing for the schedule's last second is wedged; a late failure is not", () => {
  const o = new Outcomes();
  o.ok(1);
  o.failed("Error", "x", Date.now());
  const since = o.first_fail_since_ok_ms;
  assert.equal(o.wedgedSince(since + 999), null);
  assert.equal(o.wedgedSince(since + 1000), since);
  o.ok(1);
  assert.equal(o.wedgedSince(since + 5000), null);
});

test("commands that hung until the drain failed from when they were issued", () => {
  const o = new Outcomes();
  o.ok(1);
  const lastOk = o.last_ok_ms;
  // Issued before the last success, given up on at the drain: failing only after that success.
  o.failed("CancelledError", "still in flight", lastOk - 500, true);
  assert.equal(o.first_fail_since_ok_ms, lastOk + 1);
  // Issued later, given up on at the drain, after the schedule ended: wedged since its issue.
  const o2 = new Outcomes();
  o2.ok(1);
  const issued = o2.last_ok_ms + 100;
  o2.failed("CancelledError", "still in flight", issued, true);
  assert.equal(o2.wedgedSince(issued + 2000), issued);
});

test("a failure that ended before a hung command's issue keeps the earlier moment", () => {
  const o = new Outcomes();
  o.failed("Error", "x", Date.now());
  const since = o.first_fail_since_ok_ms;
  o.failed("CancelledError", "still in flight", since + 300, true);
  assert.equal(o.first_fail_since_ok_ms, since);
});

test("a schedule ended while every permit is taken skips the commands due meanwhile", async () => {
  // One permit, taken by a command that never settles; the schedule (200/s) is ended by a
  // SIGTERM after 0.5 s, as the fidelity harness ends it: the commands due until then were
  // skipped, so issued + skipped is the pace the application kept, not one command.
  const s = settingsFrom(
    JSON.stringify({ startup: "127.0.0.1:1", rate: 200, in_flight: 1, duration_s: 5, socket_timeout_s: 0.01 }),
  );
  const adapter = {
    client: "fake",
    version: "0",
    counts: new Counts(s.command),
    call: () => new Promise(() => {}),
    startupNodesEnd: () => null,
    close: async () => {},
  };
  const end = setTimeout(() => process.emit("SIGTERM", "SIGTERM"), 500);
  const line = await run(s, adapter);
  clearTimeout(end);
  assert.equal(line.issued, 1);
  const kept = (line.issued + line.skipped) / ((line.issuing_ended_ms - line.started_ms) / 1000);
  assert.ok(line.skipped >= 80 && line.skipped <= 130, `skipped ${line.skipped}`);
  assert.ok(kept > 150 && kept < 250, `pace ${kept}/s`);
  assert.deepEqual(line.errors, { CancelledError: 1 });
});
