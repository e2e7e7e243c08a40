// The quickstart through the client: register, deploy, start, approve, verify.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "ecp-client";
import { all, client, deploy, gatedGraph, unique, URL_ } from "../helpers.mjs";

test("register, deploy, start, approve and verify a run", async () => {
  const ecp = client();
  const ref = unique("refund");
  const registered = await ecp.graphs.register(gatedGraph(ref));
  assert.equal(registered.graph_id, ref);
  const deployment = await ecp.deployments.create({ deployment_ref: ref, graph_id: ref });
  assert.equal(deployment.deployment_ref, ref);

  const run = await ecp.runs.start({ deployment_ref: ref, input: { order: "A-1" } }, { waitSeconds: 10 });
  assert.equal(run.status, "waiting_approval");
  const [approval] = await all(ecp.approvals.list({ run_id: run.run_id, status: "pending" }));
  assert.ok(approval, "the run's approval is listed");
  assert.deepEqual(run.pending_approval_ids, [approval.approval_id]);

  const resolved = await ecp.approvals.resolve(ref, approval.approval_id, { decision: "approve", reason: "ok" });
  assert.equal(resolved.approval.approval_id, approval.approval_id);
  let done = await ecp.runs.get(run.run_id);
  for (let i = 0; i < 100 && done.status !== "completed"; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    done = await ecp.runs.get(run.run_id);
  }
  assert.equal(done.status, "completed");

  const verified = await ecp.runs.verify(run.run_id);
  assert.equal(verified.verified, true);
  const timeline = await ecp.runs.timeline(run.run_id);
  assert.ok(timeline.entries.length >= 3, "the timeline has the run's records");
});

test("pause, unpause and cancel a run", async () => {
  const ecp = client();
  const ref = unique("control");
  await deploy(ecp, gatedGraph(ref));
  const run = await ecp.runs.start({ deployment_ref: ref }, { waitSeconds: 10 });
  assert.equal(run.status, "waiting_approval");
  const paused = await ecp.runs.pause(run.run_id, { reason: "look first" });
  assert.equal(paused.run_id, run.run_id); // a run waiting for a person keeps waiting
  const unpaused = await ecp.runs.unpause(run.run_id, {});
  assert.equal(unpaused.status, "waiting_approval");
  const canceled = await ecp.runs.cancel(run.run_id, { reason: "not needed" });
  assert.equal(canceled.status, "canceled");
});

test("a project API key is sent as X-API-Key", async () => {
  const ecp = client();
  const ref = unique("keyed");
  await deploy(ecp, gatedGraph(ref));
  const made = await ecp.transport.json({ method: "POST", path: "/v1/api-keys", body: { name: ref, role: "operator" } });
  const keyed = new Client({ baseUrl: URL_, apiKey: made.key });
  const run = await keyed.runs.start({ deployment_ref: ref });
  assert.equal((await keyed.runs.get(run.run_id)).run_id, run.run_id);
});
