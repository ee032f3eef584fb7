// Reads and writes `headers/<cuda-version>/<module>.json`, validating both ways.
import { mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ModuleIRSchema, type ModuleIR } from './schema';

export function irPath(root: string, cudaVersion: string, module: string): string {
  return join(root, 'headers', cudaVersion, `${module}.json`);
}

/** Stable text: validated, two-space indented, trailing newline. */
export function serializeIR(ir: ModuleIR): string {
  return JSON.stringify(ModuleIRSchema.parse(ir), null, 1) + '\n';
}

export function parseIR(text: string, where = 'IR'): ModuleIR {
  const result = ModuleIRSchema.safeParse(JSON.parse(text));
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`${where}: invalid IR at ${issue.path.join('.')}: ${issue.message}`);
  }
  return result.data;
}

export function writeIR(root: string, ir: ModuleIR): string {
  const path = irPath(root, ir.cudaVersion, ir.module);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, serializeIR(ir));
  return path;
}

export function readIR(root: string, cudaVersion: string, module: string): ModuleIR {
  const path = irPath(root, cudaVersion, module);
  return parseIR(readFileSync(path, 'utf8'), path);
}

/** Releases with stored IR, oldest first ("12.6", "13.0"). */
export function storedReleases(root: string): string[] {
  const dir = join(root, 'headers');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => /^\d+\.\d+$/.test(d))
    .sort(compareVersions);
}

export function compareVersions(a: string, b: string): number {
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am - bm || an - bn;
}
