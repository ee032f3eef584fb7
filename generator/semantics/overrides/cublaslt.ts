// cuBLASLt: descriptors are handles (generator/model OWNED_HANDLES); the algorithm is a 64-byte record
// passed by pointer; each attribute's C type is stated in the headers' enum documentation (the line
// under each member: `int32_t`, `uint64_t`, `const void *`…), transcribed into the tables below and
// reviewed against the 11.8, 12.5, 12.6 and 13.0 headers. The setters and getters then take and return
// typed values, their sizes derived from the attribute.
import type { AttrTable, Elem, ModuleOverrides, Override } from '../model';

const i8: Elem = { t: 'int', bits: 8, signed: true };
const i32: Elem = { t: 'int', bits: 32, signed: true };
const u32: Elem = { t: 'int', bits: 32, signed: false };
const i64: Elem = { t: 'int', bits: 64, signed: true };
const u64: Elem = { t: 'int', bits: 64, signed: false };
const f32: Elem = { t: 'float', bits: 32 };
const size: Elem = { t: 'int', bits: 64, signed: false, size: true };
/** `const void *` / `void *` attributes: device addresses (bias, scale, amax, aux buffers, counters). */
const device: Elem = { t: 'deviceptr', name: 'DevicePointer' };
const enum32 = (name: string, signed: boolean): Elem => ({ t: 'enum', name, bits: 32, signed });
/** cublasOperation_t (kept in the module's IR by the catalog's keepTypes, so cuBLASLt exports it). */
const operation = enum32('cublasOperation_t', true);

const handleOut = (name: string): Override => ({
  sem: { role: 'out', elem: { t: 'handle', name } },
  reason: `a new ${name} returned (the handle type points to a complete struct, so the C types read as data)`,
});

const matmulDesc: AttrTable = {
  CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: enum32('cublasComputeType_t', true), // int32_t
  CUBLASLT_MATMUL_DESC_SCALE_TYPE: enum32('cudaDataType_t', true), // int32_t
  CUBLASLT_MATMUL_DESC_POINTER_MODE: enum32('cublasLtPointerMode_t', true), // int32_t
  CUBLASLT_MATMUL_DESC_TRANSA: operation, // int32_t, a cublasOperation_t
  CUBLASLT_MATMUL_DESC_TRANSB: operation, // int32_t, a cublasOperation_t
  CUBLASLT_MATMUL_DESC_TRANSC: operation, // int32_t, a cublasOperation_t
  CUBLASLT_MATMUL_DESC_FILL_MODE: enum32('cublasFillMode_t', true), // int32_t, a cublasFillMode_t
  CUBLASLT_MATMUL_DESC_EPILOGUE: enum32('cublasLtEpilogue_t', false), // uint32_t
  CUBLASLT_MATMUL_DESC_BIAS_POINTER: device, // const void * (void * for the bias gradient)
  CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: i64, // int64_t
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: device, // void * / const void *
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: i64, // int64_t
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: i64, // int64_t
  CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE: i64, // int64_t
  CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: i32, // int32_t
  CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: device, // const void *
  CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: device, // const void *
  CUBLASLT_MATMUL_DESC_C_SCALE_POINTER: device, // const void *
  CUBLASLT_MATMUL_DESC_D_SCALE_POINTER: device, // const void *
  CUBLASLT_MATMUL_DESC_AMAX_D_POINTER: device, // void *
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE: i32, // int32_t based on cudaDataType (-1: default)
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER: device, // void *
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER: device, // void *
  CUBLASLT_MATMUL_DESC_FAST_ACCUM: i8, // int8_t
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: i32, // int32_t based on cudaDataType (-1: default)
  CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_NUM_CHUNKS_D_ROWS: i32, // int32_t (12.x)
  CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_NUM_CHUNKS_D_COLS: i32, // int32_t (12.x)
  CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_IN_COUNTERS_POINTER: device, // int32_t * (12.x)
  CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_OUT_COUNTERS_POINTER: device, // int32_t * (12.x)
  CUBLASLT_MATMUL_DESC_A_SCALE_MODE: i32, // int32_t (13.0)
  CUBLASLT_MATMUL_DESC_B_SCALE_MODE: i32, // int32_t (13.0)
  CUBLASLT_MATMUL_DESC_C_SCALE_MODE: i32, // int32_t (13.0)
  CUBLASLT_MATMUL_DESC_D_SCALE_MODE: i32, // int32_t (13.0)
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE: i32, // int32_t (13.0)
  CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER: device, // void * (13.0)
  CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE: i32, // int32_t (13.0)
  CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR: { t: 'handle', name: 'cublasLtEmulationDesc_t' }, // cublasLtEmulationDesc_t (13.0)
};

