// A user's program, type-checked with `tsc --strict` by the project's tests: the client's types
// come from the service's OpenAPI document, so a wrong field is a compile error.
import {
  Client,
  EcpError,
  NotFoundError,
  verifyWebhook,
  type ClaimedTask,
  type Schema,
  type TaskOutput,
} from "ecp-client";

const ecp = new Client({ baseUrl: "http://127.0.0.1:8000", apiKey: "ecp_example", retries: 3 });

export async function quickstart(): Promise<string> {
  const graph: Schema<"GraphDefinition"> = {
    graph_id: "refund",
    entry: "pay",
    nodes: [
      { id: "pay", kind: "action", action: { name: "echo", fingerprint: "echo/1", requires_approval: true } },
      { id: "done", kind: "end" },
    ],
    edges: [{ source: "pay", target: "done" }],
  };
  await ecp.graphs.register(graph);
  await ecp.deployments.create({ deployment_ref: "refund", graph_id: "refund" });
  const run = await ecp.runs.start({ deployment_ref: "refund", input: { amount: "12.50" } }, { waitSeconds: 5 });
  const status: "waiting_approval" | string = run.status;
  for await (const approval of ecp.approvals.list({ run_id: run.run_id, status: "pending" })) {
    await ecp.approvals.resolve("refund", approval.approval_id, { decision: "approve", reason: "ok" });
  }
  const verified: boolean = (await ecp.runs.verify(run.run_id)).verified;
  // @ts-expect-error: a start needs its deployment_ref
  await ecp.runs.start({ input: {} });
  // @ts-expect-error: a decision is one of the API's
  await ecp.approvals.resolve("refund", "a", { decision: "maybe" });
  return `${status} ${verified}`;
}

export async function errors(): Promise<number | null> {
  try {
    await ecp.runs.get("nope");
  } catch (error) {
    if (error instanceof NotFoundError) return error.status;
    if (error instanceof EcpError) return error.errors.length;
  }
  return null;
}

export async function worker(signal: AbortSignal): Promise<void> {
  await ecp.runWorker({
    topics: ["invoices.send"],
    signal,
    handler: async (task: ClaimedTask): Promise<TaskOutput> => ({ sent: task.task_id }),
  });
}

export async function receive(headers: Headers, body: string): Promise<unknown> {
  return verifyWebhook(headers, body, "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0");
}
