// The objects layer's errors: one root. Every error the objects layer throws is a CudaError (the root
// of every module's errors too, from the support package) or, for an argument mistake, a JS TypeError
// or RangeError; each message starts with the calling `Class.method:`. A failing library status is that
// library's CudaError subclass (DriverError, NvrtcError, …); what the objects layer decides by itself
// (a closed object, a timeout, a refused store request) is an ObjectsError, with a negative code.
import { CudaError } from '../support';

export { CudaError };

/** The codes of {@link ObjectsError}s (a library status is never negative; -1 and -2 are the support package's). */
export const OBJECTS_ERROR = {
  closed: -3,
  build: -4,
  timeout: -5,
  store: -6,
  deferredFree: -7,
  callbackPending: -8,
  unavailable: -9,
} as const;

/**
 * An error the objects layer raises itself rather than a library status. Its `name` is its class name
 * (`StoreTimeoutError`, …), `module` is `objects` and `func` the `Class.method` that threw.
 */
export class ObjectsError extends CudaError {
  /** `where` is the calling `Class.method`; `message` is prefixed with it unless it already starts so. */
  constructor(where: string, code: number, message: string, options?: { cause?: unknown }) {
    super('objects', where, code, new.target.name, undefined, message.startsWith(`${where}:`) ? message : `${where}: ${message}`);
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** A method of an object that was closed (or whose context was destroyed) was called. */
export class ClosedObjectError extends ObjectsError {
  /** The kind of object (`Stream`, `DeviceBuffer`, `CUcontext`, …). */
  readonly kind: string;
  /** `where` is the `Class.method` called; `kind` the closed object's kind. */
  constructor(where: string, kind: string) {
    super(where, OBJECTS_ERROR.closed, `the ${kind} is closed`);
    this.kind = kind;
  }
}

/**
 * Building device code failed and the tool left a log: NVRTC compiling ({@link CompileError}), a linker
 * ({@link LinkError}) or the driver loading a module image ({@link ModuleLoadError}). `log` is the
 * tool's full log ('' when it wrote none); the message ends with it.
 */
export class BuildError extends CudaError {
  /** The compiler's, linker's or JIT's log ('' when there is none). */
  readonly log: string;
  /** `status`: the failing library status when there is one (code and name), else the objects' own. */
  constructor(
    module: string, where: string, message: string, log: string,
    status: { code: number; name: string } = { code: OBJECTS_ERROR.build, name: 'CUDA_TS_BUILD_FAILED' },
    cause?: unknown,
  ) {
    super(module, where, status.code, status.name, undefined, message);
    this.log = log;
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}
