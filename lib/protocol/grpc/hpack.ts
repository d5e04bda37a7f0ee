/**
 * HPACK (RFC 7541) header compression for the HTTP/2 layer.
 *
 * The encoder never indexes: every field is a literal without indexing, so an
 * encoded block does not depend on connection state and can be built once and
 * sent on any stream of any connection (the hot path copies it). The decoder
 * is complete (dynamic table, size updates, Huffman) because peers index and
 * Huffman-code freely.
 */
import {
  decodeText,
  HpackError,
  huffmanDecode,
  STATIC_FIELD_INDEX,
  STATIC_NAME_INDEX,
  STATIC_TABLE,
} from "./_hpack_tables.ts";
import { equalBytes } from "../../input/codec.ts";

export { HpackError, huffmanCodes, huffmanDecode } from "./_hpack_tables.ts";

const textEncoder = new TextEncoder();

/** Appends bytes to a growable buffer. */
class ByteWriter {
  bytes = new Uint8Array(256);
  length = 0;

  push(byte: number): void {
    if (this.length === this.bytes.length) this.#grow(1);
    this.bytes[this.length++] = byte;
  }

  append(data: Uint8Array): void {
    if (this.length + data.length > this.bytes.length) this.#grow(data.length);
    this.bytes.set(data, this.length);
    this.length += data.length;
  }

  #grow(extra: number): void {
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.length + extra));
    next.set(this.bytes.subarray(0, this.length));
    this.bytes = next;
  }
}

/** RFC 7541 section 5.1: `prefixBits` low bits of the first byte, then 7-bit groups. */
function writeInteger(out: ByteWriter, value: number, prefix: { bits: number; flags: number }) {
  const max = (1 << prefix.bits) - 1;
  if (value < max) {
    out.push(prefix.flags | value);
    return;
  }
  out.push(prefix.flags | max);
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) | 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

function writeString(out: ByteWriter, text: string): void {
  const bytes = textEncoder.encode(text);
  writeInteger(out, bytes.length, { bits: 7, flags: 0 });
  out.append(bytes);
}

/**
 * Encodes header fields (lowercase names): a field the static table holds
 * whole (":status: 200", ":method: POST") as its index, which the peer
 * decodes without reading a string; others as literals without indexing,
 * the name indexed when the static table has it. Values are not
 * Huffman-coded: the blocks are encoded once, so size matters less than
 * simplicity.
 */
export function encodeHeaders(fields: ReadonlyArray<readonly [string, string]>): Uint8Array {
  const out = new ByteWriter();
  for (const [name, value] of fields) {
    const whole = STATIC_FIELD_INDEX.get(`${name}: ${value}`);
    if (whole !== undefined) {
      writeInteger(out, whole, { bits: 7, flags: 0x80 });
      continue;
    }
    const index = STATIC_NAME_INDEX.get(name);
    if (index !== undefined) writeInteger(out, index, { bits: 4, flags: 0 });
    else {
      out.push(0);
      writeString(out, name);
    }
    writeString(out, value);
  }
  return out.bytes.slice(0, out.length);
}

/** Blocks of at most this many bytes are remembered, this many at a time. */
const KNOWN_MAX_BYTES = 256;
const KNOWN_BLOCKS = 4;

/** Name, value and octet size (RFC 7541 section 4.1: name and value octets plus 32). */
type Entry = readonly [string, string, number];

/** A decoded block: its bytes, fields and insertions, and whether it read the dynamic table then. */
interface KnownBlock {
  block: Uint8Array;
  fields: readonly string[];
  inserts: Entry[];
  readsTable: boolean;
  /** The table's generation before the block: what it read depends on it. */
  generation: number;
}

/** One decoding context per connection direction (the dynamic table is connection state). */
export class HpackDecoder {
  /**
   * The dynamic table as a ring, the newest entry at #head: servers that
   * index a changing field (nginx's date) insert into it on every response,
   * which an array's unshift made linear in the table's length.
   */
  readonly #ring: (Entry | undefined)[];
  #head = 0;
  #count = 0;
  #size = 0;
  #maxSize: number;
  /** The limit we announced (SETTINGS_HEADER_TABLE_SIZE); size updates may not exceed it. */
  readonly #limit: number;
  #pos = 0;
  #block: Uint8Array = new Uint8Array(0);
  /** Octets of the string #string() returned last. */
  #octets = 0;
  /** Bumped by every change to the dynamic table. */
  #generation = 0;
  // What the block being decoded did with the dynamic table.
  #readsTable = false;
  #resized = false;
  #inserted: Entry[] = [];
  /**
   * Recent blocks and what they decoded to. A server sends the same few
   * blocks with every response (its response headers, its OK trailers): the
   * same bytes decode the same, with the same insertions, unless they read
   * the dynamic table and it changed meanwhile.
   */
  readonly #known: KnownBlock[] = [];
  #nextKnown = 0;

  constructor(maxTableSize = 4096) {
    this.#maxSize = maxTableSize;
    this.#limit = maxTableSize;
    // Every entry takes at least 32 octets of the table's size.
    this.#ring = new Array(Math.floor(maxTableSize / 32) + 1);
  }

