/** The service's resources, mirroring its routes; bodies and answers typed from its OpenAPI. */

import type { components, paths } from "./generated/api.js";
import type { Transport } from "./http.js";
import { paginate } from "./pages.js";

/** A schema of the service's OpenAPI document, by name. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];
type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? Omit<NonNullable<Q>, "cursor">
  : never;

/** Filters and page size of a list (`limit` is the size of each page fetched). */
export type ApprovalFilters = QueryOf<"/v1/approvals">;
/** Filters and page size of `tasks.list`. */
export type TaskFilters = QueryOf<"/v1/tasks">;
/** Page size of the lists that take only `limit`. */
export interface PageSize {
  limit?: number;
}

const segment = encodeURIComponent;

/** `/v1/graphs`: register and read graph versions. */
export class Graphs {
  constructor(private readonly http: Transport) {}

  /** Register a graph (a new version when it changed; the same one when it did not). */
  register(definition: Schema<"GraphDefinition">): Promise<Schema<"GraphRegistration">> {
    return this.http.json({ method: "POST", path: "/v1/graphs", body: definition });
  }

  /** The latest version of a graph. */
  get(graphId: string): Promise<Schema<"GraphVersion">> {
    return this.http.json({ method: "GET", path: `/v1/graphs/${segment(graphId)}` });
  }

  /** Every graph of the tenant, across all pages. */
  list(query: PageSize = {}): AsyncGenerator<Schema<"GraphVersion">, void, undefined> {
    return paginate(this.http, "/v1/graphs", "graphs", { ...query });
  }
}

/** `/v1/deployments`: bind a name to a graph version; pause and unpause it. */
export class Deployments {
  constructor(private readonly http: Transport) {}

  /** Create (or rebind) a deployment. */
  create(body: Schema<"CreateDeploymentRequest">): Promise<Schema<"Deployment">> {
    return this.http.json({ method: "POST", path: "/v1/deployments", body });
  }

  /** One deployment by its ref. */
  get(ref: string): Promise<Schema<"Deployment">> {
    return this.http.json({ method: "GET", path: `/v1/deployments/${segment(ref)}` });
  }

  /** Every deployment of the tenant, across all pages. */
  list(query: PageSize = {}): AsyncGenerator<Schema<"Deployment">, void, undefined> {
    return paginate(this.http, "/v1/deployments", "deployments", { ...query });
  }

  /** Stop starting and dispatching the deployment's runs. */
  pause(ref: string, body: Schema<"PauseRequest"> = {}): Promise<Schema<"Deployment">> {
    return this.http.json({ method: "POST", path: `/v1/deployments/${segment(ref)}/pause`, body });
  }

  /** Let the deployment's runs go on. */
  unpause(ref: string, body: Schema<"PauseRequest"> = {}): Promise<Schema<"Deployment">> {
    const path = `/v1/deployments/${segment(ref)}/unpause`;
    return this.http.json({ method: "POST", path, body });
  }
}

/** How `runs.start` waits: `waitSeconds` answers once the run waits or ends (`Prefer: wait=N`). */
export interface StartOptions {
  waitSeconds?: number;
}

type Run = Schema<"RunStatusResponse">;

/** `/runs`: start, read, list and steer runs; their timeline and audit verification. */
export class Runs {
  constructor(private readonly http: Transport) {}

  /**
   * Start a run. Every try sends one idempotency key (the body's `idempotency_key`, else a new
   * one), so a start tried again after a 503 or 429 makes one run.
   */
  start(body: Schema<"StartRunRequest">, options: StartOptions = {}): Promise<Run> {
    const headers: Record<string, string> = {};
    if (options.waitSeconds !== undefined) headers.prefer = `wait=${options.waitSeconds}`;
    const idempotencyKey = body.idempotency_key ?? undefined;
    return this.http.json({ method: "POST", path: "/runs", body, headers, idempotencyKey });
  }

  /** One run's status. */
  get(runId: string): Promise<Run> {
    return this.http.json({ method: "GET", path: `/runs/${segment(runId)}` });
  }

  /** Every run of the tenant, newest first, across all pages (needs `run_list_admin`). */
  list(query: PageSize = {}): AsyncGenerator<Run, void, undefined> {
    return paginate(this.http, "/admin/runs", "runs", { ...query });
  }

  /** Cancel a run that has not ended. */
  cancel(runId: string, body: Schema<"CancelRunRequest">): Promise<Run> {
    return this.http.json({ method: "POST", path: `/runs/${segment(runId)}/cancel`, body });
  }

  /** Hold a run where it is until it is unpaused. */
  pause(runId: string, body: Schema<"PauseRequest"> = {}): Promise<Run> {
    return this.http.json({ method: "POST", path: `/runs/${segment(runId)}/pause`, body });
  }

  /** Let a paused run go on. */
  unpause(runId: string, body: Schema<"PauseRequest"> = {}): Promise<Run> {
    return this.http.json({ method: "POST", path: `/runs/${segment(runId)}/unpause`, body });
  }

  /** Answer a run waiting at an interrupt node with `value`. */
  resume(runId: string, body: Schema<"ResumeRequest">): Promise<Run> {
    return this.http.json({ method: "POST", path: `/runs/${segment(runId)}/resume`, body });
  }

