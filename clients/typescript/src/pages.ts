/** Every page of a list: follows the keyset cursor the service gives (`next_cursor` or `Link`). */

import type { Query, Transport } from "./http.js";

/** The cursor of the `Link: <…?cursor=…>; rel="next"` header, or null. */
export function nextCursorOfLink(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(",")) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1] !== undefined) {
      return new URL(match[1], "http://link.invalid").searchParams.get("cursor");
    }
  }
  return null;
}

/**
 * The items of `field` on every page of `GET path`, one page fetched at a time as the loop
 * asks for more; `query` (filters, `limit`) is sent with each page.
 */
export async function* paginate<Item>(
  transport: Transport,
  path: string,
  field: string,
  query: Query = {},
): AsyncGenerator<Item, void, undefined> {
  let cursor: string | null = null;
  do {
    const response = await transport.send({ method: "GET", path, query: { ...query, cursor } });
    const body = (await response.json()) as Record<string, unknown>;
    const items = body[field];
    if (!Array.isArray(items)) throw new TypeError(`GET ${path}: the answer has no "${field}" list`);
    yield* items as Item[];
    const fromBody = body.next_cursor;
    cursor = typeof fromBody === "string" ? fromBody : nextCursorOfLink(response.headers.get("link"));
  } while (cursor !== null);
}
