/** WebCrypto: the global one (Node 19+, browsers), else Node 18's `node:crypto` webcrypto. */

let found: Crypto | undefined;

/** The platform's WebCrypto. */
export async function webCrypto(): Promise<Crypto> {
  if (found === undefined) {
    const global = (globalThis as { crypto?: Crypto }).crypto;
    found = global?.subtle ? global : ((await import("node:crypto")).webcrypto as unknown as Crypto);
  }
  return found;
}

/** A random UUID (an idempotency key, a worker id). */
export async function randomId(): Promise<string> {
  return (await webCrypto()).randomUUID();
}
