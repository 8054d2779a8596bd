import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';

const handlers = new Map<string, Promise<unknown>>();

/**
 * Loads (once per entry) the `handler` export of a handler module, the very function Lambda runs, for the local
 * gateway (routes) and the local runtime (stream consumers, the S3 event, the schedule). Each call of the returned
 * function runs in its own invoke-store context, as Lambda runs concurrent invocations of one instance: with
 * AWS_LAMBDA_MAX_CONCURRENCY set (the local runtime sets it), Powertools keeps each invocation's log keys, Lambda
 * context and metrics there, so requests served at the same time never mix their correlation fields.
 * @param root repository root; `entry` is relative to it (e.g. `functions/handlers/search.ts`).
 * @throws Error when the module exports no `handler` function.
 */
export function loadHandler<Handler extends (...args: never[]) => unknown>(root: string, entry: string): Promise<Handler> {
  let loaded = handlers.get(entry);
  if (loaded === undefined) {
    loaded = Promise.all([import(pathToFileURL(resolve(root, entry)).href), InvokeStore.getInstanceAsync(true)]).then(
      ([module, store]: [{ handler?: unknown }, InvokeStoreBase]) => {
        const handler = module.handler;
        if (typeof handler !== 'function') throw new Error(`${entry} exports no handler.`);
        return (event: unknown, context: { awsRequestId?: string } | undefined) =>
          store.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context?.awsRequestId ?? '-' }, () => handler(event, context));
      },
    );
    handlers.set(entry, loaded);
  }
  return loaded as Promise<Handler>;
}
