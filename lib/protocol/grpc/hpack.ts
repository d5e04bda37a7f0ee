/**
 * HPACK (RFC 7541) header compression for the HTTP/2 layer.
 *
 * The encoder never indexes: every field is a literal without indexing, so an
 * encoded block does not depend on connection state and can be built once and
 * sent on any stream of any connection (the hot path copies it). The decoder
 * is complete (dynamic table, size updates, Huffman) because peers index and
 * Huffman-code freely.
 */

/** A malformed header block: a connection error (COMPRESSION_ERROR) in HTTP/2 terms. */
export class HpackError extends Error {
  override name = "HpackError";
}

/** RFC 7541 Appendix A. */
const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  [":authority", ""],
  [":method", "GET"],
  [":method", "POST"],
  [":path", "/"],
  [":path", "/index.html"],
  [":scheme", "http"],
  [":scheme", "https"],
  [":status", "200"],
  [":status", "204"],
  [":status", "206"],
  [":status", "304"],
  [":status", "400"],
  [":status", "404"],
  [":status", "500"],
  ["accept-charset", ""],
  ["accept-encoding", "gzip, deflate"],
  ["accept-language", ""],
  ["accept-ranges", ""],
  ["accept", ""],
  ["access-control-allow-origin", ""],
  ["age", ""],
  ["allow", ""],
  ["authorization", ""],
  ["cache-control", ""],
  ["content-disposition", ""],
  ["content-encoding", ""],
  ["content-language", ""],
  ["content-length", ""],
  ["content-location", ""],
  ["content-range", ""],
  ["content-type", ""],
  ["cookie", ""],
  ["date", ""],
  ["etag", ""],
  ["expect", ""],
  ["expires", ""],
  ["from", ""],
  ["host", ""],
  ["if-match", ""],
  ["if-modified-since", ""],
  ["if-none-match", ""],
  ["if-range", ""],
  ["if-unmodified-since", ""],
  ["last-modified", ""],
  ["link", ""],
  ["location", ""],
  ["max-forwards", ""],
  ["proxy-authenticate", ""],
  ["proxy-authorization", ""],
  ["range", ""],
  ["referer", ""],
  ["refresh", ""],
  ["retry-after", ""],
  ["server", ""],
  ["set-cookie", ""],
  ["strict-transport-security", ""],
  ["transfer-encoding", ""],
  ["user-agent", ""],
  ["vary", ""],
  ["via", ""],
  ["www-authenticate", ""],
];

/** Static index of the first entry with each name, for literal fields with an indexed name. */
const STATIC_NAME_INDEX = new Map<string, number>();
STATIC_TABLE.forEach(([name], i) => {
  if (!STATIC_NAME_INDEX.has(name)) STATIC_NAME_INDEX.set(name, i + 1);
});

/**
 * Code lengths of the Huffman code (RFC 7541 Appendix B) for symbols 0..255
 * and EOS (256). The code is canonical, so the codes follow from the lengths.
 */
const HUFFMAN_LENGTHS = [
  13,
  23,
  28,
  28,
  28,
  28,
  28,
  28,
  28,
  24,
  30,
  28,
  28,
  30,
  28,
  28,
  28,
  28,
  28,
  28,
  28,
  28,
  30,
  28,
  28,
  28,
  28,
  28,
  28,
  28,
  28,
  28,
  6,
  10,
  10,
  12,
  13,
  6,
  8,
  11,
  10,
  10,
  8,
  11,
  8,
  6,
  6,
  6,
  5,
  5,
  5,
  6,
  6,
  6,
  6,
  6,
  6,
  6,
  7,
  8,
  15,
  6,
  12,
  10,
  13,
  6,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  7,
  8,
  7,
  8,
  13,
  19,
  13,
  14,
  6,
  15,
  5,
  6,
  5,
  6,
  5,
  6,
  6,
  6,
  5,
  7,
  7,
  6,
  6,
  6,
  5,
  6,
  7,
  6,
  5,
  5,
  6,
  7,
  7,
  7,
  7,
  7,
  15,
  11,
  14,
  13,
  28,
  20,
  22,
  20,
  20,
  22,
  22,
  22,
  23,
  22,
  23,
  23,
  23,
  23,
  23,
  24,
  23,
  24,
  24,
  22,
  23,
  24,
  23,
  23,
  23,
  23,
  21,
  22,
  23,
  22,
  23,
  23,
  24,
  22,
  21,
  20,
  22,
  22,
  23,
  23,
  21,
  23,
  22,
  22,
  24,
  21,
  22,
  23,
  23,
  21,
  21,
  22,
  21,
  23,
  22,
  23,
  23,
  20,
  22,
  22,
  22,
  23,
  22,
  22,
  23,
  26,
  26,
  20,
  19,
  22,
  23,
  22,
  25,
  26,
  26,
  26,
  27,
  27,
  26,
  24,
  25,
  19,
  21,
  26,
  27,
  27,
  26,
  27,
  24,
  21,
  21,
  26,
  26,
  28,
  27,
  27,
  27,
  20,
  24,
  20,
  21,
  22,
  21,
  21,
  23,
  22,
  22,
  25,
  25,
  24,
  24,
  26,
  23,
  26,
  27,
  26,
  26,
  27,
  27,
  27,
  27,
  27,
  28,
  27,
  27,
  27,
  27,
  27,
  26,
  30,
];

const EOS = 256;

/**
 * The decoding tree as flat arrays: node n has children left[n] / right[n]
 * (0 = none); symbol[n] is the symbol at a leaf, -1 inside the tree.
 */
