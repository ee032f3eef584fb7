// Shared by the object-layer examples: exits non-zero with one clear line where no GPU answers.
import { Device } from '../src';

export function requireGpu(example: string): Device {
  try {
    if (Device.count() === 0) throw new Error('no CUDA device');
    return Device.get(0);
  } catch (e) {
    console.log(`${example}: SKIPPED — no usable GPU (${((e as Error).message ?? String(e)).split('\n')[0]})`);
    process.exit(2);
  }
}

export function done(example: string, ok: boolean, detail: string): void {
  console.log(`${example}: ${ok ? 'OK' : 'FAILED'} — ${detail}`);
  process.exit(ok ? 0 : 1);
}
