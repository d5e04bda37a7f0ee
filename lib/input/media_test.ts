import assert from "node:assert/strict";
import { mulberry32 } from "./generate.ts";
import jpeg from "jpeg-js";
import { jpegImage, mediaParts, pngImage, wavAudio } from "./media.ts";

async function inflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The chunks of a PNG, each with its CRC checked (the standard CRC-32 of type and data). */
function chunks(png: Uint8Array): Array<{ type: string; data: Uint8Array }> {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(png.buffer, png.byteOffset);
  const out = [];
  for (let at = 8; at < png.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    let c = 0xffffffff;
    for (const b of png.subarray(at + 4, at + 8 + length)) {
      c ^= b;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    }
    assert.equal(view.getUint32(at + 8 + length), (c ^ 0xffffffff) >>> 0, `${type} CRC`);
    out.push({ type, data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return out;
}

Deno.test("a PNG of the size asked for: IHDR, one IDAT that inflates to its rows, IEND", async () => {
  const png = await pngImage(40, 20, mulberry32(1));
  const parts = chunks(png);
  assert.deepEqual(parts.map((p) => p.type), ["IHDR", "IDAT", "IEND"]);
  const header = new DataView(parts[0].data.buffer, parts[0].data.byteOffset);
  assert.deepEqual([header.getUint32(0), header.getUint32(4)], [40, 20]);
  assert.deepEqual([...parts[0].data.subarray(8)], [8, 2, 0, 0, 0]);
  const rows = await inflate(parts[1].data);
  assert.equal(rows.length, 20 * (1 + 40 * 3));
  // Blocks of 16 x 16: pixels 0 and 15 of the first row alike, 16 another block.
  assert.deepEqual([...rows.subarray(1, 4)], [...rows.subarray(1 + 15 * 3, 4 + 15 * 3)]);
  assert.deepEqual(await pngImage(40, 20, mulberry32(1)), png, "seeded");
});

Deno.test("a WAV's header says its rate, depth, channels and length", () => {
  const wav = wavAudio({ seconds: 0.5, sampleRate: 16_000, depth: 16, channels: 2 }, mulberry32(2));
  const view = new DataView(wav.buffer);
  const text = (at: number) => String.fromCharCode(...wav.subarray(at, at + 4));
  assert.deepEqual([text(0), text(8), text(12), text(36)], ["RIFF", "WAVE", "fmt ", "data"]);
  assert.equal(view.getUint16(20, true), 1, "PCM");
  assert.equal(view.getUint16(22, true), 2);
  assert.equal(view.getUint32(24, true), 16_000);
  assert.equal(view.getUint32(28, true), 16_000 * 2 * 2);
  assert.equal(view.getUint16(34, true), 16);
  assert.equal(view.getUint32(40, true), 8000 * 2 * 2);
  assert.equal(wav.length, 44 + 8000 * 4);
  assert.equal(view.getUint32(4, true), wav.length - 8);
});

Deno.test("content parts as AIPerf sends them: image_url data URLs, then input_audio", async () => {
  const parts = await mediaParts({
    image: {
      widthMean: 32,
      widthStddev: 0,
      heightMean: 16,
      heightStddev: 0,
      batchSize: 2,
      format: "png",
    },
    audio: {
      lengthMean: 0.1,
      lengthStddev: 0,
      depths: [8],
      sampleRatesKHz: [8],
      channels: 1,
      batchSize: 1,
    },
  }, mulberry32(3));
  assert.deepEqual(parts.map((p) => p.type), ["image_url", "image_url", "input_audio"]);
  const url = (parts[0].image_url as { url: string }).url;
  assert.match(url, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
  const png = Uint8Array.from(atob(url.split(",")[1]), (c) => c.charCodeAt(0));
  assert.equal(chunks(png)[0].type, "IHDR");
  const audio = parts[2].input_audio as { data: string; format: string };
  assert.equal(audio.format, "wav");
  assert.equal(atob(audio.data).length, 44 + 800);
});

Deno.test("a JPEG of the size asked for that decodes to the blocks' colours", async () => {
  const bytes = await jpegImage(40, 20, mulberry32(1));
  assert.deepEqual([...bytes.subarray(0, 2)], [0xff, 0xd8], "SOI");
  assert.deepEqual([...bytes.subarray(-2)], [0xff, 0xd9], "EOI");
  const image = jpeg.decode(bytes);
  assert.deepEqual([image.width, image.height], [40, 20]);
  // Inside one 16 x 16 block the lossy colours stay close (pixel 2 and pixel 13 of row 2).
  for (let c = 0; c < 3; c++) {
    const a = image.data[(2 * 40 + 2) * 4 + c];
    const b = image.data[(2 * 40 + 13) * 4 + c];
    assert.ok(Math.abs(a - b) <= 12, `channel ${c}: ${a} against ${b}`);
  }
  assert.deepEqual(await jpegImage(40, 20, mulberry32(1)), bytes, "seeded");
  const [part] = await mediaParts({
    image: {
      widthMean: 8,
      widthStddev: 0,
      heightMean: 8,
      heightStddev: 0,
      batchSize: 1,
      format: "jpeg",
    },
  }, mulberry32(2));
  assert.match((part.image_url as { url: string }).url, /^data:image\/jpeg;base64,\/9j\//);
});
