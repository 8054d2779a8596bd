/**
 * The embedded search engine's full-text index (`global`): a term dictionary (term-dictionary.ts: exact, prefix and
 * MiniSearch's fuzzy term matching) and, per term, its postings packed in typed arrays, scored with MiniSearch's BM25+
 * (MiniSearch's own `search` costs ~2 µs per matching document, too slow for broad terms at 100,000 documents).
 *
 * Memory, 100,000 bench devices (~320,000 terms, ~4.3 million postings): 346 MiB when each term had a radix tree node
 * and a Map of postings per field; a posting is now 4 bytes and a term that occurs once none beyond its number.
 */
import { type SearchDocument, valuesAtPath } from '../../core/search/documents.js';
import { globalQueryTerms, textWords } from '../../core/search/query.js';
import { FULL_TEXT_FIELDS } from '../../core/search/registry.js';
import { PostingLists } from './posting-lists.js';
import { hasSlot } from './slot-bitsets.js';
import { ByteReader, ByteWriter } from './snapshot-bytes.js';
import { type FuzzyRule, TermDictionary } from './term-dictionary.js';

/**
 * Version of the full text's snapshot form (FullTextIndex.snapshot): raise it whenever the tokenizer, the fuzzy rule or
 * the encoding changes, so that a snapshot of another version is rebuilt from its documents instead of being trusted.
 * Version 2 added TOKENIZER_PROBE's tokens.
 */
export const FULL_TEXT_SNAPSHOT_VERSION = 2;
/**
 * Text the snapshot stores the tokens of, as the tokenizer split it when the snapshot was written; a load whose
 * tokenizer splits it otherwise refuses the full text (rebuilt from the documents then), so that a tokenizer change
 * made without raising FULL_TEXT_SNAPSHOT_VERSION cannot leave terms that queries no longer find. It holds what the
 * tokenizer decides on: case (special lower-case forms too), accents, inner punctuation (serials, versions, paths),
 * underscores, symbols, digits, tabs, no-break spaces, line breaks, other scripts. Only what the probe holds is
 * compared: a change that splits nothing of it differently goes unnoticed.
 */
const TOKENIZER_PROBE =
  "Café ÉCOLE ACM-000123 v1.2.3 lobby/kiosk_02 d'Arc 12,5% São-Paulo Ελλάδα 東京 e-mail@x.io a\tb x\u00a0y line\nbreak\r\nend C++ a+b $5 x=y|z ~w İstanbul ß";
/** Bytes of a snapshot chunk: the caller lets the event loop turn between two. */
const SNAPSHOT_CHUNK_BYTES = 256 * 1024;

/** MiniSearch's defaults: BM25+ parameters, weights of prefix and fuzzy matches, largest edit distance. */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 };
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
const MAX_FUZZY = 6;

/**
 * Index-time tokenizer: MiniSearch's default split (whitespace and punctuation) and lower case, plus, for a word
 * with inner punctuation such as a serial `ACM-000123` or a version `v1.2`, the whole word with its parts joined
 * by `-`.
 */
function tokenizeText(text: string): string[] {
  const tokens: string[] = [];
  for (const parts of textWords(text)) {
    tokens.push(...parts);
    if (parts.length > 1) tokens.push(parts.join('-'));
  }
  return tokens;
}

/** TOKENIZER_PROBE's tokens, one a line, as this runtime's tokenizer splits it: what a snapshot stores and a load compares. */
const PROBE_TOKENS = tokenizeText(TOKENIZER_PROBE).join('\n');

/** No fuzziness for terms with digits (serials, versions: a near miss is another device); 0.2 from 4 letters. */
const FUZZY: FuzzyRule = { minLength: 4, fraction: 0.2, maxDistance: MAX_FUZZY };

/** The edit distance allowed for `term` (0: exact and prefix matches only). */
function allowedDistance(term: string): number {
  if (term.length < FUZZY.minLength || /\p{N}/u.test(term)) return 0;
  return Math.min(FUZZY.maxDistance, Math.round(term.length * FUZZY.fraction));
}

/**
 * Full-text index over FULL_TEXT_FIELDS (multi-values joined with spaces), documents identified by slot.
 * Matching follows MiniSearch (`combineWith: 'AND'`, `prefix: true`, `fuzzy` as FUZZY): a document matches when
 * each query term matches one of its terms exactly, as a prefix or within the edit distance. Scores are MiniSearch's
 * BM25+ per field, weighted 1 for exact, PREFIX_WEIGHT and FUZZY_WEIGHT (decreasing with distance) otherwise.
 */
