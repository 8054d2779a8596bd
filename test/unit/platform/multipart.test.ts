import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { FilePart } from '../../../functions/contract/protocol.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { parseMultipartForm } from '../../../functions/platform/multipart.js';

const LIMITS = { files: 2, fileBytes: 8, fields: 10 };

function event(body: string, contentType = 'multipart/form-data; boundary=x'): APIGatewayProxyEventV2 {
  return {
    headers: { 'content-type': contentType },
    body: Buffer.from(body, 'latin1').toString('base64'),
    isBase64Encoded: true,
  } as unknown as APIGatewayProxyEventV2;
}

const part = (name: string, content: string, filename?: string) =>
  `--x\r\nContent-Disposition: form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}\r\n\r\n${content}\r\n`;

describe('parseMultipartForm', () => {
  it('reads file parts and fields; a repeated name becomes an array; a file above the limit is marked truncated', async () => {
    const form = await parseMultipartForm(
      event(
        `${part('payload', 'PK\u0003\u0004', 'a.zip')}${part('note', 'hi')}${part('note', 'again')}${part('big', '0123456789', 'b.bin')}--x--\r\n`,
      ),
      LIMITS,
    );
    const payload = form.payload as FilePart;
    expect(payload).toMatchObject({ filename: 'a.zip', truncated: false });
    expect([...payload.content]).toEqual([0x50, 0x4b, 0x03, 0x04]);
    expect(form.note).toEqual(['hi', 'again']);
    expect(form.big).toMatchObject({ truncated: true });
    expect((form.big as FilePart).content.toString()).toBe('01234567');
  });

  it('refuses a part cut short with a 400 naming payload, and raises no unhandled error', async () => {
    const refused = parseMultipartForm(event('--x\r\nContent-Disposition: form-data; name="payload"; filename="a.zip"\r\n\r\nPK'), LIMITS);
    await expect(refused).rejects.toBeInstanceOf(BadRequestError);
    await expect(refused).rejects.toMatchObject({
      message: expect.stringMatching(/Unexpected end of multipart data/),
      violations: [{ path: 'payload' }],
    });
    // An unhandled `error` event would surface after the rejection; vitest fails the run on it.
    await new Promise((done) => setTimeout(done, 50));
  });

  it('refuses another content type, or multipart without a boundary, with a 400', async () => {
    await expect(parseMultipartForm(event('PK', 'application/zip'), LIMITS)).rejects.toMatchObject({
      kind: 'bad-request',
      message: expect.stringMatching(/application\/zip/),
    });
    await expect(parseMultipartForm(event('x', 'multipart/form-data; charset=utf-8'), LIMITS)).rejects.toMatchObject({
      kind: 'bad-request',
    });
  });
});
