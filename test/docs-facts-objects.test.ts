// The links of the generated TSDoc to NVIDIA's reference and to the objects layer.
// - Reference (generator/modules.ts REFERENCE): every function of every module and stored release links a
//   well-formed https address of docs.nvidia.com; toolkit libraries link their release's archived pages;
//   Doxygen groups link `group__X.html` pages (never the profiler's parent groups CUDA_DRIVER/CUDART);
//   known anchors come out as NVIDIA publishes them.
// - Objects layer (generator/emit/docs-objects.ts): each wrapper named for a math call or a free function
//   exists, is exported by src/index.ts (directly or through src/math/index.ts), and its file names the C
//   function; the hover's lead names it and the API group.
import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { functionPage, groupPage, modulePage } from '../generator/emit/docs-links';
import { MATH_METHODS, OBJECTS_FUNCTIONS } from '../generator/emit/docs-objects';
import { REFERENCE } from '../generator/modules';
import { ir, layerDocs, modulesOf, RELEASES, ROOT } from './docs-facts-lib';

describe('NVIDIA reference links', () => {
  test('the table covers all 16 modules', () => {
    expect(Object.keys(REFERENCE).sort()).toEqual(modulesOf('13.0'));
  });

  test('known pages and anchors', () => {
    expect(groupPage('driver', '12.6', 'CUDA_MEM')).toBe('https://docs.nvidia.com/cuda/archive/12.6.0/cuda-driver-api/group__CUDA__MEM.html');
    expect(groupPage('runtime', '11.8', 'CUDART_MEMORY')).toBe('https://docs.nvidia.com/cuda/archive/11.8.0/cuda-runtime-api/group__CUDART__MEMORY.html');
    expect(groupPage('nvml', '13.0', 'nvmlDeviceQueries')).toBe('https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html');
    expect(functionPage('cudnn', '13.0', 'cudnnSetTensorNdDescriptor', 'cudnn_ops.h')).toBe('https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/cudnn-ops-library.html#cudnnsettensornddescriptor');
    expect(modulePage('cusparse', '12.5')).toBe('https://docs.nvidia.com/cuda/archive/12.5.0/cusparse/index.html');
    expect(groupPage('cublas', '13.0', 'X')).toBeUndefined();
  });

  test.each(RELEASES)('%s: every typed function of every module links a well-formed NVIDIA page', (rel) => {
    for (const module of modulesOf(rel)) {
      const docs = layerDocs(rel, module, 'typed');
      for (const f of ir(rel, module)!.functions) {
        const text = docs.get(f.name)?.text ?? '';
        const urls = [...text.matchAll(/\]\((https:[^)\s]+)\)/g)].map((m) => m[1]);
        expect([module, f.name, urls.length]).toEqual([module, f.name, 1]);
        const url = new URL(urls[0]);
        expect([f.name, url.protocol, url.hostname]).toEqual([f.name, 'https:', 'docs.nvidia.com']);
        expect(urls[0]).not.toMatch(/group__(CUDA__DRIVER|CUDART)\.html/);
        if (REFERENCE[module].archived) expect([f.name, url.pathname]).toEqual([f.name, expect.stringContaining(`/cuda/archive/${rel}.0/`)]);
        if (f.group && REFERENCE[module].groups) expect([f.name, url.pathname]).toEqual([f.name, expect.stringContaining(`group__${f.group.replace(/_/g, '__')}.html`)]);
      }
    }
  });
});

describe('objects-layer wrappers named by the docs', () => {
  const index = readFileSync(join(ROOT, 'src', 'index.ts'), 'utf8') + readFileSync(join(ROOT, 'src', 'math', 'index.ts'), 'utf8');
  const sources: Record<string, string> = { Blas: 'math/blas.ts', Matmul: 'math/matmul.ts', FftPlan: 'math/fft.ts', RandomGenerator: 'math/random.ts', Sparse: 'math/sparse.ts', DenseSolver: 'math/solver.ts', Cudnn: 'math/cudnn.ts' };
  for (const [module, table] of Object.entries(MATH_METHODS)) {
    for (const [cName, link] of Object.entries(table)) {
      test(`${module}: ${cName} → ${link}`, () => {
        const [cls, member] = link.split('#');
        expect(index).toMatch(new RegExp(`\\b${cls}\\b`));
        const text = readFileSync(join(ROOT, 'src', sources[cls]), 'utf8');
        expect(text).toMatch(new RegExp(`\\n  (?:async )?${member}(?:<[^(]*>)?\\(`));
        expect(text).toContain(cName);
        const doc = layerDocs('13.0', module, 'typed').get(cName)!.text;
        expect(doc).toContain(`Wrapped by \`${cls}.${member}\` (objects layer)`);
      });
    }
  }
  test.each(Object.entries(OBJECTS_FUNCTIONS))('driver: %s → %s()', (cName, fn) => {
    expect(index).toMatch(new RegExp(`\\b${fn}\\b`));
    const launch = readFileSync(join(ROOT, 'src', 'launch.ts'), 'utf8');
    expect(launch).toMatch(new RegExp(`export function ${fn}\\b`));
    expect(launch).toContain(`'${cName}'`);
    expect(layerDocs('13.0', 'driver', 'typed').get(cName)!.text).toContain(`API group \`CUDA_EXEC\`; wrapped by \`${fn}\``);
  });
});
