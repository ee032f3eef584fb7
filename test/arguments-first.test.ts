// Argument errors come before anything is loaded (issue 25 §7): on this machine there is no CUDA driver,
// so a call that reached the driver would fail with "cannot load the driver library" (CudaLibraryError)
// instead of naming the mistake. Each bad call must throw a TypeError or RangeError that starts with
// the call's name, and load no library.
import { runScript } from './helpers/run-script';
import { join } from 'node:path';

const root = join(__dirname, '..');

// [call as written, expected class, expected message start]; run in one child process with the driver
// library pointed at a file that does not exist (so any load fails loudly)
const CASES: [string, 'TypeError' | 'RangeError', string][] = [
  ['DeviceBuffer.alloc(16, { bogus: 1 })', 'TypeError', 'DeviceBuffer.alloc'],
  ['DeviceBuffer.alloc(-1)', 'RangeError', 'DeviceBuffer.alloc'],
  ["DeviceBuffer.alloc('16')", 'TypeError', 'DeviceBuffer.alloc'],
  ['DeviceBuffer.alloc(16, { stream: 5 })', 'TypeError', 'DeviceBuffer.alloc'],
  ['DeviceBuffer.alloc(16, { cache: 1 })', 'TypeError', 'DeviceBuffer.alloc'],
  ['DeviceBuffer.from(42)', 'TypeError', 'DeviceBuffer.from'],
  ['DeviceBuffer.wrap(-1, 16)', 'RangeError', 'DeviceBuffer.wrap'],
  ['ManagedBuffer.alloc(1.5)', 'RangeError', 'ManagedBuffer.alloc'],
  ['ManagedBuffer.alloc(16, { bogus: 1 })', 'TypeError', 'ManagedBuffer.alloc'],
  ['PinnedHostBuffer.alloc(-1)', 'RangeError', 'PinnedHostBuffer.alloc'],
  ['PinnedHostBuffer.alloc(16, { bogus: 1 })', 'TypeError', 'PinnedHostBuffer.alloc'],
  ['Stream.create({ bogus: true })', 'TypeError', 'Stream.create'],
  ["Stream.create({ nonBlocking: 'yes' })", 'TypeError', 'Stream.create'],
  ['Stream.create({ priority: 1.5 })', 'RangeError', 'Stream.create'],
  ['Stream.wrap(-1)', 'RangeError', 'Stream.wrap'],
  ["Stream.wrap('0x10')", 'TypeError', 'Stream.wrap'],
  ['Event.create({ bogus: 1 })', 'TypeError', 'Event.create'],
  ["Event.create({ timing: 'no' })", 'TypeError', 'Event.create'],
  ['MemoryPool.create({ releaseThreshold: -1 })', 'RangeError', 'MemoryPool.create'],
  ['MemoryPool.create({ bogus: 1 })', 'TypeError', 'MemoryPool.create'],
  ["MemoryPool.default('0')", 'TypeError', 'MemoryPool.default'],
  ["Device.get('0')", 'TypeError', 'Device.get'],
  ['Device.get(-1)', 'RangeError', 'Device.get'],
  ['Device.get(1.5)', 'RangeError', 'Device.get'],
  ['launch(undefined, undefined, undefined)', 'TypeError', 'launch'],
  ['launch(undefined, { grid: 1, block: 1 }, {})', 'TypeError', 'launch'],
  ['new LaunchConfig({ grid: 1 })', 'TypeError', 'LaunchConfig'],
  ['LaunchConfig.linear(0)', 'RangeError', 'LaunchConfig.linear'],
  ['new Program(42)', 'TypeError', 'Program'],
  ["new Program('x', { bogus: 1 })", 'TypeError', 'Program'],
  ['new Linker({ bogus: 1 })', 'TypeError', 'Linker'],
  ['CachingAllocator.setLimit(-1)', 'RangeError', 'CachingAllocator.setLimit'],
  ['copyPeer(1, 2)', 'TypeError', 'copyPeer'],
  ["Graph.capture('s', () => {})", 'TypeError', 'Graph.capture'],
];

test('every bad argument is a TypeError or RangeError naming the call, before any library loads', () => {
  const script = `
    const o = require(${JSON.stringify(join(root, 'src'))});
    const { DeviceBuffer, ManagedBuffer, PinnedHostBuffer, Stream, Event, MemoryPool, Device, launch, LaunchConfig, Program, Linker, CachingAllocator, copyPeer, Graph } = o;
    const results = [];
    for (const src of ${JSON.stringify(CASES.map((c) => c[0]))}) {
      try {
        eval(src);
        results.push([src, 'no error', '']);
      } catch (e) {
        results.push([src, e && e.constructor && e.constructor.name, String(e && e.message)]);
      }
    }
    process.stdout.write(JSON.stringify(results));
  `;
  const r = runScript(script, { cwd: root, env: { ...process.env, CUDA_TS_DRIVER_LIBRARY: '/nonexistent/libcuda.so.1' } });
  expect(r.stderr).toBe('');
  const results = JSON.parse(r.stdout) as [string, string, string][];
  const wrong = results
    .filter(([, cls, message], i) => cls !== CASES[i][1] || !message.startsWith(CASES[i][2]) || /librar/i.test(message))
    .map(([src, cls, m]) => `${src} → ${cls}: ${m}`);
  expect(wrong).toEqual([]);
});
