// NVML readings of issue 43 point 8 on a GPU, each compared with nvidia-smi where the value is stable:
// the power management limit beside the enforced one, display state, memory v2 (total, reserved), the
// energy counter rising while the GPU works, this process among the compute processes, and a typed
// NVML call through `system.nvml` with `gpu.handle` (no second nvmlInit).
import { execFileSync } from 'node:child_process';
import { Device, DeviceBuffer, system, type NvmlDevice } from '../../src';
import { describeGpu } from './gpu-env';

const MiB = 2 ** 20;

/** nvidia-smi's CSV answer for `fields` on the GPU at `busId` (units stripped), or undefined without nvidia-smi. */
function smi(busId: string, fields: string[]): Record<string, string> | undefined {
  let out: string;
  try {
    out = execFileSync('nvidia-smi', [`--id=${busId}`, `--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const values = out.trim().split(/,\s*/);
  return Object.fromEntries(fields.map((f, i) => [f, values[i]]));
}

const hasSmi = (() => {
  try {
    execFileSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
})();
const testSmi = hasSmi ? test : test.skip;
if (!hasSmi) process.stderr.write('math-nvml: nvidia-smi not found; the comparisons with it are skipped\n');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describeGpu('NVML: energy, processes, memory v2, display, power management limit, the handle', () => {
  let gpu: NvmlDevice;
  let device: Device;
  beforeAll(() => {
    device = Device.get(0);
    device.setCurrent();
    gpu = system.gpus.find((g) => g.cudaOrdinal === 0)!;
    expect(gpu).toBeDefined();
  });
  afterAll(() => system.shutdownNvml());

  testSmi('power management limit, enforced limit, default and range agree with nvidia-smi', () => {
    const fields = ['power.limit', 'enforced.power.limit', 'power.default_limit', 'power.min_limit', 'power.max_limit'];
    const s = smi(gpu.pci.busId, fields)!;
    console.log(`NVML ${gpu.name}: management ${gpu.powerManagementLimit} W, enforced ${gpu.powerLimit} W; nvidia-smi ${JSON.stringify(s)}`);
    const near = (ours: number | undefined, theirs: string): void => {
      if (theirs === '[N/A]' || theirs === '[Not Supported]') expect(ours).toBeUndefined();
      else expect(Math.abs(ours! - Number(theirs))).toBeLessThan(0.01);
    };
    near(gpu.powerManagementLimit, s['power.limit']);
    near(gpu.powerLimit, s['enforced.power.limit']);
    near(gpu.powerManagementDefaultLimit, s['power.default_limit']);
    near(gpu.powerManagementLimitConstraints?.min, s['power.min_limit']);
    near(gpu.powerManagementLimitConstraints?.max, s['power.max_limit']);
    expect(gpu.powerLimit!).toBeLessThanOrEqual(gpu.powerManagementLimit! + 0.01);
  });

  testSmi('display active and display mode agree with nvidia-smi', () => {
    const s = smi(gpu.pci.busId, ['display_active', 'display_mode'])!;
    // Both sides in the message: nvidia-smi's wording is what a mismatch needs to be read against.
    // Driver 580's nvidia-smi answers display_mode with "[Requested functionality has been deprecated]":
    // a bracketed answer has nothing to compare with, so only NVML's type is checked then.
    const agree = (nvml: boolean | undefined, smiValue: string) => {
      if (smiValue.startsWith('[')) expect(['boolean', 'undefined']).toContain(typeof nvml);
      else expect({ nvml, smi: smiValue }).toEqual({ nvml: smiValue === 'Enabled', smi: smiValue });
    };
    agree(gpu.displayActive, s.display_active);
    agree(gpu.displayMode, s.display_mode);
  });

  testSmi('memory v2: total and reserved agree with nvidia-smi; used + reserved + free = total', () => {
    const m = gpu.memoryBreakdown!;
    const s = smi(gpu.pci.busId, ['memory.total', 'memory.reserved'])!;
    console.log(`memory v2: ${JSON.stringify(m)}; nvidia-smi ${JSON.stringify(s)} MiB`);
    expect(Math.abs(m.total / MiB - Number(s['memory.total']))).toBeLessThanOrEqual(1);
    expect(Math.abs(m.reserved / MiB - Number(s['memory.reserved']))).toBeLessThanOrEqual(1);
    expect(m.reserved).toBeGreaterThan(0);
    expect(Math.abs(m.used + m.reserved + m.free - m.total)).toBeLessThanOrEqual(MiB);
    expect(Math.abs(m.total - gpu.memory.total)).toBeLessThanOrEqual(m.reserved); // v1 and v2 see the same board
  });

  test('the energy counter (mJ) rises while the GPU works', async () => {
    const before = gpu.totalEnergyConsumption;
    expect(before).toBeGreaterThan(0);
    const buf = DeviceBuffer.alloc(256 * MiB);
    try {
      for (let i = 0; i < 20; i++) buf.memset(i);
      device.synchronize();
      await sleep(500); // NVML refreshes the counter every few tens of ms; an H100 idles at ~70 W
    } finally {
      buf.close();
    }
    const after = gpu.totalEnergyConsumption!;
    console.log(`energy: ${before} → ${after} mJ (+${after - before!} mJ)`);
    expect(after).toBeGreaterThan(before!);
    expect(after - before!).toBeLessThan(2_000 * 60 * 1000); // below 2 kW for a minute: mJ, not µJ
  });

  test('compute processes: pids and memory as nvidia-smi lists them; this process holding 64 MiB where NVML sees its pid', () => {
    const held = DeviceBuffer.alloc(64 * MiB);
    try {
      const list = gpu.computeProcesses;
      console.log(`compute processes: ${JSON.stringify(list)}; this pid ${process.pid}`);
      expect(list).toBeDefined(); // NVML lists processes (possibly without their memory) even in a container
      for (const p of list!) {
        expect(Number.isInteger(p.pid) && p.pid > 0).toBe(true);
        expect(p.usedMemory === undefined || p.usedMemory >= 0).toBe(true);
      }
      if (hasSmi) {
        const apps = execFileSync('nvidia-smi', [`--id=${gpu.pci.busId}`, '--query-compute-apps=pid', '--format=csv,noheader,nounits'], { encoding: 'utf8' });
        const theirs = apps
          .trim()
          .split('\n')
          .filter((l) => /^\d+$/.test(l.trim()))
          .map(Number);
        console.log(`nvidia-smi compute apps: ${theirs.join(', ') || 'none'}`);
        expect(list!.map((p) => p.pid).sort()).toEqual(expect.arrayContaining(theirs.sort()));
      }
      const me = list!.find((p) => p.pid === process.pid);
      if (me !== undefined && me.usedMemory !== undefined) expect(me.usedMemory).toBeGreaterThanOrEqual(64 * MiB);
      const graphics = gpu.graphicsProcesses;
      expect(graphics === undefined || Array.isArray(graphics)).toBe(true);
    } finally {
      held.close();
    }
  });

  test('gpu.handle with system.nvml: typed NVML calls need no nvmlInit of their own', () => {
    const api = system.nvml;
    expect(api.nvmlDeviceGetName(gpu.handle, api.NVML_DEVICE_NAME_V2_BUFFER_SIZE)).toBe(gpu.name);
    expect(api.nvmlDeviceGetEnforcedPowerLimit(gpu.handle) / 1000).toBe(gpu.powerLimit);
    expect(api.nvmlDeviceGetHandleByIndex(gpu.index)).toBe(gpu.handle);
  });
});
