// The objects' constructors belong to cuda-ts: each class is made by its factories (Stream.create,
// DeviceBuffer.alloc, Device.get, …), which pass SEALED first. A `new` from outside, which cannot, is
// refused before anything is kept: such an object would hand whatever handle it was given to C.
// A leaf (it imports nothing); the token is not exported from the package's entry points.

const TOKEN: unique symbol = Symbol('cuda-ts: made by a factory');

/** The type of {@link SEALED}: a constructor's first parameter. @internal */
export type Sealed = typeof TOKEN;

/** What cuda-ts's own factories pass to the objects' constructors. @internal */
export const SEALED: Sealed = TOKEN;

/** TypeError `${name}: …; make one with ${how}` unless `seal` is SEALED. @internal */
export function checkSealed(seal: unknown, name: string, how: string): void {
  if (seal !== TOKEN) throw new TypeError(`${name}: the constructor is cuda-ts's own; make one with ${how}`);
}
