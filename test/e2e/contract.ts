/**
 * Checks a response of the running service against the OpenAPI document generated from the route definitions: the
 * status must be documented for the operation, the content type must be the documented one, every header the
 * document marks required must be present and valid, and a JSON body must validate against the documented schema
 * (Ajv, JSON Schema draft 2020-12, the dialect of OpenAPI 3.1). Our response schemas are closed, so an undocumented
 * field fails as surely as a missing one.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { openApiDocument } from '../../functions/contract/openapi.js';
import type { ApiName } from '../../functions/contract/route.js';
import { matchRoute, ROUTES } from '../../functions/contract/routes.js';
import type { JsonResult } from './harness.js';

type Json = Record<string, unknown>;

/** The document's base URI inside Ajv: `#/components/...` references are resolved against it. */
const DOCUMENT_ID = 'urn:device-scenario-service:openapi';

/** ajv-formats is CommonJS: its default export arrives wrapped under `default` once through ESM interop. */
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

/** Points `#/components/...` references at the document held by Ajv, and drops OpenAPI's `discriminator` (an annotation Ajv does not know). */
function forAjv(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(forAjv);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'discriminator') continue;
    out[key] = key === '$ref' && typeof child === 'string' && child.startsWith('#/') ? `${DOCUMENT_ID}${child}` : forAjv(child);
  }
  return out;
}

let cached: { document: Json; ajv: Ajv2020; validators: Map<unknown, ValidateFunction> } | undefined;

function contract() {
  if (cached !== undefined) return cached;
  const document = openApiDocument() as Json;
  // strict: false because OpenAPI annotations (`example`, `contentMediaType` on strings...) are not Ajv keywords.
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: forAjv((document.components as Json) ?? {}) });
  cached = { document, ajv, validators: new Map() };
  return cached;
}

/** Follows a `#/...` pointer inside the document. */
function resolve(document: Json, value: Json): Json {
  let node = value;
  for (let depth = 0; typeof node.$ref === 'string' && depth < 10; depth += 1) {
    node = (node.$ref as string)
      .slice(2)
      .split('/')
      .reduce<unknown>((at, key) => (at as Json)[key.replaceAll('~1', '/').replaceAll('~0', '~')], document) as Json;
  }
  return node;
}

function validator(schema: Json): ValidateFunction {
  const { ajv, validators } = contract();
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(forAjv(schema) as Json);
    validators.set(schema, validate);
  }
  return validate;
}

/** A route by id, or the route serving a concrete request (`path` as sent, e.g. `/companies/acme/resources/scenarios`). */
export type Operation = string | { method: string; path: string; api: ApiName };

function operationOf(which: Operation): { id: string; operation: Json } {
  let route = typeof which === 'string' ? ROUTES.find((candidate) => candidate.id === which) : undefined;
  if (typeof which !== 'string') {
    const found = matchRoute(ROUTES, which.api, which.method.toUpperCase(), which.path);
    route = found !== undefined && 'route' in found ? found.route : undefined;
  }
  if (route === undefined) throw new Error(`No route for ${JSON.stringify(which)}.`);
  const { document } = contract();
  const operation = ((document.paths as Json)[route.path] as Json | undefined)?.[route.method.toLowerCase()] as Json | undefined;
  if (operation === undefined) throw new Error(`The OpenAPI document has no operation for route ${route.id}.`);
  return { id: route.id, operation };
}

/** A header value as its schema's type: `Retry-After: 5` is the integer 5. */
function headerValue(value: string, schema: Json): unknown {
  return (schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
}

function isJsonMediaType(mediaType: string): boolean {
  return /^application\/([a-z.+-]*\+)?json$/i.test(mediaType);
}

function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`)
    .join('; ');
}

/**
 * Asserts (vitest `expect`) that a response is one the OpenAPI document describes for the operation, and returns its
 * parsed JSON body (undefined for a body that is not JSON). A fetch Response is read through a clone, so the caller
 * may still read it.
 * @param which the route id (`'ScenarioGet'`), or the method, concrete path and address of the request.
 * @param response a fetch Response, or the `{ status, headers, body }` of the e2e harness's `call`.
 */
export async function expectDocumented(which: Operation, response: Response | JsonResult): Promise<unknown> {
  const { id, operation } = operationOf(which);
  const { document } = contract();
  const responses = operation.responses as Json;
  const declared = responses[String(response.status)] as Json | undefined;
  expect(
    declared,
    `${id} answered ${response.status}, which the OpenAPI document does not list (${Object.keys(responses).join(', ')})`,
  ).toBeDefined();
  const documented = resolve(document, declared as Json);

  for (const [name, raw] of Object.entries((documented.headers ?? {}) as Json)) {
    const header = resolve(document, raw as Json);
    const value = response.headers.get(name);
    if (value === null) {
      expect(header.required !== true, `${id} ${response.status}: the required header ${name} is missing`).toBe(true);
      continue;
    }
    const validate = validator(header.schema as Json);
    expect(
      validate(headerValue(value, header.schema as Json)),
      `${id} ${response.status}: header ${name}: ${value}: ${describeErrors(validate)}`,
    ).toBe(true);
  }

  const content = documented.content as Record<string, Json> | undefined;
  const contentType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (content === undefined) {
    expect(contentType, `${id} ${response.status}: the document describes no body`).toBeUndefined();
    return undefined;
  }
  expect(Object.keys(content), `${id} ${response.status}: content type ${contentType ?? '(none)'}`).toContain(contentType);
  const mediaType = contentType as string;
  if (!isJsonMediaType(mediaType)) return undefined;
  const body = response instanceof Response ? await response.clone().json() : response.body;
  const validate = validator((content[mediaType] as Json).schema as Json);
  expect(
    validate(body),
    `${id} ${response.status}: the body does not match the document: ${describeErrors(validate)}\n${JSON.stringify(body).slice(0, 2000)}`,
  ).toBe(true);
  return body;
}
