// A real delivery verifies (Standard Webhooks, and X-Service-Signature alone); a tampered one,
// an old one and one signed with another secret are refused.
import assert from "node:assert/strict";
import { test } from "node:test";
import { verifyWebhook, WebhookVerificationError } from "ecp-client";
import { client, deploy, gatedGraph, unique, waitFor } from "../helpers.mjs";
import { standIn } from "../standin.mjs";

function refused(message) {
  return (error) => {
    assert.ok(error instanceof WebhookVerificationError, String(error));
    assert.match(error.message, message);
    return true;
  };
}

test("a delivery is verified and a tampered one refused", async () => {
  const receiver = await standIn(() => ({ status: 204 }));
  try {
    const ecp = client();
    const ref = unique("hooked");
    await deploy(ecp, gatedGraph(ref));
    const made = await ecp.webhooks.subscriptions.create({
      deployment_ref: ref,
      target_url: `${receiver.url}/hook`,
      event_types: ["run.started"],
    });
    assert.match(made.secret, /^whsec_/);
    const plainSecret = "a plain secret of the receiver";
    await ecp.webhooks.subscriptions.create({
      deployment_ref: ref,
      target_url: `${receiver.url}/plain`,
      event_types: ["run.started"],
      secret: plainSecret,
    });
    const run = await ecp.runs.start({ deployment_ref: ref });
    await waitFor(() => receiver.seen.length >= 2, 60, "two deliveries");
    const delivery = receiver.seen.find((r) => r.url === "/hook");
    const plain = receiver.seen.find((r) => r.url === "/plain");

    const event = await verifyWebhook(delivery.headers, delivery.body, made.secret);
    assert.equal(event.data?.run_id ?? event.run_id ?? JSON.parse(delivery.body).data.run_id, run.run_id);
    const bytes = new TextEncoder().encode(delivery.body);
    await verifyWebhook(new Headers(delivery.headers), bytes, made.secret);

    const tampered = delivery.body.replace(run.run_id, "another-run");
    assert.notEqual(tampered, delivery.body);
    await assert.rejects(verifyWebhook(delivery.headers, tampered, made.secret), refused(/no webhook-signature/));
    await assert.rejects(verifyWebhook(delivery.headers, delivery.body, "whsec_" + Buffer.alloc(32, 7).toString("base64")), refused(/no webhook-signature/));
    const now = Number(delivery.headers["webhook-timestamp"]) + 301;
    await assert.rejects(verifyWebhook(delivery.headers, delivery.body, made.secret, { now }), refused(/too far/));

    const spec = { "x-service-signature": plain.headers["x-service-signature"] };
    await verifyWebhook(spec, plain.body, plainSecret);
    await verifyWebhook(plain.headers, plain.body, plainSecret);
    await assert.rejects(verifyWebhook(spec, plain.body + " ", plainSecret), refused(/X-Service-Signature/));
    await assert.rejects(verifyWebhook({}, plain.body, plainSecret), refused(/no signature/));
  } finally {
    await receiver.close();
  }
});

test("any body and secret signed as Standard Webhooks says verifies; any flipped byte is refused", async () => {
  const { createHmac, randomBytes, randomInt } = await import("node:crypto");
  for (let i = 0; i < 200; i += 1) {
    const key = randomBytes(24 + randomInt(41));
    const secret = i % 2 ? `whsec_${key.toString("base64").replace(/=+$/, "")}` : `plain-${key.toString("hex")}`;
    const hmacKey = i % 2 ? key : Buffer.from(secret, "utf8");
    const body = Buffer.from(JSON.stringify({ n: i, text: randomBytes(randomInt(200)).toString("latin1") }));
    const id = `msg_${randomBytes(8).toString("hex")}`;
    const timestamp = String(Math.floor(Date.now() / 1000) - randomInt(200));
    const sign = (k) => createHmac("sha256", k).update(`${id}.${timestamp}.`).update(body).digest("base64");
    const headers = {
      "webhook-id": id,
      "webhook-timestamp": timestamp,
      "webhook-signature": `v1,${sign(randomBytes(32))} v1,${sign(hmacKey)}`,
    };
    await verifyWebhook(headers, new Uint8Array(body), secret);
    const flipped = Buffer.from(body);
    flipped[randomInt(flipped.length)] ^= 1 << randomInt(8);
    await assert.rejects(verifyWebhook(headers, new Uint8Array(flipped), secret), WebhookVerificationError);
    const spec = { "x-service-signature": createHmac("sha256", hmacKey).update(body).digest("hex") };
    await verifyWebhook(spec, new Uint8Array(body), secret);
    await assert.rejects(verifyWebhook(spec, new Uint8Array(flipped), secret), WebhookVerificationError);
  }
});
