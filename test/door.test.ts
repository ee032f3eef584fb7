// The objects layer calls the driver through one door: src/releases.ts is the only file of src/ that
// names a generated/<release> folder (so making another release the default touches it alone), and
// src/driver.ts is the only file that takes the driver bindings from it.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as drv from '../src/driver';
import { ClosedObjectError, ObjectsError } from '../src/errors';
import { CudaError } from '../support';

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
const GENERATED = /(^|\/)generated\/[^/]+\//;
/** What releases.ts exports for the driver: only the door may take it. */
const DRIVER_NAMES = /\b(driverRaw|driverBinder|DriverError|CUresult|CUdevice_attribute)\b/;

/** The names a file imports from `./releases` (or `../releases`). */
function releaseImports(text: string): string[] {
  const out: string[] = [];
  const re = /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"](?:\.\.?\/)+releases['"]/g;
  for (let m = re.exec(text); m; m = re.exec(text))
    out.push(
      ...m[1]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  return out;
}

describe('one door to the driver', () => {
  test('only src/releases.ts names generated/<release> paths; only src/driver.ts takes the driver from it', () => {
    const offenders: string[] = [];
    const all = files(SRC);
    expect(all.length).toBeGreaterThan(10);
    for (const f of all) {
      const rel = relative(SRC, f);
      const text = readFileSync(f, 'utf8');
      for (const spec of specifiers(text)) {
        if (GENERATED.test(spec) && rel !== 'releases.ts') offenders.push(`${rel} imports ${spec}`);
      }
      if (rel === 'driver.ts' || rel === 'releases.ts') continue;
      if (/import\s+\*\s+as\s+\w+\s+from\s*['"](?:\.\.?\/)+releases['"]/.test(text)) offenders.push(`${rel} imports all of releases`);
      for (const name of releaseImports(text)) if (DRIVER_NAMES.test(name)) offenders.push(`${rel} takes ${name} from releases`);
    }
    expect(offenders).toEqual([]);
    expect(specifiers(readFileSync(join(SRC, 'releases.ts'), 'utf8')).some((s) => DRIVER_BINDINGS.test(s))).toBe(true);
    expect(specifiers(readFileSync(join(SRC, 'driver.ts'), 'utf8'))).toContain('./releases');
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

  test('a destroyed context throws a ClosedObjectError naming the method called', () => {
    const ctx = { handle: 0x2000, device: 0, unusable: undefined, core: { destroyed: true, kind: 'Context' } } as drv.Bindable;
    expect(() => drv.usable(ctx, 'Stream.synchronize')).toThrow(/^Stream\.synchronize: the Context is closed$/);
    // Without a `where`, the name comes from the stack: the outermost frame of the objects layer's own
    // files (test/errors.test.ts checks it through a public method). Called straight from a program, the
    // door's helper is no method of the layer, so the message names the kind of object.
    let error: unknown;
    try {
      drv.usable(ctx);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ClosedObjectError);
    expect(error).toBeInstanceOf(ObjectsError);
    expect(error).toBeInstanceOf(CudaError);
    expect((error as Error).message).toBe('Context: the Context is closed');
    expect((error as ClosedObjectError).name).toBe('ClosedObjectError');
  });
});
