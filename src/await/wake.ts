// The wake channel of awaited waits: how a thread that sleeps (costing no CPU) learns that the GPU
// reached a point, and wakes the event loop once.
//
// The GPU side is a host function that is plain C, never JavaScript: libc's sem_post, enqueued with
// cuLaunchHostFunc (its one pointer argument is the semaphore). CUDA's callback thread calls it and it
// returns at once, so nothing waits for the event loop: no deadlock with a blocking wait on the main
// thread (the koffi trap in FACTS). The host side is ONE koffi `.async` call of sem_wait at a time per
// JS thread (a libuv pool thread sleeps in the kernel); when it returns, koffi wakes the event loop and
// the waiter resolves every wait whose point was reached. Measured on the dev machine: sem_post from
// another thread to JS resuming ~38 µs median (2 busy cores), 24 µs of CPU per wake; a pipe closed by
// the host function and watched by a net.Socket cost 150 µs of CPU per wake, so it was dropped.
import { koffi } from '../../support';

/** A way to sleep until a host function runs. One per JS thread; `hostFn(userData)` wakes it. */
export interface WakeChannel {
  /** What to name in messages and in the bench ('sem', or a test's fake). */
  readonly name: string;
  /** The C function to enqueue with cuLaunchHostFunc. */
  readonly hostFn: bigint | number;
  /** Its argument. */
  readonly userData: bigint | number;
  /** Starts one sleeping wait unless one is running; `onWake` runs on the event loop when it returns. */
  arm(onWake: () => void): void;
  /** Wakes the sleeping wait (if any) so that it returns without re-arming: nothing is left running. */
  release(): void;
  /** True while a sleeping wait is running. */
  readonly armed: boolean;
}

type SemFn = (sem: bigint) => number;
interface Libc {
  semWait: SemFn & { async(sem: bigint, cb: (err: unknown, r: number) => void): void };
  semTryWait: SemFn;
  semPost: SemFn;
  postAddress: bigint;
  sem: bigint;
}

/** glibc's sem_t is 32 bytes on 64-bit Linux; 64 leaves room and keeps it on its own line. */
const SEM_BYTES = 64;

function openLibc(): Libc {
  if (process.platform !== 'linux') throw new Error(`no libc semaphores on ${process.platform}`);
  let lib: ReturnType<typeof koffi.load>;
  try {
    lib = koffi.load('libc.so.6');
  } catch {
    throw new Error('libc.so.6 not found (not glibc)');
  }
  let dlsym: (h: null, name: string) => bigint | null;
  try {
    dlsym = lib.func('void *dlsym(void *, const char *)') as never;
  } catch {
    dlsym = koffi.load('libdl.so.2').func('void *dlsym(void *, const char *)') as never; // glibc < 2.34
  }
  const malloc = lib.func('void *malloc(size_t)') as unknown as (n: number) => bigint | null;
  const semInit = lib.func('int sem_init(void *, int, unsigned int)') as unknown as (s: bigint, shared: number, v: number) => number;
  const postAddress = dlsym(null, 'sem_post');
  if (postAddress === null || postAddress === 0n) throw new Error('dlsym(sem_post) found nothing');
  // never freed: CUDA may post to it after every wait is gone (a cancelled wait's host function)
  const sem = malloc(SEM_BYTES);
  if (sem === null || semInit(sem, 0, 0) !== 0) throw new Error('sem_init failed');
  return {
    semWait: lib.func('int sem_wait(void *)') as never,
    semTryWait: lib.func('int sem_trywait(void *)') as never,
    semPost: lib.func('int sem_post(void *)') as never,
    postAddress: BigInt(postAddress),
    sem: BigInt(sem),
  };
}

/** Drains at most this many posts per wake (stale posts of cancelled waits only cost one wake). */
const DRAIN_LIMIT = 1 << 16;

/** The semaphore channel: sem_post as the host function, one koffi `.async` sem_wait at a time. */
export function semaphoreChannel(): WakeChannel {
  const libc = openLibc();
  if (typeof libc.semWait.async !== 'function') throw new Error('this koffi has no .async calls');
  let armed = false;
  let releasing = false;
  const channel: WakeChannel = {
    name: 'sem',
    hostFn: libc.postAddress,
    userData: libc.sem,
    get armed() {
      return armed;
    },
    arm(onWake) {
      if (armed) return;
      armed = true;
      libc.semWait.async(libc.sem, () => {
        armed = false;
        releasing = false;
        // every post so far is covered by the check that onWake makes next
        for (let i = 0; i < DRAIN_LIMIT && libc.semTryWait(libc.sem) === 0; i++);
        onWake();
      });
    },
    release() {
      if (!armed || releasing) return;
      releasing = true;
      libc.semPost(libc.sem);
    },
  };
  return channel;
}

