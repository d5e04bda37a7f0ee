/**
 * RFC 7541's tables: the static table (Appendix A) and the Huffman code
 * (Appendix B) with its decoder, and the error of a malformed header block.
 */

/** A malformed header block: a connection error (COMPRESSION_ERROR) in HTTP/2 terms. */
export class HpackError extends Error {
  override name = "HpackError";
}

/** RFC 7541 Appendix A. */
export const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
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
export const STATIC_NAME_INDEX = new Map<string, number>();
/** Static index of each entry with a value, by "name: value" (":status: 200" is 8). */
export const STATIC_FIELD_INDEX = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], i) => {
  if (!STATIC_NAME_INDEX.has(name)) STATIC_NAME_INDEX.set(name, i + 1);
  if (value !== "") STATIC_FIELD_INDEX.set(`${name}: ${value}`, i + 1);
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
/** Longer strings go to TextDecoder, whose fixed cost is then small. */
const ASCII_FAST_MAX = 128;

/**
 * UTF-8 bytes as a string. Header strings are short and ASCII: decoded
 * here, they cost no call into the runtime (TextDecoder was a fifth of the
 * gRPC client's CPU at 64 streams).
 */
export function decodeText(bytes: Uint8Array): string {
  if (bytes.length > ASCII_FAST_MAX) return textDecoder.decode(bytes);
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] >= 0x80) return textDecoder.decode(bytes);
  }
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/** Fields of a HUFFMAN_STEPS entry. */
const STEP_NODE = 0x3ff;
const STEP_SYMBOL_SHIFT = 10;

/**
 * The decoder as a state machine over 4-bit steps (as nghttp2 decodes):
 * for each tree node and the next 4 bits, the node reached and the symbol
 * completed on the way plus one (0 for none; codes are 5 bits or longer, so
 * at most one per step). A bit at a time, decoding was a fifth of a gRPC
 * client's CPU against a server that Huffman-codes.
 */
function buildSteps(tree: HuffmanTree): { steps: Int32Array; accepting: Uint8Array } {
  const { left, right, symbol } = tree;
  const steps = new Int32Array(left.length * 16);
  for (let from = 0; from < left.length; from++) {
    if (symbol[from] >= 0 || (from !== 0 && left[from] === 0)) continue;
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = from;
      let step = 0;
      for (let bit = 3; bit >= 0; bit--) {
        node = (nibble >> bit) & 1 ? right[node] : left[node];
        const s = symbol[node];
        if (s < 0) continue;
        step |= (s + 1) << STEP_SYMBOL_SHIFT;
        node = 0;
      }
      steps[from * 16 + nibble] = step | node;
    }
  }
  // Valid ends: a whole number of symbols, or padding of at most 7 one bits (EOS's first bits).
  const accepting = new Uint8Array(left.length);
  accepting[0] = 1;
  for (let node = 0, depth = 1; depth <= 7; depth++) {
    node = right[node];
    accepting[node] = 1;
  }
  return { steps, accepting };
}

const { steps: HUFFMAN_STEPS, accepting: HUFFMAN_ACCEPTING } = buildSteps(TREE);

/** Decoded bytes, reused: decoding is synchronous and the text is copied out of them. */
let huffmanScratch = new Uint8Array(256);

/** Decodes a Huffman-coded string (RFC 7541 section 5.2). */
export function huffmanDecode(bytes: Uint8Array): string {
  const steps = HUFFMAN_STEPS;
  // Codes are 5 bits or longer.
  const most = Math.ceil((bytes.length * 8) / 5);
  if (huffmanScratch.length < most) huffmanScratch = new Uint8Array(most);
  const out = huffmanScratch;
  let length = 0;
  let node = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    let step = steps[node * 16 + (byte >> 4)];
    let symbol = step >> STEP_SYMBOL_SHIFT;
    if (symbol !== 0) {
      if (symbol > EOS) throw new HpackError("Huffman-coded header field contains EOS");
      out[length++] = symbol - 1;
    }
    step = steps[(step & STEP_NODE) * 16 + (byte & 15)];
    symbol = step >> STEP_SYMBOL_SHIFT;
    if (symbol !== 0) {
      if (symbol > EOS) throw new HpackError("Huffman-coded header field contains EOS");
      out[length++] = symbol - 1;
    }
    node = step & STEP_NODE;
  }
  if (HUFFMAN_ACCEPTING[node] === 0) {
    throw new HpackError("Invalid Huffman padding in a header field");
  }
  return decodeText(out.subarray(0, length));
}
