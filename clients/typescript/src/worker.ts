/**
 * The task-worker loop: claim tasks of some topics (long polling), run a handler on each while
 * heartbeats keep its lock (at a third of the lock time), complete it with the handler's output
 * or fail it with the error's text. The completion of a batch's last task claims the next batch
 * in the same request (`claim_next`), so a busy topic costs one request per task. A stop (the
 * AbortSignal, or SIGTERM/SIGINT) while waiting for work ends at once; while working, it
 * finishes the current task first. Delivery is at-least-once: a worker that dies loses its
 * lock and another one gets the task.
 */

import { EcpConnectionError, EcpError } from "./errors.js";
import type { Schema, Tasks } from "./resources.js";
import { randomId } from "./webcrypto.js";

/** A claimed task as the handler sees it. */
export type ClaimedTask = Schema<"ClaimedTask">;
/** Which tasks a completion claims next for the worker (`claim_next`). */
type NextClaim = Schema<"NextClaim">;

/** What a handler returns: the task's output, a JSON object. */
export type TaskOutput = Record<string, unknown>;

/** What the handler gets beside its task: a signal aborted when the worker gives the task up. */
export interface TaskContext {
  signal: AbortSignal;
}

/** Where the worker writes its lines (the console by default). */
export type WorkerLogger = Pick<Console, "info" | "warn" | "error">;

/** How a worker claims and runs tasks. */
export interface WorkerOptions {
  /** The topics whose tasks this worker takes. */
  topics: string[];
  /** Runs one task; its returned object completes the task, a throw fails it. */
  handler: (task: ClaimedTask, context: TaskContext) => TaskOutput | Promise<TaskOutput>;
  /** Stops the worker (finishing the current task) when aborted. */
  signal?: AbortSignal;
  /** The worker's id (default `ts-worker-<random>`). */
  workerId?: string;
  /** Seconds a claim holds a task (default: each task's own lock time). */
  lockSeconds?: number;
  /** Seconds one claim waits for a task (default 20). */
  waitSeconds?: number;
  /** Tasks claimed at once (default 1). */
  maxTasks?: number;
  /** Stop on SIGTERM and SIGINT as on the signal (default true). */
  handleSignals?: boolean;
  logger?: WorkerLogger;
}

const FATAL_CLAIM_STATUSES = new Set([400, 401, 403, 404, 422]);
const MAX_BACKOFF_MS = 10_000;
const MAX_ERROR_CHARS = 4000;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.slice(0, MAX_ERROR_CHARS) || "failed";
}

/** Claims, runs and settles tasks until stopped; resolves once stopped cleanly. */
export async function runWorker(tasks: Tasks, options: WorkerOptions): Promise<void> {
  const log = options.logger ?? console;
  const workerId = options.workerId ?? `ts-worker-${await randomId()}`;
  const stop = new AbortController();
  const onStop = (): void => stop.abort();
  options.signal?.addEventListener("abort", onStop, { once: true });
  if (options.signal?.aborted) stop.abort();
  const nodeProcess = typeof process === "undefined" ? undefined : process;
  const signals = options.handleSignals === false || !nodeProcess ? [] : (["SIGTERM", "SIGINT"] as const);
  for (const name of signals) nodeProcess?.on(name, onStop);
  log.info(`worker started worker_id=${workerId} topics=${options.topics.join(",")}`);
  const terms: NextClaim = {
    worker_id: workerId,
    topics: options.topics,
    max_tasks: options.maxTasks ?? 1,
    lock_seconds: options.lockSeconds ?? null,
  };
  let queued: ClaimedTask[] = []; // claimed by the last completion
  try {
    let delay = 500;
    while (!stop.signal.aborted) {
      let claimed: ClaimedTask[] = queued;
      queued = [];
      try {
        if (claimed.length === 0) {
          const body = { ...terms, wait_seconds: options.waitSeconds ?? 20 };
          claimed = (await tasks.claim(body, stop.signal)).tasks;
        }
        delay = 500;
      } catch (error) {
        if (stop.signal.aborted) break; // a batch lost here is claimed again once its locks expire
        if (error instanceof EcpError && FATAL_CLAIM_STATUSES.has(error.status)) throw error;
        log.warn(`claim failed worker_id=${workerId}: ${describe(error)}`);
        await pause(delay, stop.signal);
        delay = Math.min(delay * 2, MAX_BACKOFF_MS);
        continue;
      }
      for (const [index, task] of claimed.entries()) {
        if (stop.signal.aborted) {
          log.info(`stopping: ${claimed.length - index} claimed tasks left to expire`);
          break;
        }
        // the batch's last completion claims the next batch in the same request
        const last = index === claimed.length - 1 && !stop.signal.aborted;
        queued = await handle(tasks, task, options, workerId, log, last ? terms : null);
      }
    }
    if (queued.length > 0) log.info(`stopping: ${queued.length} claimed tasks left to expire`);
  } finally {
    for (const name of signals) nodeProcess?.off(name, onStop);
    options.signal?.removeEventListener("abort", onStop);
    log.info(`worker stopped worker_id=${workerId}`);
  }
}

