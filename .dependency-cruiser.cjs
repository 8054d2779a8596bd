/**
 * The architecture's dependency rules (docs/architecture.md, "Dependency rules"), checked by
 * `npm run lint:architecture` (part of `npm run lint`). Each rule says why it exists; a broken rule fails the lint, and with it CI.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-is-plain',
      comment:
        'The domain (functions/core) receives its ports as arguments: it imports no adapter, no platform (middy, HTTP), ' +
        'no handler, no local runtime, no CDK and no CLI module, so it runs and is tested anywhere.',
      severity: 'error',
      from: { path: '^functions/core/' },
      to: { path: '^(functions/(adapters|platform|handlers|local)|lib|cli|bin|client|simulator)/' },
    },
    {
      name: 'core-imports-no-aws',
      comment: 'The domain names no AWS SDK, Lambda, middy or OpenSearch package: those are adapters and platform.',
      severity: 'error',
      from: { path: '^functions/core/' },
      to: { path: '(^|/)node_modules/(@aws-sdk|@aws-lambda-powertools|@middy|@opensearch-project|aws-cdk-lib|aws-lambda)(/|$)' },
    },
    {
      name: 'adapters-below-platform',
      comment: 'Adapters implement ports; the composition root (platform) chooses them, never the other way round.',
      severity: 'error',
      from: { path: '^functions/adapters/' },
      to: { path: '^functions/(platform|handlers|local)/|^(lib|cli|bin)/' },
    },
    {
      name: 'contract-is-plain-data',
      comment:
        'Route and function definitions are plain data and zod: the CDK app, the local runtime, the handlers and the ' +
        'typed client import them, so they import no platform, adapter, handler, local or CDK module.',
      severity: 'error',
      from: { path: '^functions/contract/' },
      to: { path: '^functions/(platform|adapters|handlers|local)/|^(lib|cli|bin)/' },
    },
    {
      name: 'handlers-use-the-composition-root',
      comment:
        'Handlers are thin: they get their ports from the one composition root (functions/platform/composition), never build or import an adapter.',
      severity: 'error',
      from: { path: '^functions/handlers/' },
      to: { path: '^functions/(adapters|local)/|^(lib|cli|bin)/' },
    },
    {
      name: 'functions-never-import-infrastructure',
      comment: 'Nothing under functions/ imports the CDK app (lib/), the CLI or the scripts: they import the definitions, not the reverse.',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^(lib|cli|bin)/' },
    },
    {
      name: 'console-sees-only-the-client',
      comment:
        'The console is a client like the CLI: it knows the service only through the typed client (client/), never a second contract from functions/ or anything server-side.',
      severity: 'error',
      from: { path: '^console/src/' },
      to: { path: '^(functions|lib|cli|bin|simulator)/' },
    },
    {
      name: 'no-cycles',
      comment: 'An import cycle makes module initialisation order matter and areas inseparable: break it with a port or a smaller module.',
      severity: 'error',
      from: { path: '^(functions|lib|cli|client|simulator|console)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(cdk\\.out|\\.data|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      // '.tsx': the console's components are imported by their .js names like every module; without it those imports
      // stay unresolved, and neither the cycle rule nor the console's rule sees them.
      extensions: ['.ts', '.tsx', '.mjs', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
