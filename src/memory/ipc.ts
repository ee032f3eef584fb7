// GPU memory shared between processes (and worker threads).
//
//   - Stream-ordered pools: IpcMemoryPool.create() makes a pool whose memory can be exported as a POSIX
//     file descriptor (cuMemPoolExportToShareableHandle). pool.exportHandle() describes the pool,
//     pool.exportBuffer(buf) one allocation of it (cuMemPoolExportPointer); both are plain objects
//     (JSON- and postMessage-safe). The importer calls importPool(handle) once, then
//     pool.importBuffer(exported) per buffer (cuMemPoolImportPointer): a DeviceBuffer that keeps the
//     imported pool, hence the mapping, alive until closed.
//   - Legacy IPC (cuIpcGetMemHandle / cuIpcOpenMemHandle): exportMemHandle(buf) for memory from
//     cuMemAlloc (DeviceBuffer.alloc without a stream), openMemHandle(handle) on the other side.
//   - Events: exportEvent(event) for an Event created with { interprocess: true, timing: false },
//     openEvent(handle) on the other side (record, wait, query).
//
// How the pool's file descriptor crosses processes: exportHandle() serves it on an abstract Unix
// socket (src/memory/fd-passing.ts: SCM_RIGHTS, a random token in the handle, bounded waits), and the importer
// receives a duplicate of the same open file description from it ('socket'). The exporter answers from
// its event loop, so it must not be blocked while importers connect. Where that fails (no ticket, an
// old handle) the importer duplicates it with pidfd_open + pidfd_getfd (Linux >= 5.6; needs ptrace
// permission over the exporter: under Yama ptrace_scope=1 only a parent may take from its child, unless
// the exporter opts in with exportHandle({ allowImporter: pid | 'any' }), prctl PR_SET_PTRACER; often
// refused in containers by seccomp). Re-opening /proc/<pid>/fd/<fd> is tried last and only for regular
// files: for a device or anon-inode descriptor (what CUDA exports) it would open the file anew instead
// of duplicating it. A child started with the descriptor in its stdio can pass `{ fd }` to importPool.
// In the same process (a worker thread) nothing is duplicated: the address is valid as it is, and
// importBuffer gives a view.
//
// TRUST BOUNDARY: whoever holds an exported handle (and can reach the exporting process as the same
// user) can read and write that memory — the whole pool for a pool handle. Share handles only with
// processes you trust as much as the exporter; allowImporter 'any' lets every process of this user
// take the descriptor (and ptrace the exporter).
import { readlinkSync, constants as fsConstants } from 'node:fs';
import { koffi } from '../../support';
import { loadLibc } from './libc';
import * as drv from '../driver';
import { Context } from '../context';
import { Device } from '../device';
import { Event } from '../event';
import { Resource, checkSize, whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from './device-buffer';
import { streamHandle, type StreamLike } from '../stream';
import { type PollOptions } from '../poll';
import { waitFor } from '../await/waiter';
import type { DescriptorTicket } from './fd-passing';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { SEALED, type Sealed, checkSealed } from '../sealed';

// node:net and node:crypto load only when a pool is exported or imported
const fdPassing = (): typeof import('./fd-passing') => require('./fd-passing') as typeof import('./fd-passing');

const POSIX_FD = drv.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

// Driver calls go through the door (src/driver.ts): drv.call binds the context and turns a failing
// status into a DriverError, drv.release skips a free once a sticky error took the context and marks
// one a free meets. The arguments are built here (out slots, fixed-size byte arrays, a 64-byte record)
// so they always have the types and sizes the C functions take.
function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
function fromHex(call: string, name: string, hex: unknown, bytes: number): Uint8Array {
  if (typeof hex !== 'string' || hex.length !== 2 * bytes || !/^[0-9a-f]*$/i.test(hex)) throw new TypeError(`${call}: ${name} must be ${2 * bytes} hex digits`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
/** A 64-byte handle as the record koffi passes by value (char[64]: signed bytes). */
function handleRecord(bytes: Uint8Array): { reserved: number[] } {
  return { reserved: Array.from(new Int8Array(bytes.buffer, bytes.byteOffset, 64)) };
}
function checkHandle(call: string, h: unknown, kind: string): Record<string, unknown> {
  if (typeof h !== 'object' || h === null || (h as { kind?: unknown }).kind !== kind)
    throw new TypeError(`${call}: expected a handle of kind '${kind}' (from the exporting side)`);
  return h as Record<string, unknown>;
}
function checkPid(call: string, v: unknown): number {
  if (!Number.isInteger(v) || (v as number) <= 0) throw new TypeError(`${call}: handle.pid must be a process id`);
  return v as number;
}

/**
 * Closes an OS descriptor (the driver's export, a pidfd, one received over a socket or opened through
 * procfs) with libc's close: under Deno, node:fs's descriptors are its own resource numbers, and its
 * closeSync of the driver's descriptor fails with "Bad file descriptor".
 */
function closeRawFd(fd: number): void {
  loadLibc().close(fd);
}
// Generic syscall numbers (x86_64 and aarch64 alike).
const SYS_PIDFD_OPEN = 434;
const SYS_PIDFD_GETFD = 438;
const PR_SET_PTRACER = 0x59616d61;
const PR_SET_PTRACER_ANY = 0xffffffffffffffffn;

/** A descriptor of process `pid` duplicated into this one: pidfd_getfd, else /proc/<pid>/fd/<fd>. */
function takeDescriptor(call: string, pid: number, fd: number, reasons: string[] = []): { fd: number; how: 'pidfd_getfd' | 'procfs' } {
  if (process.platform === 'linux') {
    try {
      const c = loadLibc();
      const pidfd = c.syscall3(SYS_PIDFD_OPEN, pid, 0, 0);
      if (pidfd < 0) reasons.push(`pidfd_open: errno ${koffi.errno()}`);
      else {
        try {
          const got = c.syscall3(SYS_PIDFD_GETFD, pidfd, fd, 0);
          if (got >= 0) return { fd: got, how: 'pidfd_getfd' };
          const errno = koffi.errno();
          reasons.push(
            `pidfd_getfd: errno ${errno}${errno === 1 ? ' (EPERM: ptrace_scope forbids it; the exporter can allow this process with exportHandle({ allowImporter }))' : ''}`,
          );
        } finally {
          closeRawFd(pidfd);
        }
      }
    } catch (e) {
      reasons.push(`pidfd: ${(e as Error).message}`);
    }
  }
  try {
    const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    // a device node or anon inode re-opened is a new open file, not the exporter's: refuse, never guess
    if (target.startsWith('/dev/') || target.startsWith('anon_inode:') || !target.startsWith('/'))
      throw new Error(`it is ${target}, which re-opening would not duplicate`);
    // libc's open, not node:fs's: the driver needs an OS descriptor, which Deno's fs does not hand out
    const opened = loadLibc().open(`/proc/${pid}/fd/${fd}`, fsConstants.O_RDWR);
    if (opened < 0) throw new Error(`open: errno ${koffi.errno()}`);
    return { fd: opened, how: 'procfs' };
  } catch (e) {
    reasons.push(`/proc/${pid}/fd/${fd}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  throw new ObjectsError(
    call,
    OBJECTS_ERROR.unavailable,
    `cannot take descriptor ${fd} of process ${pid} (${reasons.join('; ')}); start the importer as a child with the descriptor in its stdio and pass { fd }`,
  );
}

/**
 * Lets `importer` (a pid, or 'any' process of this user) take descriptors from this process under Yama ptrace_scope=1.
 * @param importer The pid of the importing process, or 'any' process of this user.
 */
export function allowDescriptorImport(importer: number | 'any'): void {
  const call = 'allowDescriptorImport';
  if (importer !== 'any' && !(Number.isInteger(importer) && importer > 0)) throw new TypeError(`${call}: importer must be a pid or 'any'`);
  if (process.platform !== 'linux') return;
  const r = loadLibc().prctl(PR_SET_PTRACER, importer === 'any' ? PR_SET_PTRACER_ANY : BigInt(importer), 0, 0, 0);
  // EINVAL: no Yama in this kernel, so nothing to allow
  if (r !== 0 && koffi.errno() !== 22) throw new ObjectsError(call, OBJECTS_ERROR.unavailable, `prctl(PR_SET_PTRACER) failed with errno ${koffi.errno()}`);
}

/** Describes a shareable pool: pass it to {@link importPool} in another process (JSON/postMessage-safe). */
export interface PoolHandle {
  /** What the handle describes (checked when it is imported). */
  readonly kind: 'cuda-ts/pool';
  /** The exporting process. */
  readonly pid: number;
  /** The pool's descriptor in the exporting process. */
  readonly fd: number;
  /** The device whose memory the pool holds. */
  readonly device: number;
  /** Where the exporter serves the descriptor (a Unix socket and the token naming it). */
  readonly ticket?: DescriptorTicket;
}

/** Describes one allocation of a shareable pool: pass it to {@link ImportedMemoryPool.importBuffer}. */
export interface BufferHandle {
  /** What the handle describes (checked when it is imported). */
  readonly kind: 'cuda-ts/pool-buffer';
  /** The exporting process. */
  readonly pid: number;
  /** CUmemPoolPtrExportData, 64 bytes as hex. */
  readonly data: string;
  /** Bytes of the allocation. */
  readonly byteLength: number;
  /** The address in the exporting process (used as is by worker threads of that process). */
  readonly address: number;
  /** Ordinal of the device whose memory it is. */
  readonly device: number;
}

/** A device buffer allocated from, or imported into, a pool; or opened from a legacy handle. */
export class SharedBuffer extends DeviceBuffer {
  /** @internal `keep` (the pool) is kept alive until this buffer is freed, like a parent. */
  constructor(
    seal: Sealed,
    kind: string,
    address: number,
    byteLength: number,
    context: Context,
    destroy: (() => void) | undefined,
    keep: Resource | undefined,
  ) {
    checkSealed(seal, 'SharedBuffer', 'pool.alloc(), pool.importBuffer() or openMemHandle()');
    const keepCore = keep?.core;
    if (keepCore) keepCore.refs++;
    super(seal, kind, address, byteLength, context, () => {
      try {
        destroy?.();
      } finally {
        if (keepCore) {
          keepCore.refs--;
          // what Core does for its parents: destroy the pool now if it was closed while this buffer lived
          (keepCore as unknown as { maybeDestroy(): void }).maybeDestroy();
        }
      }
    });
  }
}

/**
 * A stream-ordered memory pool whose memory other processes can map (POSIX file descriptor handles).
 * alloc() on a stream; exportHandle() / exportBuffer() describe the pool and its buffers to importers.
 */
export class IpcMemoryPool extends Resource {
  /** The driver handle (CUmemoryPool). */
  readonly handle: drv.CUmemoryPool;
  /** The context used for the pool's calls. */
  readonly context: Context;
  /** The device whose memory the pool holds. */
  readonly device: number;

  private constructor(seal: Sealed, handle: drv.CUmemoryPool, context: Context, device: number, state: { fd: number; ticket?: DescriptorTicket }) {
    checkSealed(seal, 'IpcMemoryPool', 'IpcMemoryPool.create()');
    super(
      'IpcMemoryPool',
      () =>
        whenNoHostFuncs(() => {
          if (state.ticket) fdPassing().withdrawDescriptor(state.ticket);
          if (state.fd >= 0) closeRawFd(state.fd);
          drv.release(context, 'cuMemPoolDestroy', handle);
        }),
      [context],
    );
    this.handle = handle;
    this.context = context;
    this.device = device;
    this.state = state;
  }
  private readonly state: { fd: number; ticket?: DescriptorTicket };

  /**
   * Creates a pool on `device` (default 0) whose allocations can be exported.
   * @param options `device` (the ordinal of the device whose memory it holds; default 0) and `maxSize` (most bytes the pool may reserve; default 0, no limit).
   */
  static create(options: { device?: number; maxSize?: number } = {}): IpcMemoryPool {
    const call = 'IpcMemoryPool.create';
    const device = options.device ?? 0;
    if (!Number.isInteger(device) || device < 0) throw new TypeError(`${call}: device must be a device ordinal, got ${String(device)}`);
    const maxSize = checkSize(`${call}: maxSize`, options.maxSize ?? 0);
    const ctx = Context.primary(device);
    const props = new DataView(new ArrayBuffer(88));
    props.setInt32(0, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, true);
    props.setInt32(4, POSIX_FD, true);
    props.setInt32(8, drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, true);
    props.setInt32(12, device, true);
    props.setBigUint64(24, BigInt(maxSize), true);
    drv.call(ctx, 'cuMemPoolCreate', drv.out64, new Uint8Array(props.buffer));
    const pool = drv.outNumber() as drv.CUmemoryPool;
    return new IpcMemoryPool(SEALED, pool, ctx, device, { fd: -1 });
  }

  /**
   * Stream-ordered allocation from this pool (cuMemAllocFromPoolAsync), freed on the same stream.
   * @param byteLength Bytes to allocate (a non-negative integer).
   * @param stream The stream the allocation is ordered on and freed on.
   */
  alloc(byteLength: number, stream: StreamLike): SharedBuffer {
    const call = 'IpcMemoryPool.alloc';
    this.assertOpen();
    checkSize(`${call}: byteLength`, byteLength);
    if (byteLength === 0) throw new RangeError(`${call}: byteLength must be positive`);
    const h = streamHandle(stream, `${call}: stream`);
    const ctx = this.context;
    drv.allocate(ctx, 'cuMemAllocFromPoolAsync', drv.out64, byteLength, this.handle, h);
    const ptr = drv.outNumber();
    return new SharedBuffer(SEALED, 'SharedBuffer', ptr, byteLength, ctx, () => whenNoHostFuncs(() => drv.release(ctx, 'cuMemFreeAsync', ptr, h)), this);
  }

  /**
   * Describes this pool for importPool() in another process. `allowImporter` (a pid or 'any') lets
   * that process take the descriptor under Yama ptrace_scope=1 (see the trust boundary above).
   * @param options `allowImporter`: the pid of the importing process, or 'any' process of this user, allowed to take the pool's descriptor under Yama ptrace_scope=1 (default: none named).
   */
  exportHandle(options: { allowImporter?: number | 'any' } = {}): PoolHandle {
    this.assertOpen();
    if (this.state.fd < 0) {
      const out = new Int32Array(2);
      drv.call(this.context, 'cuMemPoolExportToShareableHandle', out, this.handle, POSIX_FD, 0);
      this.state.fd = out[0];
      this.state.ticket = fdPassing().serveDescriptor(out[0]);
    }
    if (options.allowImporter !== undefined) allowDescriptorImport(options.allowImporter);
    return { kind: 'cuda-ts/pool', pid: process.pid, fd: this.state.fd, device: this.device, ticket: this.state.ticket };
  }

  /**
   * Describes `buf` (allocated from this pool) for ImportedMemoryPool.importBuffer (cuMemPoolExportPointer).
   * @param buf A buffer allocated from this pool with alloc().
   */
  exportBuffer(buf: SharedBuffer): BufferHandle {
    const call = 'IpcMemoryPool.exportBuffer';
    this.assertOpen();
    if (!(buf instanceof SharedBuffer)) throw new TypeError(`${call}: buf must be a buffer from IpcMemoryPool.alloc`);
    const data = new Uint8Array(64);
    const ptr = buf.ptr;
    drv.call(this.context, 'cuMemPoolExportPointer', data, ptr);
    return { kind: 'cuda-ts/pool-buffer', pid: process.pid, data: toHex(data), byteLength: buf.byteLength, address: ptr, device: this.device };
  }
}

/** A pool imported from another process: importBuffer() maps its exported buffers here. */
export class ImportedMemoryPool extends Resource {
  /** The imported driver handle (CUmemoryPool); 0 for a pool of this same process. */
  readonly handle: drv.CUmemoryPool;
  /** The context buffers are imported into. */
  readonly context: Context;
  /** The exporting process. */
  readonly pid: number;
  /** How the descriptor was obtained. */
  readonly via: 'socket' | 'pidfd_getfd' | 'procfs' | 'given' | 'same-process';

  private constructor(seal: Sealed, handle: drv.CUmemoryPool, context: Context, pid: number, via: ImportedMemoryPool['via']) {
    checkSealed(seal, 'ImportedMemoryPool', 'ImportedMemoryPool.open()');
    super('ImportedMemoryPool', handle === 0 ? undefined : () => whenNoHostFuncs(() => drv.release(context, 'cuMemPoolDestroy', handle)), [context]);
    this.handle = handle;
    this.context = context;
    this.pid = pid;
    this.via = via;
  }

  /** @internal */
  static open(handle: PoolHandle, options: ImportPoolOptions = {}): ImportedMemoryPool {
    const call = 'importPool';
    const h = checkHandle(call, handle, 'cuda-ts/pool');
    const pid = checkPid(call, h.pid);
    if (!Number.isInteger(h.fd) || (h.fd as number) < 0) throw new TypeError(`${call}: handle.fd must be a descriptor number`);
    if (!Number.isInteger(h.device) || (h.device as number) < 0) throw new TypeError(`${call}: handle.device must be a device ordinal`);
    const device = options.device ?? (h.device as number);
    if (!Number.isInteger(device) || device < 0) throw new TypeError(`${call}: device must be a device ordinal`);
    const ctx = Context.primary(device);
    if (pid === process.pid && options.fd === undefined) return new ImportedMemoryPool(SEALED, 0 as drv.CUmemoryPool, ctx, pid, 'same-process');
    let fd: number;
    let via: ImportedMemoryPool['via'];
    if (options.fd !== undefined) {
      if (!Number.isInteger(options.fd) || options.fd < 0) throw new TypeError(`${call}: fd must be a descriptor number`);
      fd = options.fd;
      via = 'given';
    } else {
      const reasons: string[] = [];
      let got: { fd: number; how: ImportedMemoryPool['via'] } | undefined;
      if (h.ticket !== undefined) {
        try {
          got = { fd: fdPassing().receiveDescriptor(h.ticket as DescriptorTicket, { timeoutMs: options.timeoutMs }), how: 'socket' };
        } catch (e) {
          if (e instanceof TypeError || e instanceof RangeError) throw e; // a malformed ticket or option
          reasons.push((e as Error).message);
        }
      }
      ({ fd, how: via } = got ?? takeDescriptor(call, pid, h.fd as number, reasons));
    }
    try {
      drv.call(ctx, 'cuMemPoolImportFromShareableHandle', drv.out64, fd, POSIX_FD, 0);
      const pool = drv.outNumber() as drv.CUmemoryPool;
      if (device !== h.device) {
        // this device reads and writes the other device's pool over peer access
        const desc = new DataView(new ArrayBuffer(12));
        desc.setInt32(0, drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, true);
        desc.setInt32(4, device, true);
        desc.setInt32(8, drv.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE, true);
        drv.call(ctx, 'cuMemPoolSetAccess', pool, new Uint8Array(desc.buffer), 1);
      }
      return new ImportedMemoryPool(SEALED, pool, ctx, pid, via);
    } finally {
      if (via !== 'given') closeRawFd(fd); // the driver holds its own reference once imported
    }
  }

  /**
   * Maps an exported buffer of this pool (cuMemPoolImportPointer) as a DeviceBuffer; it keeps this
   * pool alive until closed. In the exporting process itself (worker threads), a view of the address.
   * @param exported What the exporter's IpcMemoryPool.exportBuffer() returned, received as plain data.
   */
  importBuffer(exported: BufferHandle): SharedBuffer {
    const call = 'ImportedMemoryPool.importBuffer';
    this.assertOpen();
    const h = checkHandle(call, exported, 'cuda-ts/pool-buffer');
    if (h.pid !== this.pid) throw new TypeError(`${call}: the buffer comes from process ${String(h.pid)}, this pool from ${this.pid}`);
    const byteLength = checkSize(`${call}: byteLength`, h.byteLength);
    const data = fromHex(call, 'data', h.data, 64);
    const ctx = this.context;
    if (this.handle === 0) {
      const address = checkSize(`${call}: address`, h.address);
      return new SharedBuffer(SEALED, 'SharedBuffer (same process)', address, byteLength, ctx, undefined, this);
    }
    drv.call(ctx, 'cuMemPoolImportPointer', drv.out64, this.handle, data);
    const ptr = drv.outNumber();
    return new SharedBuffer(SEALED, 'SharedBuffer (imported)', ptr, byteLength, ctx, () => whenNoHostFuncs(() => drv.release(ctx, 'cuMemFree', ptr)), this);
  }
}

/** Options of {@link importPool}. */
export interface ImportPoolOptions {
  /** The descriptor, when this process already holds it (inherited through stdio). */
  fd?: number;
  /** Where to map the pool (default: the pool's device). */
  device?: number;
  /** How long to wait for the exporter to hand over the descriptor (ms, default 10000). */
  timeoutMs?: number;
}

/**
 * Imports a pool exported by another process (or by this process, from a worker thread). `fd`: the
 * descriptor when this process already holds it (inherited through stdio); otherwise it is received
 * from the exporter's socket (then pidfd_getfd, then /proc for regular files). `device`: where to map
 * it (default: the pool's device). Blocks up to `timeoutMs` while the exporter answers.
 * @param handle What the exporter's IpcMemoryPool.exportHandle() returned, received as plain data (JSON or postMessage).
 * @param options `fd` (the pool's descriptor when this process already holds it, e.g. inherited through stdio), `device` (where to map it; default: the pool's device) and `timeoutMs` (how long to wait for the exporter to hand the descriptor over; default 10000).
 */
export function importPool(handle: PoolHandle, options: ImportPoolOptions = {}): ImportedMemoryPool {
  return ImportedMemoryPool.open(handle, options);
}

/** A legacy IPC handle of cuMemAlloc memory (cuIpcGetMemHandle). */
export interface MemHandle {
  /** What the handle describes (checked when it is imported). */
  readonly kind: 'cuda-ts/ipc-mem';
  /** The exporting process. */
  readonly pid: number;
  /** CUipcMemHandle, 64 bytes as hex. */
  readonly handle: string;
  /** Bytes of the allocation. */
  readonly byteLength: number;
  /** Its address in the exporting process (the importer maps it elsewhere). */
  readonly address: number;
  /** Ordinal of the device whose memory it is. */
  readonly device: number;
}

/**
 * Exports `buf` (from DeviceBuffer.alloc without a stream, not a view) with cuIpcGetMemHandle.
 * @param buf A whole buffer from DeviceBuffer.alloc without a stream (not a view, not stream-ordered).
 */
export function exportMemHandle(buf: DeviceBuffer): MemHandle {
  const call = 'exportMemHandle';
  if (!(buf instanceof DeviceBuffer)) throw new TypeError(`${call}: buf must be a DeviceBuffer`);
  if (buf.stream || buf.parent)
    throw new TypeError(
      `${call}: legacy IPC shares whole cuMemAlloc allocations: allocate without a stream, and export the buffer, not a view (use IpcMemoryPool for stream-ordered memory)`,
    );
  const ptr = buf.ptr;
  const out = new Uint8Array(64);
  drv.call(buf.context, 'cuIpcGetMemHandle', out, ptr);
  return { kind: 'cuda-ts/ipc-mem', pid: process.pid, handle: toHex(out), byteLength: buf.byteLength, address: ptr, device: buf.context.device };
}

/**
 * Opens a legacy handle from another process (cuIpcOpenMemHandle); close() unmaps (cuIpcCloseMemHandle).
 * @param handle What exportMemHandle() returned in the exporting process, received as plain data.
 * @param options `device`: the ordinal of the device whose context maps it (default: the exporter's device).
 */
export function openMemHandle(handle: MemHandle, options: { device?: number } = {}): SharedBuffer {
  const call = 'openMemHandle';
  const h = checkHandle(call, handle, 'cuda-ts/ipc-mem');
  const pid = checkPid(call, h.pid);
  const bytes = fromHex(call, 'handle', h.handle, 64);
  const byteLength = checkSize(`${call}: byteLength`, h.byteLength);
  const device = options.device ?? (h.device as number);
  if (!Number.isInteger(device) || device < 0) throw new TypeError(`${call}: device must be a device ordinal`);
  const ctx = Context.primary(device);
  if (pid === process.pid) {
    // cuIpcOpenMemHandle refuses handles of its own process; the address is valid here already
    return new SharedBuffer(SEALED, 'SharedBuffer (same process)', checkSize(`${call}: address`, h.address), byteLength, ctx, undefined, undefined);
  }
  drv.call(ctx, 'cuIpcOpenMemHandle', drv.out64, handleRecord(bytes), drv.CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  const ptr = drv.outNumber();
  return new SharedBuffer(
    SEALED,
    'SharedBuffer (ipc)',
    ptr,
    byteLength,
    ctx,
    () => whenNoHostFuncs(() => drv.release(ctx, 'cuIpcCloseMemHandle', ptr)),
    undefined,
  );
}

/** An IPC event handle (cuIpcGetEventHandle). */
export interface EventHandle {
  /** What the handle describes (checked when it is imported). */
  readonly kind: 'cuda-ts/ipc-event';
  /** The exporting process. */
  readonly pid: number;
  /** CUipcEventHandle, 64 bytes as hex. */
  readonly handle: string;
  /** Ordinal of the device whose memory it is. */
  readonly device: number;
  /** The CUevent in the exporting process (used as is by its worker threads). */
  readonly event: number;
}

/**
 * Exports an Event made with { interprocess: true, timing: false }.
 * @param event An Event created with `{ interprocess: true, timing: false }`.
 */
export function exportEvent(event: Event): EventHandle {
  const call = 'exportEvent';
  if (!(event instanceof Event)) throw new TypeError(`${call}: event must be an Event`);
  if (!(event.flags & drv.CUevent_flags.CU_EVENT_INTERPROCESS))
    throw new TypeError(`${call}: the event must be created with { interprocess: true, timing: false }`);
  event.assertUsable();
  const out = new Uint8Array(64);
  drv.call(event.context, 'cuIpcGetEventHandle', out, event.handle);
  return { kind: 'cuda-ts/ipc-event', pid: process.pid, handle: toHex(out), device: event.context.device, event: event.handle };
}

/** An event opened from another process's handle: record it, make streams wait for it, query it. */
export class SharedEvent extends Resource {
  /** The driver handle (CUevent). */
  readonly handle: drv.CUevent;
  /** The context it belongs to. */
  readonly context: Context;

  private constructor(seal: Sealed, handle: drv.CUevent, context: Context, owned = true) {
    checkSealed(seal, 'SharedEvent', 'SharedEvent.open()');
    super(owned ? 'SharedEvent' : 'SharedEvent (same process)', !owned ? undefined : () => drv.release(context, 'cuEventDestroy', handle), [context]);
    this.handle = handle;
    this.context = context;
  }

  /** @internal */
  static open(h: EventHandle, device?: number): SharedEvent {
    const call = 'openEvent';
    const o = checkHandle(call, h, 'cuda-ts/ipc-event');
    checkPid(call, o.pid);
    const bytes = fromHex(call, 'handle', o.handle, 64);
    const dev = device ?? (o.device as number);
    if (!Number.isInteger(dev) || dev < 0) throw new TypeError(`${call}: device must be a device ordinal`);
    const ctx = Context.primary(dev);
    // a handle of this very process (a worker thread): the event is valid here as it is, owned by the exporter
    if (o.pid === process.pid) return new SharedEvent(SEALED, checkSize(`${call}: event`, o.event) as drv.CUevent, ctx, false);
    drv.call(ctx, 'cuIpcOpenEventHandle', drv.out64, handleRecord(bytes));
    return new SharedEvent(SEALED, drv.outNumber() as drv.CUevent, ctx);
  }

  /**
   * Records the event on `stream` (default: the legacy default stream).
   * @param stream The stream to record on (default: the legacy default stream).
   */
  record(stream?: StreamLike): this {
    this.assertOpen();
    const h = streamHandle(stream, 'SharedEvent.record: stream');
    drv.call(this.context, 'cuEventRecord', this.handle, h);
    return this;
  }

  /**
   * Makes `stream` wait for the event's last record (cuStreamWaitEvent).
   * @param stream The stream whose later work waits (default: the legacy default stream).
   */
  waitOn(stream?: StreamLike): this {
    this.assertOpen();
    const h = streamHandle(stream, 'SharedEvent.waitOn: stream');
    drv.call(this.context, 'cuStreamWaitEvent', h, this.handle, 0);
    return this;
  }

  /** True once the work before the last record is done. */
  query(): boolean {
    this.assertOpen();
    this.context.bind();
    return drv.query(this.context, 'cuEventQuery', this.handle);
  }

  /**
   * Resolves when the event completes, without blocking the event loop (the waiter: docs/awaiting.md).
   * @param options `signal` (an AbortSignal: rejects with an AbortError once it aborts), `timeoutMs` (rejects past this many ms; default no limit) and `maxIntervalMs` (the longest sleep between polls, ms; default 1).
   */
  synchronized(options?: PollOptions): Promise<void> {
    this.assertOpen();
    return waitFor({ ctx: this.context, event: this.handle, key: this, what: 'SharedEvent.synchronized()', settled: false }, options);
  }
}

/**
 * Opens an exported event (cuIpcOpenEventHandle) in `device`'s primary context (default: the exporter's device).
 * @param handle What exportEvent() returned in the exporting process, received as plain data.
 * @param options `device`: the ordinal of the device whose primary context opens it (default: the exporter's device).
 */
export function openEvent(handle: EventHandle, options: { device?: number } = {}): SharedEvent {
  return SharedEvent.open(handle, options.device);
}

/** The device count, for tests and callers deciding on peer imports. */
export function deviceCount(): number {
  return Device.count();
}
