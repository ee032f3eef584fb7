// What an editor shows: TypeScript's language service asked for the hover text (quick info) and the
// signature help of calls to a sample of generated functions, typed and raw layers, through their
// modules' entries as a user imports them. The parameter docs must appear, with the facts they state.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const G = join(ROOT, 'generated', '13.0');

/** The sample: calls through the typed entries (`driver`, `runtime`, `nvrtc`) and the raw one (`raw`). */
const SAMPLE = `
import * as driver from '${G}/driver/index';
import * as raw from '${G}/driver/raw';
import * as runtime from '${G}/runtime/index';
import * as nvrtc from '${G}/nvrtc/index';
declare const dev: driver.CUdevice, stream: driver.CUstream, p: driver.CUdeviceptr;
driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
driver.cuMemcpyHtoD(p, new Uint8Array(4), 4);
driver.cuStreamSynchronize(stream);
driver.cuMemGetInfo();
raw.cuMemAlloc(new BigUint64Array(1), 4);
raw.cuDeviceGetCount(new Int32Array(1));
runtime.cudaSetDevice(0);
nvrtc.nvrtcCreateProgram('', 'k.cu', [], []);
`;

let dir = '';
let service: ts.LanguageService;
let file = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cuda-ts-hover-'));
  file = join(dir, 'sample.ts');
  writeFileSync(file, SAMPLE);
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
    lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
  };
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [file],
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => (existsSync(f) ? ts.ScriptSnapshot.fromString(readFileSync(f, 'utf8')) : undefined),
    getCurrentDirectory: () => ROOT,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: existsSync,
    readFile: (f) => readFileSync(f, 'utf8'),
  };
  service = ts.createLanguageService(host);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Quick info at the name of the call `call` in the sample: its summary and its tags by name. */
function hover(call: string): { summary: string; tags: [string, string][] } {
  const at = SAMPLE.indexOf(call);
  if (at < 0) throw new Error(`${call} is not in the sample`);
  const info = service.getQuickInfoAtPosition(file, at + call.lastIndexOf('.') + 1);
  if (!info) throw new Error(`no quick info for ${call}`);
  return { summary: ts.displayPartsToString(info.documentation), tags: (info.tags ?? []).map((t) => [t.name, ts.displayPartsToString(t.text)]) };
}

/** Signature help inside the call's parentheses: each parameter's documentation, by name. */
function paramHelp(call: string): Record<string, string> {
  const at = SAMPLE.indexOf(call) + call.length + 1;
  const help = service.getSignatureHelpItems(file, at, undefined);
  if (!help) throw new Error(`no signature help for ${call}`);
  return Object.fromEntries(help.items[0].parameters.map((p) => [p.name, ts.displayPartsToString(p.documentation)]));
}

const params = (tags: [string, string][]) => tags.filter(([n]) => n === 'param').map(([, t]) => t);

describe('hover text of generated functions (TypeScript language service)', () => {
  test('the sample type-checks (the hover sees the real declarations)', () => {
    const errors = [...service.getSyntacticDiagnostics(file), ...service.getSemanticDiagnostics(file)].map((d) =>
      ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    );
    expect(errors).toEqual([]);
  });

  test('typed driver: summary with the C signature, @param per parameter with direction and C type, group link', () => {
    const h = hover('driver.cuDeviceGetAttribute');
    expect(h.summary).toContain('cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)');
    // a by-value parameter says its role: the enum whose values it takes (linked), what returns one
    expect(params(h.tags)).toEqual([
      'attrib in `CUdevice_attribute`: one of the {@link T.CUdevice_attribute} values.',
      'dev in `CUdevice`: a signed 32-bit integer, such as `cuDeviceGet` returns.',
    ]);
    expect(h.tags).toContainEqual(['returns', expect.stringContaining('`pi`: out `int *`')]);
    expect(h.tags).toContainEqual([
      'remarks',
      expect.stringMatching(/Since CUDA \d+\.\d \(cudaTypedefs\.h\).*archive\/13\.0\.0\/cuda-driver-api\/group__CUDA__DEVICE\.html/),
    ]);
    expect(h.tags).toContainEqual(['see', expect.stringContaining('Device.attribute')]);
  });

  test('typed driver: an enum parameter links the enum the signature names, and the link resolves', () => {
    const at = SAMPLE.indexOf('driver.cuDeviceGetAttribute') + 'driver.'.length;
    const tag = service.getQuickInfoAtPosition(file, at)!.tags!.find((t) => t.name === 'param' && ts.displayPartsToString(t.text).startsWith('attrib'))!;
    const link = tag.text!.find((x) => x.kind === 'linkName') as ts.JSDocLinkDisplayPart | undefined;
    expect(link?.text).toBe('T.CUdevice_attribute');
    expect(link?.target.fileName).toMatch(/generated\/13\.0\/driver\/types\.ts$/);
  });

  test('typed driver: a host buffer that must cover a byte count says so, also in signature help', () => {
    expect(params(hover('driver.cuMemcpyHtoD').tags)).toContainEqual(expect.stringContaining('covering `ByteCount` bytes'));
    expect(paramHelp('driver.cuMemcpyHtoD')).toEqual({
      dstDevice: 'in `CUdeviceptr`: a device address.',
      srcHost: expect.stringContaining('address or host buffer covering `ByteCount` bytes'),
      ByteCount: 'in `size_t`: size of `srcHost` in bytes.',
    });
    expect(paramHelp('driver.cuStreamSynchronize')).toEqual({ hStream: 'in `CUstream`: an opaque handle, such as `cuStreamCreate` returns.' });
  });

  test('typed driver: outputs only — @returns names each one', () => {
    const h = hover('driver.cuMemGetInfo');
    expect(h.tags).toContainEqual(['returns', '`{ free, total }`: `free`: out `size_t *`; `total`: out `size_t *`.']);
  });

  test('raw driver: @param per C parameter with its C type and what the raw caller passes', () => {
    const h = hover('raw.cuMemAlloc');
    expect(h.summary).toContain('cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)');
    expect(params(h.tags)).toEqual(['dptr `CUdeviceptr *`, out: a typed array of one element', 'bytesize `size_t`']);
    expect(h.tags).toContainEqual(['returns', 'the `CUresult` status, as C returns it.']);
    expect(paramHelp('raw.cuDeviceGetCount')).toEqual({ count: '`int *`, out: a typed array of one element' });
  });

  test('runtime and NVRTC: parameters documented, arrays with their counts', () => {
    expect(params(hover('runtime.cudaSetDevice').tags)).toEqual(['device in `int`: a signed 32-bit integer.']);
    const h = params(hover('nvrtc.nvrtcCreateProgram').tags);
    expect(h.length).toBeGreaterThanOrEqual(4);
    expect(h).toContain('headers in array of C string; its length is passed as `numHeaders`.');
  });
});