  /**
   * Decodes a complete header block as name, value, name, value... A block
   * seen recently returns the fields it decoded to then, the same array: it
   * must not be changed. Throws HpackError for a malformed block, which
   * leaves the connection unusable.
   */
  decode(block: Uint8Array): readonly string[] {
    for (const known of this.#known) {
      if (known.readsTable && known.generation !== this.#generation) continue;
      if (!equalBytes(known.block, block)) continue;
      for (const entry of known.inserts) this.#insert(entry);
      return known.fields;
    }
    const generation = this.#generation;
    this.#block = block;
    this.#pos = 0;
    this.#readsTable = false;
    this.#resized = false;
    this.#inserted = [];
    const fields: string[] = [];
    this.#decodeFields(fields);
    if (!this.#resized && block.length <= KNOWN_MAX_BYTES) {
      this.#known[this.#nextKnown] = {
        block: block.slice(),
        fields,
        inserts: this.#inserted,
        readsTable: this.#readsTable,
        generation,
      };
      this.#nextKnown = (this.#nextKnown + 1) % KNOWN_BLOCKS;
    }
    return fields;
  }

  #decodeFields(out: string[]): void {
    const block = this.#block;
    let fieldSeen = false;
    while (this.#pos < block.length) {
      const first = block[this.#pos];
      if (first & 0x80) {
        const entry = this.#entry(this.#integer(7));
        out.push(entry[0], entry[1]);
        fieldSeen = true;
      } else if (first & 0x40) {
        const index = this.#integer(6);
        let name: string;
        let nameOctets: number;
        if (index === 0) {
          name = this.#string();
          nameOctets = this.#octets;
        } else {
          const entry = this.#entry(index);
          name = entry[0];
          nameOctets = entry.length === 3 ? entry[2] - 32 - octets(entry[1]) : entry[0].length;
        }
        const value = this.#string();
        out.push(name, value);
        const entry: Entry = [name, value, nameOctets + this.#octets + 32];
        this.#insert(entry);
        this.#inserted.push(entry);
        fieldSeen = true;
      } else if (first & 0x20) {
        if (fieldSeen) throw new HpackError("Dynamic table size update after a header field");
        const size = this.#integer(5);
        if (size > this.#limit) {
          throw new HpackError(`Dynamic table size update to ${size} exceeds ${this.#limit}`);
        }
        this.#maxSize = size;
        this.#evict(0);
        this.#generation++;
        this.#resized = true;
      } else {
        // Literal without indexing (0000) or never indexed (0001).
        const index = this.#integer(4);
        const name = index === 0 ? this.#string() : this.#entry(index)[0];
        out.push(name, this.#string());
        fieldSeen = true;
      }
    }
  }

  #integer(prefixBits: number): number {
    const block = this.#block;
    const max = (1 << prefixBits) - 1;
    let value = block[this.#pos++] & max;
    if (value < max) return value;
    let shift = 1;
    for (;;) {
      if (this.#pos >= block.length) throw new HpackError("Truncated integer in a header block");
      const byte = block[this.#pos++];
      value += (byte & 127) * shift;
      if ((byte & 128) === 0) return value;
      shift *= 128;
      if (shift > 2 ** 28) throw new HpackError("Integer overflow in a header block");
    }
  }

  #string(): string {
    if (this.#pos >= this.#block.length) throw new HpackError("Truncated header block");
    const huffman = (this.#block[this.#pos] & 0x80) !== 0;
    const length = this.#integer(7);
    const end = this.#pos + length;
    if (end > this.#block.length) throw new HpackError("Truncated string in a header block");
    const bytes = this.#block.subarray(this.#pos, end);
    this.#pos = end;
    if (!huffman) {
      this.#octets = length;
      return decodeText(bytes);
    }
    const text = huffmanDecode(bytes);
    this.#octets = octets(text);
    return text;
  }

  #entry(index: number): Entry | readonly [string, string] {
    if (index === 0) throw new HpackError("Header field index 0");
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1];
    this.#readsTable = true;
    const position = index - STATIC_TABLE.length - 1;
    if (position >= this.#count) throw new HpackError(`Header field index ${index} out of range`);
    return this.#ring[(this.#head + position) % this.#ring.length]!;
  }

  #insert(entry: Entry): void {
    this.#generation++;
    const size = entry[2];
    this.#evict(size);
    if (size > this.#maxSize) return;
    this.#head = (this.#head + this.#ring.length - 1) % this.#ring.length;
    this.#ring[this.#head] = entry;
    this.#count++;
    this.#size += size;
  }

  /** Evicts the oldest entries until `room` more octets fit. */
  #evict(room: number): void {
    while (this.#count > 0 && this.#size + room > this.#maxSize) {
      const oldest = (this.#head + --this.#count) % this.#ring.length;
      this.#size -= this.#ring[oldest]![2];
      this.#ring[oldest] = undefined;
    }
  }
}

/** UTF-8 length without encoding (header text is almost always ASCII). */
function octets(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}
