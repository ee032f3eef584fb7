// Objects layer on a GPU, issue 12: ownership across graphs, bad streams, checked untyped launches, the
// caching allocator under load, pinned memory freed at once, and a soak. Skips with one reason where there is no GPU.
import { CachingAllocator, Context, DeviceBuffer, Graph, LaunchConfig, MemoryPool, Module, PinnedHostBuffer, Stream, arg, compile, launch } from '../../src';
import { compileForSuite, describeGpu } from './gpu-env';
import { SOURCE, child, rssMiB } from './objects-helpers';

describeGpu('objects layer (issue 12: robustness)', () => {
  const suite = compileForSuite(SOURCE, { name: 'objects.cu', nameExpressions: ['scale<float>'] }, { options: ['-std=c++17'] });
  let mod: Module;
  beforeAll(() => ({ module: mod } = suite));

  test('issue 12: a GraphExec keeps the kernel, module and buffer it captured alive (close them all, replay still works)', () => {
    const { program: p, module: m } = compile(SOURCE.replace(/scale/g, 'scale2'), { name: 'owned.cu' });
    const k = m.kernel('fill', ['ptr', 'i32', 'u32']);
    const n = 4096;
    const b = DeviceBuffer.alloc(4 * n);
    const out = new Int32Array(n);
    const s = Stream.create();
    const graph = Graph.capture(s, (st) => launch(st, LaunchConfig.linear(n), k, b, 42, n));
    const ex = graph.instantiate();
    graph.close(); // the exec keeps it
    const sum = b.subarray(0, 16); // a view: its owner is what the graph holds
    k.close();
    m.close();
    p.close();
    const bufferCore = b.core;
    b.close(); // deferred: the graph uses it
    sum.close();
    expect(m.core.destroyed).toBe(false);
    expect(bufferCore.destroyed).toBe(false);
    ex.launch(s);
    s.synchronize();
    // read the memory the graph wrote through a fresh buffer copy (b itself is closed for the user)
    const probe = DeviceBuffer.alloc(4 * n);
    const g2 = Graph.create();
    expect(() => b.ptr).toThrow(/DeviceBuffer is closed/);
    expect(() => launch(s, LaunchConfig.linear(n), k, probe, 1, n)).toThrow(/Kernel is closed/);
    ex.close(); // now everything goes
    expect(m.core.destroyed).toBe(true);
    expect(bufferCore.destroyed).toBe(true);
    g2.close();
    probe.close();
    // the same with the result checked: a second capture whose buffer is closed before the replay
    const { program: p3, module: m3 } = compile('extern "C" __global__ void inc(int* p) { p[threadIdx.x] += 1; }', { name: 'inc.cu' });
    const inc = m3.kernel('inc', ['ptr']);
    const acc = DeviceBuffer.alloc(4 * 32);
    acc.memset(0);
    const pinned = PinnedHostBuffer.alloc(4 * 32);
    const g3 = Graph.capture(s, (st) => {
      launch(st, { grid: 1, block: 32 }, inc, acc);
      acc.copyTo(pinned, { stream: st });
    });
    const ex3 = g3.instantiate();
    for (const x of [g3, inc, m3, p3, acc]) x.close();
    for (let i = 0; i < 5; i++) ex3.launch(s);
    s.synchronize();
    expect(Array.from(pinned.array(Int32Array))).toEqual(new Array(32).fill(5));
    ex3.close();
    pinned.close();
    s.close();
    void out;
  });

  test('issue 12: bad streams give a clear error and the process stays alive (child process)', () => {
    const r = child(`
      const { module } = cuda.compile('extern "C" __global__ void k(int* p) { p[0] = 1; }');
      const k = module.kernel('k', ['ptr']);
      const buf = cuda.DeviceBuffer.alloc(64);
      const ev = cuda.Event.create();
      const ctx = cuda.Context.current();
      const closed = cuda.Stream.create(); const closedHandle = closed.handle; closed.close();
      const cases = {
        'launch(0xdeadbeef)': () => cuda.launch(0xdeadbeef, { grid: 1, block: 1 }, k, buf),
        'launch(2**53+1)': () => cuda.launch(2 ** 53 + 1, { grid: 1, block: 1 }, k, buf),
        'launch(closed stream)': () => cuda.launch(closed, { grid: 1, block: 1 }, k, buf),
        'Stream.wrap(closed handle)': () => cuda.Stream.wrap(closedHandle).synchronize(),
        'copyFrom stream 0xdeadbeef': () => buf.copyFrom(new Uint8Array(8), { stream: 0xdeadbeef }),
        'alloc stream 99999': () => cuda.DeviceBuffer.alloc(16, { stream: 99999 }),
        'event.record(777)': () => ev.record(777),
        'Stream.wrap(0xdeadbeef).synchronize()': () => cuda.Stream.wrap(0xdeadbeef).synchronize(),
        'stream NaN': () => buf.memset(0, { stream: NaN }),
        'stream Infinity': () => buf.memset(0, { stream: Infinity }),
        'context handle as stream': () => cuda.Stream.wrap(ctx.handle).synchronize(),
        'event handle as stream': () => cuda.Stream.wrap(ev.handle).synchronize(),
        'module handle as stream': () => cuda.Stream.wrap(module.handle).synchronize(),
        'protocol returning garbage': () => cuda.launch({ [Symbol.for('cuda.stream')]: () => 0xdeadbeef }, { grid: 1, block: 1 }, k, buf),
        'untyped launch f64 for a pointer': () => cuda.launch(undefined, { grid: 1, block: 1 }, module.kernel('k'), cuda.arg.f32(1)),
      };
      const out = {};
      for (const [name, fn] of Object.entries(cases)) {
        try { fn(); out[name] = 'NO ERROR'; } catch (e) { out[name] = (e && e.constructor && e.constructor.name) + ': ' + (e && e.message); }
      }
      // still fine afterwards
      const s = cuda.Stream.create();
      cuda.launch(s, { grid: 1, block: 1 }, k, buf);
      s.synchronize();
      out.alive = buf.toArray(Int32Array)[0] === 1 && !ctx.unusable;
      console.log(JSON.stringify(out));
    `);
    if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
    const res = JSON.parse(r.stdout.trim().split('\n').pop()!);
    console.log(
      'bad streams:\n' +
        Object.entries(res)
          .map(([k2, v]) => `  ${k2} → ${String(v)}`)
          .join('\n'),
    );
    expect(res.alive).toBe(true);
    for (const [name, msg] of Object.entries(res)) {
      if (name === 'alive') continue;
      expect(msg).not.toBe('NO ERROR');
      // argument mistakes are TypeErrors/RangeErrors; a closed or destroyed stream is the objects layer's own error
      expect(String(msg)).toMatch(/^(TypeError|RangeError|ClosedObjectError|ObjectsError): /);
      expect(String(msg)).not.toMatch(/Cannot read properties|is not a function|BigInt/);
    }
  });

  test('issue 12: an untyped launch is checked against the kernel parameters (cuFuncGetParamInfo)', () => {
    const s = Stream.create();
    const saxpy = mod.kernel('saxpy');
    const x = DeviceBuffer.alloc(64);
    expect(() => launch(s, { grid: 1, block: 1 }, saxpy, arg.f64(2), x, x, arg.u32(16))).toThrow(/parameter 0 is 4 bytes but was given f64/);
    expect(() => launch(s, { grid: 1, block: 1 }, saxpy, arg.f32(2), x, x)).toThrow(/takes 4 parameter\(s\)/);
    launch(s, { grid: 1, block: 16 }, saxpy, arg.f32(2), x, x, arg.u32(16));
    s.synchronize();
    for (const z of [x, saxpy, s]) z.close();
  });

  test('issue 12: caching allocator — reuse across many streams under a race (random sizes, results checked)', () => {
    const slowfill = mod.kernel('slowfill', ['ptr', 'i32', 'u32', 'i64']);
    const STREAMS = 8;
    const OPS = 3000;
    const streams = Array.from({ length: STREAMS }, () => Stream.create({ nonBlocking: true }));
    const result = DeviceBuffer.alloc(OPS * 64);
    result.memset(0);
    const before = CachingAllocator.stats(Context.primary(0));
    let seed = 12345;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    const live: DeviceBuffer[] = [];
    const t0 = performance.now();
    for (let i = 0; i < OPS; i++) {
      const s = streams[rand(STREAMS)];
      const bytes = 64 + 4 * rand(1 << rand(16));
      const n = bytes >> 2;
      const b = DeviceBuffer.alloc(bytes, { stream: s });
      launch(s, LaunchConfig.linear(n, 128), slowfill, b, i + 1, n, rand(4) === 0 ? 20000 : 0);
      // the first 64 bytes of the block, as written by this op, go to its own slot of the result
      result.copyFrom(b, { stream: s, offset: i * 64, byteLength: 64 });
      live.push(b);
      // free some buffers at random, often on a stream other than the next allocation's
      while (live.length > 0 && rand(3) !== 0) live.splice(rand(live.length), 1)[0].close();
    }
    for (const b of live) b.close();
    for (const s of streams) s.synchronize();
    const ms = performance.now() - t0;
    const got = result.toArray(Int32Array);
    let wrong = 0;
    for (let i = 0; i < OPS; i++) for (let j = 0; j < 16; j++) if (got[i * 16 + j] !== i + 1) wrong++;
    const after = CachingAllocator.stats(Context.primary(0));
    console.log(
      `allocator race: ${OPS} ops on ${STREAMS} streams in ${ms.toFixed(0)} ms; hits ${after.hits - before.hits}, misses ${after.misses - before.misses}, cached ${after.cached} B, peak ${after.peak} B; wrong words: ${wrong}`,
    );
    expect(wrong).toBe(0);
    expect(after.hits - before.hits).toBeGreaterThan(OPS / 2);
    for (const s of streams) s.close();
    expect(CachingAllocator.stats(Context.primary(0)).inUse).toBe(before.inUse);
    result.close();
    slowfill.close();
  });

  test('issue 12: caching allocator stats, trim, limit and opt-out on the device', () => {
    const ctx = Context.primary(0);
    const s = Stream.create();
    CachingAllocator.trim();
    ctx.synchronize();
    MemoryPool.default(0).trim(0);
    const free0 = ctx.memoryInfo().free;
    const a = DeviceBuffer.alloc(64 << 20, { stream: s });
    const addr = a.ptr;
    a.close();
    expect(CachingAllocator.stats(ctx).cached).toBeGreaterThanOrEqual(64 << 20);
    const b = DeviceBuffer.alloc(60 << 20, { stream: s }); // same class (64 MiB): the same block
    expect(b.ptr).toBe(addr);
    b.close();
    CachingAllocator.trim(ctx);
    s.synchronize();
    MemoryPool.default(0).trim(0);
    expect(CachingAllocator.stats(ctx).cached).toBe(0);
    expect(Math.abs(ctx.memoryInfo().free - free0)).toBeLessThanOrEqual(8 << 20);
    CachingAllocator.setLimit(1 << 20, ctx);
    expect(() => DeviceBuffer.alloc(2 << 20, { stream: s })).toThrow(/limit of 1048576 bytes/);
    CachingAllocator.setLimit(Infinity, ctx);
    const u = DeviceBuffer.alloc(4096, { stream: s, cache: false });
    u.memset(1);
    expect(u.toArray(Uint8Array)[4095]).toBe(1);
    u.close();
    s.close();
  });

  test('issue 12: PinnedHostBuffer.close() frees at once, even after array()', () => {
    const rss0 = rssMiB();
    for (let i = 0; i < 64; i++) {
      const p = PinnedHostBuffer.alloc(8 << 20);
      p.array(Uint8Array).fill(1); // touch every page
      p.close();
    }
    const rss1 = rssMiB();
    console.log(`64 × 8 MiB pinned alloc/array/fill/close: RSS ${rss0} → ${rss1} MiB`);
    expect(rss1 - rss0).toBeLessThan(64);
  });

  test('issue 12: soak (CUDA_TS_SOAK_SECONDS, default 10): RSS and device memory stay flat', () => {
    const seconds = Number(process.env.CUDA_TS_SOAK_SECONDS ?? 10);
    const ctx = Context.primary(0);
    const fill = mod.kernel('fill', ['ptr', 'i32', 'u32']);
    const gc = (globalThis as { gc?: () => void }).gc;
    const settle = () => {
      ctx.synchronize();
      CachingAllocator.trim();
      ctx.synchronize();
      MemoryPool.default(0).trim(0);
      gc?.();
      return { free: ctx.memoryInfo().free, rss: rssMiB() };
    };
    const cycle = (i: number) => {
      const s = Stream.create();
      const n = 1024 + (i % 7) * 256;
      const b = DeviceBuffer.alloc(4 * n, { stream: s });
      const pinned = PinnedHostBuffer.alloc(4 * n);
      const view = pinned.array(Int32Array);
      launch(s, LaunchConfig.linear(n), fill, b, i, n);
      b.copyTo(pinned, { stream: s });
      const ev = s.record();
      ev.synchronize();
      if (view[n - 1] !== i) throw new Error(`cycle ${i}: got ${view[n - 1]}`);
      if (i % 50 === 0) {
        const g = Graph.capture(s, (st) => launch(st, LaunchConfig.linear(n), fill, b, -i, n));
        const ex = g.instantiate();
        g.close();
        ex.launch(s);
        ex.close();
      }
      for (const x of [ev, b, pinned, s]) x.close();
    };
    for (let i = 0; i < 2000; i++) cycle(i); // warm the driver's caches
    const before = settle();
    const end = performance.now() + seconds * 1000;
    let cycles = 0;
    while (performance.now() < end) cycle(cycles++);
    const after = settle();
    console.log(
      `soak ${seconds} s: ${cycles} create/launch/copy/close cycles; RSS ${before.rss} → ${after.rss} MiB (gc: ${gc ? 'yes' : 'no'}); ` +
        `device free ${(before.free / 2 ** 20).toFixed(1)} → ${(after.free / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(after.rss - before.rss).toBeLessThan(96);
    // a leak lowers free memory; the driver returning memory it cached raises it
    expect(before.free - after.free).toBeLessThanOrEqual(16 << 20);
    fill.close();
  }, 600_000);
});