/** Run one task under heartbeats, then complete or fail it; the tasks its completion claimed. */
async function handle(
  tasks: Tasks,
  task: ClaimedTask,
  options: WorkerOptions,
  workerId: string,
  log: WorkerLogger,
  claimNext: NextClaim | null,
): Promise<ClaimedTask[]> {
  const ids = `task_id=${task.task_id} run_id=${task.run_id} attempt=${task.attempt} worker_id=${workerId}`;
  log.info(`task claimed ${ids} topic=${task.topic}`);
  const lockMs = options.lockSeconds
    ? options.lockSeconds * 1000
    : Date.parse(task.locked_until) - Date.now();
  const given = new AbortController();
  const beat = setInterval(
    () => {
      const body = { lock_token: task.lock_token, lock_seconds: options.lockSeconds ?? null };
      tasks.heartbeat(task.task_id, body).catch((error: unknown) => {
        if (error instanceof EcpConnectionError) return; // the next beat may get through
        log.warn(`heartbeat refused ${ids}: ${describe(error)}`);
        clearInterval(beat);
        given.abort();
      });
    },
    Math.max(lockMs / 3, 200),
  );
  let outcome: { output: TaskOutput } | { error: string };
  try {
    const output = await options.handler(task, { signal: given.signal });
    if (output === null || typeof output !== "object" || Array.isArray(output)) {
      throw new TypeError(`the handler returned ${Array.isArray(output) ? "an array" : typeof output}, not an object`);
    }
    outcome = { output };
  } catch (error) {
    outcome = { error: describe(error) };
    log.warn(`task failed ${ids}: ${outcome.error}`);
  } finally {
    clearInterval(beat);
  }
  const settled = await settle(tasks, task, outcome, log, ids, claimNext);
  if (settled && "output" in outcome) log.info(`task completed ${ids}`);
  return settled ? settled.next : [];
}

/** Send the outcome until the service answers (even while stopping); false when it refused it,
 * else the next tasks a completion with `claimNext` claimed. */
async function settle(
  tasks: Tasks,
  task: ClaimedTask,
  outcome: { output: TaskOutput } | { error: string },
  log: WorkerLogger,
  ids: string,
  claimNext: NextClaim | null,
): Promise<{ next: ClaimedTask[] } | false> {
  const lock_token = task.lock_token;
  for (let delay = 500; ; delay = Math.min(delay * 2, MAX_BACKOFF_MS)) {
    try {
      if ("error" in outcome) {
        await tasks.fail(task.task_id, { lock_token, error: outcome.error });
        return { next: [] };
      }
      const body = { lock_token, output: outcome.output, claim_next: claimNext };
      return { next: (await tasks.complete(task.task_id, body)).next_tasks };
    } catch (error) {
      if (error instanceof EcpConnectionError) {
        log.warn(`cannot reach the service to settle ${ids}: ${error.message}`);
        await new Promise((resolve) => setTimeout(resolve, delay));
        continue;
      }
      const lost = error instanceof EcpError && error.status === 409;
      log.error(`${lost ? "lock lost: another worker has the task" : "settle refused"} ${ids}: ${describe(error)}`);
      return false;
    }
  }
}