interface PipeLibc {
  fputc: (ch: number, file: bigint) => number;
  flushAddress: bigint;
  file: bigint;
  readFd: number;
}

function openPipe(): PipeLibc {
  if (process.platform !== 'linux') throw new Error(`no libc pipe channel on ${process.platform}`);
  if (typeof process.versions.bun === 'string' || 'Deno' in globalThis) throw new Error("the pipe channel watches its pipe with Node's net.Socket");
  const lib = koffi.load('libc.so.6');
  const dlsym = lib.func('void *dlsym(void *, const char *)') as unknown as (h: null, name: string) => bigint | null;
  const pipe = lib.func('int pipe(_Out_ int *fds)') as unknown as (fds: Int32Array) => number;
  const fdopen = lib.func('void *fdopen(int, const char *)') as unknown as (fd: number, mode: string) => bigint | null;
  const flushAddress = dlsym(null, 'fflush');
  if (flushAddress === null || flushAddress === 0n) throw new Error('dlsym(fflush) found nothing');
  const fds = new Int32Array(2);
  if (pipe(fds) !== 0) throw new Error('pipe() failed');
  // never closed: CUDA may flush it after every wait is gone (a cancelled wait's host function)
  const file = fdopen(fds[1], 'w'); // a pipe's FILE is fully buffered: fputc leaves its byte there
  if (file === null || file === 0n) throw new Error('fdopen() failed');
  return { fputc: lib.func('int fputc(int, void *)') as never, flushAddress: BigInt(flushAddress), file: BigInt(file), readFd: fds[0] };
}

/**
 * The pipe channel: the host function is libc's fflush of a FILE over a pipe's write end, where fputc
 * left a byte; the main loop watches the read end (net.Socket), so the callback thread's write wakes
 * the event loop directly: no pool thread in between (one thread wake fewer than the semaphore).
 * A byte is "charged" before every check of the parked waits, so a host function that runs after the
 * check always writes one (one that ran before it means its event was done when checked).
 */
export function pipeChannel(): WakeChannel {
  const libc = openPipe();
  const net = require('node:net') as typeof import('node:net');
  const socket = new net.Socket({ fd: libc.readFd, readable: true, writable: false });
  socket.unref();
  let armed = false;
  let charged = false;
  let broken = false;
  let wake: (() => void) | undefined;
  // a pipe that fails (it should not) must not crash the process: its waits fall back to 1 ms checks
  socket.on('error', () => {
    broken = true;
  });
  const charge = (): void => {
    if (charged) return;
    libc.fputc(0x21, libc.file);
    charged = true;
  };
  socket.on('data', () => {
    charged = false; // a flush emptied the FILE's buffer
    if (!armed) return; // a stale host function (a cancelled wait's), or after release()
    armed = false;
    socket.unref();
    charge(); // before onWake checks the parked waits
    wake!();
  });
  return {
    name: 'pipe',
    hostFn: libc.flushAddress,
    userData: libc.file,
    get armed() {
      return armed;
    },
    arm(onWake) {
      if (armed) return;
      if (broken) {
        setTimeout(onWake, 1);
        return;
      }
      armed = true;
      wake = onWake;
      charge();
      socket.ref();
    },
    release() {
      if (!armed) return;
      armed = false;
      socket.unref();
    },
  };
}

let chosen: WakeChannel | null | undefined;
let unavailable = '';

/**
 * This thread's wake channel, made on first use; null where none can be made (not Linux with glibc,
 * a koffi without `.async`): waits then fall back to polling. `CUDA_TS_AWAIT=poll` asks for none.
 */
export function wakeChannel(): WakeChannel | null {
  if (chosen !== undefined) return chosen;
  if (process.env.CUDA_TS_AWAIT === 'poll') {
    unavailable = 'CUDA_TS_AWAIT=poll';
    return (chosen = null);
  }
  const tries = process.env.CUDA_TS_AWAIT === 'pipe' ? [pipeChannel, semaphoreChannel] : [semaphoreChannel];
  const why: string[] = [];
  for (const make of tries) {
    try {
      return (chosen = make());
    } catch (e) {
      why.push((e as Error).message);
    }
  }
  unavailable = why.join('; ');
  return (chosen = null);
}

/** Why {@link wakeChannel} is null ('' when it is not, or not yet chosen). */
export function wakeChannelUnavailableReason(): string {
  return unavailable;
}

/** Test seam: replaces this thread's channel (undefined: choose again on next use; null: none). @internal */
export function setWakeChannel(channel: WakeChannel | null | undefined): void {
  chosen = channel;
  unavailable = channel === null ? 'set by a test' : '';
}
