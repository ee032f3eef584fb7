// The objects layer's rows of bench/gpu.ts: its own measurements (benchObjects) and its passes of the
// shared rows for the interleaved phase (objectsPasses).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ALLOC_BYTES, BATCH, COPY_BYTES, Impl, REPO_ROOT, type ImplResult, type MeasuredRow, log, measure, measureAsync, reason, scaled } from './common';
import { loadModule } from './startup';
import { type Driver, LOADER, type Passes, SAXPY, type State } from './gpu-common';

// ---------------------------------------------------------------------------------------------
// Objects layer (src/, being written): loaded dynamically and feature-detected, so that this file
// compiles and runs whatever its state; anything missing becomes a skipped row with the reason.
// ---------------------------------------------------------------------------------------------
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Any = any;

export function loadObjects(): Any {
  if (existsSync(join(REPO_ROOT, 'src', 'index.ts'))) return loadModule<Any>('src/index', LOADER);
  const merged: Any = {};
  const parts = ['context', 'device', 'stream', 'event', 'memory', 'module', 'kernel', 'launch', 'program'];
  const found: string[] = [];
  for (const p of parts) {
    if (!existsSync(join(REPO_ROOT, 'src', `${p}.ts`))) continue;
    Object.assign(merged, loadModule<Any>(`src/${p}`, LOADER));
    found.push(p);
  }
  if (!found.length) throw new Error('no objects layer in src/ (src/index.ts missing)');
  merged.__parts = found;
  return merged;
}

/** The objects layer's copies as a pass: `ops` copies of `big` from (h2d) or to `host` on `stream`, then one wait. */
export function objectCopies(big: Any, host: Any, h2d: boolean, stream: Any): (ops: number) => void {
  return (ops) => {
    for (let i = 0; i < ops; i++) {
      if (h2d) big.copyFrom(host, { stream });
      else big.copyTo(host, { stream });
    }
    stream.synchronize();
  };
}

/** The objects layer's event round trip as a pass: record a, record b, wait for b, read the time between. */
export function eventRoundTrips(a: Any, b: Any, stream: Any): (ops: number) => void {
  return (ops) => {
    let ms = 0;
    for (let i = 0; i < ops; i++) {
      a.record(stream);
      b.record(stream);
      b.synchronize();
      ms += b.elapsedSince(a);
    }
    if (!(ms >= 0)) throw new Error('bad elapsed time');
  };
}

/** Loads the objects layer into `impl` (timing its import) and opens the device and one non-blocking stream. */
function openObjects(impl: Impl): { O: Any; dev: Any; stream: Any } {
  const t0 = performance.now();
  const O = loadObjects();
  impl.meta.import_ms = Math.round((performance.now() - t0) * 100) / 100;
  impl.meta.exports = Object.keys(O)
    .filter((k) => !k.startsWith('__'))
    .sort();
  if (O.__parts) impl.meta.loaded = `src/{${O.__parts.join(',')}}.ts (no src/index.ts)`;
  const ordinal = Number(process.env.BENCH_DEVICE ?? 0) | 0;
  const dev = O.Device.get(ordinal);
  dev.setCurrent();
  const stream = O.Stream.create({ nonBlocking: true });
  impl.meta.device = dev.name;
  return { O, dev, stream };
}

// Kernels and launch through the objects API: declared signatures, one LaunchConfig, direct calls
// (no argument arrays built per launch, as a user's hot loop would be written).
function objectKernels(impl: Impl, O: Any, ptx: Buffer) {
  const mod = O.Module.fromPTX(ptx.toString('utf8'));
  const kEmpty = mod.kernel('empty', []);
  const kArgs4 = mod.kernel('args4', ['ptr', 'ptr', 'f32', 'u32']);
  const kArgs16 = mod.kernel('args16', new Array(16).fill('ptr'));
  const cfg = new O.LaunchConfig({ grid: 1, block: 1 });
  const launch = O.launch as (...a: Any[]) => void;
  const dA = O.DeviceBuffer.alloc(4096);
  const dB = O.DeviceBuffer.alloc(4096);
  impl.meta.launch = 'launch(stream, new LaunchConfig({grid: 1, block: 1}), kernel, ...args) with a declared signature';
  return { kEmpty, kArgs4, kArgs16, cfg, launch, dA, dB };
}
type ObjectKernels = ReturnType<typeof objectKernels>;

