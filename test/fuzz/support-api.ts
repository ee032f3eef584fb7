// The public support API (what `cuda-ts/runtime-support` exports) as fuzz cases: every helper that
// takes arguments, each parameter given each value it must refuse while the others are valid. The
// contract is the typed layer's: a TypeError/RangeError naming the helper and the parameter (an argument
// helper may name instead the call and parameter it was asked to check: `userFn: userParam`), never a
// value taken silently, never a crash. Left out: predicates that answer for any value (describeValue,
// isArrayBuffer, isDataView, isUint8Array, isPointerLike: test/runtime.test.ts checks its answers),
// callbackSettled (no argument; refused with none pending, see test/runtime.test.ts), koffi itself, and
// the generated modules' plumbing that is still to review (Binder, loadLibrary, libraryCandidates,
// nodeFfi*: their files belong to the FFI back ends' work).
import type * as Support from '../../support';
import { BAD_VALUES, type ArgSpec } from './values';
import type { FuzzCase } from './cases';

/** The call and parameter names the argument helpers are given to check (errors may name these). */
export const SUPPORT_CALLER = { fn: 'userFn', param: 'userParam' } as const;

const support = (): typeof Support => require('../../support') as typeof Support;
let recordType: Support.KoffiType | undefined;
/** The record the record helpers are given: { a: uint32, b: int32, p: void * }, 16 bytes. */
const testRecord = (): Support.KoffiType => (recordType ??= support().koffi.struct({ a: 'uint32_t', b: 'int32_t', p: 'void *' }));
let protoType: Support.KoffiType | undefined;
const testProto = (): Support.KoffiType => (protoType ??= support().koffi.proto('void SupportFuzzCallback(void *)'));

/** Valid arguments, by id. */
const NEUTRAL: Record<string, () => unknown> = {
  userFn: () => SUPPORT_CALLER.fn,
  userParam: () => SUPPORT_CALLER.param,
  text: () => 'text',
  false: () => false,
  true: () => true,
  zero: () => 0,
  one: () => 1,
  four: () => 4,
  undefined: () => undefined,
  bytes16: () => new Uint8Array(16),
  recordType: testRecord,
  proto: testProto,
  record: () => ({ a: 1 }),
  records: () => [{ a: 1 }],
  recordFactsOf: () => 'recordFactsOf',
  i32: () => 'i32',
  u8: () => 'u8',
  names: () => ['a', 'b'],
  counts: () => [1, 1],
  present: () => [true, true],
  struct: () => 'struct',
  fields: () => () => [['a', 'int']],
  object: () => ({}),
  fn: () => () => undefined,
  release: () => '13.0',
  version: () => 13000,
  tried: () => [],
  tag: () => 'CUstream_st',
  handle: () => 0x7f0000002000,
  binderLike: () => ({ native: () => () => 0 }),
  f32: () => 'f32',
  either: () => 'either',
};

/** Bad values beyond the typed layer's list (values.ts), by id. */
const MORE_BAD: Record<string, () => unknown> = {
  'ArrayBuffer(1)': () => new ArrayBuffer(1),
  'DataView(1)': () => new DataView(new ArrayBuffer(1)),
  'Int8Array(2)': () => new Int8Array(2),
  'Int16Array(2)': () => new Int16Array(2),
  'Float32Array(1)': () => new Float32Array(1),
  'BigInt64Array(1)': () => new BigInt64Array(1),
  'Symbol()': () => Symbol('fuzz'),
  '{a:1.9}': () => ({ a: 1.9 }),
  '{a:2**32+3}': () => ({ a: 2 ** 32 + 3 }),
  '{a:NaN}': () => ({ a: NaN }),
  "{a:'x'}": () => ({ a: 'x' }),
  "{p:'x'}": () => ({ p: 'x' }),
  '{aa:1}': () => ({ aa: 1 }),
  '[1.5]': () => [1.5],
  '[256]': () => [256],
  "['x']": () => ['x'],
  '[{a:1.9}]': () => [{ a: 1.9 }],
  'koffi int type': () => support().koffi.type('int'),
  "'1.5'": () => '1.5',
  '12345': () => 12345,
  '2**31': () => 2 ** 31,
};

const BAD_IDS = [...Object.keys(BAD_VALUES), ...Object.keys(MORE_BAD)];

/** A value of the support fuzz by id (neutral or bad); the child builds arguments with it. */
export function supportValue(id: string): unknown {
  const make = NEUTRAL[id] ?? MORE_BAD[id] ?? (BAD_VALUES as Record<string, () => unknown>)[id];
  if (!make) throw new Error(`support fuzz: no value ${id}`);
  return make();
}

