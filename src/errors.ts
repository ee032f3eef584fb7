// The objects layer's errors: one root. Every error the objects layer throws is a CudaError (the root
// of every module's errors too, from the support package) or, for an argument mistake, a JS TypeError
// or RangeError; each message starts with the calling `Class.method:`. A failing library status is that
// library's CudaError subclass (DriverError, NvrtcError, …); what the objects layer decides by itself
// (a closed object, a timeout, a refused store request) is an ObjectsError, with a negative code.
import { CudaError } from '../support';

export { CudaError };

/** The codes of {@link ObjectsError}s (a library status is never negative; -1 and -2 are the support package's). */
export const OBJECTS_ERROR = {
  /** An object used after close() (ClosedObjectError). */
  closed: -3,
  /** A compile, link or load failed (BuildError, with its log). */
  build: -4,
  /** A wait ran past its time limit. */
  timeout: -5,
  /** The rendezvous store refused or failed a request. */
  store: -6,
  /** A deferred free failed when it finally ran (DeferredFreeError). */
  deferredFree: -7,
  /** A blocking call refused while a JS callback is pending (HostCallbackPendingError). */
  callbackPending: -8,
  /** A library or feature this machine or device lacks (NVML, execution affinity, descriptor passing off Linux). */
  unavailable: -9,
  /** A method called in the wrong state (before compile(), after complete(), …). */
  state: -10,
  /** What the objects layer was given or read is not what it expected (no CUBIN, no lowered name, …). */
  missing: -11,
  /** An awaited wait cancelled through its AbortSignal (AbortError). */
  aborted: -12,
} as const;

/**
 * An error the objects layer raises itself rather than a library status. Its `name` is its class name
 * (`StoreTimeoutError`, …), `module` is `objects` and `func` the `Class.method` that threw.
 */
