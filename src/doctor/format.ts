// The doctor's one screen: the report as aligned text. Pure.
import { jsRuntimeName } from '../../support';
import type { DoctorReport, GpuFinding, LibraryFinding } from './report';
import { formatRuntime } from './js-runtime';

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

function table(rows: string[][], indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
        .join('  ')
        .trimEnd(),
  );
}

function gpuRow(g: GpuFinding): string[] {
  const details = [
    g.computeCapability ? `CC ${g.computeCapability}` : '',
    g.memoryBytes !== undefined ? gib(g.memoryBytes) : '',
    g.multiprocessors !== undefined ? `${g.multiprocessors} SMs` : '',
    g.pciBusId ?? '',
    g.mig ? `MIG ${g.mig}` : '',
    g.persistence ? `persistence ${g.persistence}` : '',
  ].filter(Boolean);
  return [`${g.ordinal}`, g.name, details.join(', ')];
}

function libraryRow(l: LibraryFinding): string[] {
  if (!l.path) return [l.module, 'not found', `(${l.sonames.join(', ')}; ${l.env})`];
  const via = l.how && l.how !== 'system loader' ? ` via ${l.how}` : '';
  return [l.module, l.version ?? '?', `${l.path}${via}`, `bindings ${l.fits.join(', ')}`];
}

/** The report as the lines of one screen. */
export function formatReport(r: DoctorReport): string {
  const lines: string[] = [];
  const rt = r.runtime;
  const runtime = rt && rt.name !== 'node' ? `${jsRuntimeName(rt.name)} ${rt.version}` : `Node ${r.cudaTs.node ?? (rt ? `v${rt.version}` : '?')}`;
  lines.push(`cuda-ts doctor${r.cudaTs.version ? ` (cuda-ts ${r.cudaTs.version}` : ' ('}, ${runtime}, ${r.cudaTs.platform})`);

  lines.push('', 'Driver');
  const d = r.driver;
  if (!d.found) lines.push(`  not found (libcuda.so.1): ${d.error ?? ''}`.trimEnd());
  else {
    lines.push(`  ${d.path}${d.how && d.how !== 'system loader' ? ` via ${d.how}` : ''}`);
    const facts = [d.version ? `driver ${d.version}` : '', d.cudaVersion ? `supports CUDA ${d.cudaVersion}` : ''].filter(Boolean);
    if (facts.length) lines.push(`  ${facts.join(', ')}`);
    if (d.initStatus !== undefined) lines.push(`  cuInit: ${d.initStatus === 0 ? 'ok' : `${d.initError} (${d.initStatus})`}`);
  }
  if (r.nvml?.version) lines.push(`  NVML ${r.nvml.version}`);

  lines.push('', `GPUs (${r.gpus.length})`);
  if (r.gpus.length === 0) lines.push(`  none${d.found ? '' : ' (no driver)'}`);
  else lines.push(...table(r.gpus.map(gpuRow)));

  lines.push('', 'Bindings installed');
  lines.push(
    ...table(
      r.releases.map((rel) => [
        rel.release,
        `${rel.modules.length} modules`,
        rel.minDriver ? `needs driver ≥ ${rel.minDriver}` : '',
        rel.driverRuns === undefined ? '' : rel.driverRuns ? 'runs on this driver' : 'NOT on this driver',
      ]),
    ),
  );

  const found = r.libraries.filter((l) => l.path);
  const missing = r.libraries.filter((l) => !l.path);
  lines.push('', `CUDA libraries (${found.length} found)`);
  if (found.length) lines.push(...table(found.map(libraryRow)));
  if (missing.length) lines.push(`  not found: ${[...new Set(missing.map((l) => l.module))].join(', ')}`);

  lines.push(...formatRuntime(r.runtime, r.kernelCache));

  lines.push('', 'Environment');
  const env = Object.entries(r.environment);
  if (env.length === 0) lines.push('  no override set (CUDA_TS_<MODULE>_LIBRARY, CUDA_HOME, CUDA_PATH, …)');
  else for (const [k, v] of env) lines.push(`  ${k}=${v.length > 100 ? `${v.slice(0, 97)}...` : v}`);

  lines.push('');
  if (r.problems.length === 0) lines.push('Problems: none');
  else {
    lines.push(`Problems (${r.problems.length})`);
    for (const p of r.problems) {
      lines.push(`  ${p.severity === 'error' ? 'ERROR' : 'warning'}: ${p.message}`);
      lines.push(`    fix: ${p.fix}`);
    }
  }
  lines.push('', r.usable ? `CUDA is usable here: ${r.gpus.length} GPU(s).` : 'CUDA is NOT usable here (exit 1).');
  return `${lines.join('\n')}\n`;
}
