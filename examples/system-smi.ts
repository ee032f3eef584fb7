// An nvidia-smi-style listing with the objects layer alone: `npx tsx examples/system-smi.ts`.
// `system` gives the CUDA driver's version (from the driver) and, through NVML loaded on first use,
// the kernel driver's version and per GPU: name, PCI bus id, persistence mode, ECC, fan, temperature,
// performance state, power draw and limit, memory, utilisation and compute mode, each a typed property
// (undefined where the board does not support it); below each row the energy counter, the power
// management limit, reserved memory (NVML's v2 query), the display state and the compute processes.
// Checks every value is sane and that NVML and CUDA agree on each visible GPU's UUID.
import { Device, NvmlUnavailableError, system, type NvmlDevice } from '../src';
import { done } from './gpu-check';

const NAME = 'system-smi';
const MiB = 2 ** 20;
const na = <T>(v: T | undefined, f: (v: T) => string): string => (v === undefined ? 'N/A' : f(v));

/** One table row for `gpu`, and the problems found in its values. */
function row(gpu: NvmlDevice): { line: string; problems: string[] } {
  const [mem, temp, power, cap, util] = [gpu.memory, gpu.temperature, gpu.powerUsage, gpu.powerLimit, gpu.utilization];
  const ecc = gpu.eccMode;
  const line =
    `${String(gpu.index).padEnd(4)}${gpu.name.slice(0, 24).padEnd(25)}${gpu.pci.busId.padEnd(18)}` +
    `${na(gpu.persistenceMode, (p) => (p ? 'On' : 'Off')).padStart(5)}${na(ecc, (e) => (e.current ? 'On' : 'Off')).padStart(5)}` +
    `${na(gpu.fanSpeed, (f) => `${f}%`).padStart(5)}${na(temp, (t) => `${t}C`).padStart(6)}${na(gpu.performanceState, (p) => `P${p}`).padStart(5)}` +
    `${`${na(power, (p) => `${p.toFixed(0)}W`)} / ${na(cap, (c) => `${c.toFixed(0)}W`)}`.padStart(15)}` +
    `${`${(mem.used / MiB).toFixed(0)}MiB / ${(mem.total / MiB).toFixed(0)}MiB`.padStart(24)}` +
    `${na(util, (u) => `${u.gpu}%`).padStart(6)}  ${na(gpu.computeMode, (m) => m)}`;
  const problems: string[] = [];
  const check = (ok: boolean, what: string): void => void (ok || problems.push(`GPU ${gpu.index}: ${what}`));
  check(gpu.name.trim().length > 0, 'empty name');
  check(/^(GPU|MIG)-[0-9a-f-]{36}/.test(gpu.uuid), `UUID ${gpu.uuid}`);
  check(mem.total > 0 && mem.used >= 0 && mem.used <= mem.total, `memory ${mem.used}/${mem.total}`);
  check(temp === undefined || (temp > 0 && temp < 110), `temperature ${temp}`);
  check(power === undefined || (power > 0 && power <= 1.5 * (cap ?? 2000)), `power ${power} W of ${cap} W`);
  check(util === undefined || (util.gpu >= 0 && util.gpu <= 100), `utilisation ${util?.gpu}`);
  const more = details(gpu);
  problems.push(...more.problems.map((p) => `GPU ${gpu.index}: ${p}`));
  return { line: `${line}\n${more.line}`, problems };
}

/** The readings of the second line (energy, power management limit, reserved memory, display, processes) and their problems. */
function details(gpu: NvmlDevice): { line: string; problems: string[] } {
  const [energy, limit, enforced, breakdown, processes] = [
    gpu.totalEnergyConsumption,
    gpu.powerManagementLimit,
    gpu.powerLimit,
    gpu.memoryBreakdown,
    gpu.computeProcesses,
  ];
  const procs =
    processes === undefined ? 'N/A' : processes.map((p) => `${p.pid}${na(p.usedMemory, (m) => ` (${(m / MiB).toFixed(0)}MiB)`)}`).join(', ') || 'none';
  const line =
    `    energy ${na(energy, (e) => `${(e / 1000).toFixed(0)} J`)}, power limit ${na(limit, (l) => `${l.toFixed(0)}W`)}, ` +
    `reserved ${na(breakdown, (b) => `${(b.reserved / MiB).toFixed(0)}MiB`)}, display ${na(gpu.displayActive, (d) => (d ? 'active' : 'off'))}, ` +
    `compute processes: ${procs}`;
  const problems: string[] = [];
  if (energy !== undefined && !(energy > 0)) problems.push(`energy counter ${energy}`);
  if (limit !== undefined && enforced !== undefined && enforced > limit + 0.01)
    problems.push(`enforced power limit ${enforced} W above the management limit ${limit} W`);
  if (breakdown !== undefined && Math.abs(breakdown.used + breakdown.reserved + breakdown.free - breakdown.total) > MiB)
    problems.push(`memory v2 does not add up: ${JSON.stringify(breakdown)}`);
  if (processes?.some((p) => !(p.pid > 0))) problems.push(`a process without a pid: ${JSON.stringify(processes)}`);
  return { line, problems };
}

/** Each GPU CUDA sees must be one NVML lists, with the same UUID. */
function crossCheck(gpus: NvmlDevice[]): string[] {
  const problems: string[] = [];
  const uuids = new Set(gpus.map((g) => g.uuid.toLowerCase()));
  for (let i = 0; i < system.deviceCount; i++) {
    if (!uuids.has(`gpu-${Device.get(i).uuid}`)) problems.push(`CUDA device ${i} (${Device.get(i).uuid}) is not among NVML's GPUs`);
  }
  return problems;
}

function main(): void {
  let gpus: NvmlDevice[];
  try {
    gpus = system.gpus;
  } catch (e) {
    if (!(e instanceof NvmlUnavailableError)) throw e;
    console.log(`${NAME}: SKIPPED — NVML not usable (${e.message.split('\n')[0]})`);
    process.exit(2);
  }
  const cuda = system.driverVersion;
  console.log(`Driver Version: ${system.kernelDriverVersion}   CUDA Version: ${cuda.major}.${cuda.minor}   NVML ${system.nvmlVersion}`);
  console.log(
    `${'GPU'.padEnd(4)}${'Name'.padEnd(25)}${'Bus-Id'.padEnd(18)}${'Pers'.padStart(5)}${'ECC'.padStart(5)}${'Fan'.padStart(5)}${'Temp'.padStart(6)}${'Perf'.padStart(5)}${'Power / Cap'.padStart(15)}${'Memory-Usage'.padStart(24)}${'Util'.padStart(6)}  Compute mode`,
  );
  const problems: string[] = [];
  for (const gpu of gpus) {
    const r = row(gpu);
    console.log(r.line);
    problems.push(...r.problems);
  }
  problems.push(...crossCheck(gpus));
  system.shutdownNvml();
  done(
    NAME,
    problems.length === 0 && gpus.length > 0,
    problems.length ? problems.join('; ') : `CUDA ${cuda.major}.${cuda.minor}, ${gpus.length} GPU(s) through NVML, every CUDA device matched by UUID`,
  );
}
try {
  main();
} catch (e) {
  console.log(`${NAME}: FAILED — ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`); // e.g. NVML present, no CUDA driver
  process.exit(1);
}