export class ObjectsError extends CudaError {
  /**
   * `where` is the calling `Class.method`; `message` is prefixed with it unless it already starts so.
   * @param where The `Class.method` that throws; it starts the message.
   * @param code One of OBJECTS_ERROR's codes.
   * @param message What went wrong.
   * @param options `cause`: the underlying error, if any.
   */
  constructor(where: string, code: number, message: string, options?: { cause?: unknown }) {
    super('objects', where, code, new.target.name, undefined, message.startsWith(`${where}:`) ? message : `${where}: ${message}`);
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/**
 * The `Class.method` a message starts with (`TcpStore.connect: …`, `TcpStore.barrier("x"): …`), else
 * `fallback`: for errors made from a message alone.
 */
export function whereOf(message: string, fallback: string): string {
  return /^([A-Z][\w$]*(?:\.[\w$]+)?)[(:]/.exec(message)?.[1] ?? fallback;
}

/** A method of an object that was closed (or whose context was destroyed) was called. */
export class ClosedObjectError extends ObjectsError {
  /** The kind of object (`Stream`, `DeviceBuffer`, `CUcontext`, …). */
  readonly kind: string;
  /**
   * `where` is the `Class.method` called (when not given: found on the stack, see `callerName`);
   * `kind` the closed object's kind.
   * @param where The `Class.method` called (undefined: found on the stack).
   * @param kind The closed object's kind (`Stream`, `DeviceBuffer`, …).
   */
  constructor(where: string | undefined, kind: string) {
    const at = where ?? callerName(CHECK_HELPERS, kind) ?? className(kind);
    super(at, OBJECTS_ERROR.closed, `the ${kind} is closed`);
    this.kind = kind;
  }
}

/**
 * Methods and functions of the objects layer that check on behalf of a public call (the door's
 * helpers, closed-object and usability checks): `callerName` passes over their frames.
 */
export const CHECK_HELPERS: ReadonlySet<string> = new Set([
  'assertOpen',
  'assertUsable',
  'check',
  'throwDeferred',
  'DeferredFreeError',
  'usable',
  'bind',
  'bindHinted',
  'rebindIfStale',
  'hinted',
  'call',
  'callHinted',
  'callOnStream',
  'query',
  'release',
  'global',
]);
/** `DeviceBuffer` of the kind `DeviceBuffer (wrapped)`. */
function className(kind: string): string {
  return /^[\w$]+/.exec(kind)?.[0] ?? kind;
}

/** The objects layer's folder (this file's): frames in files below it are the layer's own. */
const LAYER_DIR = __dirname;

/**
 * JavaScriptCore (Bun) names a method's frame by the method alone (`at completed (…/event.ts:…)`, where V8
 * writes `Event.completed`): there a bare name in the kind's own file (event.ts for Event,
 * memory-pool.ts for MemoryPool), or in the file of a class made before (blas.ts for Blas), takes that
 * class; other bare names stay functions (`launch`).
 */
const BARE_FRAMES = typeof process !== 'undefined' && process.versions?.bun !== undefined;

/** The class of each kind constructed so far, by its file's stem (`blas` → `Blas`), for frames without one. */
const bareFrameClasses = new Map<string, string>();
const notedKinds = new Set<string>();

/**
 * Notes `kind`'s class for frames in its own file that carry no class: Bun's bare ones, and V8's
 * `Function.x` for a static method run in a vm context (Jest). Called as each resource is made. @internal
 */
export function noteFrameClass(kind: string): void {
  if (notedKinds.has(kind)) return;
  notedKinds.add(kind);
  const cls = className(kind);
  const stem = kebab(cls);
  if (!bareFrameClasses.has(stem)) bareFrameClasses.set(stem, cls);
}

/** `event` of `/…/src/event.ts:12:5`. */
function fileStem(location: string): string {
  const base = location.slice(location.lastIndexOf('/') + 1);
  return base.slice(0, base.indexOf('.') < 0 ? base.length : base.indexOf('.'));
}

/** `memory-pool` of `MemoryPool`. */
function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

/** `SparseMatrix` of `sparse-matrix`: kebab's inverse. */
function pascal(stem: string): string {
  return stem.replace(/(^|-)([a-z0-9])/g, (_m, _d: string, c: string) => c.toUpperCase());
}

/** The class that lives in file `stem`: the kind's own, or one made before; undefined when none is known. */
function fileClass(stem: string, kind: string | undefined): string | undefined {
  return kind !== undefined && stem === kebab(className(kind)) ? className(kind) : bareFrameClasses.get(stem);
}

/** A bare Bun frame `name` in file `stem`: `Class.name` when a class lives there (the kind's, or one made before). */
function bareFrameName(name: string, stem: string, kind: string | undefined): string {
  const cls = fileClass(stem, kind);
  return cls === undefined ? name : `${cls}.${name}`;
}

/** A static method's frame in a vm context (`Function.x`): its file's class, or the file's name as a class. */
function staticFrameName(name: string, stem: string, kind: string | undefined): string {
  return `${fileClass(stem, kind) ?? pascal(stem)}.${name}`;
}

/** `Class.method` of one stack frame's function name (getters as `Class.name`), or undefined. */
function frameName(raw: string, kind: string | undefined): string | undefined {
  let name = raw;
  const getter = /^(?:([\w$.]+)\.)?[gs]et ([\w$]+)$/.exec(name);
  if (getter) name = `${getter[1] ?? (kind === undefined ? '' : className(kind))}.${getter[2]}`.replace(/^\./, '');
  if (name.startsWith('Object.')) name = name.slice(7);
  if (name === 'ClosedObjectError' || name === 'ObjectsError' || name.includes('<anonymous>')) return undefined;
  return name;
}

/**
 * The `Class.method` (or function) through which the program entered the objects layer, read from the
 * stack, for the messages of errors whose throw site is a shared helper (a closed-object check, the
 * door's bind): the outermost frame in the layer's own files before the program's code, so that a
 * method delegating to another (`Event.completed` → `Event.synchronized`) is named as called. Frames
 * whose method is in `skip` (the helpers) are passed over; frames of the engine and Node (native,
 * `node:`) neither count nor end the walk. Runs on error paths only (reading a stack is costly). A
 * getter's frame names no class: `kind`'s class name stands in. Undefined when no frame names one.
 */
export function callerName(skip: ReadonlySet<string>, kind?: string): string | undefined {
  const stack = new Error().stack;
  if (typeof stack !== 'string') return undefined;
  let outermost: string | undefined;
  for (const line of stack.split('\n').slice(2)) {
    // 0: the message, 1: this function
    const m = /^\s*at (?:async )?(?:new )?(.+?)(?: \[as [^\]]+\])? \((.*)\)$/.exec(line);
    if (m === null) continue;
    const file = m[2];
    if (!file.startsWith(LAYER_DIR)) {
      if (file.startsWith('node:') || file === '<anonymous>' || file === 'native') continue;
      break; // the program's own code (or a library's): the layer was entered below this frame
    }
    let name = frameName(m[1], kind);
    if (name === undefined) continue;
    if (name.startsWith('Function.')) name = staticFrameName(name.slice(9), fileStem(file), kind);
    else if (BARE_FRAMES && !name.includes('.')) name = bareFrameName(name, fileStem(file), kind);
    if (!skip.has(name.slice(name.lastIndexOf('.') + 1))) outermost = name;
  }
  return outermost;
}

/**
 * Building device code failed and the tool left a log: NVRTC compiling ({@link CompileError}), a linker
 * ({@link LinkError}) or the driver loading a module image ({@link ModuleLoadError}). `log` is the
 * tool's full log ('' when it wrote none); the message ends with it.
 */
export class BuildError extends CudaError {
  /** The compiler's, linker's or JIT's log ('' when there is none). */
  readonly log: string;
  /**
   * `status`: the failing library status when there is one (code and name), else the objects' own.
   * @param module The failing tool's module ('nvrtc', 'nvJitLink', 'driver').
   * @param where The `Class.method` that failed.
   * @param message What failed; the log is appended.
   * @param log The tool's full log ('' when there is none).
   * @param status The failing library status (`code` and `name`); default the objects layer's own build code.
   * @param cause The underlying library error, if any.
   */
  constructor(
    module: string,
    where: string,
    message: string,
    log: string,
    status: { code: number; name: string } = { code: OBJECTS_ERROR.build, name: 'CUDA_TS_BUILD_FAILED' },
    cause?: unknown,
  ) {
    super(module, where, status.code, status.name, undefined, message);
    this.log = log;
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}
