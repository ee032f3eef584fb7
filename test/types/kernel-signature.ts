// Type-level test (compiled by test/graph.test.ts with tsc, never run): launch arguments of a
// kernel declared with a literal signature are checked at compile time. Each @ts-expect-error line
// must be an error; the test also removes the comments and counts that every such line fails.
import { DeviceBuffer, LaunchConfig, Stream, arg, launch, type DevicePointer, type Kernel, type Module } from '../../src';

export function check(module: Module, stream: Stream, x: DeviceBuffer, y: DeviceBuffer): void {
  const cfg = LaunchConfig.linear(1024);

  // The tuple derived from the declared argument types (no generic parameter needed).
  const saxpy = module.kernel('saxpy', ['f32', 'ptr', 'ptr', 'u32']);
  const typed: Kernel<[number, DevicePointer, DevicePointer, number]> = saxpy;
  launch(stream, cfg, typed, 2, x, y, 1024);
  launch(stream, cfg, saxpy, arg.f32(2), x, null, 1024);
  saxpy.launch(stream, cfg, 2, x, y, 1024);
  // @ts-expect-error a string where a pointer goes
  launch(stream, cfg, saxpy, 2, x, 'y', 1024);
  // @ts-expect-error one argument missing
  launch(stream, cfg, saxpy, 2, x, y);
  // @ts-expect-error a pointer where a float goes
  saxpy.launch(stream, cfg, x, x, y, 1024);

  // The tuple given explicitly.
  const k = module.kernel<[DevicePointer, number, number]>('scale', ['ptr', 'f32', 'u32']);
  launch(stream, cfg, k, x, 1, 2);
  // @ts-expect-error the issue's example: a string where a pointer goes
  launch(stream, cfg, k, 'x', 1, 2);

  // 64-bit parameters take bigint too; structs take bytes.
  const wide = module.kernel('wide', ['u64', { struct: 16 }]);
  launch(stream, cfg, wide, 1n << 40n, new Uint8Array(16));
  // @ts-expect-error a number where a struct's bytes go
  launch(stream, cfg, wide, 1, 2);

  // Without a signature the arguments are checked at run time only.
  const untyped = module.kernel('anything');
  launch(stream, cfg, untyped, 'checked at run time', 1, {});
}
