// The objects layer's rows: its passes of the shared rows (objectsPasses, interleaved with C by bench/gpu.ts
// and bench/runtime-child.ts) and the rows only it has (benchObjects: awaiting, NVRTC).
import type * as Objects from '../src/index';
import { ALLOC_BYTES, BATCH, COPY_BYTES, Impl, type ImplResult, type MeasuredRow, measure, measureAsync, reason, scaled } from './common';
import { COPY_ROWS, type Passes, ROWS, SAXPY } from './gpu-common';

export type ObjectsApi = typeof Objects;

/** The passes, what `benchObjects` reuses of their set-up, and what closes it all. */
interface ObjectsBench {
  passes: Passes;
  stream: Objects.Stream;
  launchEmpty: () => void;
  close: () => void;
}

/** Declared kernels, one LaunchConfig, direct calls: a user's hot loop. */
function launchPasses(O: ObjectsApi, ptx: Buffer, stream: Objects.Stream, owned: { close(): void }[]) {
  const mod = O.Module.fromPTX(ptx.toString('utf8'));
  const kEmpty = mod.kernel('empty', []);
  const kArgs4 = mod.kernel('args4', ['ptr', 'ptr', 'f32', 'u32']);
  const kArgs16 = mod.kernel('args16', new Array<'ptr'>(16).fill('ptr'));
  const cfg = new O.LaunchConfig({ grid: 1, block: 1 });
  const launch = O.launch;
  const dA = O.DeviceBuffer.alloc(4096);
  const dB = O.DeviceBuffer.alloc(4096);
  owned.push(dA, dB);
  const batched = (one: () => void) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      one();
      if ((i + 1) % BATCH === 0) stream.synchronize();
    }
    if (ops % BATCH) stream.synchronize();
  };
  const launchEmpty = () => launch(stream, cfg, kEmpty);
  const passes: Passes = {
    launch_0args: batched(launchEmpty),
    launch_4args: batched(() => launch(stream, cfg, kArgs4, dA, dB, 1.5, 1024)),
    launch_16args: batched(() => launch(stream, cfg, kArgs16, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB)),
    launch_sync: (ops) => {
      for (let i = 0; i < ops; i++) {
        launch(stream, cfg, kEmpty);
        stream.synchronize();
      }
    },
    alloc_free_async_1MiB: batched(() => O.DeviceBuffer.alloc(ALLOC_BYTES, { stream }).close()),
  };
  return { passes, launchEmpty };
}

/** The event round trip: record a, record b, wait for b, read the time between. */
function eventPass(O: ObjectsApi, stream: Objects.Stream, owned: { close(): void }[]): (ops: number) => void {
  const a = O.Event.create();
  owned.push(a);
  const b = O.Event.create();
  owned.push(b);
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

/** DeviceBuffer.copyFrom / copyTo of 256 MiB with a PinnedHostBuffer or a pageable Uint8Array, on the stream. */
function copyPasses(O: ObjectsApi, stream: Objects.Stream, owned: { close(): void }[]): Passes {
  const big = O.DeviceBuffer.alloc(COPY_BYTES);
  owned.push(big);
  const pinned = O.PinnedHostBuffer.alloc(COPY_BYTES);
  owned.push(pinned);
  const pageable = new Uint8Array(COPY_BYTES).fill(2);
  const copies = (h2d: boolean, host: Objects.PinnedHostBuffer | Uint8Array) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      if (h2d) big.copyFrom(host, { stream });
      else big.copyTo(host, { stream });
    }
    stream.synchronize();
  };
  return {
    h2d_pinned_256MiB: copies(true, pinned),
    d2h_pinned_256MiB: copies(false, pinned),
    h2d_pageable_256MiB: copies(true, pageable),
    d2h_pageable_256MiB: copies(false, pageable),
  };
}

/**
 * The objects layer's passes of the shared rows on one non-blocking stream; `copies: false` leaves out
 * the 256 MiB copy rows and their buffers (see gpu-common's setup). A part that fails to set up leaves
 * its rows out, with the reason in `notes`.
 */
