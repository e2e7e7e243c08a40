// A worker process for the worker test: works on ECP_TOPIC until SIGTERM. The handler says on
// stdout which task it starts, takes ECP_TASK_MS, and fails the tasks of runs whose input says so.
import { Client } from "ecp-client";

const ecp = new Client({ baseUrl: process.env.ECP_URL, token: process.env.ECP_WORKER_TOKEN });
await ecp.runWorker({
  topics: [process.env.ECP_TOPIC],
  waitSeconds: 2,
  lockSeconds: 1,
  async handler(task) {
    console.log(`working ${task.task_id}`);
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.ECP_TASK_MS ?? 0)));
    if (task.state.fail) throw new Error("the input asked to fail");
    return { paid: task.arguments.amount };
  },
});
console.log("exited cleanly");
