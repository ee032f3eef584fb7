// The pipe wake channel (src/await/wake.ts) with the real libc, no GPU: a thread that calls the host
// function (fflush of the channel's FILE), as CUDA's callback thread would, wakes the event loop; a
// flush with nothing charged or after release() wakes nothing; a released channel keeps no handle alive.
import { Worker } from 'node:worker_threads';
import { pipeChannel } from '../src/await/wake';
import { sleep, until } from './helpers/await-gpu';

const linux = process.platform === 'linux';
/** The pipe channel is Node's only (its read end is a net.Socket); Bun and Deno wake through the semaphore. */
const nodeOnly = typeof process.versions.bun !== 'string' && !('Deno' in globalThis);

/** Calls fflush(file) from another thread after `delayMs`, as a host function would. */
function flushFrom(file: bigint | number, delayMs: number): Promise<void> {
  const w = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const k = require(workerData.koffi); const koffi = typeof k.load === 'function' ? k : k.default;
     const fflush = koffi.load('libc.so.6').func('int fflush(void *)');
     setTimeout(() => { fflush(workerData.file); parentPort.postMessage('flushed'); }, workerData.delayMs);`,
    { eval: true, workerData: { file, delayMs, koffi: require.resolve('koffi') } },
  );
  return new Promise((resolve, reject) => {
    w.once('message', () => void w.terminate().then(() => resolve()));
    w.once('error', reject);
  });
}

(linux && nodeOnly ? describe : describe.skip)('the pipe wake channel', () => {
  test('an armed channel wakes once per flush from another thread; unarmed or released, a flush wakes nothing', async () => {
    const ch = pipeChannel();
    expect(ch.name).toBe('pipe');
    let wakes = 0;
    ch.arm(() => wakes++);
    expect(ch.armed).toBe(true);
    await flushFrom(ch.userData, 5);
    await until(() => wakes > 0, 5000);
    expect(wakes).toBe(1);
    expect(ch.armed).toBe(false);
    await flushFrom(ch.userData, 0); // unarmed: a stale host function
    await sleep(30);
    expect(wakes).toBe(1);
    ch.arm(() => wakes++);
    ch.release();
    expect(ch.armed).toBe(false);
    await flushFrom(ch.userData, 0);
    await sleep(30);
    expect(wakes).toBe(1);
    ch.arm(() => wakes++); // armed again after a wake: the byte charged then is what the next flush writes
    await flushFrom(ch.userData, 0);
    await until(() => wakes > 1, 5000);
    expect(wakes).toBe(2);
  }, 30_000);

  test('a released channel keeps no handle alive (the process can exit)', () => {
    const ch = pipeChannel();
    const before = process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length;
    ch.arm(() => {});
    expect(process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length).toBe(before + 1);
    ch.release();
    expect(process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length).toBe(before);
  });
});

(linux && !nodeOnly ? test : test.skip)('under Bun and Deno the pipe channel is refused, saying why (the semaphore wakes there)', () => {
  expect(() => pipeChannel()).toThrow("the pipe channel watches its pipe with Node's net.Socket");
});
