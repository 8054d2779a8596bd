/**
 * Scenario archives on the user's disk: a folder zipped in memory for `dss upload` (dotfiles left out, links leading
 * out of the folder refused) and a skeleton unzipped for `dss skeleton` (entries that would land outside the folder
 * refused before anything is written).
 */
import { lstat, mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import JSZip from 'jszip';
import { formatBytes, UsageError } from './output.js';

/**
 * Most bytes of file contents `dss upload FOLDER` zips in memory (1 GiB): a larger scenario is zipped with another
 * tool and its .zip uploaded, which is streamed from disk.
 */
export const MAX_FOLDER_BYTES = 1024 ** 3;

/** A folder zipped in memory. */
export interface ZippedFolder {
  /** The ZIP archive. */
  bytes: Uint8Array;
  /** Its file entries, `/`-separated and relative to the folder, sorted. */
  files: string[];
}

/**
 * Zips the files of `folder` (DEFLATE), named relative to it with `/` separators, sorted by name. Entries whose name
 * starts with `.` (`.DS_Store`, `.git/`) are left out, at any depth. A symbolic link is followed when it leads to a
 * file or folder inside `folder`, and refused otherwise.
 * @throws UsageError when `folder` is not a folder, holds no file, a link leads outside it (or nowhere), an entry is
 * neither a file nor a folder, or the contents exceed MAX_FOLDER_BYTES
 */
export async function zipFolder(folder: string): Promise<ZippedFolder> {
  const info = await stat(folder).catch(() => undefined);
  if (info === undefined) throw new UsageError(`Cannot read ${folder}: no such file or folder.`);
  if (!info.isDirectory()) throw new UsageError(`${folder} is not a folder.`);
  const root = await realpath(folder);
  const zip = new JSZip();
  const files: string[] = [];
  let total = 0;
  // Real paths of the folders walked: a link back to a parent would otherwise loop.
  const walked = new Set<string>([root]);

  const walk = async (directory: string, prefix: string): Promise<void> => {
    const entries = (await readdir(directory, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(directory, entry.name);
      const name = `${prefix}${entry.name}`;
      let target = path;
      if (entry.isSymbolicLink()) {
        const real = await realpath(path).catch(() => undefined);
        if (real === undefined) throw new UsageError(`${join(folder, name)} is a symbolic link to nothing.`);
        if (!isInside(root, real)) {
          throw new UsageError(`${join(folder, name)} is a symbolic link to ${real}, outside ${folder}: refusing to upload it.`);
        }
        target = real;
      }
      const kind = await lstat(target);
      if (kind.isDirectory()) {
        const real = await realpath(target);
        if (walked.has(real)) continue;
        walked.add(real);
        await walk(target, `${name}/`);
      } else if (kind.isFile()) {
        total += kind.size;
        if (total > MAX_FOLDER_BYTES) {
          throw new UsageError(
            `${folder} holds more than ${formatBytes(MAX_FOLDER_BYTES)}: zip it with another tool and upload the .zip file.`,
          );
        }
        zip.file(name, await readFile(target), { date: kind.mtime, createFolders: false });
        files.push(name);
      } else {
        throw new UsageError(`${join(folder, name)} is neither a file nor a folder.`);
      }
    }
  };
  await walk(root, '');
  if (files.length === 0) throw new UsageError(`${folder} holds no file to upload.`);
  const bytes = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 6 } });
  return { bytes, files };
}

/** Whether `path` is `root` or lies under it (both absolute, resolved). */
function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (!rest.startsWith(`..${sep}`) && rest !== '..' && !isAbsolute(rest));
}

/**
 * The relative path an archive entry name stands for, or why it is refused: an empty, absolute (`/x`, `C:x`) or
 * backslashed name, or one with a `..` segment, could write outside the target folder.
 * @returns the name's `/`-separated segments, or a reason
 */
export function entrySegments(name: string): { segments: string[] } | { refused: string } {
  if (name === '' || name === '/') return { refused: 'an empty name' };
  if (name.includes('\\')) return { refused: 'a backslash' };
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return { refused: 'an absolute path' };
  if (name.includes('\0')) return { refused: 'a NUL character' };
  const segments = name.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return { refused: "a '..' segment" };
  if (segments.length === 0) return { refused: 'an empty name' };
  return { segments };
}

/** Options of unzipInto. */
export interface UnzipOptions {
  /** Write into a folder that already holds files (files of the same name are replaced). */
  force?: boolean;
}

/**
 * Writes the entries of a ZIP archive under `folder`, creating it. Every entry is checked first, so a refused archive
 * writes nothing: names that are absolute, backslashed or hold `..` (their original names: JSZip itself rewrites them)
 * and symbolic links are refused.
 * @returns the files written, `/`-separated and relative to `folder`, in archive order (folders are created, not listed)
 * @throws UsageError when `folder` holds files (without `force`) or is a file, the data is not a ZIP, or an entry is
 * refused
 */
export async function unzipInto(bytes: Uint8Array, folder: string, options: UnzipOptions = {}): Promise<string[]> {
  const existing = await stat(folder).catch(() => undefined);
  if (existing !== undefined) {
    if (!existing.isDirectory()) throw new UsageError(`${folder} exists and is not a folder.`);
    if (options.force !== true && (await readdir(folder)).length > 0) {
      throw new UsageError(`${folder} is not empty: choose another folder, or pass --force to write into it.`);
    }
  }
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes, { createFolders: false });
  } catch (error) {
    throw new UsageError(`The archive cannot be read as a ZIP: ${(error as Error).message}`);
  }
  const target = resolve(folder);
  const planned: { name: string; path: string; entry: JSZip.JSZipObject }[] = [];
  // Files first: a refused name is then reported as stored, not as the parent folder entry JSZip made up for it.
  for (const entry of Object.values(zip.files).sort((a, b) => Number(a.dir) - Number(b.dir))) {
    // JSZip resolves `../` away in `name`; the name as stored is in `unsafeOriginalName` (files only).
    const original = (entry as { unsafeOriginalName?: string }).unsafeOriginalName ?? entry.name;
    const checked = entrySegments(original);
    if ('refused' in checked) throw new UsageError(`The archive's entry '${original}' has ${checked.refused}: nothing was written.`);
    const permissions = typeof entry.unixPermissions === 'number' ? entry.unixPermissions : 0;
    if ((permissions & 0o170000) === 0o120000) {
      throw new UsageError(`The archive's entry '${original}' is a symbolic link: nothing was written.`);
    }
    const path = join(target, ...checked.segments);
    if (!isInside(target, path)) throw new UsageError(`The archive's entry '${original}' lands outside ${folder}: nothing was written.`);
    planned.push({ name: checked.segments.join('/'), path, entry });
  }
  await mkdir(target, { recursive: true });
  const written: string[] = [];
  for (const { name, path, entry } of planned) {
    if (entry.dir) {
      await mkdir(path, { recursive: true });
      continue;
    }
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, await entry.async('uint8array'));
    written.push(name);
  }
  return written;
}
