/** Scenario packages: skeleton, manifest schema, upload form and answer, catalogue, storage usage, upload slots. */
import * as z from 'zod';
import { DOWNLOAD_URL_LIFETIME_SECONDS } from '../../core/scenarios/catalog.js';
import { ScenarioManifestSchema, SEMVER_PATTERN } from '../../core/scenarios/manifest.js';
import { UPLOAD_URL_LIFETIME_SECONDS } from '../../core/scenarios/model.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import type { FilePart } from '../protocol.js';
import { UploadProblem } from './problems.js';

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);
const sha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .describe('Hex SHA-256 of the archive.');

/** A ZIP archive as a response body (documentation only: binary bodies are not parsed). */
export const ZipArchive = z
  .string()
  .meta({ id: 'ZipArchive', format: 'binary', contentMediaType: 'application/zip', description: 'A ZIP archive.' });

/** The manifest inside every archive: the core's schema, which stays the validator. */
export const ScenarioManifest = ScenarioManifestSchema.meta({
  id: 'ScenarioManifest',
  description: 'Contents of scenario.json at the root of a scenario archive.',
});

/** The body of GET .../scenarios/schema.json: a JSON Schema document (the JSON Schema of ScenarioManifest). */
export const JsonSchemaDocument = z
  .object({ $schema: z.string().optional(), $id: z.string().optional() })
  .loose()
  .meta({ id: 'JsonSchemaDocument', description: 'A JSON Schema (draft 2020-12): the same as `#/components/schemas/ScenarioManifest`.' });

function isFilePart(value: unknown): value is FilePart {
  return typeof value === 'object' && value !== null && Buffer.isBuffer((value as FilePart).content);
}

/** The multipart form of a direct upload: exactly one file part `payload` (as the multipart parser gives it). */
export const ScenarioUploadForm = z
  .object({
    payload: z.custom<FilePart>(isFilePart, 'must be one file part holding the ZIP archive').meta({
      type: 'string',
      format: 'binary',
      contentMediaType: 'application/zip',
      description: 'The customized scenario archive (ZIP).',
    }),
  })
  .meta({
    id: 'ScenarioUploadForm',
    description: 'Multipart form with exactly one file part named `payload`: the customized ZIP archive.',
  });

export const StoredScenario = z
  .object({
    id: z.string().describe('Scenario identifier (`what.id`).'),
    version: z.string().describe('Scenario version (`what.subId`).'),
    name: z.string().describe('Display name from scenario.json.'),
    size: z.int().min(0).describe('Archive size, bytes.'),
    sha256,
    created: dateTime('Upload time.'),
  })
  .strict()
  .meta({ id: 'StoredScenario', description: 'The stored scenario version.' });

export const Scenario = z
  .object({
    id: z.string().regex(IDENTIFIER_PATTERN).describe('Scenario identifier (`id` of scenario.json, `what.id`).'),
    name: z.string().describe('Display name from the latest upload.'),
    description: z.string().nullable().describe('Description from the latest upload, or null.'),
    latestVersion: z.string().describe('Highest semantic version stored (SemVer precedence, not upload order).'),
    versions: z.array(z.string()).describe('Stored versions, in upload order.'),
    created: dateTime('First upload.'),
    updated: dateTime('Latest upload.'),
  })
  .strict()
  .meta({ id: 'Scenario', description: 'A scenario of the company and the versions stored.' });

export const ScenarioPage = z
  .object({
    items: z.array(Scenario).describe('Scenarios ordered by id.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'ScenarioPage' });

export const ScenarioVersion = z
  .object({
    version: z.string().regex(SEMVER_PATTERN).describe('Semantic version (`version` of scenario.json, `what.subId`).'),
    size: z.int().min(0).describe('Archive size, bytes.'),
    sha256,
    uploadedBy: z.string().describe('`sub` of the uploader.'),
    created: dateTime('Upload time.'),
    download: z
      .object({ url: z.url(), expiresAt: dateTime('When the URL stops working.') })
      .strict()
      .describe(
        `A presigned URL to GET the archive (\`{scenarioId}-{version}.zip\`) without a bearer token; valid ${DOWNLOAD_URL_LIFETIME_SECONDS / 60} minutes.`,
      ),
  })
  .strict()
  .meta({ id: 'ScenarioVersion', description: 'A stored, immutable scenario version.' });

export const ScenarioDetail = z
  .object({
    id: z.string().regex(IDENTIFIER_PATTERN).describe('Scenario identifier.'),
    name: z.string().describe('Display name from the latest upload.'),
    description: z.string().nullable().describe('Description from the latest upload, or null.'),
    latestVersion: z.string().describe('Highest semantic version stored (SemVer precedence, not upload order).'),
    created: dateTime('First upload.'),
    updated: dateTime('Latest upload.'),
    versions: z.array(ScenarioVersion).describe('Stored versions, in upload order.'),
  })
  .strict()
  .meta({ id: 'ScenarioDetail', description: 'A scenario and every stored version.' });

export const StorageUsage = z
  .object({
    quotaBytes: z.int().min(0).describe('Storage quota, bytes.'),
    usedBytes: z.int().min(0).describe("Bytes of stored archives (the sum of every stored version's size)."),
    availableBytes: z.int().min(0).describe('`quotaBytes - usedBytes` (never below 0).'),
  })
  .strict()
  .meta({ id: 'StorageUsage', description: "The company's storage account for scenario archives: the figures a 413 reports." });

/** The slot request: the route takes no body today; an empty object documents that nothing is expected. */
export const UploadSlotRequest = z.object({}).meta({
  id: 'UploadSlotRequest',
  description: 'No member is needed: the slot is granted for the company of the path. A body, if sent, is ignored.',
});

export const UploadSlotGrant = z
  .object({
    uploadId: z.string().describe('Upload identifier (ULID); read its outcome at the Location address.'),
    url: z.url().describe('Presigned S3 URL (s3rver locally).'),
    method: z.literal('PUT'),
    headers: z.record(z.string(), z.string()).describe('Headers the PUT must carry.'),
    expiresAt: dateTime(
      `When the URL stops working: an archive arriving later is rejected (\`expired\`). ${UPLOAD_URL_LIFETIME_SECONDS / 60} minutes after the request.`,
    ),
  })
  .strict()
  .meta({
    id: 'UploadSlotGrant',
    description: 'Where and how to PUT a large archive: send it with `method` to `url` with `headers`, before `expiresAt`.',
  });

export const UploadSlotStatus = z
  .object({
    uploadId: z.string().describe('Upload identifier.'),
    status: z.enum(['PENDING', 'STORED', 'REJECTED']),
    created: dateTime('When the slot was granted.'),
    expiresAt: dateTime('When the presigned URL expires.'),
    result: StoredScenario.optional(),
    problem: UploadProblem.optional(),
  })
  .strict()
  .meta({
    id: 'UploadSlotStatus',
    description:
      'PENDING until the archive has been PUT and validated; then STORED with the 201 body of a direct upload in `result`, or REJECTED with a problem in `problem`: the 409, 413 or 422 problem a direct upload would get, or 410 `Upload Not Completed` with `reason` `expired` (no archive arrived before `expiresAt`; one arriving later is deleted unread) or `interrupted` (the archive arrived but its validation never completed). An upload still unfinished a few minutes after its deadline is rejected this way and its object deleted; nothing is stored or charged.',
  });
