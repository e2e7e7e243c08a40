/** `Client`: the service's resources over one transport, and its task-worker loop. */

import { type ClientOptions, Transport } from "./http.js";
import { Approvals, Deployments, Graphs, Runs, Tasks, Webhooks } from "./resources.js";
import { runWorker, type WorkerOptions } from "./worker.js";

/** The ECP service, as its routes' resources: `client.runs.start(...)`, `client.approvals.list()`. */
export class Client {
  /** `/v1/graphs`. */
  readonly graphs: Graphs;
  /** `/v1/deployments`. */
  readonly deployments: Deployments;
  /** `/runs`. */
  readonly runs: Runs;
  /** `/v1/approvals`. */
  readonly approvals: Approvals;
  /** `/v1/tasks`. */
  readonly tasks: Tasks;
  /** `/webhooks/subscriptions`. */
  readonly webhooks: Webhooks;
  /** The transport every resource sends through. */
  readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.graphs = new Graphs(this.transport);
    this.deployments = new Deployments(this.transport);
    this.runs = new Runs(this.transport);
    this.approvals = new Approvals(this.transport);
    this.tasks = new Tasks(this.transport);
    this.webhooks = new Webhooks(this.transport);
  }

  /** Work on tasks of `options.topics` until stopped (see `runWorker`). */
  runWorker(options: WorkerOptions): Promise<void> {
    return runWorker(this.tasks, options);
  }
}