// ── what each parameter takes ────────────────────────────────────────────────────────────────────

const isStr = (v: unknown) => typeof v === 'string';
const isBool = (v: unknown) => typeof v === 'boolean';
const isFn = (v: unknown) => typeof v === 'function';
const isSafeUint = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isAddr = (v: unknown) => isSafeUint(v) || (typeof v === 'bigint' && v >= 0n && v < 1n << 64n);
const isInt64 = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'bigint' && v >= -(1n << 63n) && v < 1n << 63n);
const byteLength = (v: unknown): number | undefined =>
  ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof SharedArrayBuffer ? v.byteLength : undefined;
const isBuf = (v: unknown) => byteLength(v) !== undefined;
const atLeast = (n: number) => (v: unknown) => (byteLength(v) ?? -1) >= n;
const isObj = (v: unknown) => typeof v === 'object' && v !== null;
const inRange = (lo: number, hi: number) => (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi;
const never = () => false;
/** `{ ptr }` holding an address (a DeviceBuffer's shape). */
const holdsAddress = (v: unknown) => isObj(v) && !isBuf(v) && 'ptr' in (v as object) && isAddr((v as { ptr: unknown }).ptr);

/** Whether `v` is a valid record object of the test record type (fields a: u32, b: i32, p: pointer). */
function isTestRecord(v: unknown): boolean {
  if (!isObj(v) || Array.isArray(v) || ArrayBuffer.isView(v)) return false;
  const r = v as Record<string, unknown>;
  if (!Object.keys(r).every((k) => k === 'a' || k === 'b' || k === 'p')) return false;
  const ok = (k: string, test: (x: unknown) => boolean) => r[k] === undefined || test(r[k]);
  return ok('a', inRange(0, 2 ** 32 - 1)) && ok('b', inRange(-(2 ** 31), 2 ** 31 - 1)) && ok('p', (x) => x === null || isAddr(x) || ArrayBuffer.isView(x));
}

interface HelperParam {
  name: string;
  neutral: string;
  valid: (v: unknown) => boolean;
}
const param = (name: string, neutral: string, valid: (v: unknown) => boolean): HelperParam => ({ name, neutral, valid });
const fnName = param('fn', 'userFn', isStr);
const paramName = param('param', 'userParam', isStr);
const nullable = param('nullable', 'false', isBool);
const recType = param('type', 'recordType', never);

/** Every helper fuzzed: its name (as its errors name it) and its parameters in order. */
const HELPERS: [string, HelperParam[]][] = [
  ['argError', [fnName, paramName, param('expected', 'text', isStr)]],
  ['intError', [fnName, paramName, param('ctype', 'i32', (v) => ['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64'].includes(v as string))]],
  ['int64Arg', [fnName, paramName, param('v', 'zero', isInt64), param('signed', 'true', isBool)]],
  ['addressArg', [fnName, paramName, param('v', 'zero', isAddr), nullable]],
  [
    'pointerArg',
    [
      fnName,
      paramName,
      param('v', 'bytes16', (v) => isAddr(v) || atLeast(4)(v)),
      nullable,
      param('size', 'four', (v) => v === undefined || (isAddr(v) && Number(v) <= 4)),
    ],
  ],
  ['callbackArg', [fnName, paramName, param('v', 'zero', isAddr), nullable]],
  ['deviceArg', [fnName, paramName, param('v', 'zero', (v) => isAddr(v) || holdsAddress(v)), nullable]],
  [
    'hostArg',
    [
      fnName,
      paramName,
      param('v', 'bytes16', (v) => isAddr(v) || atLeast(4)(v)),
      nullable,
      param('bytes', 'four', (v) => v === undefined || (isAddr(v) && Number(v) <= 4)),
    ],
  ],
  [
    'memoryArg',
    [
      fnName,
      paramName,
      param('v', 'bytes16', (v) => isAddr(v) || atLeast(4)(v) || holdsAddress(v)),
      nullable,
      param('bytes', 'four', (v) => v === undefined || (isAddr(v) && Number(v) <= 4)),
    ],
  ],
  // a float scalar in either space: its value, a host buffer of 4 bytes or more, or { ptr }
  [
    'scalarArg',
    [
      fnName,
      paramName,
      param('type', 'f32', (v) => ['f16', 'bf16', 'f32', 'f64', 'c64', 'c128', 'i8', 'u8', 'i32', 'u32', 'i64', 'u64', 'untyped'].includes(v as string)),
      param('space', 'either', (v) => v === 'device' || v === 'host' || v === 'either'),
      param('v', 'one', (v) => typeof v === 'number' || atLeast(4)(v) || holdsAddress(v)),
      param('box', 'bytes16', (v) => v instanceof Uint8Array && v.buffer.byteLength - v.byteOffset >= 4),
    ],
  ],
  ['halfBits', [param('x', 'one', (v) => typeof v === 'number')]],
  ['checkRecord', [fnName, paramName, recType, param('value', 'record', isTestRecord)]],
  [
    'recordArg',
    [
      fnName,
      paramName,
      recType,
      param('value', 'record', (v) => isTestRecord(v) || atLeast(16)(v)),
      nullable,
      param('into', 'undefined', (v) => v === undefined || (v instanceof Uint8Array && v.byteLength >= 16)),
    ],
  ],
  [
    'recordArrayArg',
    [
      fnName,
      paramName,
      recType,
      param(
        'value',
        'records',
        (v) => (Array.isArray(v) && v.every(isTestRecord)) || ((ArrayBuffer.isView(v) || v instanceof ArrayBuffer) && v.byteLength % 16 === 0),
      ),
      nullable,
    ],
  ],
  // bytes too short for count records: count is blamed
  ['decodeRecords', [recType, param('bytes', 'bytes16', (v) => v instanceof Uint8Array), param('count', 'one', inRange(0, 1))]],
  [
    'scalarArrayArg',
    [
      fnName,
      paramName,
      param('ctype', 'u8', (v) => ['address', 'i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64', 'f32', 'f64', 'bool'].includes(v as string)),
      param('value', 'bytes16', (v) => v instanceof Uint8Array || v instanceof Uint8ClampedArray || (Array.isArray(v) && v.every(inRange(0, 255)))),
      nullable,
    ],
  ],
  [
    'stringArrayArg',
    [
      fnName,
      paramName,
      param('value', 'names', (v) => v instanceof BigUint64Array || (Array.isArray(v) && v.every((s) => isStr(s) && !(s as string).includes('\0')))),
      nullable,
    ],
  ],
  // names of another length than counts: counts is blamed (names says how many there are)
  [
    'sameLength',
    [
      fnName,
      param('names', 'names', (v) => Array.isArray(v) && v.every(isStr)),
      param('counts', 'counts', (v) => Array.isArray(v) && v.length === 2 && v.every(isSafeUint)),
      param('present', 'present', (v) => Array.isArray(v) && v.length === 2 && v.every(isBool)),
    ],
  ],
  [
    'coversCount',
    [
      fnName,
      paramName,
      param('length', 'one', (v) => isSafeUint(v) && (v as number) >= 1),
      param('count', 'one', (v) => isInt64(v) && (v as number | bigint) <= 1),
      param('countName', 'text', isStr),
    ],
  ],
  ['allocLength', [fnName, paramName, param('n', 'one', (v) => inRange(0, 2 ** 31 - 1)(v) || (typeof v === 'bigint' && v >= 0n && v < 2n ** 31n))]],
  [
    'rawCovers',
    [
      fnName,
      paramName,
      param(
        'v',
        'bytes16',
        (v) => v === null || isAddr(v) || (atLeast(4)(v) && [undefined, 1, 4].includes((v as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT)),
      ),
      param('bytes', 'four', isSafeUint),
      param('elemBytes', 'four', (v) => isSafeUint(v) && (v as number) >= 1),
    ],
  ],
  ['addressOf', [param('buf', 'bytes16', isBuf)]],
  [
    'encodeRecord',
    [recType, param('value', 'record', isTestRecord), param('into', 'undefined', (v) => v === undefined || (v instanceof Uint8Array && v.byteLength >= 16))],
  ],
  [
    'decodeRecord',
    [recType, param('from', 'bytes16', (v) => (v instanceof Uint8Array || v instanceof ArrayBuffer || ArrayBuffer.isView(v)) && atLeast(16)(v))],
  ],
  // an integer address of 4096 or more is taken as C's (reading it is C-exact): never sent
  ['readCString', [param('address', 'zero', (v) => v === null || v === 0 || v === 0n || (isAddr(v) && Number(v) >= 4096))]],
  ['textFrom', [param('bytes', 'bytes16', (v) => v instanceof Uint8Array)]],
  [
    'lazyRecord',
    [
      param('kind', 'struct', (v) => v === 'struct' || v === 'union'),
      param('fields', 'fields', isFn),
      param('pack', 'undefined', (v) => v === undefined || isSafeUint(v)),
    ],
  ],
  ['lazyRecords', [param('exports', 'object', isObj), param('table', 'text', isStr)]],
  ['lazyEnums', [param('exports', 'object', isObj), param('table', 'text', isStr)]],
  ['lazyFunctions', [param('exports', 'object', isObj), param('table', 'text', isStr), param('load', 'fn', isFn)]],
  ['toAddress', [param('v', 'zero', (v) => isAddr(v) && Number(v) <= Number.MAX_SAFE_INTEGER)]],
  ['versionString', [param('n', 'version', (v) => isSafeUint(v) && (v as number) % 10 === 0)]],
  ['requirement', [param('cudaVersion', 'release', (v) => isStr(v) && /^\d+\.\d+$/.test(v as string))]],
  ['onCallbacksDrained', [param('hook', 'fn', isFn)]],
  ['assertMayBlock', [param('op', 'text', isStr)]],
  ['oneShotCallback', [param('proto', 'proto', never), param('fn', 'fn', isFn)]],
  ['HostCallbackPendingError', [param('op', 'text', isStr)]],
  ['hostCallbacks.pending', [param('value', 'zero', (v) => isSafeUint(v))]],
  [
    'CudaError',
    [
      param('module', 'text', isStr),
      param('func', 'text', isStr),
      param('code', 'one', (v) => typeof v === 'number' && Number.isSafeInteger(v)),
      param('name', 'text', isStr),
      param('description', 'undefined', (v) => v === undefined || isStr(v)),
      param('message', 'undefined', (v) => v === undefined || isStr(v)),
    ],
  ],
  ['CudaSymbolError', [param('module', 'text', isStr), param('func', 'text', isStr), param('detail', 'text', isStr)]],
  ['CudaLibraryError', [param('module', 'text', isStr), param('detail', 'text', isStr), param('tried', 'tried', (v) => Array.isArray(v) && v.every(isStr))]],
  [
    'new Scratch',
    [param('slots', 'one', inRange(1, 4096)), param('slotBytes', 'undefined', (v) => v === undefined || (inRange(8, 65536)(v) && (v as number) % 8 === 0))],
  ],
  ['Scratch.slot', [param('i', 'zero', inRange(0, 1))]],
  ['Scratch.address', [param('i', 'zero', inRange(0, 1))]],
  ['Scratch.size', [param('i', 'zero', inRange(0, 1))]],
  [
    'registerHandle',
    [
      param('tag', 'tag', (v) => isStr(v) && /^\w+$/.test(v as string)),
      param('handle', 'handle', (v) => isAddr(v) && Number(v) > 0 && Number(v) <= Number.MAX_SAFE_INTEGER),
    ],
  ],
  ['checkHandles', [param('binder', 'binderLike', (v) => isObj(v) && isFn((v as { native?: unknown }).native)), param('table', 'text', isStr)]],
  ['recordFactsOf', [param('helper', 'recordFactsOf', isStr), param('type', 'recordType', never)]],
];

/** Every case of the support fuzz, numbered from `firstId`; `only` limits them to those helpers. */
export function supportCases(firstId: number, only?: Set<string>): FuzzCase[] {
  const cases: FuzzCase[] = [];
  let id = firstId;
  for (const [helper, params] of HELPERS) {
    if (only && !only.has(helper)) continue;
    const base: ArgSpec[] = params.map((p) => ({ s: p.neutral }));
    params.forEach((p, position) => {
      for (const value of BAD_IDS) {
        if (p.valid(supportValue(value))) continue;
        const args = base.slice();
        args[position] = { s: value };
        cases.push({ id: id++, layer: 'support', module: 'support', fn: helper, param: p.name, position, accepts: helper, value, args });
      }
    });
  }
  return cases;
}

/** Calls helper `name` with `args` (a method on a fresh Scratch of 2 slots, a setter, a constructor). */
export function callSupport(name: string, args: unknown[]): unknown {
  const S = support() as unknown as Record<string, unknown> & typeof Support;
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const a = args as any[];
  switch (name) {
    case 'new Scratch':
      return new S.Scratch(a[0], a[1]);
    case 'Scratch.slot':
      return new S.Scratch(2).slot(a[0]);
    case 'Scratch.address':
      return new S.Scratch(2).address(a[0]);
    case 'Scratch.size':
      return new S.Scratch(2).size(a[0]);
    case 'hostCallbacks.pending':
      S.hostCallbacks.pending = a[0];
      return S.hostCallbacks.pending;
    case 'HostCallbackPendingError':
    case 'CudaError':
    case 'CudaSymbolError':
    case 'CudaLibraryError':
      return new (S[name] as new (...args: any[]) => unknown)(...a);
    default: {
      const f = S[name];
      if (typeof f !== 'function') throw new Error(`support fuzz: ${name} is not exported by the support package`);
      return (f as (...args: any[]) => unknown)(...a);
    }
  }
  /* eslint-enable @typescript-eslint/no-explicit-any */
}
