// The application's trace: with SLOTSCOPE_APP_TRACE=FILE in its environment, an app appends one
// JSON line per library event to FILE ({"event": ..., "t_ms": ...}), as tests/scenarios/app.py
// does for redis-py, to set a live run's timeline beside a model's. Off without it.

import { appendFileSync } from "node:fs";

const file = process.env.SLOTSCOPE_APP_TRACE;

/** Whether events are traced. */
export const tracing = Boolean(file);

/** Appends one event (no-op unless tracing). */
export function trace(event, fields = {}) {
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ ...fields, t_ms: Date.now(), event })}\n`);
}
