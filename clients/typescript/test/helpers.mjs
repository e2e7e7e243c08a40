// What the live tests share: the server's address and credentials (from the environment the
// pytest module sets), the graphs they deploy, and a poll.
import { Client } from "ecp-client";

export const URL_ = process.env.ECP_URL;
if (!URL_) throw new Error("ECP_URL is not set: run these tests through tests/clients/test_typescript_client.py");

/** A client of the test's tenant with `role`'s token (admin unless named). */
export function client(role = "admin", options = {}) {
  const token = process.env[`ECP_${role.toUpperCase()}_TOKEN`];
  if (!token) throw new Error(`ECP_${role.toUpperCase()}_TOKEN is not set`);
  return new Client({ baseUrl: URL_, token, timeoutMs: 30_000, ...options });
}

/** A unique suffix, so that each test's graphs and deployments are its own. */
export function unique(prefix) {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/** An action that needs approval, then the end. */
export function gatedGraph(graphId) {
  return {
    graph_id: graphId,
    entry: "pay",
    nodes: [
      {
        id: "pay",
        kind: "action",
        action: {
          name: "echo",
          fingerprint: "echo/1",
          arguments: { amount: 100, currency: "EUR", to: "A-1" },
          requires_approval: true,
        },
      },
      { id: "done", kind: "end" },
    ],
    edges: [{ source: "pay", target: "done" }],
  };
}

/** A task node of `topic` (a worker does it; `settings` such as max_attempts), then the end. */
export function taskGraph(graphId, topic, settings = {}) {
  return {
    graph_id: graphId,
    entry: "work",
    nodes: [
      {
        id: "work",
        kind: "task",
        action: { name: topic, fingerprint: "sha256:work", arguments: { amount: "12.50" }, side_effect: "idempotent" },
        ...settings,
      },
      { id: "done", kind: "end" },
    ],
    edges: [{ source: "work", target: "done" }],
  };
}

/** Register `graph` and deploy it under `ref`. */
export async function deploy(ecp, graph, ref = graph.graph_id) {
  await ecp.graphs.register(graph);
  return ecp.deployments.create({ deployment_ref: ref, graph_id: graph.graph_id });
}

/** Poll `probe` until it returns something truthy (at most `seconds`). */
export async function waitFor(probe, seconds = 30, what = "the condition") {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every item of an async iterator. */
export async function all(iterator) {
  const items = [];
  for await (const item of iterator) items.push(item);
  return items;
}
