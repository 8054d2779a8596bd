import { Busboy } from '@fastify/busboy';
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { FilePart } from '../contract/protocol.js';
import { BadRequestError } from '../core/shared/errors.js';

/** A parsed form: each part by name; a name given several times maps to an array, in order of appearance. */
export type MultipartForm = Record<string, string | string[] | FilePart | FilePart[]>;

/** What a form may hold; parts beyond `files` or `fields` are dropped. */
export interface MultipartLimits {
  /** Bytes kept per file part; a longer part is marked `truncated`. */
  fileBytes: number;
  /** Most file parts read. */
  files: number;
  /** Most non-file fields read. */
  fields: number;
}

function malformed(reason: string): BadRequestError {
  return new BadRequestError(`The request must be multipart/form-data with one file part named 'payload' (${reason}).`, [
    { path: 'payload', message: 'expected a multipart/form-data body with a file part named payload' },
  ]);
}

function add<T>(form: Record<string, T | T[]>, name: string, value: T): void {
  const current = form[name];
  if (current === undefined) form[name] = value;
  else form[name] = Array.isArray(current) ? [...current, value] : [current, value];
}

/**
 * Parses the multipart/form-data body of an API Gateway v2 event (base64 or text) with busboy. Every stream busboy
 * creates has an `error` listener: a part cut short (`--x\r\n...\r\n\r\nPK` without its closing boundary) is a 400,
 * never an unhandled `error` event.
 * @throws BadRequestError (400, `errors` naming `payload`) when the content type is not multipart/form-data with a
 *   boundary or the body is not well-formed multipart.
 */
export function parseMultipartForm(event: APIGatewayProxyEventV2, limits: MultipartLimits): Promise<MultipartForm> {
  const contentType = event.headers?.['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType)) return Promise.reject(malformed(`got content type '${contentType || 'none'}'`));
  let parser: ReturnType<typeof Busboy>;
  try {
    parser = Busboy({
      headers: { 'content-type': contentType },
      limits: { fileSize: limits.fileBytes, files: limits.files, fields: limits.fields },
    });
  } catch (error) {
    return Promise.reject(malformed((error as Error).message));
  }
  return new Promise<MultipartForm>((resolve, reject) => {
    const form: MultipartForm = {};
    const fail = (error: unknown) => reject(malformed(error instanceof Error ? error.message : String(error)));
    parser.on('file', (name, stream, filename, encoding, mimetype) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', fail);
      stream.on('end', () =>
        add(form as Record<string, FilePart>, name, {
          filename,
          mimetype,
          encoding,
          content: Buffer.concat(chunks),
          truncated: stream.truncated,
        }),
      );
    });
    parser.on('field', (name, value) => add(form as Record<string, string>, name, value));
    parser.on('error', fail);
    parser.on('finish', () => resolve(form));
    parser.end(Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8'));
  });
}

/**
 * middy middleware: replaces `event.body` with the parsed MultipartForm (see parseMultipartForm). Register it after
 * authentication and authorization, so that a caller without the right never gets a body parsed.
 */
export function multipartFormBody(limits: MultipartLimits): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    before: async (request) => {
      (request.event as unknown as { body: MultipartForm }).body = await parseMultipartForm(request.event, limits);
    },
  };
}