const matrixLayout: AttrTable = {
  CUBLASLT_MATRIX_LAYOUT_TYPE: u32, // uint32_t, a cudaDataType
  CUBLASLT_MATRIX_LAYOUT_ORDER: enum32('cublasLtOrder_t', true), // int32_t
  CUBLASLT_MATRIX_LAYOUT_ROWS: u64, // uint64_t
  CUBLASLT_MATRIX_LAYOUT_COLS: u64, // uint64_t
  CUBLASLT_MATRIX_LAYOUT_LD: i64, // int64_t
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: i32, // int32_t
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: i64, // int64_t
  CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: i64, // int64_t
  CUBLASLT_MATRIX_LAYOUT_BATCH_MODE: u32, // uint32_t, a cublasLtBatchMode_t (13.0)
};

const preference: AttrTable = {
  CUBLASLT_MATMUL_PREF_SEARCH_MODE: u32, // uint32_t, a cublasLtMatmulSearch_t
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: u64, // uint64_t
  CUBLASLT_MATMUL_PREF_MATH_MODE_MASK: u32, // uint32_t (11.8, deprecated)
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK: u32, // uint32_t
  CUBLASLT_MATMUL_PREF_GAUSSIAN_MODE_MASK: u32, // uint32_t (11.8, deprecated)
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: u32, // uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: u32, // uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: u32, // uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: u32, // uint32_t
  CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: f32, // float
  CUBLASLT_MATMUL_PREF_POINTER_MODE_MASK: u32, // uint32_t (11.8)
  CUBLASLT_MATMUL_PREF_EPILOGUE_MASK: u32, // uint32_t (11.8)
  CUBLASLT_MATMUL_PREF_SM_COUNT_TARGET: i32, // int32_t (11.8, deprecated)
  CUBLASLT_MATMUL_PREF_IMPL_MASK: u64, // uint64_t, cublasLtNumericalImplFlags_t bits
};

const transformDesc: AttrTable = {
  CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE: i32, // int32_t, a cudaDataType
  CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE: enum32('cublasLtPointerMode_t', true), // int32_t
  CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA: operation, // int32_t, a cublasOperation_t
  CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB: operation, // int32_t, a cublasOperation_t
};

const emulationDesc: AttrTable = {
  CUBLASLT_EMULATION_DESC_STRATEGY: i32, // int32_t, a cublasEmulationStrategy_t
  CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT: i32, // int32_t
  CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL: i32, // int32_t
  CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT: i32, // int32_t
  CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET: i32, // int32_t
  CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER: device, // int32_t * (device or host, read at each call)
};

const TYPED_BY_ATTR = 'the value type depends on the attribute (the tables below, from the enum documentation)';
/** The setter and getter of one descriptor kind: value typed by `attr`, its size derived, the size written read inside. */
function attributeAccessors(prefix: string, table: string): Record<string, Override> {
  return {
    [`${prefix}SetAttribute.buf`]: { sem: { role: 'attrValue', attr: 'attr', dir: 'in', table }, reason: TYPED_BY_ATTR },
    [`${prefix}SetAttribute.sizeInBytes`]: { sem: { role: 'attrSize', of: 'buf' }, reason: 'the size of the attribute value, derived from the attribute' },
    [`${prefix}GetAttribute.buf`]: { sem: { role: 'attrValue', attr: 'attr', dir: 'out', table }, reason: TYPED_BY_ATTR },
    [`${prefix}GetAttribute.sizeInBytes`]: { sem: { role: 'attrSize', of: 'buf' }, reason: 'the size of the attribute value, derived from the attribute' },
    [`${prefix}GetAttribute.sizeWritten`]: {
      sem: { role: 'countOut', of: 'buf', elem: size },
      reason: 'the size written equals the attribute size on success: read inside, not returned',
    },
  };
}

const ALGO = 'cublasLtMatmulAlgo_t';
const algoIn = (nullable: boolean, reason: string): Override => ({ sem: { role: 'inRecord', record: ALGO, nullable }, reason });

