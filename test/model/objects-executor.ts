// The buffer model's Executor over the objects layer: `api` is src/index (or an earlier commit's build of
// it, bench/.build/js-before/src/index.js, to show the model fails there). Needs a GPU.
import type * as Objects from '../../src';
import { NO_STREAM, PINNED_BYTES, PINNED_SLOTS, STREAMS, patternBytes, type Executor, type Op, type View } from './buffer-model';

type Api = typeof Objects;
type DeviceBuffer = Objects.DeviceBuffer;
type PinnedHostBuffer = Objects.PinnedHostBuffer;

// x = x * 3 + 1 over n bytes, after spinning `spin` clock cycles (work left in flight behind later calls)
const SOURCE = `
extern "C" __global__ void bump(unsigned char* p, unsigned long long n, long long spin) {
  if (spin > 0 && blockIdx.x == 0 && threadIdx.x == 0) {
    long long start = clock64();
    while (clock64() - start < spin) {}
  }
  if (spin > 0) __syncthreads();
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) p[i] = p[i] * 3 + 1;
}`;

/** Options of {@link ObjectsExecutor}. */
export interface ObjectsExecutorOptions {
  /**
   * Run when the executor is made; what it returns runs at close(): e.g. every pageable copy staged in
   * small chunks (src/memory/staging.ts's configureStaging), so the model covers the staged path too.
   */
  setup?: () => () => void;
}

export class ObjectsExecutor implements Executor {
  private readonly ctx: Objects.Context;
  private readonly streams: Objects.Stream[];
  private readonly program: Objects.Program;
  private readonly module: Objects.Module;
  private readonly kernel: Objects.Kernel;
  private device: DeviceBuffer[] = [];
  private pinned: PinnedHostBuffer[] = [];
  /** Operations run (syncs the engine inserted included). */
  calls = 0;

  private readonly teardown: (() => void) | undefined;

  constructor(
    private readonly api: Api,
    options: ObjectsExecutorOptions = {},
  ) {
    const dev = api.Device.get(0);
    dev.setCurrent();
    this.ctx = api.Context.current();
    this.streams = STREAMS.map((s) => api.Stream.create({ nonBlocking: s.nonBlocking }));
    this.program = new api.Program(SOURCE, { name: 'bump.cu' }).compile();
    this.module = this.program.load();
    this.kernel = this.module.kernel('bump', ['ptr', 'u64', 'i64']);
    this.teardown = options.setup?.();
  }

  reset(sizes: readonly number[]): void {
    this.freeBuffers();
    this.device = sizes.map((n) => this.api.DeviceBuffer.alloc(n));
    this.pinned = Array.from({ length: PINNED_SLOTS }, () => this.api.PinnedHostBuffer.alloc(PINNED_BYTES));
  }

  private freeBuffers(): void {
    this.ctx.synchronize();
    for (const b of this.device) b.close();
    for (const p of this.pinned) p.close();
    this.device = [];
    this.pinned = [];
  }

  private stream(s: number): { stream?: Objects.Stream } {
    return s === NO_STREAM ? {} : { stream: this.streams[s] };
  }

  private view(slot: number, view: View): DeviceBuffer {
    const b = this.device[slot];
    return view ? b.subarray(view[0], view[1]) : b;
  }

  run(op: Op): Uint8Array | undefined {
    this.calls++;
    switch (op.k) {
      case 'memset':
        this.view(op.buf, op.view).memset(op.value, { width: op.width, offset: op.offset, count: op.count, ...this.stream(op.stream) });
        return undefined;
      case 'h2d': {
        // a source at an odd place in a larger ArrayBuffer
        const data = new Uint8Array(op.len + op.skew).subarray(op.skew);
        data.set(patternBytes(op.seed, op.len));
        this.view(op.buf, op.view).copyFrom(data, { offset: op.offset, ...this.stream(op.stream) });
        return undefined;
      }
      case 'p2d': {
        const dst = this.view(op.buf, op.view);
        if (op.via === 'device') dst.copyFrom(this.pinned[op.pin], { offset: op.offset, byteLength: op.len, ...this.stream(op.stream) });
        else this.pinned[op.pin].copyTo(dst.subarray(op.offset, op.offset + op.len), { offset: op.pinOffset, byteLength: op.len, ...this.stream(op.stream) });
        return undefined;
      }
      case 'd2d': {
        const dst = this.view(op.dst, op.dview);
        const src = this.view(op.src, op.sview);
        if (op.via === 'copyFrom') dst.copyFrom(src.subarray(op.soff, op.soff + op.len), { offset: op.doff, ...this.stream(op.stream) });
        else src.copyTo(dst.subarray(op.doff, op.doff + op.len), { offset: op.soff, byteLength: op.len, ...this.stream(op.stream) });
        return undefined;
      }
      case 'd2h':
        return this.view(op.buf, op.view).copyTo(new Uint8Array(op.len), { offset: op.offset, ...this.stream(op.stream) });
      case 'd2p': {
        const src = this.view(op.buf, op.view);
        if (op.via === 'device') src.copyTo(this.pinned[op.pin], { offset: op.offset, byteLength: op.len, ...this.stream(op.stream) });
        else this.pinned[op.pin].copyFrom(src.subarray(op.offset, op.offset + op.len), { byteLength: op.len, ...this.stream(op.stream) });
        return undefined;
      }
      case 'pfill':
        this.pinned[op.pin].copyFrom(patternBytes(op.seed, op.len), { offset: op.offset });
        return undefined;
      case 'kernel': {
        const target = this.view(op.buf, op.view).subarray(op.offset, op.offset + op.len);
        const grid = Math.min(64, Math.ceil(op.len / 256));
        this.api.launch(this.streams[op.stream], { grid, block: 256 }, this.kernel, target, op.len, op.spin);
        return undefined;
      }
      case 'sync':
        if (op.stream === NO_STREAM) this.ctx.synchronize();
        else this.streams[op.stream].synchronize();
        return undefined;
      case 'realloc': {
        const old = this.device[op.buf];
        const size = old.byteLength;
        old.close();
        const b = this.api.DeviceBuffer.alloc(size, this.stream(op.ordered));
        this.device[op.buf] = b;
        b.copyFrom(patternBytes(op.seed, size)); // no stream: on its allocating stream, if any
        return undefined;
      }
      case 'pcheck':
        return undefined;
    }
  }

  synchronizeAll(): void {
    this.ctx.synchronize();
  }

  /** Pinned bytes at once; a device slot read through stream 0 and synchronized there (not the no-stream path under test). */
  contents(space: 'device' | 'pinned', slot: number): Uint8Array {
    if (space === 'pinned') return this.pinned[slot].copyTo(new Uint8Array(PINNED_BYTES));
    const b = this.device[slot];
    const out = new Uint8Array(b.byteLength);
    b.copyTo(out, { stream: this.streams[0] });
    this.streams[0].synchronize();
    return out;
  }

  close(): void {
    this.freeBuffers();
    this.module.close();
    this.program.close();
    for (const s of this.streams) s.close();
    this.teardown?.();
  }
}
