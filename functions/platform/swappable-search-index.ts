/** The embedded index that is rebuilt while it serves; it moved to the embedded adapters (this path stays for importers). */
export { type SnapshotCapableIndex, SwappableSearchIndex } from '../adapters/embedded/swappable-search-index.js';
