/** Errors the client throws: every problem answer becomes an `EcpError` (a subclass per code). */

import type { components } from "./generated/api.js";

/** The RFC 9457 problem the service answers with. */
export type Problem = components["schemas"]["Problem"] & { instance?: string };

/** One failing field of a validation problem: where it is and what is wrong with it. */
export interface FieldError {
  loc: (string | number)[];
  msg: string;
}

/**
 * A problem answered by the service. `code` names the subclass (`NotFoundError` for
 * `not_found`); `requestId` is the id of the answer's `X-Request-Id` and of the server's log
 * lines; `errors` holds the failing fields of a validation problem.
 */
export class EcpError extends Error {
  /** The problem code this class stands for (`ecp_error` for the root). */
  static readonly code: string = "ecp_error";
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The problem's code, one of the documented error codes. */
  readonly code: string;
  /** The request's id (`X-Request-Id`), to find the server's log lines. */
  readonly requestId: string | null;
  /** Each failing field with its location (validation problems). */
  readonly errors: FieldError[];
  /** The problem as answered. */
  readonly problem: Problem;

  constructor(problem: Problem, requestId: string | null = null) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = new.target.name;
    this.status = problem.status;
    this.code = problem.code;
    this.requestId = requestId;
    this.errors = (problem.errors ?? []).map((e) => ({ loc: [...e.loc], msg: e.msg }));
    this.problem = problem;
  }
}

/** The service could not be reached, or did not answer in time, after every allowed try. */
export class EcpConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "EcpConnectionError";
  }
}
