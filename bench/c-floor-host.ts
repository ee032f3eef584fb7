// The machine facts the C floor experiment (bench/c-floor.ts) needs: whether a GPU answers, which CPUs
// this process may use, the NUMA nodes, the GPU's local CPUs (`nvidia-smi topo -m`, else sysfs by the
// GPU's PCI address) and the CPU frequency as Linux reports it. Every reader returns what it found or
// undefined; none throws, since a missing file only means "not known on this machine".
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import koffi from 'koffi';

/** "0-3,8,10-11" -> [0,1,2,3,8,10,11]; undefined for text that is not a CPU list. */
export function parseCpuList(text: string): number[] | undefined {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return undefined;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b - a > 4096) return undefined;
    for (let c = a; c <= b; c++) out.push(c);
  }
  return out.length ? out : undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The CPUs this process may run on (Cpus_allowed_list), else every online CPU. */
export function allowedCpus(): number[] {
  const status = readText('/proc/self/status') ?? '';
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
  return (m && parseCpuList(m[1])) ?? parseCpuList(readText('/sys/devices/system/cpu/online') ?? '') ?? [0];
}

/** NUMA node -> its CPUs, from /sys/devices/system/node (empty where the machine shows none). */
export function numaNodes(): Map<number, number[]> {
  const nodes = new Map<number, number[]>();
  let names: string[] = [];
  try {
    names = readdirSync('/sys/devices/system/node');
  } catch {
    return nodes;
  }
  for (const n of names) {
    const m = /^node(\d+)$/.exec(n);
    const cpus = m && parseCpuList(readText(`/sys/devices/system/node/${n}/cpulist`) ?? '');
    if (m && cpus) nodes.set(Number(m[1]), cpus);
  }
  return nodes;
}

/** What `nvidia-smi topo -m` says of GPU `ordinal`: its CPU affinity and NUMA node, where it prints them. */
export function parseTopo(text: string, ordinal: number): { cpus?: number[]; numa?: number } {
  const lines = text.split('\n');
  const header = lines.find((l) => /CPU Affinity/.test(l));
  const row = lines.find((l) => l !== header && new RegExp(`^\\s*GPU${ordinal}\\b`).test(l));
  if (!header || !row) return {};
  // The row: link cells (X, SYS, NV18, PIX, NODE…, never a number), then CPU Affinity, NUMA Affinity,
  // GPU NUMA ID; the tab counts vary between versions, so take the first cell that is a CPU list.
  const cells = row.split(/\t| {2,}/).map((s) => s.trim()).filter(Boolean).slice(1);
  const i = cells.findIndex((c) => parseCpuList(c) !== undefined);
  if (i < 0) return {};
  const numaText = cells[i + 1];
  return { cpus: parseCpuList(cells[i]), numa: numaText && /^\d+$/.test(numaText) ? Number(numaText) : undefined };
}

/** The GPU's local CPUs and NUMA node, and where that came from. */
export interface GpuPlacement {
  cpus?: number[];
  numa?: number;
  source: string;
}

function run(cmd: string, args: string[]): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 15_000 });
  return r.status === 0 ? r.stdout : undefined;
}

/** `nvidia-smi topo -m` first; else /sys/bus/pci/devices/<the GPU's bus id>/{local_cpulist,numa_node}. */
export function gpuPlacement(ordinal: number): GpuPlacement & { topo?: string } {
  const topo = run('nvidia-smi', ['topo', '-m']);
  const fromTopo = topo ? parseTopo(topo, ordinal) : {};
  if (fromTopo.cpus) return { ...fromTopo, source: 'nvidia-smi topo -m', topo };
  const bus = run('nvidia-smi', ['--query-gpu=pci.bus_id', '--format=csv,noheader', `-i`, String(ordinal)])?.trim().toLowerCase();
  // nvidia-smi prints an 8-digit domain (00000000:1B:00.0); sysfs uses 4 (0000:1b:00.0)
  const dev = bus && `/sys/bus/pci/devices/${bus.replace(/^0000(?=[0-9a-f]{4}:)/, '')}`;
  if (dev && existsSync(dev)) {
    const numa = Number(readText(`${dev}/numa_node`) ?? -1);
    return { cpus: parseCpuList(readText(`${dev}/local_cpulist`) ?? ''), numa: numa >= 0 ? numa : undefined, source: `sysfs ${dev}`, topo };
  }
  return { source: topo ? 'nvidia-smi topo -m (no CPU affinity for this GPU)' : 'unknown (no nvidia-smi)', topo };
}

/** The CPU frequency as cpufreq reports it now (kHz), its governors, and /proc/cpuinfo's MHz. */
export interface FreqSnapshot {
  at_s: number;
  governors: string[];
  cur_khz?: { min: number; median: number; max: number; by_cpu: Record<number, number> };
  cpuinfo_mhz?: { min: number; max: number };
}

