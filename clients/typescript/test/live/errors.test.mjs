// Problems become EcpError subclasses named by their code, with status, code, request id and
// field errors: from the live server, and for every code from a stand-in.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as ecpClient from "ecp-client";
import { client, deploy, gatedGraph, unique, URL_ } from "../helpers.mjs";
import { standIn } from "../standin.mjs";

const {
  ApprovalAlreadyResolvedError,
  Client,
  EcpError,
  ForbiddenError,
  NotFoundError,
  PROBLEM_CLASSES,
  UnauthenticatedError,
  ValidationFailedError,
} = ecpClient;

function checks(Class, code, status) {
  return (error) => {
    assert.ok(error instanceof Class, `${error?.name} is a ${Class.name}`);
    assert.ok(error instanceof EcpError);
    assert.equal(error.name, Class.name);
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    assert.match(error.requestId ?? "", /\S/, "the request id is kept");
    return true;
  };
}

test("the live server's problems", async () => {
  const ecp = client();
  await assert.rejects(ecp.runs.get("no-such-run"), checks(NotFoundError, "not_found", 404));
  await assert.rejects(
    client("viewer").deployments.create({ deployment_ref: "x", graph_id: "y" }),
    checks(ForbiddenError, "forbidden", 403),
  );
  const stranger = new Client({ baseUrl: URL_, token: "not-a-token" });
  await assert.rejects(stranger.runs.get("r"), checks(UnauthenticatedError, "unauthenticated", 401));
  await assert.rejects(
    ecp.deployments.create({ deployment_ref: "bad ref!", graph_id: "g" }),
    (error) => {
      checks(ValidationFailedError, "validation_failed", 422)(error);
      assert.ok(error.errors.some((e) => e.loc.includes("deployment_ref")), JSON.stringify(error.errors));
      return true;
    },
  );
  const ref = unique("twice");
  await deploy(ecp, gatedGraph(ref));
  const run = await ecp.runs.start({ deployment_ref: ref }, { waitSeconds: 10 });
  const [approvalId] = run.pending_approval_ids;
  await ecp.approvals.resolve(ref, approvalId, { decision: "approve", reason: "ok" });
  await assert.rejects(
    ecp.approvals.resolve(ref, approvalId, { decision: "approve", reason: "again" }),
    checks(ApprovalAlreadyResolvedError, "approval_already_resolved", 409),
  );
});

test("every documented code has its class, and an unknown code is an EcpError", async () => {
  const codes = Object.keys(PROBLEM_CLASSES);
  assert.ok(codes.length >= 40, `${codes.length} codes`);
  const server = await standIn((request) => {
    const code = new globalThis.URL(request.url, "http://x").searchParams.get("code");
    if (code === "not-a-problem") return { status: 502, headers: { "content-type": "text/html" }, body: "Bad Gateway" };
    const status = code === "http_error" ? 418 : code === "internal_error" ? 500 : 400;
    return {
      status,
      headers: { "content-type": "application/problem+json", "x-request-id": `req-${code}` },
      body: { type: `urn:ecp:error:${code}`, title: "t", status, detail: `a ${code}`, code },
    };
  });
  try {
    const ecp = new Client({ baseUrl: server.url, token: "t", retries: 0 });
    for (const code of [...codes, "a_code_from_the_future"]) {
      const Class = PROBLEM_CLASSES[code] ?? EcpError;
      assert.equal(Class.code, PROBLEM_CLASSES[code] ? code : "ecp_error");
      const error = await ecp.transport.json({ method: "GET", path: "/x", query: { code } }).catch((e) => e);
      assert.ok(error instanceof Class, `${code}: ${error?.name}`);
      assert.equal(error.constructor, Class, code);
      assert.equal(error.code, code);
      assert.equal(error.requestId, `req-${code}`);
      assert.equal(error.detail ?? error.problem.detail, `a ${code}`);
    }
    const proxied = await ecp.transport.json({ method: "GET", path: "/x", query: { code: "not-a-problem" } }).catch((e) => e);
    assert.equal(proxied.constructor, ecpClient.HttpError, "an answer that is not a problem");
    assert.equal(proxied.status, 502);
    assert.equal(proxied.code, "http_error");
  } finally {
    await server.close();
  }
});