async function objectLaunchRows(impl: Impl, stream: Any, kernels: ObjectKernels): Promise<void> {
  const { kEmpty, kArgs4, kArgs16, cfg, launch, dA, dB } = kernels;
  const batched = (one: () => void) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      one();
      if ((i + 1) % BATCH === 0) stream.synchronize();
    }
    if (ops % BATCH) stream.synchronize();
  };
  const launchRows: [string, () => MeasuredRow][] = [
    [
      'launch_0args',
      () =>
        measure(
          batched(() => launch(stream, cfg, kEmpty)),
          scaled(20_000, BATCH),
          BATCH,
        ),
    ],
    [
      'launch_4args',
      () =>
        measure(
          batched(() => launch(stream, cfg, kArgs4, dA, dB, 1.5, 1024)),
          scaled(20_000, BATCH),
          BATCH,
        ),
    ],
    [
      'launch_16args',
      () =>
        measure(
          batched(() => launch(stream, cfg, kArgs16, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB)),
          scaled(20_000, BATCH),
          BATCH,
        ),
    ],
    [
      'launch_sync',
      () =>
        measure(
          (ops) => {
            for (let i = 0; i < ops; i++) {
              launch(stream, cfg, kEmpty);
              stream.synchronize();
            }
          },
          scaled(5000, 100),
          100,
        ),
    ],
  ];
  for (const [name, thunk] of launchRows) await impl.row(name, thunk);
}

/** A launch followed by a blocking or an awaited synchronize, and the await of an idle stream. */
async function objectSynchronizedRows(impl: Impl, stream: Any, kernels: ObjectKernels): Promise<void> {
  const { kEmpty, cfg, launch } = kernels;
  const enqueue = () => launch(stream, cfg, kEmpty);
  impl.meta.synchronized_rows_launch = 'objects launch()';
  if (enqueue) {
    await impl.row('launch_blocking_synchronize', () =>
      measure(
        (ops) => {
          for (let i = 0; i < ops; i++) {
            enqueue();
            stream.synchronize();
          }
        },
        scaled(5000, 100),
        100,
      ),
    );
    await impl.row('launch_await_synchronized', () =>
      measureAsync(
        async (ops) => {
          for (let i = 0; i < ops; i++) {
            enqueue();
            await stream.synchronized();
          }
        },
        scaled(5000, 100),
        100,
      ),
    );
    await impl.row('await_synchronized_idle', () =>
      measureAsync(
        async (ops) => {
          for (let i = 0; i < ops; i++) await stream.synchronized();
        },
        scaled(5000, 100),
        100,
      ),
    );
  }
}

async function objectEventAndAllocRows(impl: Impl, O: Any, stream: Any): Promise<void> {
  await impl.row('event_record_elapsed', () => {
    const a = O.Event.create();
    const b = O.Event.create();
    try {
      return measure(eventRoundTrips(a, b, stream), scaled(5000, 100), 100);
    } finally {
      a.close();
      b.close();
    }
  });

  await impl.row('alloc_free_async_1MiB', () =>
    measure(
      (ops) => {
        for (let i = 0; i < ops; i++) {
          O.DeviceBuffer.alloc(ALLOC_BYTES, { stream }).close();
          if ((i + 1) % BATCH === 0) stream.synchronize();
        }
        if (ops % BATCH) stream.synchronize();
      },
      scaled(20_000, BATCH),
      BATCH,
    ),
  );
}

