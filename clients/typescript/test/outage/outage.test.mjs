// Run with the server's database stopped (tests/clients/test_typescript_client.py stops it
// before this starts and starts it again seconds later): every start is answered 503 at first,
// tried again after Retry-After with its one idempotency key, and makes one run.
import assert from "node:assert/strict";
import { test } from "node:test";
import { client } from "../helpers.mjs";

const STARTS = Number(process.env.ECP_STARTS ?? 4);

test("idempotent starts survive a 503 storm, one run each", async () => {
  const statuses = [];
  const counting = async (...args) => {
    const response = await fetch(...args);
    statuses.push(response.status);
    return response;
  };
  const ecp = client("admin", { fetch: counting, retries: 10 });
  const keys = Array.from({ length: STARTS }, (_, i) => `storm-${process.env.ECP_TENANT}-${i}`);
  const body = (key) => ({ deployment_ref: process.env.ECP_DEPLOYMENT, idempotency_key: key, input: { key } });
  const runs = await Promise.all(keys.map((key) => ecp.runs.start(body(key))));
  assert.ok(statuses.filter((s) => s === 503).length >= STARTS, `the storm was seen: ${statuses}`);
  assert.equal(new Set(runs.map((r) => r.run_id)).size, STARTS);
  const again = await Promise.all(keys.map((key) => ecp.runs.start(body(key))));
  assert.deepEqual(again.map((r) => r.run_id), runs.map((r) => r.run_id), "the same key, the same run");
  console.log(JSON.stringify(runs.map((r) => r.run_id)));
});
