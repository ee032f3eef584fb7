// The objects' constructors are cuda-ts's own (src/sealed.ts): from outside, `new` of any exported class
// that wraps a handle is refused with a TypeError naming the class and its factories, before anything
// is kept. Classes made with `new` by design are listed; a new export must land in one list or the other.
import * as objects from '../src';

/** Exported classes users construct themselves: their constructors check their own arguments. */
const PUBLIC = new Set([
  'ActivationDescriptor',
  'ArgPack',
  'ConvolutionDescriptor',
  'FilterDescriptor',
  'LaunchConfig',
  'Linker',
  'Program',
  'Resource', // the base class of the objects, for users' own resources: it holds what it is given
  'ScalarBox',
  'System', // reads NVML through the module's own state: no handle of its own
  'TensorDescriptor',
]);

const exported = Object.entries(objects as Record<string, unknown>).filter(
  ([name, v]) => typeof v === 'function' && /^[A-Z]/.test(name) && v.prototype !== undefined && !(v.prototype instanceof Error) && v !== Error,
);
const sealed = exported.filter(([name]) => !PUBLIC.has(name));

test('every exported class is either sealed or listed as made with new', () => {
  expect(sealed.length).toBeGreaterThan(35);
  for (const name of PUBLIC) expect(exported.map(([n]) => n)).toContain(name);
});

test.each(sealed)('new %s() from outside is refused, naming the class and how to make one', (name, cls) => {
  const C = cls as new (...args: unknown[]) => unknown;
  const message = new RegExp(`^${name}: the constructor is cuda-ts's own; make one with \\S`);
  for (const args of [[], [1, 2, 3], [Symbol('cuda-ts: made by a factory'), 0x1000, 0x2000]]) {
    let err: unknown;
    try {
      new C(...args);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(message);
  }
});
