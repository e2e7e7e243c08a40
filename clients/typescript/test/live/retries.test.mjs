// 429 and 503 are tried again after Retry-After, every try of a POST with one idempotency key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, QuotaExhaustedError, retryAfterMs } from "ecp-client";
import { standIn } from "../standin.mjs";

const RUN = { run_id: "r-1", status: "running" };

test("a 429 is waited out as Retry-After says, with one idempotency key", async () => {
  const server = await standIn((_, __, seen) =>
    seen.length < 3
      ? { status: 429, headers: { "retry-after": "1", "content-type": "application/problem+json" }, body: { code: "quota_exhausted", status: 429, title: "Too Many Requests", detail: "slow down", type: "urn:ecp:error:quota_exhausted" } }
      : { status: 201, body: RUN },
  );
  try {
    const ecp = new Client({ baseUrl: server.url, token: "t" });
    const run = await ecp.runs.start({ deployment_ref: "d" });
    assert.equal(run.run_id, "r-1");
    assert.equal(server.seen.length, 3);
    const keys = new Set(server.seen.map((r) => r["headers"]["idempotency-key"]));
    assert.equal(keys.size, 1, "one key for every try");
    assert.match([...keys][0], /^[0-9a-f-]{36}$/);
    for (let i = 1; i < 3; i += 1) {
      const waited = server.seen[i].at - server.seen[i - 1].at;
      assert.ok(waited >= 950, `try ${i + 1} came ${waited} ms after the 429`);
    }
  } finally {
    await server.close();
  }
});

test("the body's idempotency key is the one sent; the retries run out into the error", async () => {
  const server = await standIn(() => ({
    status: 503,
    headers: { "retry-after": "0", "content-type": "application/problem+json" },
    body: { code: "database_unavailable", status: 503, title: "Service Unavailable", detail: "away", type: "urn:ecp:error:database_unavailable" },
  }));
  try {
    const ecp = new Client({ baseUrl: server.url, token: "t", retries: 2 });
    await assert.rejects(ecp.runs.start({ deployment_ref: "d", idempotency_key: "mine" }), (error) => {
      assert.equal(error.name, "DatabaseUnavailableError");
      assert.equal(error.status, 503);
      return true;
    });
    assert.equal(server.seen.length, 3, "the first try and two more");
    assert.deepEqual(new Set(server.seen.map((r) => r.headers["idempotency-key"])), new Set(["mine"]));
  } finally {
    await server.close();
  }
});

test("Retry-After in seconds or as an HTTP date", () => {
  assert.equal(retryAfterMs("5"), 5000);
  assert.equal(retryAfterMs(null), null);
  assert.equal(retryAfterMs("soon"), null);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(retryAfterMs("Thu, 01 Jan 2026 00:00:03 GMT", now), 3000);
  assert.ok(QuotaExhaustedError.code === "quota_exhausted");
});