interface HuffmanTree {
  left: Int32Array;
  right: Int32Array;
  symbol: Int16Array;
}

/** Canonical codes: sorted by (length, symbol), each code is the previous plus one, shifted. */
export function huffmanCodes(): Array<{ code: number; length: number }> {
  const order = HUFFMAN_LENGTHS.map((length, symbol) => ({ length, symbol }))
    .sort((a, b) => a.length - b.length || a.symbol - b.symbol);
  const codes = new Array<{ code: number; length: number }>(HUFFMAN_LENGTHS.length);
  let code = 0;
  let length = order[0].length;
  for (let i = 0; i < order.length; i++) {
    const entry = order[i];
    if (i > 0) code = (code + 1) * 2 ** (entry.length - length);
    length = entry.length;
    codes[entry.symbol] = { code, length };
  }
  return codes;
}

function buildTree(): HuffmanTree {
  const size = 2 * HUFFMAN_LENGTHS.length;
  const tree: HuffmanTree = {
    left: new Int32Array(size),
    right: new Int32Array(size),
    symbol: new Int16Array(size).fill(-1),
  };
  let nodes = 1;
  huffmanCodes().forEach(({ code, length }, symbol) => {
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const branch = Math.floor(code / 2 ** bit) % 2 === 1 ? tree.right : tree.left;
      if (branch[node] === 0) branch[node] = nodes++;
      node = branch[node];
    }
    tree.symbol[node] = symbol;
  });
  return tree;
}

const TREE = buildTree();
const textDecoder = new TextDecoder();
const textEncoder = new TextEncoder();

/** Decodes a Huffman-coded string (RFC 7541 section 5.2). */
export function huffmanDecode(bytes: Uint8Array): string {
  const { left, right, symbol } = TREE;
  const out = new Uint8Array(Math.ceil((bytes.length * 8) / 5));
  let length = 0;
  let node = 0;
  /** Bits consumed since the last complete symbol, all ones so far: valid padding. */
  let pending = 0;
  let allOnes = true;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    for (let bit = 7; bit >= 0; bit--) {
      const one = (byte >> bit) & 1;
      node = one === 1 ? right[node] : left[node];
      if (node === 0) throw new HpackError("Invalid Huffman code in a header field");
      pending++;
      allOnes &&= one === 1;
      const s = symbol[node];
      if (s >= 0) {
        if (s === EOS) throw new HpackError("Huffman-coded header field contains EOS");
        out[length++] = s;
        node = 0;
        pending = 0;
        allOnes = true;
      }
    }
  }
  if (pending > 7 || !allOnes) throw new HpackError("Invalid Huffman padding in a header field");
  return textDecoder.decode(out.subarray(0, length));
}

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
 * Encodes header fields (lowercase names) as literals without indexing, the
 * name indexed when the static table has it. Values are not Huffman-coded:
 * the blocks are encoded once, so size matters less than simplicity.
 */
export function encodeHeaders(fields: ReadonlyArray<readonly [string, string]>): Uint8Array {
  const out = new ByteWriter();
  for (const [name, value] of fields) {
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

/** Name, value and octet size (RFC 7541 section 4.1: name and value octets plus 32). */
type Entry = readonly [string, string, number];

/** One decoding context per connection direction (the dynamic table is connection state). */
export class HpackDecoder {
  /** Newest first. */
  readonly #table: Entry[] = [];
  #size = 0;
  #maxSize: number;
  /** The limit we announced (SETTINGS_HEADER_TABLE_SIZE); size updates may not exceed it. */
  readonly #limit: number;
  #pos = 0;
  #block: Uint8Array = new Uint8Array(0);
  /** Octets of the string #string() returned last. */
  #octets = 0;

  constructor(maxTableSize = 4096) {
    this.#maxSize = maxTableSize;
    this.#limit = maxTableSize;
  }

  /**
   * Decodes a complete header block into `out` as name, value, name, value...
   * (cleared first). Throws HpackError for a malformed block, which leaves
   * the connection unusable.
   */
  decode(block: Uint8Array, out: string[]): void {
    out.length = 0;
    this.#block = block;
    this.#pos = 0;
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
        this.#insert([name, value, nameOctets + this.#octets + 32]);
        fieldSeen = true;
      } else if (first & 0x20) {
        if (fieldSeen) throw new HpackError("Dynamic table size update after a header field");
        const size = this.#integer(5);
        if (size > this.#limit) {
          throw new HpackError(`Dynamic table size update to ${size} exceeds ${this.#limit}`);
        }
        this.#maxSize = size;
        this.#evict(0);
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
      return textDecoder.decode(bytes);
    }
    const text = huffmanDecode(bytes);
    this.#octets = octets(text);
    return text;
  }

  #entry(index: number): Entry | readonly [string, string] {
    if (index === 0) throw new HpackError("Header field index 0");
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1];
    const entry = this.#table[index - STATIC_TABLE.length - 1];
    if (entry === undefined) throw new HpackError(`Header field index ${index} out of range`);
    return entry;
  }

  #insert(entry: Entry): void {
    const size = entry[2];
    this.#evict(size);
    if (size > this.#maxSize) return;
    this.#table.unshift(entry);
    this.#size += size;
  }

  /** Evicts the oldest entries until `room` more octets fit. */
  #evict(room: number): void {
    while (this.#table.length > 0 && this.#size + room > this.#maxSize) {
      this.#size -= this.#table.pop()![2];
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
