// Errors thrown by the typed layer. Every module's error class extends CudaError.

/**
 * A failing status from a CUDA library, thrown by the typed layer. Each module throws its own subclass
 * (`DriverError`, …); the message reads `func failed: NAME (code): description`.
 */
export class CudaError extends Error {
  /** The numeric status (`CUresult`, `cudaError_t`, …). */
  readonly code: number;
  /** The status name (`CUDA_ERROR_INVALID_VALUE`). */
  override readonly name: string;
  /** The C function that failed. */
  readonly func: string;
  /** The cuda-ts module (`driver`, `runtime`, …). */
  readonly module: string;

  /**
   * Made by the typed layer; `description` (the library's text for the status) ends the message, and
   * `message` replaces the whole message (subclasses). What Node prints for the error (its stack) starts
   * `DriverError [CUDA_ERROR_OUT_OF_MEMORY]: cuMemAlloc failed: …`, as Node's own `TypeError [ERR_X]`.
   */
  constructor(module: string, func: string, code: number, name: string, description?: string, message?: string) {
    checkErrorArgs(new.target.name, module, func, code, name, description, message);
    super(message ?? `${func} failed: ${name} (${code})${description ? `: ${description}` : ''}`);
    this.module = module;
    this.func = func;
    this.code = code;
    this.name = name;
    // V8 writes the stack's first line from `name` when the stack is first read: class and status
    // there, with `name` the status name (the documented field) everywhere else.
    stackHeader(this, `${new.target.name} [${name}]`);
  }
}

/** Throws a TypeError/RangeError naming the error class and the argument when a CudaError is made from
 *  what it cannot carry (a status that is not an integer, a name that is not a string). */
function checkErrorArgs(cls: string, module: unknown, func: unknown, code: unknown, name: unknown, description: unknown, message: unknown): void {
  const strings: [string, unknown, boolean][] = [
    ['module', module, false],
    ['func', func, false],
    ['name', name, false],
    ['description', description, true],
    ['message', message, true],
  ];
  for (const [param, v, optional] of strings) {
    if (typeof v !== 'string' && !(optional && v === undefined))
      throw new TypeError(`${cls}: ${param} must be a string${optional ? ' or undefined' : ''}, got ${shortly(v)}`);
  }
  if (typeof code !== 'number') throw new TypeError(`${cls}: code must be an integer status, got ${shortly(code)}`);
  if (!Number.isSafeInteger(code)) throw new RangeError(`${cls}: code must be an integer status, got ${code}`);
}

function shortly(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v === null || typeof v !== 'object') return typeof v === 'function' ? 'a function' : String(v);
  return Array.isArray(v) ? 'an array' : 'an object';
}

// Where V8 formats `stack` on first read through an accessor (Node 21 and later: one getter/setter
// pair shared by every error), the error gets its own accessor that formats under the header name
// then; formatting is costly (~5M instructions for the first error of a process: line ends of the
// whole script), and most errors are caught without their stack read. Elsewhere, at construction.
// (Looked up at the first error, not at import: on Node 20 the descriptor's value is a formatted stack.)
let formatStack: { get: () => unknown } | null | undefined;
function nativeFormat(): { get: () => unknown } | null {
  const native = Object.getOwnPropertyDescriptor(new Error(), 'stack');
  return native !== undefined && typeof native.get === 'function' && typeof native.set === 'function' ? { get: native.get } : null;
}
const headers = new WeakMap<Error, string>();
const lazyStack: PropertyDescriptor = {
  configurable: true,
  enumerable: false,
  get(this: Error): unknown {
    const header = headers.get(this);
    if (header === undefined || !formatStack) return undefined;
    const name = this.name;
    this.name = header;
    let stack: unknown;
    try {
      stack = formatStack.get.call(this);
    } finally {
      this.name = name;
    }
    return setStack(this, stack);
  },
  set(this: Error, value: unknown): void {
    setStack(this, value);
  },
};

/** Makes `stack` a plain property holding `value` (formatted, or assigned by the program). */
function setStack(error: Error, value: unknown): unknown {
  Object.defineProperty(error, 'stack', { value, writable: true, configurable: true, enumerable: false });
  return value;
}

function stackHeader(error: Error, header: string): void {
  if ((formatStack ??= nativeFormat()) !== null) {
    headers.set(error, header);
    Object.defineProperty(error, 'stack', lazyStack);
    return;
  }
  const name = error.name;
  error.name = header;
  void error.stack;
  error.name = name;
}

/** A function the installed library does not provide (too old, or not exported). */
export class CudaSymbolError extends CudaError {
  /** Made by the binder; `detail` says which release or driver the function needs. Its `code` is -1. */
  constructor(module: string, func: string, detail: string) {
    checkErrorArgs(new.target.name, module, func, -1, '', undefined, undefined); // before the message is built from them
    if (typeof detail !== 'string') throw new TypeError(`${new.target.name}: detail must be a string, got ${shortly(detail)}`);
    super(module, func, -1, 'CUDA_TS_SYMBOL_NOT_FOUND', undefined, `${func} is not available: ${detail}`);
  }
}

/** The shared library of a module could not be loaded. */
export class CudaLibraryError extends CudaError {
  /** Every path tried, each with why it failed (also listed in the message). */
  readonly tried: string[];
  /**
   * Made by library discovery; its `code` is -2. `func` is the call that needed the library (the C
   * function whose first call loads it), which starts the message; `(load)` when none is known.
   */
  constructor(module: string, detail: string, tried: string[], func?: string) {
    checkErrorArgs(new.target.name, module, func ?? '', -2, '', undefined, undefined); // before the message is built from them
    if (typeof detail !== 'string') throw new TypeError(`${new.target.name}: detail must be a string, got ${shortly(detail)}`);
    if (!Array.isArray(tried) || !tried.every((t) => typeof t === 'string'))
      throw new TypeError(`${new.target.name}: tried must be an array of strings, got ${shortly(tried)}`);
    super(
      module,
      func || '(load)',
      -2,
      'CUDA_TS_LIBRARY_NOT_FOUND',
      undefined,
      `${func ? `${func}: ` : ''}cannot load the ${module} library: ${detail}${tried.length ? `\n  tried:\n    ${tried.join('\n    ')}` : ''}`,
    );
    this.tried = tried;
  }
}