export class FullTextIndex {
  private terms = new TermDictionary(FUZZY);
  private readonly postings = new PostingLists();
  /** Per field: token count of the field, by slot. */
  private lengths: Uint32Array[];
  /** Per field: total tokens and number of documents having the field, for the average field length. */
  private readonly totalLength: number[] = FULL_TEXT_FIELDS.map(() => 0);
  private readonly documentsWithField: number[] = FULL_TEXT_FIELDS.map(() => 0);
  private documentCount = 0;
  private changeCount = 0;

  /** An empty index with room for `capacity` slots (grow makes more). */
  constructor(capacity: number) {
    this.lengths = FULL_TEXT_FIELDS.map(() => new Uint32Array(capacity));
  }

  /** How many times a document's terms were changed (added, removed or updated) since the index was made. */
  get changes(): number {
    return this.changeCount;
  }

  /** Makes room for `capacity` slots. */
  grow(capacity: number): void {
    this.lengths = this.lengths.map((lengths) => {
      const larger = new Uint32Array(capacity);
      larger.set(lengths);
      return larger;
    });
  }

  /**
   * Indexes `document` under `slot` (the slot must not be indexed).
   * @throws RangeError when `slot` exceeds MAX_POSTING_SLOT (over four million documents).
   */
  add(slot: number, document: SearchDocument): void {
    this.documentCount += 1;
    this.change(slot, [], fieldTermsOf(document));
  }

  /** Unindexes `document` from `slot` (the document given to `add`). */
  remove(slot: number, document: SearchDocument): void {
    this.documentCount -= 1;
    this.change(slot, fieldTermsOf(document), []);
  }

  /**
   * Indexes `after` under `slot` in place of `before` (the document given to `add`), touching only the postings that
   * differ: a device's report changes a field or two, and a term such as the company's name has a posting in most
   * documents, which each removal and insertion moves.
   */
  update(slot: number, before: SearchDocument, after: SearchDocument): void {
    this.change(slot, fieldTermsOf(before), fieldTermsOf(after));
  }

  /** Replaces the field terms `before` of `slot` (none when new) by `after` (none when removed). */
  private change(slot: number, before: (FieldTerms | undefined)[], after: (FieldTerms | undefined)[]): void {
    this.changeCount += 1;
    FULL_TEXT_FIELDS.forEach((_, field) => {
      const old = before[field];
      const next = after[field];
      if (old === undefined && next === undefined) return;
      const tokens = next?.tokens ?? 0;
      (this.lengths[field] as Uint32Array)[slot] = tokens;
      this.totalLength[field] = (this.totalLength[field] as number) - (old?.tokens ?? 0) + tokens;
      this.documentsWithField[field] =
        (this.documentsWithField[field] as number) - (old === undefined ? 0 : 1) + (next === undefined ? 0 : 1);
      for (const [term, count] of old?.counts ?? []) {
        if (next?.counts.get(term) === count) continue;
        const id = this.terms.idOf(term);
        if (id !== undefined && this.postings.remove(id, slot, field) === 0) this.terms.delete(term);
      }
      for (const [term, count] of next?.counts ?? []) {
        if (old?.counts.get(term) === count) continue;
        this.postings.add(this.terms.idOf(term) ?? this.terms.add(term), slot, field, count);
      }
    });
  }

  /**
   * The index in its snapshot form, in chunks of about SNAPSHOT_CHUNK_BYTES, each slot replaced by `positionOf[slot]`
   * (−1 for a free slot; positions increase with slots and number `positions` in all; every indexed slot has one):
   * the version, PROBE_TOKENS and the field names; the document count; per field its total tokens and documents
   * having it, then its token count at each position; then the terms in code unit order, each with its postings
   * (PostingLists.encode).
   * The index must not change until the last chunk is taken.
   * @throws RangeError when an indexed slot has no position.
   */
  *snapshot(positionOf: Int32Array, positions: number): Generator<Uint8Array> {
    const out = new ByteWriter();
    out.varint(FULL_TEXT_SNAPSHOT_VERSION);
    out.text(PROBE_TOKENS);
    out.varint(FULL_TEXT_FIELDS.length);
    for (const field of FULL_TEXT_FIELDS) out.text(field);
    out.varint(positions);
    out.varint(this.documentCount);
    for (const [field, lengths] of this.lengths.entries()) {
      out.varint(this.totalLength[field] as number);
      out.varint(this.documentsWithField[field] as number);
      positionOf.forEach((position, slot) => {
        if (position >= 0) out.varint(lengths[slot] as number);
      });
      if (out.size >= SNAPSHOT_CHUNK_BYTES) yield out.take();
    }
    out.varint(this.terms.size);
    for (const [term, id] of this.terms.entries()) {
      out.text(term);
      this.postings.encode(id, positionOf, out);
      if (out.size >= SNAPSHOT_CHUNK_BYTES) yield out.take();
    }
    yield out.take();
  }