export function objectsPasses(O: ObjectsApi, ptx: Buffer, { copies = true }: { copies?: boolean } = {}, notes: Record<string, string> = {}): ObjectsBench {
  const dev = O.Device.get(Number(process.env.BENCH_DEVICE ?? 0) | 0);
  dev.setCurrent();
  const stream = O.Stream.create({ nonBlocking: true });
  const owned: { close(): void }[] = [];
  const SMS = O.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
  const { passes, launchEmpty } = launchPasses(O, ptx, stream, owned);
  // Device#attribute asks the driver each time (multiprocessorCount is read once per Device)
  passes.cuDeviceGetAttribute = (ops) => {
    let acc = 0;
    for (let i = 0; i < ops; i++) acc += dev.attribute(SMS);
    if (acc <= 0) throw new Error('no SMs');
  };
  try {
    passes.event_record_elapsed = eventPass(O, stream, owned);
  } catch (e) {
    notes.event_record_elapsed = reason(e);
  }
  try {
    if (copies) Object.assign(passes, copyPasses(O, stream, owned));
  } catch (e) {
    notes.copies = reason(e);
  }
  const close = () => {
    stream.synchronize();
    for (const x of owned.reverse()) x.close();
    stream.close();
  };
  return { passes, stream, launchEmpty, close };
}

/** A launch then a blocking or an awaited synchronize, and the await of an idle stream. */
async function synchronizedRows(impl: Impl, stream: Objects.Stream, launchEmpty: () => void): Promise<void> {
  const sync = (ops: number) => {
    for (let i = 0; i < ops; i++) {
      launchEmpty();
      stream.synchronize();
    }
  };
  const awaited = async (ops: number) => {
    for (let i = 0; i < ops; i++) {
      launchEmpty();
      await stream.synchronized();
    }
  };
  const idle = async (ops: number) => {
    for (let i = 0; i < ops; i++) await stream.synchronized();
  };
  await impl.row('launch_blocking_synchronize', () => measure(sync, scaled(5000, 100), 100));
  await impl.row('launch_await_synchronized', () => measureAsync(awaited, scaled(5000, 100), 100));
  await impl.row('await_synchronized_idle', () => measureAsync(idle, scaled(5000, 100), 100));
}

/** NVRTC through Program, ms each; cache: false keeps it NVRTC's own time (bench/kernel-cache.ts times a hit). */
function compileRow(O: ObjectsApi): MeasuredRow {
  const pass = (ops: number) => {
    for (let i = 0; i < ops; i++) {
      const p = new O.Program(SAXPY, { name: 'saxpy.cu' });
      try {
        p.compile({ cache: false });
      } finally {
        p.close();
      }
    }
  };
  return measure(pass, 1, 1, 'ms');
}

/**
 * The objects layer's result: `preset` (the rows the interleaved phase measured), the shared rows it
 * did not (the same passes, measured on their own), then the rows only the objects layer has.
 */
export async function benchObjects(O: ObjectsApi, ptx: Buffer, preset: Record<string, MeasuredRow | { skipped: string }> = {}): Promise<ImplResult> {
  const impl = new Impl('cuda-ts-objects');
  Object.assign(impl.rows, preset);
  const notes: Record<string, string> = {};
  const bench = objectsPasses(O, ptx, { copies: COPY_ROWS.some((r) => !preset[r]) }, notes);
  impl.meta.device = O.Device.get(Number(process.env.BENCH_DEVICE ?? 0) | 0).name;
  impl.meta.launch = 'launch(stream, new LaunchConfig({grid: 1, block: 1}), kernel, ...args) with a declared signature';
  for (const [name, ops, warm, unit, bytes] of ROWS) {
    const p = bench.passes[name];
    const why = notes[name] ?? (COPY_ROWS.includes(name) ? notes.copies : undefined);
    if (p) await impl.row(name, () => measure(p, ops(), warm(), unit, bytes));
    else if (why && !impl.rows[name]) impl.skip(name, why);
  }
  await synchronizedRows(impl, bench.stream, bench.launchEmpty);
  await impl.row('nvrtc_compile_small', () => compileRow(O));
  try {
    bench.close();
  } catch (e) {
    impl.meta.cleanup_error = reason(e);
  }
  return impl.result();
}
