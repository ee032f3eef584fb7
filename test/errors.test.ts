// One error root for the objects layer: every error class cuda-ts/objects exports is a CudaError; the
// errors that carry a compiler, linker or JIT log share BuildError; use after close() is a
// ClosedObjectError whose message starts with the method that was called.
import * as objects from '../src';
import { BuildError, ClosedObjectError, CudaError, Event, MemoryPool, ObjectsError, OBJECTS_ERROR } from '../src';
import * as drv from '../src/driver';
import { fakeContext, fakeDriver, out } from './helpers/fake-driver';

const errorClasses = Object.entries(objects).filter(([name, v]) => typeof v === 'function' && /Error$/.test(name)) as [string, new (...a: never[]) => Error][];

describe('the error hierarchy', () => {
  test('every exported error class descends from CudaError', () => {
    expect(errorClasses.length).toBeGreaterThanOrEqual(15);
    const outside = errorClasses.filter(([, cls]) => cls !== CudaError && !(cls.prototype instanceof CudaError)).map(([name]) => name);
    expect(outside).toEqual([]);
  });

  test('compile, link and module-load errors share BuildError, which carries the log', () => {
    for (const cls of [objects.CompileError, objects.LinkError, objects.ModuleLoadError]) expect(cls.prototype).toBeInstanceOf(BuildError);
    const e = new objects.LinkError('Linker.link: linking failed', 'error: undefined symbol foo');
    expect(e).toBeInstanceOf(BuildError);
    expect(e).toBeInstanceOf(CudaError);
    expect(e.log).toBe('error: undefined symbol foo');
    expect(e.name).toBe('LinkError');
  });

  test("ObjectsError: module 'objects', a negative code, its class as name, the calling method first", () => {
    const e = new ObjectsError('Stream.beginCapture', OBJECTS_ERROR.state, 'the stream is already capturing');
    expect(e).toBeInstanceOf(CudaError);
    expect(e.message).toBe('Stream.beginCapture: the stream is already capturing');
    expect([e.module, e.func, e.name]).toEqual(['objects', 'Stream.beginCapture', 'ObjectsError']);
    expect(e.code).toBeLessThan(0);
    const codes = Object.values(OBJECTS_ERROR);
    expect(new Set(codes).size).toBe(codes.length); // one code, one meaning
    expect(Math.max(...codes)).toBeLessThan(-2); // -1 and -2 are the support package's
  });
});

describe('use after close', () => {
  test('names the method called and the kind of object, as a ClosedObjectError', () => {
    const ctx = fakeContext();
    const fake = fakeDriver(ctx, {
      cuEventCreate: (o) => out(o, 0x6100),
      cuEventDestroy: () => 0,
      cuMemPoolCreate: (o) => out(o, 0x6200),
      cuMemPoolDestroy: () => 0,
    });
    try {
      const ev = Event.create({ context: ctx });
      ev.close();
      let caught: unknown;
      try {
        ev.completed();
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ClosedObjectError);
      expect(caught).toBeInstanceOf(CudaError);
      expect((caught as ClosedObjectError).message).toBe('Event.completed: the Event is closed');
      expect((caught as ClosedObjectError).kind).toBe('Event');

      const pool = MemoryPool.create({ context: ctx });
      pool.close();
      expect(() => pool.trim()).toThrow(ClosedObjectError);
      expect(() => pool.trim()).toThrow(/^MemoryPool\.trim: the MemoryPool is closed$/);
    } finally {
      fake.restore();
    }
  });

  test('a default-stream wrapper of a closed context is refused when asked for, not at first use', () => {
    const ctx = fakeContext(0xc2);
    ctx.close();
    expect(() => objects.Stream.legacyDefault(ctx)).toThrow(/^Stream\.legacyDefault: the Context is closed$/);
    expect(() => objects.Stream.legacy(ctx)).toThrow(ClosedObjectError);
    expect(() => objects.Stream.perThread(ctx)).toThrow(/^Stream\.perThread: the Context is closed$/);
  });

  test('a closed context is named with the door call that found it', () => {
    const ctx = fakeContext();
    ctx.close();
    expect(() => drv.usable(ctx, 'Stream.synchronize')).toThrow(ClosedObjectError);
  });
});

// Jest runs tests in a vm context, where V8 names a static method's frame `Function.create`: the
// message must still start with the class (the file's class, from its name). Under Bun a static method's
// frame is bare (`create`) and takes its class only once an object of that class was made (left as is:
// a bare name may as well be a plain function of the file).
(process.versions.bun ? test.skip : test)('a static method named from the stack says its class under Jest too (not Function.x)', () => {
  const ctx = fakeContext(0xc1);
  ctx.close();
  expect(() => objects.Stream.create({ context: ctx } as never)).toThrow(/^Stream\.create: the Context is closed/);
  expect(() => objects.Stream.priorityRange(ctx)).toThrow(/^Stream\.priorityRange: the Context is closed/);
  expect(() => objects.Stream.wrap(0x1234, { context: ctx } as never)).toThrow(/^Stream\.wrap: the Context is closed/);
});