  /** The run's audit timeline. */
  timeline(runId: string): Promise<Schema<"AuditTimelineResponse">> {
    return this.http.json({ method: "GET", path: `/runs/${segment(runId)}/timeline` });
  }

  /** Verify the run's audit chain and signatures. */
  verify(runId: string): Promise<Schema<"AuditVerificationResponse">> {
    return this.http.json({ method: "GET", path: `/runs/${segment(runId)}/audit/verify` });
  }
}

/** `/v1/approvals`: list and read approvals; resolve them. */
export class Approvals {
  constructor(private readonly http: Transport) {}

  /** Every approval matching `query`, across all pages. */
  list(query: ApprovalFilters = {}): AsyncGenerator<Schema<"ApprovalRecord">, void, undefined> {
    return paginate(this.http, "/v1/approvals", "approvals", { ...query });
  }

  /** One approval. */
  get(approvalId: string): Promise<Schema<"ApprovalRecord">> {
    return this.http.json({ method: "GET", path: `/v1/approvals/${segment(approvalId)}` });
  }

  /** Approve, reject or edit-and-approve an approval of the deployment `ref`. */
  resolve(
    ref: string,
    approvalId: string,
    body: Schema<"ApprovalResolutionRequest">,
  ): Promise<Schema<"ApprovalResolutionResponse">> {
    const path = `/deployments/${segment(ref)}/approvals/${segment(approvalId)}/resolve`;
    return this.http.json({ method: "POST", path, body });
  }
}

/** `/v1/tasks`: external tasks for workers (see `runWorker` for the whole loop). */
export class Tasks {
  constructor(private readonly http: Transport) {}

  /** Every task matching `query`, across all pages. */
  list(query: TaskFilters = {}): AsyncGenerator<Schema<"TaskSummary">, void, undefined> {
    return paginate(this.http, "/v1/tasks", "tasks", { ...query });
  }

  /** One task. */
  get(taskId: string): Promise<Schema<"TaskSummary">> {
    return this.http.json({ method: "GET", path: `/v1/tasks/${segment(taskId)}` });
  }

  /** Claim up to `max_tasks` of `topics`, waiting up to `wait_seconds` for one. */
  claim(
    body: Schema<"TaskClaimRequest">,
    signal?: AbortSignal,
  ): Promise<Schema<"TaskClaimResponse">> {
    const timeoutMs = ((body.wait_seconds ?? 0) + 30) * 1000;
    return this.http.json({ method: "POST", path: "/v1/tasks/claim", body, timeoutMs, signal });
  }

  /** Complete a claimed task with its output (a 409 answer means the lock was lost); with
   * `claim_next` the answer's `next_tasks` holds the worker's next tasks, claimed with it. */
  complete(taskId: string, body: Schema<"TaskCompleteRequest">): Promise<Schema<"TaskCompletion">> {
    return this.http.json({ method: "POST", path: `/v1/tasks/${segment(taskId)}/complete`, body });
  }

  /** Report a claimed task failed. */
  fail(taskId: string, body: Schema<"TaskFailRequest">): Promise<Schema<"TaskSummary">> {
    return this.http.json({ method: "POST", path: `/v1/tasks/${segment(taskId)}/fail`, body });
  }

  /** Extend the lock on a claimed task. */
  heartbeat(
    taskId: string,
    body: Schema<"TaskHeartbeatRequest">,
  ): Promise<Schema<"TaskLockResponse">> {
    const path = `/v1/tasks/${segment(taskId)}/heartbeat`;
    return this.http.json({ method: "POST", path, body });
  }
}

/** `/webhooks/subscriptions`: where the service POSTs events, and their secrets. */
export class Subscriptions {
  constructor(private readonly http: Transport) {}

  /** Subscribe a URL; the answer holds the signing secret, shown this once. */
  create(body: Schema<"CreateSubscriptionRequest">): Promise<Schema<"SubscriptionCreated">> {
    return this.http.json({ method: "POST", path: "/webhooks/subscriptions", body });
  }

  /** Every live subscription of the tenant (one page: the service does not page them). */
  list(): AsyncGenerator<Schema<"SubscriptionView">, void, undefined> {
    return paginate(this.http, "/webhooks/subscriptions", "subscriptions");
  }

  /** Stop delivering to a subscription. */
  async delete(subscriptionId: string): Promise<void> {
    const path = `/webhooks/subscriptions/${segment(subscriptionId)}`;
    await this.http.json({ method: "DELETE", path });
  }

  /** A new secret; the old one keeps signing beside it for a while. */
  rotateSecret(subscriptionId: string): Promise<Schema<"SecretRotated">> {
    const path = `/webhooks/subscriptions/${segment(subscriptionId)}/rotate-secret`;
    return this.http.json({ method: "POST", path });
  }

  /** Send a `webhook.test` event to the subscription. */
  sendTest(subscriptionId: string): Promise<Schema<"Delivery">> {
    const path = `/webhooks/subscriptions/${segment(subscriptionId)}/test`;
    return this.http.json({ method: "POST", path });
  }
}

/** `/webhooks`: subscriptions (and `verifyWebhook` for what they deliver). */
export class Webhooks {
  /** The tenant's webhook subscriptions. */
  readonly subscriptions: Subscriptions;

  constructor(http: Transport) {
    this.subscriptions = new Subscriptions(http);
  }
}
