// A Stream stand-in for unit tests that need a Stream over a made-up handle, without the driver.
import type { Context } from '../../src/context';
import { Core } from '../../src/lifecycle';
import { Stream } from '../../src/stream';
import { SharedWait } from '../../src/await/shared-wait';

/** A Stream stand-in over `handle` (runs no constructor, owns nothing), with `fields` added or replaced. */
export function fakeStreamObject(ctx: Context, handle: number, fields: Record<string, unknown> = {}): Stream {
  return Object.assign(Object.create(Stream.prototype) as Stream, {
    core: new Core('Stream', undefined),
    context: ctx,
    raw: handle,
    unmarked: [],
    plainWait: new SharedWait(),
    owned: false,
    pendingHostFuncs: 0,
    hostError: undefined,
    ...fields,
  });
}