// Copies: DeviceBuffer.copyFrom / copyTo with a PinnedHostBuffer or a pageable Uint8Array, on the stream.
async function objectCopyRows(impl: Impl, O: Any, stream: Any): Promise<void> {
  let big: Any;
  let pinned: Any;
  try {
    big = O.DeviceBuffer.alloc(COPY_BYTES);
    pinned = O.PinnedHostBuffer.alloc(COPY_BYTES);
    const pageable = new Uint8Array(COPY_BYTES).fill(2);
    const copier = (h2d: boolean, host: Any) => objectCopies(big, host, h2d, stream);
    await impl.row('h2d_pinned_256MiB', () => measure(copier(true, pinned), scaled(4, 1), 1, 'GB/s', COPY_BYTES));
    await impl.row('d2h_pinned_256MiB', () => measure(copier(false, pinned), scaled(4, 1), 1, 'GB/s', COPY_BYTES));
    await impl.row('h2d_pageable_256MiB', () => measure(copier(true, pageable), scaled(2, 1), 1, 'GB/s', COPY_BYTES));
    await impl.row('d2h_pageable_256MiB', () => measure(copier(false, pageable), scaled(2, 1), 1, 'GB/s', COPY_BYTES));
  } catch (e) {
    for (const r of ['h2d_pinned_256MiB', 'd2h_pinned_256MiB', 'h2d_pageable_256MiB', 'd2h_pageable_256MiB']) if (!impl.rows[r]) impl.skip(r, reason(e));
  } finally {
    try {
      stream.synchronize();
      big?.close();
      pinned?.close();
    } catch {
      /* reported by the rows */
    }
  }
}

// NVRTC through the objects layer's Program, if present.
async function objectNvrtcRow(impl: Impl, O: Any): Promise<void> {
  if (O.Program) {
    await impl.row('nvrtc_compile_small', () =>
      measure(
        (ops) => {
          for (let i = 0; i < ops; i++) {
            const p = new O.Program(SAXPY, { name: 'saxpy.cu' });
            try {
              // cache: false keeps this row NVRTC's own time (a repeat would hit the kernel cache: bench/kernel-cache.ts)
              const out = p.compile?.({ target: 'ptx', cache: false }) ?? p.compile?.();
              if (!out) throw new Error('Program.compile returned nothing');
            } finally {
              p.close?.();
            }
          }
        },
        1,
        1,
        'ms',
      ),
    );
  } else impl.skip('nvrtc_compile_small', 'objects layer has no Program yet');
}

export async function benchObjects(
  ptx: Buffer,
  cu: Driver,
  S: State | undefined,
  preset: Record<string, MeasuredRow | { skipped: string }> = {},
): Promise<ImplResult> {
  const impl = new Impl('cuda-ts-objects');
  Object.assign(impl.rows, preset);
  const { O, dev, stream } = openObjects(impl);

  // Trivial calls through the objects API (informative: not the same operation as a bare C call).
  // Device#attribute asks the driver every time (multiprocessorCount is read once per Device since it describes the chip)
  const SMS = O.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
  await impl.row('cuDeviceGetAttribute', () => {
    const n = scaled(1_000_000, 1000);
    return measure(
      (ops) => {
        let acc = 0;
        for (let i = 0; i < ops; i++) acc += dev.attribute(SMS);
        if (acc <= 0) throw new Error('no SMs');
      },
      n,
      scaled(100_000, 1000),
    );
  });

  const kernels = objectKernels(impl, O, ptx);
  await objectLaunchRows(impl, stream, kernels);
  await objectSynchronizedRows(impl, stream, kernels);
  await objectEventAndAllocRows(impl, O, stream);
  await objectCopyRows(impl, O, stream);
  await objectNvrtcRow(impl, O);

  try {
    stream.synchronize();
    kernels.dA.close();
    kernels.dB.close();
    stream.close();
  } catch (e) {
    impl.meta.cleanup_error = reason(e);
  }
  return impl.result();
}

/**
 * The objects layer's passes of the shared rows (declared kernels, one LaunchConfig, direct calls);
 * `copies: false` leaves out the 256 MiB copy rows and their buffers (see gpu-common's setup).
 */
