/**
 * Benchmark archives: valid scenario archives of a target size made of incompressible (crypto-random) files,
 * written by streaming through yazl straight to disk (the archive is never held in memory) and cached between
 * runs under `os.tmpdir()/dss-bench`, keyed by size and layout version.
 *
 * Layout: `scenario.json` (referencing every asset and the thumbnail), `README.md`, `resources/thumbnails/thumb.png`
 * (a real 1×1 PNG), and `resources/assets/asset-NNNN.bin` files of 8 MiB (the last one smaller), compressed with
 * deflate (yazl's default level 6) like a user's zip tool would. Deflate cannot shrink random data, so each entry
 * ends up a little larger than its content (stored deflate blocks); the payload leaves a 0.1 % + 64 KiB margin so
 * the archive stays just under the nominal size (the 1 GiB archive must fit acme's 1 GiB quota in the presigned run).
 */
import { randomFill } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

/** Where generated archives (and the JSON results) live. */
export const BENCH_DIRECTORY = join(tmpdir(), 'dss-bench');

/** Bumped whenever the layout below changes, so that stale cached archives are not reused. */
const LAYOUT_VERSION = 2;
const MiB = 1024 ** 2;
const ASSET_BYTES = 8 * MiB;
const CHUNK_BYTES = 1 * MiB;

/** A benchmark size: label (as used by --only / BENCH_SIZES) and nominal bytes. */
export interface BenchSize {
  label: string;
  bytes: number;
}

export const ALL_SIZES: readonly BenchSize[] = [
  { label: '10MiB', bytes: 10 * MiB },
  { label: '100MiB', bytes: 100 * MiB },
  { label: '1GiB', bytes: 1024 * MiB },
];

/** A 1×1 transparent PNG. */
const THUMBNAIL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** A stream of `bytes` crypto-random bytes, produced 1 MiB at a time on demand. */
function randomStream(bytes: number): Readable {
  let remaining = bytes;
  return new Readable({
    highWaterMark: CHUNK_BYTES,
    read() {
      if (remaining === 0) {
        this.push(null);
        return;
      }
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, remaining));
      remaining -= chunk.length;
      randomFill(chunk, (error, filled) => {
        if (error) this.destroy(error);
        else this.push(filled);
      });
    },
  });
}

/**
 * Sizes of the asset files for a nominal archive size: the payload leaves room for deflate's overhead on random
 * data (stored blocks: about 0.035 %) and the headers, so that the archive is just under the nominal size.
 */
function assetSizes(nominalBytes: number): number[] {
  const payload = nominalBytes - Math.ceil(nominalBytes / 1000) - 64 * 1024;
  const sizes: number[] = [];
  for (let left = payload; left > 0; left -= ASSET_BYTES) sizes.push(Math.min(ASSET_BYTES, left));
  return sizes;
}

export interface GeneratedArchive {
  path: string;
  /** Actual archive bytes. */
  bytes: number;
  /** Files in the archive (excluding directory entries). */
  files: number;
  /** Whether it was generated in this run (false: reused from the cache). */
  generated: boolean;
  /** Generation time, ms (0 when cached). */
  generateMs: number;
}

/** Returns the cached archive for `size`, generating it first when missing. */
export async function ensureArchive(size: BenchSize): Promise<GeneratedArchive> {
  await mkdir(BENCH_DIRECTORY, { recursive: true });
  const path = join(BENCH_DIRECTORY, `scenario-${size.label}-v${LAYOUT_VERSION}.zip`);
  const assets = assetSizes(size.bytes);
  const files = assets.length + 3;
  const existing = await stat(path).catch(() => undefined);
  if (existing !== undefined) return { path, bytes: existing.size, files, generated: false, generateMs: 0 };

  const started = performance.now();
  const temporary = `${path}.${process.pid}.partial`;
  try {
    const zip = new yazl.ZipFile();
    const names = assets.map((_, index) => `resources/assets/asset-${String(index + 1).padStart(4, '0')}.bin`);
    const manifest = {
      id: `bench-${size.label.toLowerCase()}`,
      name: `Benchmark archive ${size.label}`,
      version: '1.0.0',
      description: `${assets.length} incompressible asset files of up to 8 MiB, deflate-compressed.`,
      thumbnails: ['resources/thumbnails/thumb.png'],
      assets: names,
    };
    const mtime = new Date('2025-01-01T00:00:00Z');
    zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2)), 'scenario.json', { compress: true, mtime });
    zip.addBuffer(
      Buffer.from(
        '# Benchmark scenario\n\n- scenario.json: the manifest\n- resources/thumbnails/: thumbnail\n- resources/assets/: random data\n',
      ),
      'README.md',
      { compress: true, mtime },
    );
    zip.addEmptyDirectory('resources/', { mtime });
    zip.addEmptyDirectory('resources/thumbnails/', { mtime });
    zip.addEmptyDirectory('resources/assets/', { mtime });
    zip.addBuffer(THUMBNAIL_PNG, 'resources/thumbnails/thumb.png', { compress: true, mtime });
    assets.forEach((bytes, index) => {
      zip.addReadStreamLazy(names[index] as string, { compress: true, mtime, size: bytes }, (callback) =>
        callback(null, randomStream(bytes)),
      );
    });
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(temporary));
    const written = (await stat(temporary)).size;
    if (written > size.bytes) throw new Error(`generated ${size.label} archive has ${written} bytes, more than the nominal ${size.bytes}`);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  const generateMs = performance.now() - started;
  return { path, bytes: (await stat(path)).size, files, generated: true, generateMs };
}
