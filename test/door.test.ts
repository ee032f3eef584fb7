// The objects layer calls the driver through one door: src/driver.ts is the only file of src/ that
// imports the generated driver bindings (typed or raw).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as drv from '../src/driver';

const SRC = resolve(__dirname, '../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Module specifiers a file imports, re-exports or requires. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[1]);
  return out;
}

const DRIVER_BINDINGS = /(^|\/)generated\/[^/]+\/driver(\/|$)/;

describe('one door to the driver', () => {
  test('only src/driver.ts imports the generated driver bindings', () => {
    const offenders: string[] = [];
    const all = files(SRC);
    expect(all.length).toBeGreaterThan(10);
    for (const f of all) {
      const rel = relative(SRC, f);
      for (const spec of specifiers(readFileSync(f, 'utf8'))) {
        if (DRIVER_BINDINGS.test(spec) && rel !== 'driver.ts') offenders.push(`${rel} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
    expect(specifiers(readFileSync(join(SRC, 'driver.ts'), 'utf8')).some((s) => DRIVER_BINDINGS.test(s))).toBe(true);
  });

  test('the scan recognises every import form it guards against', () => {
    const sample = [
      "import * as cu from '../generated/13.0/driver';",
      "import { cuInit } from '../generated/12.6/driver/raw';",
      "export { DriverError } from '../generated/13.0/driver/index';",
      "const raw = require('../generated/13.0/driver/raw');",
      "const lazy = await import('../generated/13.0/driver');",
      "import '../generated/13.0/driver/binding';",
      "import * as nvrtc from '../generated/13.0/nvrtc';",
    ].join('\n');
    expect(specifiers(sample).filter((s) => DRIVER_BINDINGS.test(s))).toHaveLength(6);
  });

  test('the door pins the 13.0 release and marks sticky errors as it builds them', () => {
    expect(drv.DRIVER_RELEASE).toBe('13.0');
    const ctx = { handle: 0x1000, device: 0, unusable: undefined, core: { destroyed: false, kind: 'Context' } } as drv.Bindable;
    const soft = drv.fail(ctx, 'cuMemAlloc', drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY);
    expect(soft).toBeInstanceOf(drv.DriverError);
    expect(ctx.unusable).toBeUndefined();
    const sticky = drv.fail(ctx, 'cuStreamSynchronize', drv.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS);
    expect(ctx.unusable).toBe(sticky);
    expect(() => drv.usable(ctx)).toThrow(drv.ContextUnusableError);
    expect(() => drv.usable(ctx)).toThrow(/cannot recover from this within the process.*exit the process/);
  });
});
