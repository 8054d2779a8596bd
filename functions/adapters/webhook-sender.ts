/**
 * The webhook sender (WebhookSender): one HTTP POST per attempt, guarded against server-side request forgery. The
 * host is resolved by the request's own `lookup`, which refuses the connection when any address the name resolves to
 * is not allowed (core/webhooks/addresses.ts), so the addresses checked are the ones connected to: a DNS answer that
 * changes between a check and the connect (DNS rebinding) cannot slip through. A literal IP host is checked before
 * the request. No redirect is followed, no connection is reused, the whole attempt (connect, answer and body) is
 * bounded by the timeout, and at most MAX_RESPONSE_BYTES of the answer are read.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { type ClientRequest, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { addressRefusal, isAllowedHttpHost, isIpLiteral, isLoopbackAllowed } from '../core/webhooks/addresses.js';
import type { SendOutcome, WebhookSender } from '../core/webhooks/ports.js';

/** Every address a host name resolves to (dns.lookup with `all`), or a rejection when it resolves to none. */
export type ResolveAll = (hostname: string) => Promise<readonly LookupAddress[]>;

/** The system resolver (getaddrinfo, as any client of the host would use), every address in its order. */
export const systemResolver: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/** The most of a receiver's answer read before it is dropped, bytes. */
export const MAX_RESPONSE_BYTES = 4 * 1024;

/** A connection refused by the address check: its reason is the attempt's. */
class AddressRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** How the sender connects: the hosts allowed plain http (and loopback), and the resolver (a stub in tests). */
export interface WebhookSenderOptions {
  /** WEBHOOK_ALLOWED_HTTP_HOSTS, parsed (parseAllowedHttpHosts). */
  allowedHttpHosts: readonly string[];
  /** @default systemResolver */
  resolve?: ResolveAll;
}

/**
 * A `lookup` for node:net that resolves with `resolve` and fails with AddressRefused when any address is not allowed
 * (loopback is, for `localhost` when allowed: isLoopbackAllowed), answering in the form node asks for (`all` or one address).
 */
export function guardedLookup(resolve: ResolveAll, loopbackAllowed: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refusal = addresses.length === 0 ? `refused: ${hostname} resolves to no address` : undefined;
        const reason =
          refusal ?? addresses.map((entry) => addressRefusal(entry.address, loopbackAllowed)).find((text) => text !== undefined);
        if (reason !== undefined) {
          callback(new AddressRefused(`${reason} (${hostname})`), '', 0);
          return;
        }
        const family = options.family === 6 || options.family === 4 ? options.family : undefined;
        const usable = family === undefined ? addresses : addresses.filter((entry) => entry.family === family);
        if (options.all === true) (callback as unknown as (error: null, all: readonly LookupAddress[]) => void)(null, usable);
        else callback(null, usable[0]?.address ?? '', usable[0]?.family ?? 4);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/** HTTP(S) POSTs of deliveries: see the module comment. */
export class HttpWebhookSender implements WebhookSender {
  private readonly resolve: ResolveAll;

  constructor(private readonly options: WebhookSenderOptions) {
    this.resolve = options.resolve ?? systemResolver;
  }

  /** @inheritdoc */
  async send(url: string, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number): Promise<SendOutcome> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { kind: 'refused', reason: 'refused: the URL is not valid' };
    }
    const allowed = isAllowedHttpHost(target.hostname, this.options.allowedHttpHosts);
    if (target.protocol !== 'https:' && !(target.protocol === 'http:' && allowed)) {
      return { kind: 'refused', reason: `refused: ${target.protocol} is not allowed for ${target.hostname}` };
    }
    const loopbackAllowed = isLoopbackAllowed(target.hostname, this.options.allowedHttpHosts);
    if (isIpLiteral(target.hostname)) {
      const reason = addressRefusal(target.hostname, loopbackAllowed);
      if (reason !== undefined) return { kind: 'refused', reason };
    }
    const options: RequestOptions = {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'dss-webhooks/1' },
      agent: false,
      lookup: guardedLookup(this.resolve, loopbackAllowed),
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return post((callback) => send(target, options, callback), body, timeoutMs);
  }
}

/** What a failed request's error is, for a person. */
function failureReason(error: NodeJS.ErrnoException): string {
  if (error.code !== undefined) return `could not deliver: ${error.code}${error.message.includes(error.code) ? '' : ` (${error.message})`}`;
  return `could not deliver: ${error.message}`;
}

/**
 * Sends one request made by `open` with `body`, bounded by `timeoutMs` from start to the end of the answer (at most
 * MAX_RESPONSE_BYTES read); never rejects.
 */
function post(
  open: (callback: (response: IncomingMessage) => void) => ClientRequest,
  body: string,
  timeoutMs: number,
): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const request = open((response) => {
      const status = response.statusCode ?? 0;
      const durationMs = elapsed();
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= MAX_RESPONSE_BYTES) finish({ kind: 'answered', status, durationMs });
      });
      response.on('end', () => finish({ kind: 'answered', status, durationMs }));
      response.on('error', () => finish({ kind: 'answered', status, durationMs }));
    });
    const timer = setTimeout(
      () => finish({ kind: 'failed', reason: `no complete answer within ${timeoutMs / 1000} s`, durationMs: elapsed() }),
      timeoutMs,
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof AddressRefused) finish({ kind: 'refused', reason: error.reason });
      else finish({ kind: 'failed', reason: failureReason(error), durationMs: elapsed() });
    });
    request.end(body);
  });
}
