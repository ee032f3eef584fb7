// libc through koffi, loaded on first use: the calls the IPC paths make on OS descriptors (a Unix
// socket passing one with SCM_RIGHTS in fd-passing.ts; pidfd_getfd, procfs, prctl and close in ipc.ts).
// One loader, so each C function is declared once. Descriptors that come from C are opened and closed
// here, never through node:fs: under Deno, node:fs's descriptors are its own resource numbers.
import { koffi } from '../../support';

/** An address C sees (koffi takes a bigint as `void *`). */
export type Ptr = bigint;

/** The libc functions the IPC paths call. */
export interface Libc {
  socket(domain: number, type: number, protocol: number): number;
  setsockopt(fd: number, level: number, name: number, value: Ptr, len: number): number;
  getsockopt(fd: number, level: number, name: number, value: Ptr, len: Ptr): number;
  connect(fd: number, addr: Ptr, len: number): number;
  write(fd: number, buf: Ptr, n: number): number;
  sendmsg(fd: number, msg: Ptr, flags: number): number;
  recvmsg(fd: number, msg: Ptr, flags: number): number;
  open(path: string, flags: number): number;
  close(fd: number): number;
  /** syscall(n, a, b, c): pidfd_open and pidfd_getfd, which glibc may not wrap. */
  syscall3(n: number, a: number, b: number, c: number): number;
  prctl(option: number, arg2: bigint, arg3: number, arg4: number, arg5: number): number;
}

let libc: Libc | undefined;

/** libc's functions, declared on the first call. */
export function loadLibc(): Libc {
  if (libc) return libc;
  const lib = koffi.load('libc.so.6');
  libc = {
    socket: lib.func('int socket(int domain, int type, int protocol)'),
    setsockopt: lib.func('int setsockopt(int fd, int level, int name, void *value, uint32_t len)'),
    getsockopt: lib.func('int getsockopt(int fd, int level, int name, void *value, void *len)'),
    connect: lib.func('int connect(int fd, void *addr, uint32_t len)'),
    write: lib.func('long write(int fd, void *buf, unsigned long n)'),
    sendmsg: lib.func('long sendmsg(int fd, void *msg, int flags)'),
    recvmsg: lib.func('long recvmsg(int fd, void *msg, int flags)'),
    open: lib.func('int open(const char *path, int flags)'),
    close: lib.func('int close(int fd)'),
    syscall3: lib.func('long syscall(long n, long a, long b, long c)'),
    prctl: lib.func('int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4, unsigned long arg5)'),
  } as unknown as Libc;
  return libc;
}
