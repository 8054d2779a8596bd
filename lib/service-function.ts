/**
 * The one Lambda function construct of the service: every function (HTTP routes and the stream consumer) is a
 * ServiceFunction, so the runtime, architecture, tracing, logging and bundling are decided once, here.
 */

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type ICommandHooks, LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { ENV, type EnvName, SERVICE_NAME } from '../functions/contract/environment.js';
import type { ObjectAction, TableAccess } from '../functions/contract/route.js';
import { FUNCTION_BUNDLING } from './bundling.js';
import { acknowledge, wildcardResourceFinding } from './nag.js';

/** Repository root: `entry` paths (functions/contract/routes.ts) are relative to it, and it is the bundler's project root. */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The newest Node.js Lambda runtime aws-cdk-lib 2.276 knows (NODEJS_24_X exists; there is no newer one). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/**
 * API Gateway HTTP APIs stop waiting for an integration after 30 s; 29 s lets the function time out (and log it)
 * before the gateway answers 503 on its own.
 */
export const HTTP_FUNCTION_TIMEOUT = Duration.seconds(29);

/** Service name in every structured log line, trace and metric (Powertools Logger, Tracer, Metrics). */
export const POWERTOOLS_SERVICE_NAME = SERVICE_NAME;

/** Variables of a function, by name: only names functions/contract/environment.ts declares. */
export type FunctionEnvironment = Partial<Record<EnvName, string>>;

/** CloudWatch namespace of the service's metrics (Powertools Metrics, written as EMF to each function's log group). */
export const POWERTOOLS_METRICS_NAMESPACE = 'DeviceScenarioService';

/** Read (`R`), read-write (`RW`) or write-only (`W`: put items) access to a table, as route definitions declare it. */
export type Access = TableAccess;

/**
 * DynamoDB actions of a read grant: CDK's `grantReadData` without the stream actions (streams are granted by the
 * event source). Explicit lists, instead of CDK's grants, so that index access names each index of TABLES rather
 * than `<table>/index/*`.
 */
export const DYNAMODB_READ_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:GetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
] as const;

/** DynamoDB actions of a write grant (CDK's `grantWriteData`). */
export const DYNAMODB_WRITE_ACTIONS = [
  'dynamodb:BatchWriteItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:DescribeTable',
] as const;

/**
 * DynamoDB actions of an `Item` grant: single items named by their key, nothing that lists or reads in bulk (Query,
 * Scan, BatchGetItem, BatchWriteItem) and no DescribeTable.
 */
export const DYNAMODB_ITEM_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] as const;

/** What a function may do with archive objects: read (Get/Head), write (Put, server-side copy target), delete. */
export type { ObjectAction };

/**
 * The S3 action of each ObjectAction: the archive store calls Get/Head (GetObject), Put and server-side Copy
 * (PutObject on the target, GetObject on the source) and Delete; no ACL, tagging, version or multipart action is
 * needed (CDK's `grantReadWrite` would add `s3:GetObject*`, `s3:DeleteObject*`, `s3:Abort*`…). Without
 * `s3:DeleteObjectVersion`, a delete in the versioned archive bucket only hides the object.
 */
export const S3_OBJECT_ACTIONS: Readonly<Record<ObjectAction, string>> = {
  get: 's3:GetObject',
  put: 's3:PutObject',
  delete: 's3:DeleteObject',
};

export interface ServiceFunctionProps {
  /** Handler module, relative to the repository root (an `entry` of functions/contract/routes.ts); it exports `handler`. */
  entry: string;
  description?: string;
  /** @default HTTP_FUNCTION_TIMEOUT (29 s) */
  timeout?: Duration;
  /** @default 1024 MB */
  memorySize?: number;
  /** Powertools log level. @default 'INFO' */
  logLevel?: string;
  /** Extra environment variables (merged over the defaults). */
  environment?: FunctionEnvironment;
  /** Retention of the function's log group. @default one month */
  logRetention?: RetentionDays;
  /**
   * Execution role to use instead of a new one (the search clients' roles live in the stateful stack, so that the
   * OpenSearch domain's access policy can name them). It must be mutable: grants add policies to it.
   * @default a new role with only the log-group, X-Ray and granted permissions
   */
  role?: IRole;
  /**
   * Files of installed packages the handler reads at run time (module specifiers, e.g.
   * `redoc/bundles/redoc.standalone.js`; FunctionAccess `packageFiles`): copied into the bundle under `node_modules/`
   * at the same path. @default none
   */
  packageFiles?: readonly string[];
  /**
   * Builds the operator console (console/build.ts) into the bundle under `console/`, where
   * functions/platform/console.ts reads it on Lambda (FunctionAccess `consoleAssets`). @default false
   */
  consoleAssets?: boolean;
}

