import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const handlers = new Map<string, Promise<unknown>>();

/**
 * Loads (once per entry) the `handler` export of a handler module, the very function Lambda runs, for the local
 * gateway (routes) and the local runtime (stream consumers, the S3 event, the schedule).
 * @param root repository root; `entry` is relative to it (e.g. `functions/handlers/search.ts`).
 * @throws Error when the module exports no `handler` function.
 */
export function loadHandler<Handler extends (...args: never[]) => unknown>(root: string, entry: string): Promise<Handler> {
  let loaded = handlers.get(entry);
  if (loaded === undefined) {
    loaded = import(pathToFileURL(resolve(root, entry)).href).then((module: { handler?: unknown }) => {
      if (typeof module.handler !== 'function') throw new Error(`${entry} exports no handler.`);
      return module.handler;
    });
    handlers.set(entry, loaded);
  }
  return loaded as Promise<Handler>;
}
