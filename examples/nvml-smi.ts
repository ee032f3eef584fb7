// An nvidia-smi-like listing through NVML (libnvidia-ml): driver version, then per GPU its name, bus id,
// temperature, power, memory and utilization; checks that every value is sane:
// `npx tsx examples/nvml-smi.ts`. Needs no CUDA context (NVML talks to the kernel driver).
import * as nvml from '../generated/13.0/nvml';
import { done } from './gpu-check';

const NAME = 'nvml-smi';
const MiB = 2 ** 20;

/** The first line of an error's message. */
const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0];

/** A value NVML may not support on this GPU (fan speed on a passively cooled board, …): undefined then. */
function optional<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    if (e instanceof nvml.NvmlError) return undefined;
    throw e;
  }
}

/** A C string NVML returns in a record as char codes. */
function chars(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v) && !ArrayBuffer.isView(v)) return '';
  const codes = Array.from(v as ArrayLike<number>);
  const end = codes.indexOf(0);
  return String.fromCharCode(...(end < 0 ? codes : codes.slice(0, end)));
}

const na = (v: number | undefined, f: (v: number) => string): string => (v === undefined ? 'N/A' : f(v));

function listing(): [boolean, string] {
  const driver = nvml.nvmlSystemGetDriverVersion(nvml.NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
  const nvmlVersion = nvml.nvmlSystemGetNVMLVersion(nvml.NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
  const cuda = nvml.nvmlSystemGetCudaDriverVersion();
  const count = nvml.nvmlDeviceGetCount();
  const problems: string[] = [];
  const check = (ok: boolean, what: string): void => {
    if (!ok) problems.push(what);
  };
  check(/^\d+\.\d+/.test(driver), `driver version '${driver}'`);
  check(cuda >= 11000 && cuda < 100000, `CUDA driver version ${cuda}`);
  check(count >= 1, `${count} GPUs`);

  const W = 117; // table width inside the borders
  const line = `+${'-'.repeat(W + 2)}+`;
  const row = (text: string): void => console.log(`| ${text.padEnd(W)} |`);
  console.log(line);
  row(`NVML ${nvmlVersion.padEnd(22)} Driver Version: ${driver.padEnd(20)} CUDA Version: ${Math.floor(cuda / 1000)}.${(cuda % 1000) / 10}`);
  console.log(line);
  row(
    `${'GPU'.padEnd(4)}${'Name'.padEnd(26)}${'Bus-Id'.padEnd(18)}${'Temp'.padStart(5)}${'Perf'.padStart(6)}${'Power / Cap'.padStart(16)}${'Memory-Usage'.padStart(24)}${'GPU-Util'.padStart(9)}${'Mem-Util'.padStart(9)}`,
  );
  console.log(line);
  const names: string[] = [];
  const uuids = new Set<string>();
  for (let i = 0; i < count; i++) {
    const d = nvml.nvmlDeviceGetHandleByIndex(i);
    const name = nvml.nvmlDeviceGetName(d, nvml.NVML_DEVICE_NAME_V2_BUFFER_SIZE);
    const uuid = nvml.nvmlDeviceGetUUID(d, nvml.NVML_DEVICE_UUID_V2_BUFFER_SIZE);
    const pci = optional(() => nvml.nvmlDeviceGetPciInfo(d));
    const busId = pci ? chars(pci.busId) || chars(pci.busIdLegacy) : 'N/A';
    const mem = nvml.nvmlDeviceGetMemoryInfo(d);
    const [total, used, free] = [Number(mem.total), Number(mem.used), Number(mem.free)];
    const temp = optional(() => nvml.nvmlDeviceGetTemperature(d, nvml.nvmlTemperatureSensors_t.NVML_TEMPERATURE_GPU)); // °C
    const power = optional(() => nvml.nvmlDeviceGetPowerUsage(d)); // mW
    const cap = optional(() => nvml.nvmlDeviceGetEnforcedPowerLimit(d)); // mW
    const util = optional(() => nvml.nvmlDeviceGetUtilizationRates(d)); // %
    const pstate = optional(() => nvml.nvmlDeviceGetPerformanceState(d));
    const sm = optional(() => nvml.nvmlDeviceGetClockInfo(d, nvml.nvmlClockType_t.NVML_CLOCK_SM)); // MHz

    row(
      `${String(i).padEnd(4)}${name.slice(0, 25).padEnd(26)}${busId.slice(0, 17).padEnd(18)}` +
        `${na(temp, (t) => `${t}C`).padStart(5)}${na(pstate, (p) => (p === 32 ? 'P?' : `P${p}`)).padStart(6)}` +
        `${`${na(power, (p) => `${(p / 1000).toFixed(0)}W`)} / ${na(cap, (c) => `${(c / 1000).toFixed(0)}W`)}`.padStart(16)}` +
        `${`${(used / MiB).toFixed(0)}MiB / ${(total / MiB).toFixed(0)}MiB`.padStart(24)}` +
        `${na(util?.gpu, (u) => `${u}%`).padStart(9)}${na(util?.memory, (u) => `${u}%`).padStart(9)}`,
    );
    row(`    ${uuid.padEnd(60)}${`SM clock ${na(sm, (c) => `${c} MHz`)}`.padStart(W - 64)}`);

    const g = `GPU ${i}`;
    check(name.trim().length > 0, `${g}: empty name`);
    check(/^(GPU|MIG)-[0-9a-f-]{36}/.test(uuid), `${g}: UUID '${uuid}'`);
    check(!uuids.has(uuid), `${g}: UUID repeats another GPU's`);
    uuids.add(uuid);
    check(total > 0 && used >= 0 && free >= 0 && used <= total && free <= total, `${g}: memory used ${used} / free ${free} / total ${total}`);
    check(temp === undefined || (temp > 0 && temp < 110), `${g}: temperature ${temp} C`);
    check(cap === undefined || (cap >= 10_000 && cap <= 2_000_000), `${g}: power cap ${cap} mW`);
    check(power === undefined || (power > 0 && power <= 1.5 * (cap ?? 2_000_000)), `${g}: power ${power} mW (cap ${cap})`);
    check(
      util === undefined || (util.gpu >= 0 && util.gpu <= 100 && util.memory >= 0 && util.memory <= 100),
      `${g}: utilization ${util?.gpu}% / ${util?.memory}%`,
    );
    check(sm === undefined || (sm > 0 && sm < 5000), `${g}: SM clock ${sm} MHz`);
    names.push(
      `${name} ${(used / MiB).toFixed(0)}/${(total / MiB).toFixed(0)} MiB${temp === undefined ? '' : ` ${temp}C`}${power === undefined ? '' : ` ${(power / 1000).toFixed(0)}W`}`,
    );
  }
  console.log(line);
  if (problems.length) return [false, problems.join('; ')];
  return [true, `driver ${driver} (CUDA ${Math.floor(cuda / 1000)}.${(cuda % 1000) / 10}), ${count} GPU(s): ${names.join('; ')}`];
}

function main(): void {
  try {
    nvml.nvmlInit();
  } catch (e) {
    // no libnvidia-ml, or no NVIDIA kernel driver: one clear line
    console.log(`${NAME}: SKIPPED — NVML not usable (${firstLine(e)})`);
    process.exit(2);
  }
  let result: [boolean, string];
  try {
    result = listing();
  } catch (e) {
    result = [false, firstLine(e)];
  } finally {
    try {
      nvml.nvmlShutdown();
    } catch {
      // already reported what matters
    }
  }
  done(NAME, ...result);
}
main();