/**
 * NodejsFunction with the service's defaults: ARM_64, Node.js 24, 1024 MB, 29 s, X-Ray active tracing, Powertools'
 * service name and metrics namespace, its own log group (one month unless `logRetention` says otherwise), minified
 * ESM bundles with source maps, always bundled by the locally installed esbuild (never Docker). Its execution role
 * carries no AWS managed policy: writing to its own log group and X-Ray, then only what `bindTable`/`bindBucket`
 * (which also set the variable the function reads the name from) and explicit statements grant.
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    // The log group and the role must exist before the function (NodejsFunction takes them as props): siblings.
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: props.logRetention ?? RetentionDays.ONE_MONTH });
    const role =
      props.role ??
      new Role(scope, `${id}Role`, {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `Execution role of ${props.entry}`,
      });
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
      role,
      ...(props.description === undefined ? {} : { description: props.description }),
      environment: {
        [ENV.powertoolsServiceName]: POWERTOOLS_SERVICE_NAME,
        [ENV.powertoolsMetricsNamespace]: POWERTOOLS_METRICS_NAMESPACE,
        [ENV.powertoolsLogLevel]: props.logLevel ?? 'INFO',
        // Maps stack traces in logs back to the TypeScript sources (the bundle is minified).
        [ENV.nodeOptions]: '--enable-source-maps',
        ...props.environment,
      } satisfies FunctionEnvironment,
      bundling: {
        forceDockerBundling: false,
        // The options `npm run build` bundles with too (lib/bundling.ts).
        format: OutputFormat.ESM,
        mainFields: [...FUNCTION_BUNDLING.mainFields],
        banner: FUNCTION_BUNDLING.banner,
        minify: FUNCTION_BUNDLING.minify,
        sourceMap: FUNCTION_BUNDLING.sourceMap,
        sourcesContent: FUNCTION_BUNDLING.sourcesContent,
        target: FUNCTION_BUNDLING.target,
        externalModules: [...FUNCTION_BUNDLING.externalModules],
        // Warnings and errors only: no per-file size listing on every synth.
        logLevel: LogLevel.WARNING,
        ...bundlingHooks(props),
      },
    });
    // What AWSLambdaBasicExecutionRole would grant on every log group, on this function's log group only.
    this.addToRolePolicy(
      new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
    );
    acknowledge(
      role,
      wildcardResourceFinding('*'),
      "Resource '*' in this role is only X-Ray's PutTraceSegments/PutTelemetryRecords (active tracing; X-Ray has no resource-level " +
        'permissions) and, for the search indexer, dynamodb:ListStreams (no resource-level permissions either); ' +
        'test/infra/stacks-functions-access.test.ts fails if any other action is granted on "*".',
    );
  }

  /**
   * Grants `access` to the table's items and sets `envVar` to its name. Reads also cover the indexes named in
   * `indexNames` (the table's GSIs in TABLES), each by its own ARN; an `Item` grant covers the table's items only.
   */
  bindTable(table: ITable, access: Access, envVar: EnvName, indexNames: readonly string[] = []): this {
    if (access === 'Item') {
      this.addToRolePolicy(new PolicyStatement({ actions: [...DYNAMODB_ITEM_ACTIONS], resources: [table.tableArn] }));
      this.addEnvironment(envVar, table.tableName);
      return this;
    }
    if (access !== 'W') {
      this.addToRolePolicy(
        new PolicyStatement({
          actions: [...DYNAMODB_READ_ACTIONS],
          resources: [table.tableArn, ...indexNames.map((name) => `${table.tableArn}/index/${name}`)],
        }),
      );
    }
    if (access !== 'R') this.addToRolePolicy(new PolicyStatement({ actions: [...DYNAMODB_WRITE_ACTIONS], resources: [table.tableArn] }));
    this.addEnvironment(envVar, table.tableName);
    return this;
  }

  /**
   * Grants, for each key pattern of `grants` (`uploads/*`), its actions (S3_OBJECT_ACTIONS) on the bucket's objects
   * matching it, and sets `envVar` to the bucket's name. Reads also get `s3:ListBucket` on the bucket: without it S3
   * answers 403 instead of 404 for a missing key, and the archive store tells them apart.
   */
  bindBucket(bucket: IBucket, grants: Readonly<Record<string, readonly ObjectAction[]>>, envVar: EnvName): this {
    for (const [keyPattern, actions] of Object.entries(grants)) {
      this.addToRolePolicy(
        new PolicyStatement({ actions: actions.map((action) => S3_OBJECT_ACTIONS[action]), resources: [bucket.arnForObjects(keyPattern)] }),
      );
    }
    if (Object.values(grants).some((actions) => actions.includes('get'))) {
      this.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
    }
    this.addEnvironment(envVar, bucket.bucketName);
    return this;
  }
}

