/** ecp-client: the ECP service's TypeScript client. */

export { Client } from "./client.js";
export { EcpConnectionError, EcpError, type FieldError, type Problem } from "./errors.js";
export type { components, paths } from "./generated/api.js";
export * from "./generated/problems.js";
export { type ClientOptions, newIdempotencyKey, retryAfterMs } from "./http.js";
export { nextCursorOfLink } from "./pages.js";
export type { ApprovalFilters, PageSize, Schema, StartOptions, TaskFilters } from "./resources.js";
export { type VerifyOptions, verifyWebhook, type WebhookHeaders, WebhookVerificationError } from "./webhooks.js";
export {
  type ClaimedTask,
  runWorker,
  type TaskContext,
  type TaskOutput,
  type WorkerLogger,
  type WorkerOptions,
} from "./worker.js";
