// Unit tests of the contract's shared part (run by ./build): `node --test common.test.mjs`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Outcomes } from "./common.mjs";

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