export function objectsPasses(O: Any, ptx: Buffer, { copies = true }: { copies?: boolean } = {}): { passes: Passes; close: () => void } {
  const dev = O.Device.get(Number(process.env.BENCH_DEVICE ?? 0) | 0);
  const SMS = O.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
  dev.setCurrent();
  const stream = O.Stream.create({ nonBlocking: true });
  const mod = O.Module.fromPTX(ptx.toString('utf8'));
  const kEmpty = mod.kernel('empty', []);
  const kArgs4 = mod.kernel('args4', ['ptr', 'ptr', 'f32', 'u32']);
  const kArgs16 = mod.kernel('args16', new Array(16).fill('ptr'));
  const cfg = new O.LaunchConfig({ grid: 1, block: 1 });
  const launch = O.launch as (...a: Any[]) => void;
  const dA = O.DeviceBuffer.alloc(4096);
  const dB = O.DeviceBuffer.alloc(4096);
  const batched = (one: () => void) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      one();
      if ((i + 1) % BATCH === 0) stream.synchronize();
    }
    if (ops % BATCH) stream.synchronize();
  };
  const passes: Passes = {
    cuDeviceGetAttribute: (ops) => {
      let acc = 0;
      for (let i = 0; i < ops; i++) acc += dev.attribute(SMS); // a driver call each time (multiprocessorCount is cached)
      if (acc <= 0) throw new Error('no SMs');
    },
    launch_0args: batched(() => launch(stream, cfg, kEmpty)),
    launch_4args: batched(() => launch(stream, cfg, kArgs4, dA, dB, 1.5, 1024)),
    launch_16args: batched(() => launch(stream, cfg, kArgs16, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB)),
    launch_sync: (ops) => {
      for (let i = 0; i < ops; i++) {
        launch(stream, cfg, kEmpty);
        stream.synchronize();
      }
    },
    alloc_free_async_1MiB: (ops) => {
      for (let i = 0; i < ops; i++) {
        O.DeviceBuffer.alloc(ALLOC_BYTES, { stream }).close();
        if ((i + 1) % BATCH === 0) stream.synchronize();
      }
      if (ops % BATCH) stream.synchronize();
    },
  };
  const extras = extraPasses(O, passes, stream, copies);
  return {
    passes,
    close: () => {
      stream.synchronize();
      for (const x of extras.reverse()) x.close();
      dA.close();
      dB.close();
      stream.close();
    },
  };
}

/**
 * The event and copy rows, as benchObjects measures them, so that they run interleaved with C too (the
 * copy target compares them per repetition); a failure leaves them to benchObjects. Returns what to close.
 */
function extraPasses(O: Any, passes: Passes, stream: Any, copies: boolean): { close(): void }[] {
  const extras: { close(): void }[] = [];
  try {
    const a = O.Event.create();
    extras.push(a);
    const b = O.Event.create();
    extras.push(b);
    passes.event_record_elapsed = eventRoundTrips(a, b, stream);
  } catch (e) {
    log(`objects event_record_elapsed not interleaved: ${reason(e)}`);
  }
  if (copies)
    try {
      const big = O.DeviceBuffer.alloc(COPY_BYTES);
      extras.push(big);
      const pinned = O.PinnedHostBuffer.alloc(COPY_BYTES);
      extras.push(pinned);
      const pageable = new Uint8Array(COPY_BYTES).fill(2);
      const copier = (h2d: boolean, host: Any) => objectCopies(big, host, h2d, stream);
      passes.h2d_pinned_256MiB = copier(true, pinned);
      passes.d2h_pinned_256MiB = copier(false, pinned);
      passes.h2d_pageable_256MiB = copier(true, pageable);
      passes.d2h_pageable_256MiB = copier(false, pageable);
    } catch (e) {
      log(`objects copies not interleaved: ${reason(e)}`);
    }
  return extras;
}
