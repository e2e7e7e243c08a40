/**
 * Verify a delivery: Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`),
 * else the service's own `X-Service-Signature` (an HMAC of the raw body alone). WebCrypto only.
 */

/** A delivery's headers: a `Headers`, or a plain object (Node's `IncomingHttpHeaders`). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** How `verifyWebhook` judges a delivery's age. */
export interface VerifyOptions {
  /** The most a `webhook-timestamp` may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (default the clock). */
  now?: number;
}

/** The delivery is not genuine, or too old or new to accept: do not act on it. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

import { webCrypto } from "./webcrypto.js";

const encoder = new TextEncoder();
type Bytes = Uint8Array<ArrayBuffer>;

function header(headers: WebhookHeaders, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  const value = found?.[1];
  return Array.isArray(value) ? value.join(", ") : (value ?? null);
}

function base64Bytes(text: string): Bytes {
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** The HMAC key: the decoded bytes of a `whsec_` secret, else the secret's UTF-8 bytes. */
function signingKey(secret: string): Bytes {
  if (!secret.startsWith("whsec_")) return encoder.encode(secret);
  const encoded = secret.slice("whsec_".length);
  return base64Bytes(encoded + "=".repeat((4 - (encoded.length % 4)) % 4));
}

async function hmacSha256(key: Bytes, message: Bytes): Promise<Bytes> {
  const subtle = (await webCrypto()).subtle;
  const imported = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await subtle.sign("HMAC", imported, message));
}

/** Equal texts, compared in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  let differ = left.length ^ right.length;
  for (let i = 0; i < left.length; i += 1) differ |= left[i]! ^ (right[i % right.length] ?? 0);
  return differ === 0;
}

function concat(...parts: Uint8Array[]): Bytes {
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

/**
 * The delivery's event (the parsed body) when `body` (the raw bytes or text, as received) is
 * signed with `secret`; throws `WebhookVerificationError` otherwise. With Standard Webhooks
 * headers, any `v1,` signature may match and the timestamp must be within the tolerance; without
 * them, `X-Service-Signature` must match (it carries no timestamp: prefer the former).
 */
export async function verifyWebhook(
  headers: WebhookHeaders,
  body: string | Uint8Array,
  secret: string,
  options: VerifyOptions = {},
): Promise<unknown> {
  const raw: Bytes = typeof body === "string" ? encoder.encode(body) : new Uint8Array(body);
  const key = signingKey(secret);
  const signatures = header(headers, "webhook-signature");
  if (signatures !== null) {
    const id = header(headers, "webhook-id");
    const timestamp = header(headers, "webhook-timestamp");
    if (id === null || timestamp === null || !/^\d+$/.test(timestamp)) {
      throw new WebhookVerificationError("webhook-id or webhook-timestamp is missing or malformed");
    }
    const now = options.now ?? Date.now() / 1000;
    if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
      throw new WebhookVerificationError("webhook-timestamp is too far from now");
    }
    const digest = await hmacSha256(key, concat(encoder.encode(`${id}.${timestamp}.`), raw));
    const expected = `v1,${btoa(String.fromCharCode(...digest))}`;
    const sent = signatures.split(" ").filter((s) => s !== "");
    if (!sent.map((s) => sameText(expected, s)).includes(true)) {
      throw new WebhookVerificationError("no webhook-signature matches");
    }
  } else {
    const sent = header(headers, "x-service-signature");
    if (sent === null) throw new WebhookVerificationError("the delivery carries no signature");
    const digest = await hmacSha256(key, raw);
    const expected = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    if (!sameText(expected, sent.trim().toLowerCase())) {
      throw new WebhookVerificationError("X-Service-Signature does not match");
    }
  }
  return JSON.parse(new TextDecoder().decode(raw));
}
