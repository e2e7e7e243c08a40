// A worker process completes and fails tasks, keeps its lock past its length by heartbeats, takes
// its next task from its completion (claim_next), and on SIGTERM finishes the task in hand, then
// exits cleanly.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { URL_, all, client, deploy, taskGraph, unique, waitFor } from "../helpers.mjs";

const TASK_MS = 2500; // longer than the one-second lock: only heartbeats keep it
const CLAIMS = 'ecp_http_requests_total{method="POST",route="/v1/tasks/claim",status="200"} ';

/** How many task claims the server has answered so far (its own counter). */
async function claimsAnswered() {
  const text = await (await fetch(`${URL_}/metrics`)).text();
  const line = text.split("\n").find((found) => found.startsWith(CLAIMS));
  return line ? Number(line.slice(CLAIMS.length)) : 0;
}

test("a worker completes tasks and stops cleanly on SIGTERM", async () => {
  const ecp = client();
  const topic = unique("invoices");
  const ref = unique("billing");
  await deploy(ecp, taskGraph(ref, topic, { max_attempts: 1 }));
  // each start answers once its task is offered, so the worker's first claim takes `ok`'s
  const ok = await ecp.runs.start({ deployment_ref: ref, input: {} }, { waitSeconds: 10 });
  const failing = await ecp.runs.start({ deployment_ref: ref, input: { fail: true } }, { waitSeconds: 10 });
  assert.deepEqual([ok.status, failing.status], ["waiting_task", "waiting_task"]);
  const claimedBefore = await claimsAnswered();

  const child = spawn(process.execPath, ["test/worker-process.mjs"], {
    env: { ...process.env, ECP_TOPIC: topic, ECP_TASK_MS: String(TASK_MS) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = once(child, "exit");
  try {
    // the second task comes with the first one's completion, not from a claim of its own
    await waitFor(async () => (output.match(/^working /gm) ?? []).length >= 2, 30, "two tasks worked");
    assert.equal((await claimsAnswered()) - claimedBefore, 1, output);
    const finished = async (runId) => {
      const run = await ecp.runs.get(runId);
      return ["completed", "failed"].includes(run.status) ? run : null;
    };
    const done = await waitFor(() => finished(ok.run_id), 60, "the first run");
    assert.equal(done.status, "completed", output);
    assert.deepEqual(done.output?.work ?? done.output, done.output); // the output is the run's
    const failed = await waitFor(() => finished(failing.run_id), 60, "the failing run");
    assert.equal(failed.status, "failed", output);
    const [task] = await all(ecp.tasks.list({ topic, status: "failed" }));
    assert.equal(task.run_id, failing.run_id);
    assert.match(task.error ?? "", /the input asked to fail/);
    assert.match(output, /task completed task_id=\S+ run_id=\S+/);
    assert.match(output, /task failed task_id=\S+ run_id=\S+ .*the input asked to fail/);

    const last = await ecp.runs.start({ deployment_ref: ref, input: {} });
    const inHand = await waitFor(async () => {
      const tasks = await all(ecp.tasks.list({ topic }));
      const mine = tasks.find((t) => t.run_id === last.run_id);
      return mine && output.includes(`working ${mine.task_id}`) ? mine : null;
    }, 30, "the third task in hand");
    assert.equal(inHand.status, "locked");
    child.kill("SIGTERM");
    const [code, signal] = await exited;
    assert.equal(signal, null, output);
    assert.equal(code, 0, output);
    assert.match(output, /worker stopped/);
    assert.match(output, /exited cleanly/);
    const third = await waitFor(() => finished(last.run_id), 30, "the task in hand");
    assert.equal(third.status, "completed", "the task in hand was finished before the stop");
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