  /**
   * The index a `snapshot` of `positions` documents describes, each document's slot its position, with room for
   * `capacity` slots (at least `positions`).
   * @throws RangeError when `bytes` are of another version, tokenizer or fields, cut short, or malformed.
   */
  static fromSnapshot(bytes: Uint8Array, positions: number, capacity: number): FullTextIndex {
    const input = new ByteReader(bytes);
    const version = input.varint();
    if (version !== FULL_TEXT_SNAPSHOT_VERSION) throw new RangeError(`The full text is of version ${version}.`);
    if (input.text() !== PROBE_TOKENS) throw new RangeError('The full text was split by another tokenizer.');
    const fields = Array.from({ length: input.varint() }, () => input.text());
    if (fields.join('\n') !== FULL_TEXT_FIELDS.join('\n')) throw new RangeError('The full text has other fields.');
    if (input.varint() !== positions) throw new RangeError(`The full text is not of ${positions} documents.`);
    const index = new FullTextIndex(Math.max(capacity, positions));
    index.documentCount = input.varint();
    for (const [field, lengths] of index.lengths.entries()) {
      index.totalLength[field] = input.varint();
      index.documentsWithField[field] = input.varint();
      for (let position = 0; position < positions; position += 1) lengths[position] = input.varint();
    }
    const terms = Array.from({ length: input.varint() }, (_, id) => {
      const term = input.text();
      index.postings.decode(id, input, positions, FULL_TEXT_FIELDS.length);
      return term;
    });
    if (!input.done) throw new RangeError('The full text has bytes after its last term.');
    index.terms = TermDictionary.ofSorted(terms, FUZZY);
    return index;
  }

  /**
   * Slots in `within` matching every term of `text`, with their scores (indexed by slot).
   * No terms (blank or punctuation only) matches nothing.
   */
  search(text: string, within: Uint32Array): { slots: number[]; scores: Float64Array } {
    const queryTerms = globalQueryTerms(text);
    const scores = new Float64Array(within.length * 32);
    /** How many query terms each slot has matched so far. */
    const matched = new Uint16Array(within.length * 32);
    const candidates: number[] = [];
    const documentsByField = new Uint32Array(FULL_TEXT_FIELDS.length);
    queryTerms.forEach((queryTerm, index) => {
      for (const [term, weight] of this.expand(queryTerm)) {
        const id = this.terms.idOf(term) as number;
        const idfs = [...this.postings.fieldCounts(id, documentsByField)].map((documents) =>
          Math.log(1 + (this.documentCount - documents + 0.5) / (documents + 0.5)),
        );
        this.postings.forEach(id, (slot, field, count) => {
          const already = matched[slot] as number;
          if (already < index || (index === 0 && !hasSlot(within, slot))) return;
          if (already === index) {
            matched[slot] = index + 1;
            if (index === 0) candidates.push(slot);
          }
          const averageLength = (this.totalLength[field] as number) / Math.max(1, this.documentsWithField[field] as number);
          const norm = 1 - BM25.b + (BM25.b * ((this.lengths[field] as Uint32Array)[slot] as number)) / averageLength;
          scores[slot] =
            (scores[slot] as number) + weight * (idfs[field] as number) * (BM25.d + (count * (BM25.k + 1)) / (count + BM25.k * norm));
        });
      }
    });
    return { slots: candidates.filter((slot) => matched[slot] === queryTerms.length), scores };
  }

  /** Indexed terms that `queryTerm` matches, with their weights: exact 1, prefix and fuzzy as in MiniSearch. */
  private expand(queryTerm: string): Map<string, number> {
    const weights = new Map<string, number>();
    if (this.terms.idOf(queryTerm) !== undefined) weights.set(queryTerm, 1);
    for (const term of this.terms.withPrefix(queryTerm)) {
      const distance = term.length - queryTerm.length;
      if (distance > 0) weights.set(term, (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance));
    }
    const maxDistance = allowedDistance(queryTerm);
    if (maxDistance > 0) {
      for (const [term, distance] of this.terms.fuzzy(queryTerm, maxDistance)) {
        if (distance > 0 && !weights.has(term)) weights.set(term, (FUZZY_WEIGHT * term.length) / (term.length + distance));
      }
    }
    return weights;
  }
}

/** One full-text field of a document: its token count and term → occurrences. */
interface FieldTerms {
  tokens: number;
  counts: Map<string, number>;
}

/** Per FULL_TEXT_FIELDS position, the field's terms, or undefined when the document does not have the field. */
function fieldTermsOf(document: SearchDocument): (FieldTerms | undefined)[] {
  return FULL_TEXT_FIELDS.map((path) => {
    const values = valuesAtPath(document, path);
    if (values.length === 0) return undefined;
    const tokens = tokenizeText(values.join(' '));
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    return { tokens: tokens.length, counts };
  });
}
