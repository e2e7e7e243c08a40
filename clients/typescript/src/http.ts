/** The client's one way to the service: credentials, timeouts, retries and problems as errors. */

import { EcpConnectionError, EcpError, type Problem } from "./errors.js";
import { PROBLEM_CLASSES } from "./generated/problems.js";
import { randomId } from "./webcrypto.js";

/** How a `Client` reaches the service. */
export interface ClientOptions {
  /** The service's address, e.g. `http://127.0.0.1:8000`. */
  baseUrl: string;
  /** A bearer token (JWT), sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** A project API key, sent as `X-API-Key` (instead of a token). */
  apiKey?: string;
  /** How long one try may take, in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** How many times an answer of 503 or 429 is tried again (default 5). */
  retries?: number;
  /** The longest wait between tries, in milliseconds, whatever `Retry-After` says (default 60 000). */
  maxRetryDelayMs?: number;
  /** The `fetch` to use (default the global one). */
  fetch?: typeof fetch;
}

/** Query parameters: absent (`undefined` or `null`) ones are left out. */
export type Query = Record<string, string | number | boolean | null | undefined>;

/** One request as the resources describe it. */
export interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  /** The idempotency key every try of this POST sends (one is made when left out). */
  idempotencyKey?: string;
  /** A longer timeout for a request that waits on the server (a long poll). */
  timeoutMs?: number;
  /** Answers that are not errors though their status says so (e.g. a 409 with a body). */
  accept?: number[];
  signal?: AbortSignal;
}

/** The statuses worth trying again: the service is unavailable now, or asks to slow down. */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);
const BASE_DELAY_MS = 500;

/** The wait `Retry-After` asks for (seconds or an HTTP date), in milliseconds; null if none. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** A fresh idempotency key (a random UUID from WebCrypto). */
export function newIdempotencyKey(): Promise<string> {
  return randomId();
}

/** The request id of an answer: `X-Request-Id`, else the problem's `instance`. */
function requestId(response: Response, problem: Problem | null): string | null {
  const header = response.headers.get("x-request-id");
  if (header) return header;
  const instance = problem?.instance;
  return instance?.startsWith("urn:ecp:request:") ? instance.slice("urn:ecp:request:".length) : null;
}

/** The error an answer that is not a success stands for: the class named by its code. */
export async function errorOf(response: Response): Promise<EcpError> {
  const text = await response.text();
  let problem: Problem;
  try {
    const parsed = JSON.parse(text) as Partial<Problem> | null;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new TypeError("not a problem object");
    }
    problem = {
      type: parsed.type ?? "about:blank",
      title: parsed.title ?? response.statusText,
      status: parsed.status ?? response.status,
      detail: parsed.detail ?? text,
      code: parsed.code ?? "http_error",
      ...parsed,
    } as Problem;
  } catch {
    problem = {
      type: "about:blank",
      title: response.statusText,
      status: response.status,
      detail: text.slice(0, 1000),
      code: "http_error",
    };
  }
  const Class = PROBLEM_CLASSES[problem.code] ?? EcpError;
  return new Class(problem, requestId(response, problem));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Sends requests with the client's credentials; tries 503 and 429 again as `Retry-After` says. */
export class Transport {
  readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly maxRetryDelayMs: number;
  private readonly fetcher: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.headers = { accept: "application/json, application/problem+json" };
    if (options.token !== undefined) this.headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey !== undefined) this.headers["x-api-key"] = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retries = options.retries ?? 5;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** The answer's JSON body; an `EcpError` subclass for a problem. */
  async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /** The answer (a success, or a status in `spec.accept`), after the retries it needed. */
  async send(spec: RequestSpec): Promise<Response> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { ...this.headers, ...spec.headers };
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    if (spec.method === "POST") headers["idempotency-key"] = spec.idempotencyKey ?? (await randomId());
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    for (let attempt = 0; ; attempt += 1) {
      const response = await this.once(url, spec, headers, body);
      if (response.ok || spec.accept?.includes(response.status)) return response;
      if (!RETRIED_STATUSES.has(response.status) || attempt >= this.retries) {
        throw await errorOf(response);
      }
      const asked = retryAfterMs(response.headers.get("retry-after"));
      const backoff = BASE_DELAY_MS * 2 ** attempt * (0.5 + Math.random() / 2);
      await response.body?.cancel();
      await sleep(Math.min(asked ?? backoff, this.maxRetryDelayMs), spec.signal);
    }
  }

  private async once(
    url: URL,
    spec: RequestSpec,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(spec.timeoutMs ?? this.timeoutMs);
    const signal = spec.signal ? anySignal([spec.signal, timeout]) : timeout;
    try {
      return await this.fetcher(url, { method: spec.method, headers, body, signal });
    } catch (error) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      const why = timeout.aborted ? "timed out" : "failed";
      throw new EcpConnectionError(`${spec.method} ${url.pathname} ${why}`, { cause: error });
    }
  }
}

/** A signal aborted when any of `signals` is (AbortSignal.any is Node 20+). */
function anySignal(signals: AbortSignal[]): AbortSignal {
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}
