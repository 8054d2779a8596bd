#!/usr/bin/env node
// `dss` (npx dss --help): runs the TypeScript CLI through tsx, as `npm start` runs the local runtime.
import { register } from 'tsx/esm/api';

register();
const { runDss } = await import('../cli/main.ts');
process.exitCode = await runDss(process.argv);
