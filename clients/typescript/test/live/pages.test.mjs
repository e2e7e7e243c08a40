// Every resource's list iterator walks every page (page size 2 over five or more items).
import assert from "node:assert/strict";
import { test } from "node:test";
import { all, client, deploy, gatedGraph, taskGraph, unique, waitFor } from "../helpers.mjs";

const COUNT = 5;
const PAGE = { limit: 2 };

test("graphs, deployments, runs, approvals, tasks and subscriptions: every page", async () => {
  const ecp = client();
  const gated = [];
  for (let i = 0; i < COUNT; i += 1) {
    const ref = unique(`page-${i}`);
    await deploy(ecp, gatedGraph(ref));
    gated.push(ref);
  }
  const topic = unique("paged-topic");
  const taskRef = unique("paged-task");
  await deploy(ecp, taskGraph(taskRef, topic));
  const runs = [];
  for (const ref of gated) runs.push(await ecp.runs.start({ deployment_ref: ref }, { waitSeconds: 10 }));
  for (let i = 0; i < COUNT; i += 1) runs.push(await ecp.runs.start({ deployment_ref: taskRef }, { waitSeconds: 10 }));
  const receiver = "http://127.0.0.1:9/hook";
  for (const ref of gated.slice(0, 3)) {
    await ecp.webhooks.subscriptions.create({ deployment_ref: ref, target_url: receiver, event_types: ["run.completed"] });
  }

  const graphs = await all(ecp.graphs.list(PAGE));
  assert.deepEqual(new Set(graphs.map((g) => g.graph_id)), new Set([...gated, taskRef]));
  assert.equal(graphs.length, COUNT + 1, "no graph twice");

  const deployments = await all(ecp.deployments.list(PAGE));
  assert.deepEqual(new Set(deployments.map((d) => d.deployment_ref)), new Set([...gated, taskRef]));

  const listed = await all(ecp.runs.list(PAGE));
  assert.deepEqual(listed.map((r) => r.run_id).sort(), runs.map((r) => r.run_id).sort());

  const approvals = await all(ecp.approvals.list({ ...PAGE, status: "pending" }));
  assert.equal(approvals.length, COUNT);
  assert.equal(new Set(approvals.map((a) => a.approval_id)).size, COUNT);

  const tasks = await waitFor(async () => {
    const found = await all(ecp.tasks.list({ ...PAGE, topic }));
    return found.length === COUNT ? found : null;
  }, 30, "five tasks");
  assert.equal(new Set(tasks.map((t) => t.task_id)).size, COUNT);

  const subscriptions = await all(ecp.webhooks.subscriptions.list());
  assert.equal(subscriptions.length, 3);
});