export function cpuFreq(cpus: number[], t0: number): FreqSnapshot {
  const governors = new Set<string>();
  const byCpu: Record<number, number> = {};
  for (const c of cpus) {
    const g = readText(`/sys/devices/system/cpu/cpu${c}/cpufreq/scaling_governor`);
    if (g) governors.add(g);
    const f = Number(readText(`/sys/devices/system/cpu/cpu${c}/cpufreq/scaling_cur_freq`));
    if (f > 0) byCpu[c] = f;
  }
  const vals = Object.values(byCpu).sort((a, b) => a - b);
  const mhz = [...(readText('/proc/cpuinfo') ?? '').matchAll(/^cpu MHz\s*:\s*([\d.]+)/gm)].map((m) => Number(m[1]));
  return {
    at_s: Math.round((Date.now() - t0) / 100) / 10,
    governors: [...governors],
    cur_khz: vals.length ? { min: vals[0], median: vals[vals.length >> 1], max: vals[vals.length - 1], by_cpu: byCpu } : undefined,
    cpuinfo_mhz: mhz.length ? { min: Math.min(...mhz), max: Math.max(...mhz) } : undefined,
  };
}

/** One line of a snapshot for the log. */
export function freqWords(f: FreqSnapshot): string {
  const gov = f.governors.length ? f.governors.join('/') : 'no cpufreq governor';
  const cur = f.cur_khz ? `scaling_cur_freq ${(f.cur_khz.min / 1e3).toFixed(0)}–${(f.cur_khz.max / 1e3).toFixed(0)} MHz (median ${(f.cur_khz.median / 1e3).toFixed(0)})` : 'no scaling_cur_freq';
  const info = f.cpuinfo_mhz ? `, /proc/cpuinfo ${f.cpuinfo_mhz.min.toFixed(0)}–${f.cpuinfo_mhz.max.toFixed(0)} MHz` : '';
  return `t=${f.at_s}s ${gov}, ${cur}${info}`;
}

/**
 * Why no GPU can be measured here, or undefined when libcuda loads, cuInit succeeds and the device
 * ordinal exists. Loads the driver in this (orchestrating) process only to ask; it creates no context.
 */
export function noGpuReason(ordinal: number): string | undefined {
  const path = process.env.CUDA_TS_DRIVER_LIBRARY || 'libcuda.so.1';
  let lib: ReturnType<typeof koffi.load>;
  try {
    lib = koffi.load(path);
  } catch (e) {
    return `${path} cannot be loaded (${(e as Error).message.split('\n')[0]})`;
  }
  const init = lib.func('int cuInit(unsigned int flags)');
  const count = lib.func('int cuDeviceGetCount(_Out_ int *count)');
  const st = init(0) as number;
  if (st !== 0) return `cuInit(0) returned ${st}`;
  const n = [0];
  const sc = count(n) as number;
  if (sc !== 0) return `cuDeviceGetCount returned ${sc}`;
  if (n[0] <= ordinal) return `device ${ordinal} asked for, ${n[0]} present`;
  return undefined;
}

/**
 * The cores the experiment uses: `local`, a core on the GPU's NUMA node (not CPU 0, which takes
 * most interrupts, where another is allowed); `remote`, one on another node where the machine has
 * one; `spare`, a second local core (for the spinning thread), all within the allowed CPUs.
 */
export function pickCores(allowed: number[], gpu: GpuPlacement, nodes: Map<number, number[]>): { local: number; remote?: number; spare?: number; why: string } {
  const ok = new Set(allowed);
  const localNode = gpu.numa !== undefined ? nodes.get(gpu.numa) : undefined;
  const localSet = (gpu.cpus ?? localNode ?? allowed).filter((c) => ok.has(c));
  const local = localSet.length ? localSet : allowed;
  const pick = [...local].reverse().find((c) => c !== 0) ?? local[0];
  const spare = [...local].reverse().find((c) => c !== 0 && c !== pick);
  const localAll = new Set(gpu.cpus ?? localNode ?? []);
  let remote: number | undefined;
  for (const [, cpus] of nodes) {
    if (!localAll.size || cpus.some((c) => localAll.has(c))) continue; // unknown GPU placement: no remote
    remote = [...cpus].reverse().find((c) => ok.has(c) && c !== 0) ?? remote;
  }
  const note = localSet.length || !gpu.cpus ? '' : ", none of them allowed here: 'local' is any allowed core";
  const why = `local core ${pick} (GPU's CPUs ${gpu.cpus ? compact(gpu.cpus) : 'unknown'}, via ${gpu.source}${note}), ` + (remote !== undefined ? `remote core ${remote}` : `no remote core (${nodes.size <= 1 ? 'one NUMA node' : !localAll.size ? "the GPU's node is unknown" : 'no allowed CPU off the GPU node'})`);
  return { local: pick, remote, spare, why };
}

/** [0,1,2,3,8] -> "0-3,8". */
export function compact(cpus: number[]): string {
  const s = [...cpus].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    parts.push(j > i ? `${s[i]}-${s[j]}` : `${s[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}
