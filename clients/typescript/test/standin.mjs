// A loopback stand-in for the service: answers each request with what `answer` says, and keeps
// the requests it saw.
import { createServer } from "node:http";

/** Serve `answer(request, body, seen)` → {status, headers, body}; returns {url, seen, close}. */
export async function standIn(answer) {
  const seen = [];
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: request.method, url: request.url, headers: request.headers, body, at: Date.now() });
      const reply = answer(request, body, seen);
      response.writeHead(reply.status, { "content-type": "application/json", connection: "close", ...reply.headers });
      response.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