/**
 * Bundling hooks that copy package files into the bundle after esbuild ran: `<input>/node_modules/<file>` to
 * `<output>/node_modules/<file>` (POSIX shell commands; bundling is always local). A specifier must be a plain path
 * inside a package, which the commands rely on.
 * @throws Error for a specifier with anything but letters, digits, `@`, `.`, `_`, `-` and `/`, or with `..`.
 */
export function packageFileCopies(files: readonly string[]): ICommandHooks {
  for (const file of files) {
    if (!/^[\w@./-]+$/.test(file) || file.split('/').includes('..'))
      throw new Error(`Package file '${file}' must be a plain path inside node_modules.`);
  }
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) =>
      files.flatMap((file) => [
        `mkdir -p "${join(outputDir, 'node_modules', dirname(file))}"`,
        `cp "${join(inputDir, 'node_modules', file)}" "${join(outputDir, 'node_modules', file)}"`,
      ]),
  };
}

/**
 * Bundling hooks that build the operator console into `<output>/console` after esbuild ran, with the repository's
 * own build script (the same build `npm start` and `npm run build` make), so that the bundle holds the page's
 * content-hashed files and their manifest.
 */
export function consoleBuild(): ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir, outputDir) => [`node --import tsx "${CONSOLE_BUILD_SCRIPT}" "${join(outputDir, 'console')}"`],
  };
}

/** console/build.ts, absolute: run by its path, so the hook works whatever folder CDK runs it in. */
const CONSOLE_BUILD_SCRIPT = join(REPO_ROOT, 'console', 'build.ts');

/** The hooks a function's bundling needs: package file copies, then the console's build; none when it needs neither. */
function bundlingHooks(props: Pick<ServiceFunctionProps, 'packageFiles' | 'consoleAssets'>): { commandHooks?: ICommandHooks } {
  const hooks = [
    ...(props.packageFiles === undefined || props.packageFiles.length === 0 ? [] : [packageFileCopies(props.packageFiles)]),
    ...(props.consoleAssets === true ? [consoleBuild()] : []),
  ];
  if (hooks.length === 0) return {};
  return {
    commandHooks: {
      beforeBundling: (inputDir, outputDir) => hooks.flatMap((hook) => hook.beforeBundling(inputDir, outputDir)),
      beforeInstall: (inputDir, outputDir) => hooks.flatMap((hook) => hook.beforeInstall(inputDir, outputDir)),
      afterBundling: (inputDir, outputDir) => hooks.flatMap((hook) => hook.afterBundling(inputDir, outputDir)),
    },
  };
}

/** The construct id of an entry's function: `functions/handlers/deployments-list.ts` → `DeploymentsListFunction`. */
export function functionIdOf(entry: string): string {
  const base = entry.replace(/^.*\//, '').replace(/\.ts$/, '');
  return `${base
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}Function`;
}
