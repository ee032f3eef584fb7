// Every CUDA device and its properties, through the objects layer's Device and the driver's attributes:
// `npx tsx examples/device-properties.ts`.
import * as cu from '../generated/13.0/driver';
import { Device } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'device-properties';
const A = cu.CUdevice_attribute;
const GiB = 2 ** 30;

/** An attribute, or undefined where this driver or device does not report it. */
function attr(d: Device, a: cu.CUdevice_attribute): number | undefined {
  try {
    return d.attribute(a);
  } catch {
    return undefined;
  }
}

const show = (v: number | undefined, unit = ''): string => (v === undefined ? 'n/a' : `${v}${unit}`);
const yes = (v: number | undefined): string => (v === undefined ? 'n/a' : v ? 'yes' : 'no');
const mib = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : `${(bytes / 2 ** 20).toFixed(0)} MiB`);
const kib = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : `${(bytes / 1024).toFixed(0)} KiB`);
const computeMode = (m: number | undefined): string =>
  m === undefined ? 'n/a' : (cu.CUcomputemode[m] ?? String(m)).replace('CU_COMPUTEMODE_', '').toLowerCase().replace('_', ' ');
const mhz = (khz: number | undefined): string => (khz === undefined || khz === 0 ? 'n/a' : `${(khz / 1000).toFixed(0)} MHz`);

