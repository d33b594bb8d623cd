// The fidelity matrix's Node.js application (docs/FIDELITY.md, "The application contract").
//
// Usage: node apps/node/app.mjs ioredis|ioredis@5.4.1|node-redis|glide '<settings JSON>'
//
// One JSON line on stdout at the end; logs on stderr. See README.md.

import { log, printAndExit, run, settingsFrom } from "./common.mjs";

const ADAPTERS = {
  ioredis: "./ioredis.mjs",
  "ioredis@5.4.1": "./ioredis.mjs",
  "node-redis": "./node-redis.mjs",
  glide: "./glide.mjs",
};

async function main(argv) {
  if (argv.length !== 2 || !(argv[0] in ADAPTERS)) {
    throw new Error(`usage: app.mjs ${Object.keys(ADAPTERS).join("|")} '<settings JSON>'`);
  }
  const settings = settingsFrom(argv[1]);
  const { open } = await import(ADAPTERS[argv[0]]);
  const adapter = await open(settings, argv[0]);
  return run(settings, adapter);
}

main(process.argv.slice(2)).then(
  (summary) => printAndExit(summary),
  (e) => {
    log(`${e?.constructor?.name}: ${e?.message}`);
    process.exit(2);
  },
);
