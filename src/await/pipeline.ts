// pipeline(): `for await` over batches in flight on a ring of streams. Each item is enqueued on the
// next stream of the ring (upload, kernel, download: whatever `enqueue` does) as soon as that stream's
// previous item was handed out, so while the program consumes item k, items k+1 … k+N-1 are on the GPU.
import type { Stream } from '../stream';
import { describe } from '../describe';
import { checkWaitOptions, type WaitOptions } from './abort';

/** Options of {@link pipeline}. */
export interface PipelineOptions<T, R> extends WaitOptions {
  /** The ring: item k goes to streams[k % streams.length]; its length is how many items are in flight. */
  streams: readonly Stream[];
  /** Enqueues the work of one item on `stream` (nothing blocking) and returns what the consumer gets. */
  enqueue: (item: T, stream: Stream, index: number) => R;
}

/** What {@link pipeline} yields: an item whose work is done, in input order. */
export interface PipelineItem<T, R> {
  /** The input item, as the iterable gave it. */
  item: T;
  /** What `enqueue` returned (e.g. the pinned buffer the download wrote). */
  result: R;
  /** The stream of the ring its work ran on (it is reused for a later item once the next one is asked for). */
  stream: Stream;
  /** Its position in the input, from 0. */
  index: number;
}

interface InFlight<T, R> extends PipelineItem<T, R> {
  done: Promise<void>;
}

/**
 * Yields each item of `items` once the work `enqueue` made for it is done, in order, keeping up to
 * `streams.length` items in flight. The consumer must be done with an item's result before it asks
 * for the next one: its stream is reused right after (use as many result buffers as streams).
 * `signal`/`timeoutMs` apply to each wait; breaking out of the loop leaves no watcher behind (the
 * waits in flight resolve when their work ends).
 * @param items The batches, in order: any iterable or async iterable, read as the ring has room (up to streams.length items ahead of the consumer).
 * @param options `streams` (the ring: item k goes to streams[k % streams.length], so its length is how many items are in flight), `enqueue(item, stream,
 * index)` (enqueues an item's work on `stream`, blocking nothing, and returns what the consumer gets) and `signal`/`timeoutMs` (cancel each wait; default
 * none).
 * @example
 * ```ts
 * import { DeviceBuffer, PinnedHostBuffer, Stream, pipeline } from 'cuda-ts/objects';
 *
 * using s0 = Stream.create({ nonBlocking: true }), s1 = Stream.create({ nonBlocking: true }); // 2 batches in flight
 * using dev0 = DeviceBuffer.alloc(4096), dev1 = DeviceBuffer.alloc(4096); // each stream its own buffers
 * using pin0 = PinnedHostBuffer.alloc(4096), pin1 = PinnedHostBuffer.alloc(4096);
 * const batches = [1, 2, 3, 4].map((v) => new Float32Array(1024).fill(v));
 * for await (const { result, index } of pipeline(batches, {
 *   streams: [s0, s1],
 *   enqueue: (batch, stream, k) => {
 *     const [dev, pin] = k % 2 === 0 ? [dev0, pin0] : [dev1, pin1];
 *     dev.copyFrom(batch, { stream }); // upload; kernels and library calls go here too
 *     dev.copyTo(pin, { stream }); // download into pinned memory: asynchronous
 *     return pin.array(Float32Array);
 *   },
 * })) console.log(index, result[0]); // 0 1, 1 2, 2 3, 3 4: in order, each once its work is done
 * ```
 */
export async function* pipeline<T, R>(
  items: Iterable<T> | AsyncIterable<T>,
  options: PipelineOptions<T, R>,
): AsyncGenerator<PipelineItem<T, R>, void, undefined> {
  if (typeof options !== 'object' || options === null) throw new TypeError(`pipeline: options must be an object, got ${describe(options)}`);
  const { streams, enqueue } = options;
  if (!Array.isArray(streams) || streams.length === 0) throw new TypeError(`pipeline: streams must be a non-empty array of Streams, got ${describe(streams)}`);
  if (typeof enqueue !== 'function') throw new TypeError(`pipeline: enqueue must be a function, got ${describe(enqueue)}`);
  const waitOptions = checkWaitOptions({ signal: options.signal, timeoutMs: options.timeoutMs }, 'pipeline');
  if (items === null || typeof items !== 'object' || (!(Symbol.iterator in items) && !(Symbol.asyncIterator in items)))
    throw new TypeError(`pipeline: items must be iterable, got ${describe(items)}`);
  const ring: InFlight<T, R>[] = [];
  let index = 0;
  try {
    for await (const item of items as AsyncIterable<T>) {
      if (ring.length === streams.length) yield await settle(ring.shift()!);
      const stream = streams[index % streams.length];
      const result = enqueue(item, stream, index);
      const done = stream.synchronized(waitOptions);
      done.catch(() => {}); // reported when its turn comes; never an unhandled rejection meanwhile
      ring.push({ item, result, stream, index, done });
      index++;
    }
    while (ring.length > 0) yield await settle(ring.shift()!);
  } finally {
    ring.length = 0;
  }
}

async function settle<T, R>(f: InFlight<T, R>): Promise<PipelineItem<T, R>> {
  await f.done;
  return { item: f.item, result: f.result, stream: f.stream, index: f.index };
}