/** What one device reports, read in the order the listing has always read it. */
function readDevice(d: Device) {
  const name = d.name;
  const uuid = d.uuid;
  const [major, minor] = d.computeCapability;
  const total = d.totalMemory;
  const free = d.freeMemory; // retains the device's primary context
  const sms = d.multiprocessorCount;
  const warp = attr(d, A.CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  const l2 = attr(d, A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  const clock = attr(d, A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE); // kHz
  const memClock = attr(d, A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE); // kHz
  const busWidth = attr(d, A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH); // bits
  const maxThreads = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  const maxThreadsSm = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  const block = [A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z].map((a) => attr(d, a));
  const grid = [A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z].map((a) => attr(d, a));
  const smemBlock = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  const smemOptin = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  const smemSm = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  const regsBlock = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  const regsSm = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  const constMem = attr(d, A.CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
  const blocksSm = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  const persistL2 = attr(d, A.CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
  let pci = 'n/a';
  try {
    pci = cu.cuDeviceGetPCIBusId(32, d.handle);
  } catch {
    // not reported
  }
  // peak DRAM bandwidth: two transfers per memory clock over the bus
  const bandwidth = memClock && busWidth ? (2 * memClock * 1e3 * (busWidth / 8)) / 1e9 : undefined;
  return {
    d,
    name,
    uuid,
    major,
    minor,
    total,
    free,
    sms,
    warp,
    l2,
    clock,
    memClock,
    busWidth,
    maxThreads,
    maxThreadsSm,
    block,
    grid,
    smemBlock,
    smemOptin,
    smemSm,
    regsBlock,
    regsSm,
    constMem,
    blocksSm,
    persistL2,
    pci,
    bandwidth,
  };
}

type DeviceReport = ReturnType<typeof readDevice>;

/** Prints one device's table (the attributes read only for it are read here, after its heading). */
function printDevice(i: number, r: DeviceReport): void {
  const { d, name, uuid, major, minor, total, free, sms, warp, l2, clock, memClock, busWidth, maxThreads, maxThreadsSm, block, grid } = r;
  const { smemBlock, smemOptin, smemSm, regsBlock, regsSm, constMem, blocksSm, persistL2, pci, bandwidth } = r;
  console.log(`\nDevice ${i}: ${name}`);
  const rows: [string, string][] = [
    ['UUID', `GPU-${uuid}`],
    ['PCI bus id', pci],
    ['compute capability', `${major}.${minor} (${d.arch})`],
    ['memory', `${(total / GiB).toFixed(1)} GiB total, ${(free / GiB).toFixed(1)} GiB free`],
    ['memory bus', `${show(busWidth, ' bit')} at ${mhz(memClock)}${bandwidth ? ` (peak ≈ ${bandwidth.toFixed(0)} GB/s)` : ''}`],
    ['L2 cache', `${mib(l2)} (persisting max ${mib(persistL2)})`],
    ['multiprocessors', `${sms} SMs at ${mhz(clock)}`],
    ['warp size', show(warp)],
    ['threads', `${show(maxThreads)} per block, ${show(maxThreadsSm)} per SM, ${show(blocksSm)} blocks per SM`],
    ['max block', block.map((v) => show(v)).join(' × ')],
    ['max grid', grid.map((v) => show(v)).join(' × ')],
    ['shared memory', `${kib(smemBlock)} per block (${kib(smemOptin)} opt-in), ${kib(smemSm)} per SM`],
    ['registers', `${show(regsBlock)} per block, ${show(regsSm)} per SM`],
    ['constant memory', kib(constMem)],
    ['copy engines', show(attr(d, A.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT))],
    ['ECC', yes(attr(d, A.CU_DEVICE_ATTRIBUTE_ECC_ENABLED))],
    ['unified addressing', yes(attr(d, A.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING))],
    [
      'managed memory',
      `${yes(attr(d, A.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY))}, concurrent access ${yes(attr(d, A.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS))}`,
    ],
    ['memory pools', yes(attr(d, A.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))],
    ['cooperative launch', yes(attr(d, A.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH))],
    ['cluster launch', yes(attr(d, A.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH))],
    ['compute mode', computeMode(attr(d, A.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE))],
    ['integrated', yes(attr(d, A.CU_DEVICE_ATTRIBUTE_INTEGRATED))],
  ];
  for (const [k, v] of rows) console.log(`  ${k.padEnd(20)} ${v}`);
}

/** The sanity checks on one device's report; `uuids` holds the earlier devices' UUIDs. */
function checkDevice(i: number, r: DeviceReport, uuids: Set<string>, problems: string[]): void {
  const { name, uuid, major, minor, total, free, sms, warp, l2, maxThreads, maxThreadsSm, smemBlock, smemSm } = r;
  const check = (ok: boolean, what: string): void => {
    if (!ok) problems.push(`device ${i}: ${what}`);
  };
  check(name.trim().length > 0, 'empty name');
  check(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(uuid) && /[1-9a-f]/.test(uuid), `malformed UUID ${uuid}`);
  check(!uuids.has(uuid), `UUID ${uuid} repeats another device's`);
  uuids.add(uuid);
  check(major >= 3 && minor >= 0, `compute capability ${major}.${minor}`);
  check(total > 0, `total memory ${total}`);
  check(free > 0 && free <= total, `free memory ${free} of ${total}`);
  check(sms > 0, `${sms} SMs`);
  check(warp === 32, `warp size ${warp}`);
  check((l2 ?? 0) > 0, `L2 size ${l2}`);
  check((maxThreads ?? 0) >= 512 && (maxThreadsSm ?? 0) >= (maxThreads ?? 0), `threads per block ${maxThreads}, per SM ${maxThreadsSm}`);
  check((smemBlock ?? 0) >= 16 * 1024 && (smemSm ?? 0) >= (smemBlock ?? 0), `shared memory per block ${smemBlock}, per SM ${smemSm}`);
}

function main(): [boolean, string] {
  requireGpu(NAME);
  const driver = cu.cuDriverGetVersion();
  const count = Device.count();
  console.log(`CUDA driver ${Math.floor(driver / 1000)}.${(driver % 1000) / 10}, ${count} device(s)`);
  const problems: string[] = [];
  const uuids = new Set<string>();
  const summary: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = readDevice(Device.get(i));
    printDevice(i, r);
    checkDevice(i, r, uuids, problems);
    summary.push(`${r.name} (${r.d.arch}, ${(r.total / GiB).toFixed(1)} GiB, ${r.sms} SMs)`);
  }
  console.log('');
  if (problems.length) return [false, problems.join('; ')];
  return [true, `${count} device(s): ${summary.join(', ')}`];
}

let result: [boolean, string];
try {
  result = main();
} catch (e) {
  result = [false, (e instanceof Error ? e.message : String(e)).split('\n')[0]];
}
done(NAME, ...result);
