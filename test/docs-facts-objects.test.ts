// The links of the generated TSDoc to NVIDIA's reference and to the objects layer.
// - Reference (generator/modules.ts REFERENCE): every function of every module and stored release links a
//   well-formed https address of docs.nvidia.com, or nothing where no page of that release is known;
//   toolkit libraries link their release's archived pages, cuDNN/NCCL/CUPTI the version their headers
//   declare, NVML/cuFile their one current page from the newest release only (labelled so); Doxygen groups
//   link `group__X.html` pages (never the profiler's parent groups CUDA_DRIVER/CUDART); known anchors
//   (seen on real NVIDIA pages) come out as NVIDIA publishes them.
// - Objects layer (generator/emit/docs-objects.ts): each wrapper named for a math call or a free function
//   exists, is exported by src/index.ts (directly or through src/math/index.ts), and its file names the C
//   function; the hover's lead names it and the API group.
import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { functionPage, groupPage, isCurrentPage, modulePage } from '../generator/emit/docs-links';
import { MATH_METHODS, OBJECTS_FUNCTIONS } from '../generator/emit/docs-objects';
import { REFERENCE } from '../generator/modules';
import { ir, layerDocs, modulesOf, RELEASES, ROOT } from './docs-facts-lib';

describe('NVIDIA reference links', () => {
  const at = (module: string, release: string, version?: number) => ({
    module,
    release,
    version,
    names: new Set(ir(release, module)?.functions.map((f) => f.name) ?? []),
  });

  test('the table covers all 16 modules', () => {
    expect(Object.keys(REFERENCE).sort()).toEqual(modulesOf('13.0'));
  });

  test('known pages and anchors', () => {
    expect(groupPage(at('driver', '12.6'), 'CUDA_MEM')).toBe('https://docs.nvidia.com/cuda/archive/12.6.0/cuda-driver-api/group__CUDA__MEM.html');
    expect(groupPage(at('runtime', '11.8'), 'CUDART_MEMORY')).toBe('https://docs.nvidia.com/cuda/archive/11.8.0/cuda-runtime-api/group__CUDART__MEMORY.html');
    expect(groupPage(at('nvml', '13.0'), 'nvmlDeviceQueries')).toBe('https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html');
    expect(modulePage(at('cusparse', '12.5'))).toBe('https://docs.nvidia.com/cuda/archive/12.5.0/cusparse/index.html');
    expect(groupPage(at('cublas', '13.0'), 'X')).toBeUndefined();
    // versioned libraries: the version the headers declare (cuDNN 9.19.0, NCCL 2.28.9, CUPTI of CUDA 13.0)
    expect(functionPage(at('cudnn', '13.0', 91900), 'cudnnSetTensorNdDescriptor', 'cudnn_ops.h')).toBe(
      'https://docs.nvidia.com/deeplearning/cudnn/backend/v9.19.0/api/cudnn-ops-library.html#cudnnsettensornddescriptor',
    );
    expect(modulePage(at('cudnn', '12.6', 90600))).toBe('https://docs.nvidia.com/deeplearning/cudnn/backend/v9.6.0/api/overview.html');
    expect(modulePage(at('nccl', '13.0', 22809))).toBe('https://docs.nvidia.com/deeplearning/nccl/archives/nccl_2289/user-guide/docs/api.html');
    expect(groupPage(at('cupti', '13.0', 130001), 'CUPTI_ACTIVITY_API')).toBe('https://docs.nvidia.com/cupti/13.0.0/api/group__CUPTI__ACTIVITY__API.html');
    // no version known, or an older release of a library with one current page: no link at all
    expect(modulePage(at('cudnn', '13.0'))).toBeUndefined();
    expect(modulePage(at('cupti', '12.5', 23))).toBeUndefined();
    expect(groupPage(at('nvml', '12.6'), 'nvmlDeviceQueries')).toBeUndefined();
    expect(modulePage(at('cufile', '11.8'))).toBeUndefined();
    expect(isCurrentPage(at('nvml', '13.0'))).toBe(true);
    expect(isCurrentPage(at('cudnn', '13.0', 91900))).toBe(false);
  });

  // Anchors seen on real docs.nvidia.com cuBLAS pages (CUDA 12.2-13.1 archives and the current page)
  test.each([
    ['cublasSgemm', 'cublas-t-gemm'],
    ['cublasHgemm', 'cublas-t-gemm'],
    ['cublasSgemm_v2_64', 'cublas-t-gemm'],
    ['cublasCtrsm', 'cublas-t-trsm'],
    ['cublasCsymm', 'cublas-t-symm'],
    ['cublasCsyrk', 'cublas-t-syrk'],
    ['cublasCcopy', 'cublas-t-copy'],
    ['cublasCdotu', 'cublas-t-dot'],
    ['cublasScasum', 'cublas-t-asum'],
    ['cublasSaxpy', 'cublas-t-axpy'],
    ['cublasSgbmv', 'cublas-t-gbmv'],
    ['cublasSgemv', 'cublas-t-gemv'],
    ['cublasCtrmm', 'cublas-t-trmm'],
    ['cublasSgeam', 'cublas-t-geam'],
    ['cublasSgetriBatched', 'cublas-t-getribatched'],
    ['cublasSgemmStridedBatched', 'cublas-t-gemmstridedbatched'],
    ['cublasStrsmBatched', 'cublas-t-trsmbatched'],
    ['cublasSspr2', 'cublas-t-spr2'],
    ['cublasIsamax', 'cublasi-t-amax'],
    ['cublasGemmEx', 'cublasgemmex'],
    ['cublasGemmBatchedEx', 'cublasgemmbatchedex'],
    ['cublasGemmGroupedBatchedEx', 'cublasgemmgroupedbatchedex'],
    ['cublasCreate', 'cublascreate'],
    ['cublasDotEx', 'cublasdotex'],
  ])('cuBLAS 13.0: %s → #%s', (name, anchor) => {
    expect(functionPage(at('cublas', '13.0'), name, 'cublas_api.h')).toBe(`https://docs.nvidia.com/cuda/archive/13.0.0/cublas/index.html#${anchor}`);
    expect(functionPage(at('cublas', '11.8'), name, 'cublas_api.h')).toBeUndefined();
  });

  test('cuBLASLt anchors are the lowercased name; functions with no confirmed section link the page', () => {
    expect(functionPage(at('cublaslt', '12.6'), 'cublasLtMatmul', 'cublasLt.h')).toBe(
      'https://docs.nvidia.com/cuda/archive/12.6.0/cublas/index.html#cublasltmatmul',
    );
    expect(functionPage(at('cublaslt', '13.0'), 'cublasLtCreate', 'cublasLt.h')).toBe(
      'https://docs.nvidia.com/cuda/archive/13.0.0/cublas/index.html#cublasltcreate',
    );
    for (const name of ['cublasLtMatmulDescInit_internal', 'cublasCgemm3mBatched', 'cublasXerbla'])
      expect(functionPage(at(name.startsWith('cublasLt') ? 'cublaslt' : 'cublas', '13.0'), name, 'x.h')).toBeUndefined();
  });

  test.each(RELEASES)("%s: every typed function links its release's NVIDIA page, or none where no page of that release is known", (rel) => {
    for (const module of modulesOf(rel)) {
      const docs = layerDocs(rel, module, 'typed');
      const m = ir(rel, module)!;
      const target = { module, release: rel, version: m.versionNumber, names: new Set(m.functions.map((f) => f.name)) };
      const page = modulePage(target);
      for (const f of m.functions) {
        const text = docs.get(f.name)?.text ?? '';
        const urls = [...text.matchAll(/\]\((https:[^)\s]+)\)/g)].map((x) => x[1]);
        expect([module, f.name, urls.length]).toEqual([module, f.name, page ? 1 : 0]);
        if (!page) continue;
        const url = new URL(urls[0]);
        expect([f.name, url.protocol, url.hostname]).toEqual([f.name, 'https:', 'docs.nvidia.com']);
        expect(urls[0]).not.toMatch(/group__(CUDA__DRIVER|CUDART)\.html/);
        if (REFERENCE[module].archived) expect([f.name, url.pathname]).toEqual([f.name, expect.stringContaining(`/cuda/archive/${rel}.0/`)]);
        if (f.group && REFERENCE[module].groups)
          expect([f.name, url.pathname]).toEqual([f.name, expect.stringContaining(`group__${f.group.replace(/_/g, '__')}.html`)]);
        if (url.hash) expect([f.name, url.hash]).toEqual([f.name, `#${functionPage(target, f.name, f.header)!.split('#')[1]}`]);
        // a family anchor names a section that documents two type codes or more of the module
        const family = /^#cublas(i?)-t-([a-z0-9]+)$/.exec(url.hash);
        if (family)
          expect([
            f.name,
            new Set(m.functions.filter((g) => functionPage(target, g.name, g.header)?.endsWith(url.hash)).map((g) => g.name.replace(/(_v2)?(_64)?$/, '')))
              .size >= 2,
          ]).toEqual([f.name, true]);
        if (isCurrentPage(target)) expect([f.name, text]).toEqual([f.name, expect.stringContaining('(current version)')]);
      }
    }
  });

  test('versioned libraries link the version their headers declare', () => {
    for (const rel of RELEASES) {
      const cudnn = ir(rel, 'cudnn');
      if (cudnn)
        expect(layerDocs(rel, 'cudnn', 'typed').get('cudnnCreate')!.text).toContain(
          `/cudnn/backend/v${Math.floor(cudnn.versionNumber / 10000)}.${Math.floor(cudnn.versionNumber / 100) % 100}.${cudnn.versionNumber % 100}/`,
        );
      const nccl = ir(rel, 'nccl');
      if (nccl)
        expect(layerDocs(rel, 'nccl', 'typed').get('ncclGetVersion')!.text).toContain(
          `/nccl/archives/nccl_${Math.floor(nccl.versionNumber / 10000)}${Math.floor(nccl.versionNumber / 100) % 100}${nccl.versionNumber % 100}/`,
        );
    }
  });
});

describe('objects-layer wrappers named by the docs', () => {
  const index = readFileSync(join(ROOT, 'src', 'index.ts'), 'utf8') + readFileSync(join(ROOT, 'src', 'math', 'index.ts'), 'utf8');
  const sources: Record<string, string> = {
    Blas: 'math/blas.ts',
    Matmul: 'math/matmul.ts',
    FftPlan: 'math/fft.ts',
    RandomGenerator: 'math/random.ts',
    Sparse: 'math/sparse.ts',
    DenseSolver: 'math/solver.ts',
    Cudnn: 'math/cudnn.ts',
  };
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
