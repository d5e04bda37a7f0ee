/**
 * Synthetic images and audio for multimodal chat requests, made in memory as
 * AIPerf makes them (--image-* and --audio-* options): PNG images of a
 * width and height drawn from normal distributions, and WAV audio of a
 * drawn length, each sent base64-encoded in an OpenAI chat content part
 * (`image_url` with a data URL; `input_audio` with its data and format).
 * PNG is encoded here; JPEG by the jpeg-js package, loaded only when asked for.
 */
import { concatBytes } from "./codec.ts";
import { type Rng, standardNormal } from "./generate.ts";

export interface ImageOptions {
  widthMean: number;
  widthStddev: number;
  heightMean: number;
  heightStddev: number;
  /** Images per request (--image-batch-size). */
  batchSize: number;
  /** --image-format. */
  format: "png" | "jpeg";
}

export interface AudioOptions {
  /** Seconds. */
  lengthMean: number;
  lengthStddev: number;
  /** Bits per sample, one drawn per clip (--audio-depths): 8, 16, 24 or 32. */
  depths: readonly number[];
  /** Samples per second in kHz, one drawn per clip (--audio-sample-rates). */
  sampleRatesKHz: readonly number[];
  channels: number;
  /** Clips per request (--audio-batch-size). */
  batchSize: number;
}

export interface MediaOptions {
  image?: ImageOptions;
  audio?: AudioOptions;
}

/** A normal draw (Box-Muller), rounded, at least `min`. */
function drawn(mean: number, stddev: number, rng: Rng, min: number): number {
  if (stddev === 0) return Math.max(min, Math.round(mean));
  const z = standardNormal(rng);
  return Math.max(min, Math.round(mean + z * stddev));
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A PNG chunk: length, type, data, CRC of type and data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  // The zlib format PNG's IDAT holds ("deflate" is zlib-wrapped); no Node layer to load.
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Pixels of 16 x 16 blocks of random colours (compressible, unlike noise),
 * `channels` bytes each (RGB, or RGBA with the alpha opaque), each row after
 * `rowPrefix` bytes (PNG's filter type, 0: none).
 */
function blockPixels(
  width: number,
  height: number,
  options: { rng: Rng; channels: 3 | 4; rowPrefix: number },
): Uint8Array {
  const { rng, channels, rowPrefix } = options;
  const blocksX = Math.ceil(width / 16);
  const colours = Array.from(
    { length: blocksX * Math.ceil(height / 16) },
    () => [rng() * 256, rng() * 256, rng() * 256, 255].slice(0, channels).map(Math.floor),
  );
  const stride = rowPrefix + width * channels;
  const raw = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const colour = colours[Math.floor(y / 16) * blocksX + Math.floor(x / 16)];
      raw.set(colour, y * stride + rowPrefix + x * channels);
    }
  }
  return raw;
}

/** An RGB PNG of 16 x 16 blocks of random colours. */
export async function pngImage(width: number, height: number, rng: Rng): Promise<Uint8Array> {
  const raw = blockPixels(width, height, { rng, channels: 3, rowPrefix: 1 });
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, deflate, no filter, no interlace
  return concatBytes([
    new Uint8Array(PNG_SIGNATURE),
    chunk("IHDR", header),
    chunk("IDAT", await deflate(raw)),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

/** A baseline JPEG (quality 90, AIPerf's PIL default being 75-95) of the same blocks. */
export async function jpegImage(width: number, height: number, rng: Rng): Promise<Uint8Array> {
  const data = blockPixels(width, height, { rng, channels: 4, rowPrefix: 0 });
  const { default: jpeg } = await import("jpeg-js");
  return new Uint8Array(jpeg.encode({ data, width, height }, 90).data);
}

/** A PCM WAV of a quiet random signal. */
export function wavAudio(
  options: { seconds: number; sampleRate: number; depth: number; channels: number },
  rng: Rng,
): Uint8Array {
  const { sampleRate, depth, channels } = options;
  const bytesPerSample = depth / 8;
  const frames = Math.max(1, Math.round(options.seconds * sampleRate));
  const dataBytes = frames * channels * bytesPerSample;
  const out = new Uint8Array(44 + dataBytes);
  const view = new DataView(out.buffer);
  const text = (at: number, s: string) => {
    for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
  };
  text(0, "RIFF");
  view.setUint32(4, 36 + dataBytes, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * bytesPerSample, true);
  view.setUint16(32, channels * bytesPerSample, true);
  view.setUint16(34, depth, true);
  text(36, "data");
  view.setUint32(40, dataBytes, true);
  // Samples at a tenth of full scale, little-endian, signed (unsigned for 8 bits, as WAV has it).
  const full = 2 ** (depth - 1);
  for (let i = 0; i < frames * channels; i++) {
    const value = Math.round((rng() * 2 - 1) * full * 0.1);
    const at = 44 + i * bytesPerSample;
    if (depth === 8) out[at] = value + 128;
    else {
      let v = value < 0 ? value + 2 ** depth : value;
      for (let b = 0; b < bytesPerSample; b++) {
        out[at + b] = v & 0xff;
        v = Math.floor(v / 256);
      }
    }
  }
  return out;
}

const base64 = (bytes: Uint8Array) => (bytes as unknown as { toBase64(): string }).toBase64();

/** The content parts of one request's media, after its text, as AIPerf sends them. */
export async function mediaParts(
  options: MediaOptions,
  rng: Rng,
): Promise<Record<string, unknown>[]> {
  const parts: Record<string, unknown>[] = [];
  const image = options.image;
  for (let i = 0; i < (image?.batchSize ?? 0); i++) {
    const width = drawn(image!.widthMean, image!.widthStddev, rng, 1);
    const height = drawn(image!.heightMean, image!.heightStddev, rng, 1);
    const bytes = image!.format === "jpeg"
      ? await jpegImage(width, height, rng)
      : await pngImage(width, height, rng);
    const url = `data:image/${image!.format};base64,${base64(bytes)}`;
    parts.push({ type: "image_url", image_url: { url } });
  }
  const audio = options.audio;
  for (let i = 0; i < (audio?.batchSize ?? 0); i++) {
    const pick = <T>(list: readonly T[]) => list[Math.floor(rng() * list.length)];
    const seconds = Math.max(
      0.01,
      audio!.lengthMean + (audio!.lengthStddev === 0 ? 0 : (
        standardNormal(rng) * audio!.lengthStddev
      )),
    );
    const wav = wavAudio({
      seconds,
      sampleRate: Math.round(pick(audio!.sampleRatesKHz) * 1000),
      depth: pick(audio!.depths),
      channels: audio!.channels,
    }, rng);
    parts.push({ type: "input_audio", input_audio: { data: base64(wav), format: "wav" } });
  }
  return parts;
}
