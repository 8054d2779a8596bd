/**
 * The one Lambda function construct of the service: every function (HTTP routes and the stream consumer) is a
 * ServiceFunction, so the runtime, architecture, tracing, logging and bundling are decided once, here.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

/** Repository root: `entry` paths (lib/routes.ts) are relative to it, and it is the bundler's project root. */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The newest Node.js Lambda runtime aws-cdk-lib 2.276 knows (NODEJS_24_X exists; there is no newer one). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/** esbuild target matching LAMBDA_RUNTIME. */
const ESBUILD_TARGET = 'node24';

/**
 * API Gateway HTTP APIs stop waiting for an integration after 30 s; 29 s lets the function time out (and log it)
 * before the gateway answers 503 on its own.
 */
export const HTTP_FUNCTION_TIMEOUT = Duration.seconds(29);

/**
 * Defines `require` in the ESM bundle: CommonJS dependencies bundled into ESM (busboy, jszip's helpers…) call
 * `require('node:…')`, which esbuild leaves as a runtime `require` that ESM does not have.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __serviceCreateRequire } from 'node:module'; const require = __serviceCreateRequire(import.meta.url);";

/**
 * The AWS SDK v3 is NOT bundled: the Node.js 24 runtime ships it (as CDK assumes by default for Node 18+), and
 * bundling it pushed the upload function's `index.mjs` to 1.18 MB, over the 1 MiB budget the infra tests enforce
 * (measured with esbuild 0.28, minified; zod alone is ~455 KB of every bundle that validates input). The price:
 * the SDK version is the runtime's, not the lockfile's. The calls we make (GetItem, Query, BatchGet/Write,
 * TransactWrite, Put/Get/DeleteObject, presigned URLs) are long-stable, and `@smithy/*` is excluded with it so
 * the bundle never mixes our Smithy core with the runtime's clients.
 */
const RUNTIME_PROVIDED_MODULES = ['@aws-sdk/*', '@smithy/*'];

/** Service name in every structured log line (Powertools Logger). */
export const POWERTOOLS_SERVICE_NAME = 'device-scenario-service';

/** Read (`R`), read-write (`RW`) or write-only (`W`: put items / put objects) access to a table or bucket. */
export type Access = 'R' | 'RW' | 'W';

export interface ServiceFunctionProps {
  /** Handler module, relative to the repository root (an `entry` of lib/routes.ts); it exports `handler`. */
  entry: string;
  description?: string;
  /** @default HTTP_FUNCTION_TIMEOUT (29 s) */
  timeout?: Duration;
  /** @default 1024 MB */
  memorySize?: number;
  /** Powertools log level. @default 'INFO' */
  logLevel?: string;
  /** Extra environment variables (merged over the defaults). */
  environment?: Record<string, string>;
}

/**
 * NodejsFunction with the service's defaults: ARM_64, Node.js 24, 1024 MB, 29 s, X-Ray active tracing, a log group
 * kept one month, minified ESM bundles with source maps, always bundled by the locally installed esbuild (never
 * Docker). `bindTable`/`bindBucket` grant access and set the variable the function reads the name from.
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    // The log group must exist before the function (NodejsFunction takes it as a prop), so it is a sibling.
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH });
    super(scope, id, {
      entry: join(REPO_ROOT, props.entry),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? HTTP_FUNCTION_TIMEOUT,
      tracing: Tracing.ACTIVE,
      logGroup,
      ...(props.description === undefined ? {} : { description: props.description }),
      environment: {
        POWERTOOLS_SERVICE_NAME,
        POWERTOOLS_LOG_LEVEL: props.logLevel ?? 'INFO',
        // Maps stack traces in logs back to the TypeScript sources (the bundle is minified).
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        // File and line mapping only: keeps the source map (and the deployment package) small.
        sourcesContent: false,
        target: ESBUILD_TARGET,
        externalModules: RUNTIME_PROVIDED_MODULES,
        // Warnings and errors only: no per-file size listing on every synth.
        logLevel: LogLevel.WARNING,
      },
    });
  }

  /** Grants `access` to the table's items (and indexes) and sets `envVar` to its name. */
  bindTable(table: ITable, access: Access, envVar: string): this {
    if (access === 'RW') table.grantReadWriteData(this);
    else if (access === 'W') table.grantWriteData(this);
    else table.grantReadData(this);
    this.addEnvironment(envVar, table.tableName);
    return this;
  }

  /**
   * Grants `access` to the bucket's objects matching `keyPattern` (default: all) and sets `envVar` to its name.
   * `W` is `s3:PutObject` only (e.g. to presign uploads).
   */
  bindBucket(bucket: IBucket, access: Access, envVar: string, keyPattern = '*'): this {
    if (access === 'RW') bucket.grantReadWrite(this, keyPattern);
    else if (access === 'W') bucket.grantPut(this, keyPattern);
    else bucket.grantRead(this, keyPattern);
    this.addEnvironment(envVar, bucket.bucketName);
    return this;
  }
}
