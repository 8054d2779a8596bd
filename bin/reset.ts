/** `npm run reset`: deletes the local data folder (DATA_DIR, default .data). Stop `npm start` first. */
import { rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV, readEnvironment } from '../functions/contract/environment.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dataDirectory = resolve(root, readEnvironment('localData', process.env)[ENV.dataDir]);
await rm(dataDirectory, { recursive: true, force: true });
process.stdout.write(`Removed ${dataDirectory}; the next npm start seeds the demo data again.\n`);
