#!/usr/bin/env node
// `dss` (npx dss --help): runs the TypeScript CLI through tsx, as `npm start` runs the local runtime.
import { register } from 'tsx/esm/api';

register();
const { endQuietlyOnClosedStdout } = await import('../cli/output.ts');
endQuietlyOnClosedStdout();
const { runDss } = await import('../cli/main.ts');
process.exitCode = await runDss(process.argv);
