// The child process of both kernel-cache benches (kernel-cache.ts on the GPU, kernel-cache-cpu.ts with
// stand-in libraries): a fresh process that compiles SAXPY once, timed around compile() alone, and prints
// one JSON line: { ms, fromCache, cubin, nvrtcLoaded[, loadMs] }.
import { SAXPY } from './gpu-common';

export interface ChildOptions {
  /** Load libnvrtc before the timer (Program.version()), as a process that used NVRTC before would have. */
  preload: boolean;
  /** A JavaScript expression over `maps` (/proc/self/maps) that is true when libnvrtc is mapped. */
  nvrtcMapped: string;
  /** After compile(): time loading libnvrtc (loadMs), what a hit that did without it spared. */
  timeLoad: boolean;
}

/** The child's CommonJS source, requiring the objects layer from `entry`. */
export function compileChildSource(entry: string, o: ChildOptions): string {
  return `
const { readFileSync } = require('node:fs');
const cuda = require(${JSON.stringify(entry)});
cuda.Device.get(0).setCurrent();
${o.preload ? 'cuda.Program.version();' : ''}
const t = performance.now();
const p = new cuda.Program(${JSON.stringify(SAXPY)}, { name: 'saxpy.cu' }).compile();
const ms = performance.now() - t;
const cubin = p.cubin.byteLength;
const fromCache = p.fromCache;
p.close();
const maps = readFileSync('/proc/self/maps', 'utf8');
const nvrtcLoaded = ${o.nvrtcMapped};
const result = { ms, fromCache, cubin, nvrtcLoaded };
${o.timeLoad ? 'const t0 = performance.now();\ncuda.Program.version();\nresult.loadMs = performance.now() - t0;' : ''}
process.stdout.write(JSON.stringify(result));
`;
}
