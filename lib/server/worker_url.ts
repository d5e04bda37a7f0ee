/**
 * Where the reference server's Web Worker module is. From source it is
 * worker.ts beside this file. The single-file bundle (tools/build.ts) maps
 * this module to one holding the bundled worker as a data: URL, because a
 * bundle has no worker.ts beside it and a data: module needs no --allow-read.
 *
 * @module
 */
export const WORKER_URL: string = new URL("./worker.ts", import.meta.url).href;