export const cublaslt: ModuleOverrides = {
  params: {
    'cublasLtMatmulDescCreate.matmulDesc': handleOut('cublasLtMatmulDesc_t'),
    'cublasLtMatrixLayoutCreate.matLayout': handleOut('cublasLtMatrixLayout_t'),
    'cublasLtMatmulPreferenceCreate.pref': handleOut('cublasLtMatmulPreference_t'),
    'cublasLtMatrixTransformDescCreate.transformDesc': handleOut('cublasLtMatrixTransformDesc_t'),
    'cublasLtEmulationDescCreate.emulationDesc': handleOut('cublasLtEmulationDesc_t'),
    'cublasLtMatmul.algo': algoIn(true, "the algorithm record (a heuristic result's `algo` as decoded); NULL lets the library pick one"),
    'cublasLtMatmulAlgoCheck.algo': algoIn(false, 'the algorithm record the call checks'),
    'cublasLtMatmulAlgoConfigGetAttribute.algo': algoIn(false, 'the algorithm record the call reads'),
    'cublasLtMatmulAlgoCapGetAttribute.algo': algoIn(false, 'the algorithm record the call reads'),
    'cublasLtMatmulAlgoInit.algo': { sem: { role: 'outRecord', record: ALGO }, reason: 'the algorithm record the call initializes' },
    'cublasLtMatmulAlgoConfigSetAttribute.algo': { sem: { role: 'inoutRecord', record: ALGO }, reason: 'the algorithm record the call updates' },
    ...attributeAccessors('cublasLtMatmulDesc', 'matmulDesc'),
    ...attributeAccessors('cublasLtMatrixLayout', 'matrixLayout'),
    ...attributeAccessors('cublasLtMatmulPreference', 'preference'),
    ...attributeAccessors('cublasLtMatrixTransformDesc', 'transformDesc'),
    ...attributeAccessors('cublasLtEmulationDesc', 'emulationDesc'),
  },
  attrTables: {
    matmulDesc: {
      enum: 'cublasLtMatmulDescAttributes_t',
      values: matmulDesc,
      reason: 'cublasLt.h: the C type under each cublasLtMatmulDescAttributes_t member',
    },
    matrixLayout: {
      enum: 'cublasLtMatrixLayoutAttribute_t',
      values: matrixLayout,
      reason: 'cublasLt.h: the C type under each cublasLtMatrixLayoutAttribute_t member',
    },
    preference: {
      enum: 'cublasLtMatmulPreferenceAttributes_t',
      values: preference,
      reason: 'cublasLt.h: the C type under each cublasLtMatmulPreferenceAttributes_t member',
    },
    transformDesc: {
      enum: 'cublasLtMatrixTransformDescAttributes_t',
      values: transformDesc,
      reason: 'cublasLt.h: the C type under each cublasLtMatrixTransformDescAttributes_t member',
    },
    emulationDesc: {
      enum: 'cublasLtEmulationDescAttributes_t',
      values: emulationDesc,
      reason: 'cublasLt.h: the C type under each cublasLtEmulationDescAttributes_t member',
    },
  },
  scalars: {
    'cublasLtMatmul.alpha': {
      space: 'either',
      reason: 'alpha scales A·B: host or device memory by CUBLASLT_MATMUL_DESC_POINTER_MODE, typed by the scale type',
    },
    'cublasLtMatmul.beta': { space: 'either', reason: 'beta scales C: host or device memory by the pointer mode, typed by the scale type' },
    'cublasLtMatrixTransform.alpha': { space: 'either', reason: 'alpha scales A: host or device memory by the pointer mode, typed by the scale type' },
    'cublasLtMatrixTransform.beta': { space: 'either', reason: 'beta scales B: host or device memory by the pointer mode, typed by the scale type' },
  },
  pointers: {
    'cublasLtMatmul.A': { space: 'device', reason: 'matrix A in device memory' },
    'cublasLtMatmul.B': { space: 'device', reason: 'matrix B in device memory' },
    'cublasLtMatmul.C': { space: 'device', reason: 'matrix C in device memory' },
    'cublasLtMatmul.D': { space: 'device', dir: 'out', reason: 'the result D in device memory (it may alias C)' },
    'cublasLtMatmul.workspace': {
      space: 'device',
      nullable: true,
      count: { param: 'workspaceSizeInBytes', unit: 'bytes' },
      reason: 'device workspace of workspaceSizeInBytes bytes; NULL with size 0',
    },
    'cublasLtMatrixTransform.A': { space: 'device', nullable: true, reason: 'matrix A in device memory (NULL when alpha is 0)' },
    'cublasLtMatrixTransform.B': { space: 'device', nullable: true, reason: 'matrix B in device memory (NULL when beta is 0)' },
    'cublasLtMatrixTransform.C': { space: 'device', dir: 'out', reason: 'the result C in device memory' },
  },
};
